"""TU graph benchmarks: 10-fold accuracy of GraphCKNClassifier (defaults) vs WL subtree and WWL.

The usual protocol of the graph-kernel literature (Shervashidze et al. 2011; Kriege, Johansson
& Morris 2020): stratified 10-fold cross-validation (shuffled, seed 0, the same folds for
every method), accuracy mean and standard deviation over the folds.

* **WL subtree**: :class:`kernelkit.kernels.WeisfeilerLehman` on the node labels, the
  cosine-normalised Gram, scikit-learn's ``SVC(kernel="precomputed")``; in each training part a
  5-fold grid search of ``n_iter`` (``h``) in ``{1, ..., 5}`` and ``C`` in
  ``{10^-3, ..., 10^3}`` (the Grams of every ``h`` computed once on all graphs: each entry
  depends on its two graphs only).
* **GCKN**: ``GraphCKNClassifier(random_state=0)`` with its defaults, fitted on each training
  part (its ``lam``, ``sigma`` and number of layers chosen by its own internal
  cross-validation on that part; each fold's choices are recorded) and scored on the test
  part; ``gckn-one-layer``: the same
  with one layer (``n_filters=32, max_length=2``), to see what the second layer brings;
  ``gckn-auto``: ``normalize`` and ``standardize`` chosen by that cross-validation too;
  ``gckn-scaled``: the defaults on WWL's input, the attributes standardised as below.
* **WWL** (``wwl``, on the sets of ``--wwl-sets``, default ENZYMES: they need continuous
  attributes): :class:`kernelkit.kernels.WassersteinWeisfeilerLehman` on the node attributes
  standardised per column over all nodes of the set (no labels used; as the authors' code
  does), ``SVC(kernel="precomputed")`` on ``exp(-gamma D_W)``; in each training part a
  5-fold grid search of ``n_iter`` in ``{1, 2, 3}``, ``gamma`` in ``{10^-4, ..., 10}`` and
  ``C`` as above (Togninalli et al. 2019, section 4; one distance matrix per ``n_iter`` on
  all graphs).  For continuous attributes the Gram is not p.d. in general: the SVM still
  runs (libsvm on an indefinite kernel, a non-convex problem, no Krein-space SVM), and the
  smallest eigenvalue of each Gram relative to its largest is recorded.

Times are wall-clock seconds of the whole 10-fold run (Grams included for WL and WWL), torch
on one thread.  ``python benchmarks/bench_tu.py [--sets MUTAG ...] [--data ../shared/data]``
(default: the four sets; WL, GCKN, and WWL on ENZYMES: 40-50 minutes on the loaded machine);
results go to ``benchmarks/results/tu.json``
(merged with the sets already there).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

RESULTS = Path(__file__).parent / "results" / "tu.json"
WWL = "WWL (n_iter, gamma, C by inner CV)"
GCKN_SCALED = "GraphCKNClassifier() on standardised attributes"
DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def folds(y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(10, shuffle=True, random_state=0).split(np.zeros(len(y)), y))


def svc_cv(grams: dict[Any, np.ndarray], y: np.ndarray) -> dict[str, Any]:
    """SVC on precomputed Grams; the Gram (key) and ``C`` chosen by inner 5-fold CV."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    accs, chosen = [], []
    for train, test in folds(y):
        inner = StratifiedKFold(5, shuffle=True, random_state=0)
        best = (-1.0, None, 0.0)
        for key, K in grams.items():
            for C in 10.0 ** np.arange(-3, 4):
                score = np.mean([
                    SVC(C=C, kernel="precomputed")
                    .fit(K[np.ix_(train[a], train[a])], y[train[a]])
                    .score(K[np.ix_(train[b], train[a])], y[train[b]])
                    for a, b in inner.split(np.zeros(len(train)), y[train])
                ])  # fmt: skip
                if score > best[0]:
                    best = (score, key, C)
        _, key, C = best
        K = grams[key]
        svc = SVC(C=C, kernel="precomputed").fit(K[np.ix_(train, train)], y[train])
        accs.append(svc.score(K[np.ix_(test, train)], y[test]))
        chosen.append([key, C])
    return {
        "accuracy_mean": float(np.mean(accs)),
        "accuracy_std": float(np.std(accs)),
        "fold_accuracies": [float(a) for a in accs],
        "chosen_h_C": chosen,
    }


