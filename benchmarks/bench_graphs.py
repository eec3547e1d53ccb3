"""Graph-kernel Grams against GraKeL in the same run (issue 3).

Random labelled graphs (20-30 nodes, about 1.5 edges per node, 5 node labels), given to both
libraries as networkx graphs; each timing includes the conversion from networkx (GraKeL's
``graph_from_networkx``, kernelkit's ``prepare``) and the full training Gram:

* Weisfeiler-Lehman subtree kernel, ``n_iter=3`` (``WeisfeilerLehman(3)`` vs GraKeL's
  ``WeisfeilerLehman(n_iter=3, base_graph_kernel=VertexHistogram)``),
* shortest-path kernel with labels (``ShortestPath()`` vs GraKeL's
  ``ShortestPath(with_labels=True)``).

The two Grams are checked equal before timing.  Targets (issue 3): WL at least 3x and shortest
path at least 2x faster than GraKeL at 3000 graphs.

``--suite molecular`` (issue 29): the kernels of GraKeL's catalogue added in issue 29 on the
heavy-atom graphs of the first ``--n-molecules`` molecules of ``solubility`` (RDKit; node label
= atom symbol, edge label = bond type; for GraphHopper and PropagationAttr, atom-feature
vectors as continuous attributes).  Grams are checked equal to GraKeL's first, except the
propagation kernels and graphlet sampling, whose draws are random in GraKeL, PyramidMatch,
whose GraKeL eigenvectors start from a random ARPACK vector, NSPDK, whose GraKeL hash
depends on the node order, OddSth, whose GraKeL Gram weighs each tree by its count in the
first graph of the batch, exact graphlets, whose GraKeL enumeration misses connected
sets, and the theta kernels (timed only).  Every kernelkit timing starts from a clone (a fresh
MultiscaleLaplacian fits its basis in each run, as GraKeL's ``fit_transform`` does).

Timing rule (both libraries, both suites): a run is timed once; when it takes under 1 s, the
result is the best of ``k = ceil(1 s / first run)`` runs (at least ``--repeat``), so every
sub-second row spends about 1 s per library and its minimum filters the noise of a shared
machine, as ``timeit`` does (such rows say "best of repeated runs"; the JSON gives ``k``);
longer runs take the median of ``--repeat``, except GraKeL's slow cases (tens of seconds),
timed by their single checking run.

The kernels whose GraKeL Gram costs Python work per pair of graphs (GraphHopper,
SubgraphMatching, MultiscaleLaplacian) would keep GraKeL busy for hours at 1000 graphs on
this machine, so GraKeL runs once on the first ``m`` graphs for each ``m`` of
``--slow-sizes`` (default 100 and 200).  Two rows follow: at the largest ``m`` both libraries
measured (Grams checked equal there), and at all the ``n`` graphs kernelkit measured against
GraKeL's time **projected** as ``a n + c n^2`` (its per-graph and per-pair work) through the
two largest sizes, ``c >= 0`` (labelled "GraKeL projected").  The projection is never below
``(n / m2) t(m2)``, a lower bound whatever the timing noise, as per-graph costs grow linearly
and per-pair ones faster; the JSON keeps the measured times, the exponent ``b`` measured
between them and the power law ``t(m2) (n / m2)^b``.
GraKeL's LovaszTheta costs mostly one SDP and ``n_samples`` cones per graph, so it runs on
all the graphs.

Without ``--suite`` (``make bench``) the random and the molecular suites run, writing
``results/bench_graphs.json`` and ``results/bench_graphs_molecular.json`` (the README's rows).

Usage: ``python benchmarks/bench_graphs.py [--sizes 1000 3000] [--repeat 3]``,
``python benchmarks/bench_graphs.py --suite molecular [--n-molecules 1000] [--slow-sizes 100 200]``,
``python benchmarks/bench_graphs.py --suite accuracy --n-molecules 1282`` (nested-CV accuracy
of label-only and attributed kernels on the 3 solubility classes).
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import adaptive_time, report

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def random_graphs(n: int, seed: int = 0) -> list[Any]:
    import networkx as nx

    rng = np.random.default_rng(seed)
    graphs = []
    for _ in range(n):
        k = int(rng.integers(20, 31))
        g = nx.gnm_random_graph(k, int(1.5 * k), seed=int(rng.integers(2**31)))
        nx.set_node_attributes(g, {v: int(rng.integers(5)) for v in g.nodes}, "label")
        graphs.append(g)
    return graphs


def molecular_graphs(data: Path, n: int) -> list[Any]:
    """networkx heavy-atom graphs of the first ``n`` solubility molecules, with ``label``
    (atom symbol), edge ``label`` (bond type) and ``attributes`` (atom-feature vector)."""
    import networkx as nx
    from rdkit import Chem

    from kernelkit.data._molecule_datasets import load_solubility

    graphs = []
    for smiles in load_solubility(data).smiles[:n]:
        mol = Chem.MolFromSmiles(smiles)
        g = nx.Graph()
        for a in mol.GetAtoms():
            x = [a.GetAtomicNum() / 10, a.GetDegree(), a.GetFormalCharge(), a.GetIsAromatic()]
            g.add_node(
                a.GetIdx(), label=a.GetSymbol(), attributes=np.array([*x, a.GetTotalNumHs()], float)
            )
        for b in mol.GetBonds():
            g.add_edge(b.GetBeginAtomIdx(), b.GetEndAtomIdx(), label=str(b.GetBondType()))
        graphs.append(g)
    return graphs


def molecular_suite(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Issue 29's kernels against GraKeL on molecular graphs (see the module docstring)."""
    import warnings

    import networkx as nx
    from grakel import graph_from_networkx
    from grakel import kernels as gk
    from sklearn.base import clone

    from kernelkit import kernels as kk

    warnings.filterwarnings("ignore")
    graphs = molecular_graphs(args.data, args.n_molecules)
    connected = [g for g in graphs if len(g) > 1 and nx.is_connected(g)]

    def labelled(gs: list) -> list:
        return list(graph_from_networkx(gs, node_labels_tag="label", edge_labels_tag="label"))

    def attributed(gs: list) -> list:
        return list(graph_from_networkx(gs, node_labels_tag="attributes"))

    # name: (kernelkit kernel, GraKeL kernel, GraKeL input, graphs, checked, timing mode)
    cases = {
        "VertexHistogram": (
            kk.VertexHistogram(),
            gk.VertexHistogram(),
            labelled,
            graphs,
            1,
            "repeat",
        ),
        "EdgeHistogram": (kk.EdgeHistogram(), gk.EdgeHistogram(), labelled, graphs, 1, "repeat"),
        "WeisfeilerLehmanOptimalAssignment n_iter=5": (
            kk.WeisfeilerLehmanOptimalAssignment(5),
            gk.WeisfeilerLehmanOptimalAssignment(n_iter=5),
            labelled,
            graphs,
            1,
            "once",
        ),
        "NeighborhoodHash R=3 bits=24": (
            kk.NeighborhoodHash(3),
            gk.NeighborhoodHash(R=3, bits=24, random_state=0),
            labelled,
            graphs,
            1,
            "once",
        ),
        "CoreFramework(ShortestPath)": (
            kk.CoreFramework(),
            gk.CoreFramework(base_graph_kernel=gk.ShortestPath),
            labelled,
            graphs,
            1,
            "once",
        ),
        "GraphHopper linear (connected graphs)": (
            kk.GraphHopper(),
            gk.GraphHopper(kernel_type="linear"),
            attributed,
            connected,
            1,
            "project",
        ),
        "GraphHopper gaussian (connected graphs)": (
            kk.GraphHopper("gaussian"),
            gk.GraphHopper(kernel_type="gaussian"),
            attributed,
            connected,
            1,
            "project",
        ),
        "PyramidMatch L=4 d=6 (GraKeL's ARPACK start is random, not compared)": (
            kk.PyramidMatch(),
            gk.PyramidMatch(),
            labelled,
            graphs,
            0,
            "repeat",
        ),
        "OddSth h=None (GraKeL weighs by the first graph, not compared)": (
            kk.OddSth(),
            gk.OddSth(),
            labelled,
            graphs,
            0,
            "once",
        ),
        "GraphletSampling k=5 exact (GraKeL's ConSubg misses sets, not compared)": (
            kk.GraphletSampling(5),
            gk.GraphletSampling(k=5),
            labelled,
            graphs,
            0,
            "once",
        ),
        "GraphletSampling k=5 n_samples=50 (random, not compared)": (
            kk.GraphletSampling(5, sampling={"n_samples": 50}),
            gk.GraphletSampling(k=5, sampling={"n_samples": 50}, random_state=0),
            labelled,
            graphs,
            0,
            "once",
        ),
        "SubgraphMatching k=5": (
            kk.SubgraphMatching(5),
            gk.SubgraphMatching(k=5),
            labelled,
            graphs,
            1,
            "project",
        ),
        "NSPDK r=3 d=4 (GraKeL's hash depends on node order, not compared)": (
            kk.NeighborhoodSubgraphPairwiseDistance(),
            gk.NeighborhoodSubgraphPairwiseDistance(),
            labelled,
            graphs,
            0,
            "repeat",
        ),
        "Propagation t_max=5 (random hashes, not compared)": (
            kk.Propagation(),
            gk.Propagation(random_state=0),
            labelled,
            graphs,
            0,
            "repeat",
        ),
        "PropagationAttr t_max=5 (random hashes, not compared)": (
            kk.PropagationAttr(),
            gk.PropagationAttr(random_state=0),
            attributed,
            graphs,
            0,
            "repeat",
        ),
    }
    cases.update(_global_cases(gk, kk, labelled, graphs))
    cases["MultiscaleLaplacian L=3 P=10 n_samples=50 (atom features)"] = (
        kk.MultiscaleLaplacian(node_attribute="attributes"),
        gk.MultiscaleLaplacian(random_state=0),
        attributed,
        graphs,
        1,
        "project",
    )
    rows = []
    for case, (ours, theirs, convert, gs, checked, mode) in cases.items():
        if args.only and not any(word in case for word in args.only):
            continue

        def run_ours(ours: Any = ours, gs: list = gs) -> np.ndarray:
            return clone(ours)(gs).numpy()

        def run_theirs(theirs: Any = theirs, convert: Any = convert, gs: list = gs) -> Any:
            return copy.deepcopy(theirs).fit_transform(convert(gs))  # unfitted, fresh RNG

        if mode == "project":
            rows += _projected_rows(case, run_ours, run_theirs, gs, checked, args.slow_sizes)
            continue
        start = time.perf_counter()
        K_ref = run_theirs()
        first_s = time.perf_counter() - start  # a slow baseline is timed by this run alone
        err = _check(case, run_ours(), K_ref, checked)
        ours_s, ours_how = adaptive_time(run_ours, repeat=args.repeat)
        theirs_s, theirs_how = (
            (first_s, "one run")
            if mode == "once"
            else adaptive_time(run_theirs, repeat=args.repeat)
        )
        rows.append(_row(f"{case}, {len(gs)} graphs", ours_s, ours_how, theirs_s, theirs_how, err))
    return rows


