"""Distinct optima and restarts that stop when they agree (issue 14, item 3).

Oracles: closed-form minimisers of separable tilted double wells (roots of the cubic
``4 t^3 - 4 t + a = 0`` by ``numpy.roots``) for a brute-force clustering of the final rows,
the full batch run without the option, and problems whose restarts are known to agree
(a convex quadratic) or to improve one after the other (a tilted cosine landscape).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from kernelkit.solvers import DistinctOptima, lbfgs_batched, lbfgs_restarts

TILT = 0.3


def wells(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``sum_j (x_j^2 - 1)^2 + a x_j``: two minima per coordinate, ``2^p`` distinct values."""
    f = ((x**2 - 1.0) ** 2 + TILT * x).sum(1)
    g = 4.0 * x * (x**2 - 1.0) + TILT
    return f, g


def well_minimisers(p: int) -> np.ndarray:
    roots = np.roots([4.0, 0.0, -4.0, TILT]).real
    minima = sorted(r for r in roots if 12.0 * r**2 - 4.0 > 0)  # second derivative > 0
    return np.array(list(itertools.product(minima, repeat=p)))


def starts(b: int, p: int, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return 1.5 * torch.randn(b, p, generator=gen, dtype=torch.float64)


def test_dropping_duplicates_keeps_the_best_objective_and_the_kept_rows():
    x0 = starts(48, 3)
    x_full, full = lbfgs_batched(wells, x0, tol=1e-12)
    x_drop, drop = lbfgs_batched(wells, x0, tol=1e-12, distinct=DistinctOptima(1e-6))
    assert drop.n_merged > 0
    assert float(drop.values.min()) == pytest.approx(float(full.values.min()), rel=1e-9)
    assert drop.n_rows < full.n_rows  # merged rows stop being evaluated
    # every row (merged or not) ends at the minimiser its full run reaches
    assert torch.allclose(x_drop, x_full, atol=5e-3)


def test_distinct_optima_equal_a_brute_force_clustering_of_the_full_run():
    p = 3
    x0 = starts(64, p, seed=1)
    x_full, full = lbfgs_batched(wells, x0, tol=1e-12)
    minimisers = well_minimisers(p)
    # brute force: the closed-form minimiser nearest to every final row, counted
    nearest = np.argmin(((x_full.numpy()[:, None, :] - minimisers[None]) ** 2).sum(-1), axis=1)
    assert np.abs(x_full.numpy() - minimisers[nearest]).max() < 1e-5
    labels, counts = np.unique(nearest, return_counts=True)
    values = wells(torch.as_tensor(minimisers[labels]))[0].numpy()
    # permuted minimisers share a value: compare (value, count) pairs as multisets
    expected = sorted(zip(np.round(values, 9).tolist(), counts.tolist(), strict=True))

    post = DistinctOptima(1e-6)
    post.assign(x_full, full.values)
    _, run = lbfgs_batched(wells, x0, tol=1e-12, distinct=DistinctOptima(1e-6))
    for optima in (post.optima, run.optima):
        found = sorted((round(o.value, 9), o.count) for o in optima)
        assert found == expected
    # the labels partition the restarts as the nearest closed-form minimiser does
    assert run.labels is not None
    for labels in (run.labels.numpy(), DistinctOptima(1e-6).assign(x_full, full.values).numpy()):
        assert np.array_equal(labels[:, None] == labels[None], nearest[:, None] == nearest[None])


def test_an_invariant_merges_the_copies_of_a_symmetric_optimum():
    """``(||x||^2 - 1)^2 + 1`` is rotation invariant: its minimisers are the unit circle."""

    def ring(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r = (x**2).sum(1)
        return (r - 1.0) ** 2 + 1.0, 4.0 * (r - 1.0)[:, None] * x

    x0 = starts(16, 2, seed=2)
    x, plain = lbfgs_batched(ring, x0, tol=1e-14, distinct=DistinctOptima(1e-6))
    assert torch.allclose((x**2).sum(1), torch.ones(16, dtype=x.dtype), atol=1e-6)
    assert len(plain.optima) > 1  # the parameters differ: copies counted apart
    norm = DistinctOptima(1e-6, invariant=lambda z: (z**2).sum(1), invariant_rtol=1e-5)
    _, merged = lbfgs_batched(ring, x0, tol=1e-14, distinct=norm)
    assert [o.count for o in merged.optima] == [16]


def test_auto_stops_after_patience_when_every_restart_agrees():
    """A convex quadratic: restart 0 reaches the optimum and no later one improves on it."""
    A = torch.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
    c = torch.tensor([1.0, -2.0], dtype=torch.float64)  # the minimiser

    def quad(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return 0.5 * (((x - c) @ A) * (x - c)).sum(1) + 1.0, (x - c) @ A

    x0 = starts(64, 2, seed=3)
    for batch, patience in [(8, 8), (8, 7), (4, 3), (5, 12)]:
        x, res = lbfgs_restarts(quad, x0, batch_size=batch, patience=patience, tol=1e-12)
        # restart 0 improves, then every restart adds one to the count: stop at the first
        # batch end with at least 1 + patience restarts
        assert res.values.shape[0] == batch * math.ceil((1 + patience) / batch)
        assert x.shape[0] == res.values.shape[0]
        assert [o.count for o in res.optima] == [res.values.shape[0]]
        assert float(res.values.min()) == pytest.approx(1.0, abs=1e-12)


def test_auto_continues_while_later_restarts_improve():
    """``0.05 (t/10)^2 - cos(2 pi t/10)``: the minimum near ``t = 10 k`` has value about
    ``0.05 k^2 - 1``, so restarts started at k = 20, 19, ..., 1 each improve on the previous
    ones (the basins, 10 wide, contain the first unit step)."""

    def bumps(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        t = x[:, 0] / 10.0
        f = 0.05 * t**2 - torch.cos(2 * math.pi * t)
        return f, ((0.1 * t + 2 * math.pi * torch.sin(2 * math.pi * t)) / 10.0)[:, None]

    ks = list(range(20, 0, -1)) + [20] * 12
    x0 = 10.0 * torch.tensor(ks, dtype=torch.float64)[:, None] + 0.5
    x_full, full = lbfgs_batched(bumps, x0, tol=1e-12)
    x, res = lbfgs_restarts(bumps, x0, batch_size=4, patience=4, tol=1e-12)
    # the last improvement is restart 19 (k = 1); 4 more restarts end the 6th batch
    assert res.values.shape[0] == 24
    assert float(res.values.min()) == pytest.approx(float(full.values.min()), rel=1e-12)
    assert res.n_merged >= 1  # restarts 20-23 head back to the optimum of restart 0
    # the first 20 restarts reach distinct optima (none merged): they end as in the full run
    assert torch.allclose(res.values[:20], full.values[:20], rtol=1e-12, atol=0.0)
    assert torch.allclose(x[:20], x_full[:20], rtol=1e-9, atol=0.0)
    assert bool((full.values[1:20] < full.values[:19]).all())


def test_restarts_without_improvement_after_the_last_batch_run_every_row():
    x0 = starts(12, 2, seed=4)
    x, res = lbfgs_restarts(wells, x0, batch_size=5, patience=100, tol=1e-12)
    assert res.values.shape[0] == 12 and x.shape == (12, 2)
    assert sum(o.count for o in res.optima) == 12