def run_wl(graphs: list[Any], y: np.ndarray) -> dict[str, Any]:
    """WL subtree, normalised Gram, SVC with (h, C) chosen by inner 5-fold CV."""
    from kernelkit.data import as_graph_batch
    from kernelkit.kernels import WeisfeilerLehman

    start = time.perf_counter()
    batch = as_graph_batch(graphs)
    grams = {h: WeisfeilerLehman(h).normalized()(batch).numpy() for h in range(1, 6)}
    return {**svc_cv(grams, y), "seconds": time.perf_counter() - start}


def run_wwl(graphs: list[Any], y: np.ndarray) -> dict[str, Any]:
    """WWL on standardised attributes, SVC with (n_iter, gamma, C) chosen by inner 5-fold CV."""
    from dataclasses import replace

    from kernelkit.kernels import WassersteinWeisfeilerLehman

    start = time.perf_counter()
    batch = WassersteinWeisfeilerLehman().prepare(graphs)
    a = batch.node_attributes
    batch = replace(batch, node_attributes=(a - a.mean(0)) / np.where(a.std(0) > 0, a.std(0), 1))
    grams, distance_seconds = {}, {}
    for h in (1, 2, 3):
        tick = time.perf_counter()
        D = WassersteinWeisfeilerLehman(h).distances(batch, batch)
        distance_seconds[h] = time.perf_counter() - tick
        print("WWL distances", h, round(distance_seconds[h]), "s", flush=True)
        for gamma in 10.0 ** np.arange(-4, 2):
            grams[h, float(gamma)] = np.exp(-gamma * D)
    spectra = {key: np.linalg.eigvalsh(K) for key, K in grams.items()}
    eigen = {f"{h}, {g:g}": float(w[0] / w[-1]) for (h, g), w in spectra.items()}
    return {
        **svc_cv(grams, y),
        "distance_seconds": distance_seconds,
        "min_over_max_eigenvalue": eigen,
        "seconds": time.perf_counter() - start,
    }


def run_kernels(graphs: list[Any], y: np.ndarray) -> dict[str, dict[str, Any]]:
    """The course's other graph kernels at fixed parameters (WL shortest-path: ``h`` by inner
    CV), normalised Grams, SVC with ``C`` by inner CV."""
    from kernelkit.data import as_graph_batch
    from kernelkit.kernels import RandomWalk, ShortestPath, TreePattern, WeisfeilerLehman

    batch = as_graph_batch(graphs)
    cases: dict[str, dict[Any, Any]] = {
        "WL shortest-path (h by inner CV)": {
            h: WeisfeilerLehman(h, base_graph_kernel=ShortestPath()) for h in range(1, 6)
        },
        "TreePattern(2, lam=0.5)": {0: TreePattern(2, lam=0.5)},
        "TreePattern(2, lam=0.5, tottering=False)": {0: TreePattern(2, lam=0.5, tottering=False)},
        'RandomWalk(0.5, kind="markov")': {0: RandomWalk(0.5, kind="markov")},
        'RandomWalk(0.5, kind="markov", tottering=False)': {
            0: RandomWalk(0.5, kind="markov", tottering=False)
        },
    }
    out = {}
    for name, kernels in cases.items():
        start = time.perf_counter()
        grams = {key: k.normalized()(batch).numpy() for key, k in kernels.items()}
        out[name] = {**svc_cv(grams, y), "seconds": time.perf_counter() - start}
        print(name, out[name]["accuracy_mean"], round(out[name]["seconds"]), flush=True)
    return out


def standardised_attributes(graphs: list[Any]) -> list[Any]:
    """Copies of ``graphs`` whose node ``attributes`` are standardised per column over all
    nodes of the set (WWL's input, :func:`run_wwl`; no labels used)."""
    A = np.concatenate([[d["attributes"] for _, d in g.nodes(data=True)] for g in graphs])
    mean, std = A.mean(0), np.where(A.std(0) > 0, A.std(0), 1)
    out = [g.copy() for g in graphs]
    for g in out:
        for _, d in g.nodes(data=True):
            d["attributes"] = (d["attributes"] - mean) / std
    return out


