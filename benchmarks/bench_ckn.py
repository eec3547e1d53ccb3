"""Unsupervised CKN features of MNIST images: time against the number of images, and the
convolution route against the plain ``F.unfold`` + ``matmul`` route a torch user would write.

kernelkit: ``CKNFeatures((64, 256), (3, 3), (2, 5)).fit(X).transform(X)`` (2 layers, spherical
k-means anchors on 10000 sampled patches per layer, float32), whose patch products are
convolutions (im2col + GEMM in the backend).  Baseline: the same layers with the patches
materialised by ``torch.nn.functional.unfold`` and one batched ``matmul`` per layer (same
anchors, outputs checked equal), timed on the same images.

Scaling: fit + transform wall and CPU time for n in ``--sizes``; the exponent is the
least-squares slope of log(time) against log(n) (1 = linear).  Data: ``mnist5k`` from
``--data`` (default ``<repo>/../shared/data``), pixels in [0, 1].

Usage: ``python benchmarks/bench_ckn.py [--sizes 625 1250 2500 5000] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, machine_info, report

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def unfold_features(ckn, X):
    """The CKN map with explicit ``F.unfold`` patches and a batched ``matmul`` per layer."""
    import torch
    import torch.nn.functional as F

    from kernelkit.models._ckn import gaussian_pool, pad_same

    with torch.no_grad():
        x = X
        for layer in ckn.layers:
            n, _, h, w = x.shape
            P = F.unfold(pad_same(x, layer.patch_size), layer.patch_size)
            norms = P.norm(dim=1, keepdim=True)
            cos = (layer.anchors() @ P) / norms.clamp_min(torch.finfo(x.dtype).tiny)
            maps = (norms * layer.kappa(cos.clamp(-1, 1))).view(n, -1, h, w)
            x = torch.einsum(
                "pq,nqhw->nphw", layer.nystrom_factor(), gaussian_pool(maps, layer.subsampling)
            )
        return x.flatten(1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[625, 1250, 2500, 5000])
    parser.add_argument("--baseline-n", type=int, default=500)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)

    import torch

    from kernelkit import CKNFeatures

    torch.set_num_threads(args.threads)
    a = np.loadtxt(args.data / "mnist5k" / "mnist_5k.csv.gz", delimiter=",", dtype=np.uint8)
    X = (a[:, :784] / 255.0).astype(np.float32).reshape(-1, 28, 28)
    X = X[np.random.default_rng(0).permutation(len(X))]

    def make():
        return CKNFeatures((64, 256), (3, 3), (2, 5), random_state=0)

    scaling = []
    for n in args.sizes:
        wall, cpu = time.perf_counter(), time.process_time()
        est = make().fit(X[:n])
        est.transform(X[:n])
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        scaling.append({"n": n, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)})
        print(scaling[-1], flush=True)
    logn = np.log([r["n"] for r in scaling])
    exponents = {
        key: round(float(np.polyfit(logn, np.log([r[key] for r in scaling]), 1)[0]), 3)
        for key in ("wall_s", "cpu_s")
    }
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "ckn_scaling.json").write_text(
        json.dumps(
            {
                "benchmark": "ckn_scaling",
                "machine": machine_info(),
                "note": "2 CPU cores shared with other sessions; CPU time is the steadier number",
                "rows": scaling,
                "exponent": exponents,
            },
            indent=2,
        )
    )
    print("exponent of time vs n:", exponents)

    n = args.baseline_n
    est = make().fit(X[:n])
    Xt = torch.as_tensor(X[:n, None])
    ours, ref = est.transform(X[:n]), unfold_features(est.network_, Xt).numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-3, atol=1e-4 * float(np.abs(ref).max()))
    timings = {}
    for name, fn in (
        ("ours", lambda: est.transform(X[:n])),
        ("unfold", lambda: unfold_features(est.network_, Xt)),
    ):
        wall = time.perf_counter()
        fn()
        timings[name] = time.perf_counter() - wall
    report(
        "ckn",
        [
            {
                "case": f"CKN features (64, 256) of {n} MNIST images (transform)",
                "kernelkit_s": round(timings["ours"], 3),
                "baseline": "F.unfold + matmul, same anchors",
                "baseline_s": round(timings["unfold"], 3),
            }
        ],
    )


if __name__ == "__main__":
    main()
