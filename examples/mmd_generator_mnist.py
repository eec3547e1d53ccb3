"""An MMD generative model on MNIST, with a fixed and with a learned kernel (course part 3, s. 2).

Issue 18, item 6.  Data: ``../shared/data/mnist5k`` (5000 digits, 500 per class), shuffled
with seed 0, 4000 for training and 1000 held out, pixels scaled to [0, 1].  Generator: a
two-hidden-layer MLP (noise 16-D -> 256 -> 256 -> 784, sigmoid), trained by Adam on
minibatches of 256 by minimising MMD^2_u (:func:`kernelkit.stats._generative.train_mmd_generator`)

- with a fixed Gaussian kernel on the pixels (median-heuristic width ``sigma0``);
- with a learned kernel ``k(x, y) = h(phi(x), phi(y))``, ``phi(x) = (psi(x), x / sigma0)``,
  ``psi`` a 784 -> 128 -> 16 network (tanh outputs), alternating one ascent step of the
  critic with one descent step of the generator.

Every 100 steps: MMD^2_u between 1000 generated digits (fixed noise) and the 1000 held-out
ones, with the fixed pixel Gaussian for both models (the same yardstick); the floor is that
between 1000 training digits and the held-out ones.  Writes
``examples/results/mmd_generator_mnist.{json,png}`` (held-out MMD over training and a grid of
64 samples of each model).  About 5 minutes on one core.

Run: ``KERNELKIT_SHARED_DATA=../shared/data PYTHONPATH=src python
examples/mmd_generator_mnist.py [--steps 1000]``
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from kernelkit.gram import gram
from kernelkit.kernels import Gaussian
from kernelkit.kernels._specs import median_sigma
from kernelkit.stats._generative import (
    FeatureGaussian,
    heldout_mmd2,
    mlp_generator,
    train_mmd_generator,
)
from kernelkit.stats._mmd import mmd2_tensor

RESULTS = Path(__file__).parent / "results"
DATA = Path(
    os.environ.get("KERNELKIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
NOISE = 16


def load_mnist() -> tuple[torch.Tensor, torch.Tensor]:
    import pandas as pd

    df = pd.read_csv(DATA / "mnist5k" / "mnist_5k.csv.gz", header=None)
    X = df.iloc[:, :784].to_numpy(dtype=np.float32) / 255.0
    X = X[np.random.default_rng(0).permutation(len(X))]
    return torch.as_tensor(X[:4000]), torch.as_tensor(X[4000:])


def grid(images: np.ndarray, rows: int = 8) -> np.ndarray:
    tiles = images[: rows * rows].reshape(rows, rows, 28, 28)
    return tiles.transpose(0, 2, 1, 3).reshape(rows * 28, rows * 28)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    start = time.perf_counter()
    train, heldout = load_mnist()
    sigma0 = median_sigma(train)
    eval_kernel = Gaussian(sigma0)
    evaluate = heldout_mmd2(heldout, NOISE, eval_kernel)
    floor = float(mmd2_tensor(gram(eval_kernel, torch.cat([heldout, train[:1000]])), 1000))
    runs = {}
    samples = {}
    z = torch.randn(64, NOISE, generator=torch.Generator().manual_seed(1))
    for name in ("fixed Gaussian kernel", "learned kernel"):
        torch.manual_seed(0)
        generator = mlp_generator(NOISE, 784)
        critic = FeatureGaussian(784, sigma0) if name == "learned kernel" else None
        t0 = time.perf_counter()
        history = train_mmd_generator(
            train,
            generator,
            noise_dim=NOISE,
            critic=critic,
            kernel=eval_kernel,
            steps=args.steps,
            evaluate=evaluate,
            eval_every=100,
            random_state=0,
        )
        runs[name] = {
            "steps": history.steps,
            "heldout_mmd2": history.heldout_mmd2,
            "seconds": time.perf_counter() - t0,
        }
        with torch.no_grad():
            samples[name] = generator(z).numpy()
        print(name, [f"{v:.4f}" for v in history.heldout_mmd2], flush=True)
    result = {
        "data": "mnist5k: 4000 train / 1000 held-out (seed 0)",
        "sigma0": sigma0,
        "floor_train_vs_heldout_mmd2": floor,
        "runs": runs,
        "seconds": time.perf_counter() - start,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mmd_generator_mnist.json").write_text(json.dumps(result, indent=1))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.3), dpi=110)
    for name, run in runs.items():
        axes[0].plot(run["steps"], run["heldout_mmd2"], marker="o", label=name)
    axes[0].axhline(floor, color="0.5", linestyle=":", label="train vs held-out")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("generator step")
    axes[0].set_ylabel("MMD^2_u to held-out digits (pixel Gaussian)")
    axes[0].legend(fontsize=8)
    for ax, (name, images) in zip(axes[1:], samples.items(), strict=True):
        ax.imshow(grid(images), cmap="gray_r")
        ax.set_title(name)
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(RESULTS / "mmd_generator_mnist.png")
    print(f"wrote {RESULTS}/mmd_generator_mnist.json and .png in {result['seconds']:.0f} s")


if __name__ == "__main__":
    main()