def _check(case: str, K: np.ndarray, K_ref: Any, checked: int) -> float:
    """Largest difference to GraKeL's Gram (NaN when not compared), raising beyond 1e-8."""
    err = float(np.abs(K - K_ref).max()) if checked else float("nan")
    if checked and err > 1e-8 * max(float(np.abs(K_ref).max()), 1.0):
        raise AssertionError(f"{case}: Grams differ from GraKeL by {err:.3g}")
    return err


def _row(
    case: str, ours_s: float, ours_how: str, theirs_s: float, theirs_how: str, err: float, **extra
) -> dict[str, Any]:
    best = "best of" in ours_how + theirs_how
    row = {
        "case": f"{case} (best of repeated runs)" if best else case,
        "kernelkit_s": ours_s,
        "kernelkit_timing": ours_how,
        "baseline": "GraKeL 0.1.11",
        "baseline_s": theirs_s,
        "baseline_timing": theirs_how,
        "max_abs_diff": err,
        "load": os.getloadavg()[0],
        **extra,
    }
    print(row, flush=True)
    return row


def _projected_rows(
    case: str, run_ours: Any, run_theirs: Any, gs: list, checked: int, sizes: list[int]
) -> list[dict[str, Any]]:
    """A kernel whose GraKeL Gram costs Python work per pair of graphs.

    GraKeL runs once on the first ``m`` graphs for each ``m`` of ``sizes``; the row at the
    largest ``m`` compares two measured runs, the row at ``n = len(gs)`` graphs kernelkit's
    measured time with GraKeL's projected one, ``a n + c n^2`` (its per-graph and per-pair
    work) through the two largest sizes, with ``c >= 0``: never below ``(n / m2) t(m2)``, a
    lower bound since per-graph costs grow linearly and per-pair ones faster, which noisy
    timings may otherwise undercut.  The JSON also keeps the exponent ``b`` measured between
    the sizes and the power law ``t(m2) (n / m2)^b`` through it.
    """
    measured = {}
    for m in sizes:
        start = time.perf_counter()
        K_ref = run_theirs(gs=gs[:m])
        measured[m] = time.perf_counter() - start
    m1, m2 = sizes[-2:]
    t1, t2 = measured[m1], measured[m2]
    err = _check(case, run_ours(gs=gs[:m2]), K_ref, checked)
    ours_s, ours_how = adaptive_time(lambda: run_ours(gs=gs[:m2]), repeat=1)
    rows = [_row(f"{case}, {m2} graphs", ours_s, ours_how, t2, "one run", err)]
    n = len(gs)
    c = max((t2 / m2 - t1 / m1) / (m2 - m1), 0.0)
    a = t2 / m2 - c * m2
    b = float(np.log(t2 / t1) / np.log(m2 / m1))
    ours_s, ours_how = adaptive_time(run_ours, repeat=1)
    row = _row(
        f"{case}, {n} graphs, GraKeL projected",
        ours_s,
        ours_how,
        a * n + c * n**2,
        f"projected: a n + c n^2 through one run at each of {sizes} graphs",
        float("nan"),
        baseline_measured_s={str(m): t for m, t in measured.items()},
        baseline_exponent=b,
        baseline_power_law_s=t2 * (n / m2) ** b,
    )
    row["baseline"] = f"GraKeL 0.1.11, projected from {m1} and {m2} graphs (per graph + per pair)"
    return [*rows, row]


