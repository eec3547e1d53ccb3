"""``CKNClassifier()`` on held-out fashion images (issue 48): data it was not tuned on.

Data: Fashion-MNIST (Xiao, Rasul & Vollgraf 2017; 28 x 28 grey images of 10 kinds of
clothing), not in ``../shared/data``: pass the IDX files of the training part as
``--images PATH --labels PATH`` (gzip).  A truncated images file is read up to its last
complete image (the copy this was measured on holds the first 3615 of the 60 000), so the
set is the first ``n`` images with their labels, pixels scaled to [0, 1].  One stratified
split (``random_state=0``): ``--train`` training images (default 2000), the rest of the
``n`` for testing; or, with ``--test-csv PATH`` (rows ``label, pixel1, ..., pixel784`` of
the official test set, the Kaggle layout), ``--train`` of the ``n`` images (all of them
when ``--train`` is at least ``n``) for training and the CSV's images for testing.

Against: a Gaussian ``SVC`` on the pixels tuned by a small grid, as in
``examples/ckn_defaults.py`` (``gamma = 1 / (2 (f m)^2)`` for ``f`` in {0.25, 0.5, 1, 2} and
``m`` the median distance of 200 training images, ``C`` in {1, 10, 100}, 3-fold CV on the
training part).  ``CKNClassifier(random_state=0)`` with its defaults, two torch threads.

Usage: ``python examples/ckn_heldout_images.py --images PATH --labels PATH [--train 2000]
[--test-csv PATH]``; writes ``examples/results/ckn_heldout_fashion_<train>[_test].json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
import zlib
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.svm import SVC

from kernelkit import CKNClassifier

OUT = Path(__file__).resolve().parent / "results"


def complete_bytes(path: Path) -> bytes:
    """The decompressed bytes of a gzip file, as far as its stream goes (truncated files)."""
    return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(path.read_bytes())


def load_idx(images: Path, labels: Path) -> tuple[np.ndarray, np.ndarray]:
    """The complete images of an IDX3 file and their labels (IDX1), pixels in [0, 1]."""
    raw = complete_bytes(images)
    magic, count, rows, cols = np.frombuffer(raw[:16], dtype=">u4")
    if magic != 2051:
        raise ValueError(f"--images: expected an IDX3 file (magic 2051), got magic {magic}")
    size = int(rows * cols)
    n = min(int(count), (len(raw) - 16) // size)
    X = np.frombuffer(raw[16 : 16 + n * size], dtype=np.uint8).reshape(n, rows, cols) / 255.0
    with gzip.open(labels) as f:
        y = np.frombuffer(f.read()[8:], dtype=np.uint8)[:n]
    return X, y.astype(np.int64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=Path, required=True)
    parser.add_argument("--labels", type=Path, required=True)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--test-csv", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(2)
    X, y = load_idx(args.images, args.labels)
    if args.test_csv is None:
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, train_size=args.train, stratify=y, random_state=0
        )
    else:
        Xtr, ytr = X, y
        if args.train < len(X):
            Xtr, _, ytr, _ = train_test_split(
                X, y, train_size=args.train, stratify=y, random_state=0
            )
        table = np.loadtxt(args.test_csv, delimiter=",", skiprows=1)
        Xte, yte = table[:, 1:].reshape(-1, 28, 28) / 255.0, table[:, 0].astype(np.int64)
    rows: dict = {"images": len(X), "train": len(Xtr), "test": len(Xte)}
    start, cpu = time.perf_counter(), time.process_time()
    model = CKNClassifier(random_state=0).fit(Xtr, ytr)
    rows["CKNClassifier()"] = {
        "accuracy": float(model.score(Xte, yte)), "architecture": model.architecture_,
        "fit_s": time.perf_counter() - start, "fit_cpu_s": time.process_time() - cpu,
    }  # fmt: skip
    print(rows["CKNClassifier()"], flush=True)
    F = Xtr.reshape(len(Xtr), -1)
    med = float(np.median(np.linalg.norm(F[:200, None] - F[None, :200], axis=2)))
    gammas = [1 / (2 * (f * med) ** 2) for f in (0.25, 0.5, 1, 2)]
    start = time.perf_counter()
    grid = GridSearchCV(SVC(), {"gamma": gammas, "C": [1, 10, 100]}, cv=3).fit(F, ytr)
    rows["Gaussian SVC, gamma and C by 3-fold CV"] = {
        "accuracy": float(grid.score(Xte.reshape(len(Xte), -1), yte)),
        "params": {k: float(v) for k, v in grid.best_params_.items()},
        "fit_s": time.perf_counter() - start,
    }
    print(rows["Gaussian SVC, gamma and C by 3-fold CV"], flush=True)
    OUT.mkdir(exist_ok=True)
    suffix = "_test" if args.test_csv is not None else ""
    path = OUT / f"ckn_heldout_fashion_{len(Xtr)}{suffix}.json"
    path.write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