def run_gckn(graphs: list[Any], y: np.ndarray, n_folds: int = 10, **params: Any) -> dict[str, Any]:
    """GraphCKNClassifier (defaults unless ``params``) fitted on each training part (the
    first ``n_folds`` of the ten)."""
    from kernelkit import GraphCKNClassifier

    start = time.perf_counter()
    accs, layers, lams, scalings, kernels = [], [], [], [], []
    for train, test in folds(y)[:n_folds]:
        clf = GraphCKNClassifier(random_state=0, **params)
        clf.fit([graphs[i] for i in train], y[train])
        accs.append(clf.score([graphs[i] for i in test], y[test]))
        layers.append(len(clf.network_.layers))
        lams.append(float(clf.lam_))
        scalings.append([clf.network_.normalize, clf.network_.standardize])
        first = clf.network_.layers[0]
        top = None if clf.network_.top is None else clf.network_.top.maps[0].sigma
        lengths = [layer.max_length for layer in clf.network_.layers]
        kernels.append([first.maps[0].sigma, lengths, top])
    return {
        "params": {k: str(v) for k, v in params.items()},
        "accuracy_mean": float(np.mean(accs)),
        "accuracy_std": float(np.std(accs)),
        "fold_accuracies": [float(a) for a in accs],
        "layers_kept": layers,
        "lam": lams,
        "normalize_standardize": scalings,
        "sigma_max_length_top_sigma": kernels,
        "seconds": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["MUTAG", "PTC_MR", "PROTEINS", "ENZYMES"])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--methods", nargs="+", default=["wl", "gckn", "wwl"])
    parser.add_argument("--wwl-sets", nargs="+", default=["ENZYMES"], help="sets WWL runs on")
    parser.add_argument("--n-folds", type=int, default=10, help="gckn-auto: folds run")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    from kernelkit.data import load_tu

    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    for name in args.sets:
        data = load_tu(args.data, name)
        entry = results.setdefault(name, {})
        entry["n_graphs"] = len(data)
        if "wl" in args.methods:
            entry["WL subtree (h, C by inner CV)"] = run_wl(data.graphs, data.y)
            print(name, "WL", entry["WL subtree (h, C by inner CV)"]["accuracy_mean"], flush=True)
        if "wwl" in args.methods and name in args.wwl_sets:
            entry[WWL] = run_wwl(data.graphs, data.y)
            print(name, "WWL", entry[WWL]["accuracy_mean"], flush=True)
        if "kernels" in args.methods:
            entry.update(run_kernels(data.graphs, data.y))
        if "gckn" in args.methods:
            entry["GraphCKNClassifier()"] = run_gckn(data.graphs, data.y)
            print(name, "GCKN", entry["GraphCKNClassifier()"]["accuracy_mean"], flush=True)
        if "gckn-auto" in args.methods:
            auto = {"normalize": "auto", "standardize": "auto"}
            row = run_gckn(data.graphs, data.y, args.n_folds, **auto)
            entry[
                f'GraphCKNClassifier(normalize="auto", standardize="auto"), folds 1-{args.n_folds}'
            ] = row
            print(name, "GCKN auto", row["accuracy_mean"], flush=True)
        if "gckn-scaled" in args.methods:  # GCKN on WWL's input: standardised attributes
            row = run_gckn(standardised_attributes(data.graphs), data.y)
            entry[GCKN_SCALED] = row
            print(name, "GCKN standardised attributes", row["accuracy_mean"], flush=True)
        if "gckn-one-layer" in args.methods:
            row = run_gckn(data.graphs, data.y, n_filters=32, max_length=2)
            entry["GraphCKNClassifier(32, 2) (one layer)"] = row
            print(name, "GCKN one layer", row["accuracy_mean"], flush=True)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        entry["measured"] = f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load}"
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=1))
    for name, entry in results.items():
        for method, row in entry.items():
            if isinstance(row, dict):
                print(
                    f"{name:10s} {method:32s} {100 * row['accuracy_mean']:5.1f} "
                    f"± {100 * row['accuracy_std']:4.1f}   {row['seconds']:7.1f} s"
                )


if __name__ == "__main__":
    main()