def _global_cases(gk: Any, kk: Any, labelled: Any, graphs: list) -> dict[str, tuple]:
    """The theta kernels (Johansson et al. 2014): timed only, their Grams differ from GraKeL's
    by definition (docs/graphs.md).  GraKeL's Lovasz cost is one SDP and ``n_samples`` cones
    per graph (its per-pair part is a dot product), so it runs on all of them."""
    return {
        "SvmTheta (GraKeL fits a one-class SVM, not compared)": (
            kk.SvmTheta(),
            gk.SvmTheta(random_state=0),
            labelled,
            graphs,
            0,
            "once",
        ),
        "LovaszTheta n_samples=50 (GraKeL: complement graph, cosines, not compared)": (
            kk.LovaszTheta(),
            gk.LovaszTheta(random_state=0),
            labelled,
            graphs,
            0,
            "once",
        ),
    }


def accuracy_suite(args: argparse.Namespace) -> None:
    """Nested CV accuracy on the 3 solubility classes, label-only vs attributed kernels.

    Outer stratified 5-fold CV; inside each training part a 4-fold grid search of ``C`` in
    ``{0.1, 1, 10, 100}`` for scikit-learn's ``SVC(kernel="precomputed")`` on the
    cosine-normalised Gram (the same folds for every kernel, seed 0).  With ``--n-molecules``
    below 1282, a stratified subsample of that size (seed 0); ``--only`` keeps the kernels
    whose name contains one of its words.
    """
    import json
    import time

    from sklearn.model_selection import (
        GridSearchCV,
        StratifiedKFold,
        StratifiedShuffleSplit,
        cross_val_score,
    )
    from sklearn.svm import SVC

    from kernelkit import kernels as kk
    from kernelkit.data._molecule_datasets import load_solubility

    y = load_solubility(args.data).target
    graphs = molecular_graphs(args.data, len(y))
    if args.n_molecules < len(y):  # a stratified subsample, the same for every kernel
        keep = np.sort(
            StratifiedShuffleSplit(1, train_size=args.n_molecules, random_state=0)
            .split(np.zeros(len(y)), y)
            .__next__()[0]
        )
        y, graphs = y[keep], [graphs[i] for i in keep]
    kernels = {
        "WeisfeilerLehman(3) (labels)": kk.WeisfeilerLehman(3),
        "ShortestPath (labels)": kk.ShortestPath(),
        "WeisfeilerLehmanOptimalAssignment(5) (labels)": kk.WeisfeilerLehmanOptimalAssignment(5),
        "NSPDK r=3 d=4 (labels, bonds)": kk.NeighborhoodSubgraphPairwiseDistance(),
        "Propagation t_max=5 (labels)": kk.Propagation(),
        "GraphHopper linear (atom features)": kk.GraphHopper(),
        "GraphHopper gaussian mu=1 (atom features)": kk.GraphHopper("gaussian"),
        "PropagationAttr t_max=5 w=4 (atom features)": kk.PropagationAttr(),
        "WassersteinWeisfeilerLehman n_iter=2 gamma=1 (atom features)": (
            kk.WassersteinWeisfeilerLehman(2, gamma=1.0)
        ),
        "MultiscaleLaplacian L=3 P=10 (atom features; basis fitted on all graphs)": (
            kk.MultiscaleLaplacian(node_attribute="attributes")
        ),
    }
    if args.only:
        kernels = {k: v for k, v in kernels.items() if any(word in k for word in args.only)}
    outer = StratifiedKFold(5, shuffle=True, random_state=0)
    inner = StratifiedKFold(4, shuffle=True, random_state=0)
    rows = []
    for name, kernel in kernels.items():
        start = time.perf_counter()
        K = kernel.normalized()(graphs).numpy()
        gram_s = time.perf_counter() - start
        search = GridSearchCV(SVC(kernel="precomputed"), {"C": [0.1, 1, 10, 100]}, cv=inner)
        scores = cross_val_score(search, K, y, cv=outer)
        rows.append(
            {
                "kernel": name,
                "accuracy_mean": float(scores.mean()),
                "accuracy_std": float(scores.std()),
                "gram_s": gram_s,
            }
        )
        print(rows[-1], flush=True)
    suffix = "_" + "_".join(re.sub(r"\W+", "", word) for word in args.only) if args.only else ""
    suffix += "" if args.n_molecules >= 1282 else f"_{args.n_molecules}"
    out = Path(__file__).parent / "results" / f"bench_graphs_accuracy{suffix}.json"
    out.write_text(json.dumps({"n": len(y), "rows": rows}, indent=1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suite", choices=["random", "molecular", "accuracy"], help="default: random, molecular"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-molecules", type=int, default=1000)
    parser.add_argument("--only", nargs="*", help="cases / kernels containing a word")
    parser.add_argument(
        "--slow-sizes",
        type=int,
        nargs="+",
        default=[100, 200],
        help="molecular suite: graph counts GraKeL's per-pair kernels run on (projected beyond)",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    if args.suite == "accuracy":
        accuracy_suite(args)
        return
    if args.suite in (None, "random"):
        random_suite(args)
    if args.suite in (None, "molecular"):
        rows = molecular_suite(args)
        suffix = "_" + "_".join(re.sub(r"\W+", "", word) for word in args.only) if args.only else ""
        suffix += "" if args.n_molecules == 1000 else f"_{args.n_molecules}"
        report(f"bench_graphs_molecular{suffix}", rows)


def random_suite(args: argparse.Namespace) -> None:
    """WL and shortest path on random labelled graphs (module docstring)."""

    from grakel import graph_from_networkx
    from grakel.kernels import ShortestPath as GrakelSP
    from grakel.kernels import VertexHistogram
    from grakel.kernels import WeisfeilerLehman as GrakelWL

    from kernelkit.kernels._graphs import ShortestPath, WeisfeilerLehman

    cases = {
        "WL n_iter=3": (
            lambda: WeisfeilerLehman(3),
            lambda: GrakelWL(n_iter=3, base_graph_kernel=VertexHistogram),
        ),
        "shortest path": (lambda: ShortestPath(), lambda: GrakelSP(with_labels=True)),
    }
    rows = []
    for n in args.sizes:
        graphs = random_graphs(n)
        for case, (ours, theirs) in cases.items():

            def run_ours(ours: Any = ours, graphs: list = graphs) -> np.ndarray:
                return ours()(graphs).numpy()

            def run_theirs(theirs: Any = theirs, graphs: list = graphs) -> np.ndarray:
                return theirs().fit_transform(graph_from_networkx(graphs, node_labels_tag="label"))

            K, K_ref = run_ours(), run_theirs()
            err = float(np.abs(K - K_ref).max())
            if err > 1e-9 * max(float(np.abs(K_ref).max()), 1.0):
                raise AssertionError(f"{case}, n={n}: Grams differ from GraKeL by {err:.3g}")
            ours_s, ours_how = adaptive_time(run_ours, repeat=args.repeat)
            theirs_s, theirs_how = adaptive_time(run_theirs, repeat=args.repeat)
            rows.append(_row(f"{case}, {n} graphs", ours_s, ours_how, theirs_s, theirs_how, err))
    report("bench_graphs", rows)


if __name__ == "__main__":
    main()
