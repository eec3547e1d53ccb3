"""Distinct optima and restarts that stop when they agree (issue 14, item 3).

Oracles: closed-form minimisers of separable tilted double wells (roots of the cubic
``4 t^3 - 4 t + a = 0`` by ``numpy.roots``) for a brute-force clustering of the final rows,
the full batch run without the option, a brute-force ranking for the successive-halving
rule, and a problem whose restarts are known to agree (a convex quadratic).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from kernelkit.solvers import DistinctOptima, lbfgs_batched, lbfgs_restarts
from kernelkit.solvers.lbfgs import halving

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


def test_restarts_that_agree_end_after_the_pilot():
    """A convex quadratic: every restart reaches the one optimum, so the pilot agrees."""
    A = torch.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
    c = torch.tensor([1.0, -2.0], dtype=torch.float64)  # the minimiser

    def quad(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return 0.5 * (((x - c) @ A) * (x - c)).sum(1) + 1.0, (x - c) @ A

    x0 = starts(64, 2, seed=3)
    for patience in (1, 3, 8):
        x, res = lbfgs_restarts(quad, x0, patience=patience, tol=1e-12)
        assert res.values.shape[0] == x.shape[0] == patience
        assert res.eliminated is not None and not bool(res.eliminated.any())
        assert [o.count for o in res.optima] == [patience]
        assert float(res.values.min()) == pytest.approx(1.0, abs=1e-12)


def test_halving_stops_the_worse_half_of_the_running_rows_at_doubling_rounds():
    """The rule against a brute-force ranking: after 4, 8, 16 iterations the rows still
    running are sorted by value (ties by index) and all but the first ceil(m/2) stop."""
    gen = torch.Generator().manual_seed(0)
    rule = halving(4)
    running = torch.ones(13, dtype=torch.bool)
    running[[2, 7]] = False  # rows that stopped on their own are not ranked
    for n_iter in range(1, 20):
        f = torch.randint(0, 5, (13,), generator=gen).double()  # ties on purpose
        out = rule(n_iter, torch.zeros(13, 1), f, running.clone())
        rows = [i for i in range(13) if running[i]]
        expected = torch.zeros(13, dtype=torch.bool)
        if n_iter in (4, 8, 16):
            ranked = sorted(rows, key=lambda i: (float(f[i]), i))
            expected[ranked[math.ceil(len(rows) / 2) :]] = True
        assert torch.equal(out, expected), n_iter
        running &= ~out
    assert int(running.sum()) == 2  # 11 -> 6 -> 3 -> 2


@pytest.mark.parametrize(("p", "seed"), [(3, 0), (4, 1), (5, 2), (6, 3)])
def test_the_race_keeps_the_restart_that_reaches_the_best_optimum(p, seed):
    """Planted optima: tilted double wells in ``p`` coordinates have ``2^p`` minimisers; the
    pilot (8 restarts) disagrees, the race halves the other 56.  Oracle: the same rows run
    to the end without any stopping (``lbfgs_batched``) and the closed-form minimisers."""
    x0 = starts(64, p, seed=seed)
    x_full, full = lbfgs_batched(wells, x0, tol=1e-12)
    x, res = lbfgs_restarts(wells, x0, patience=8, first_round=2, tol=1e-12)
    assert res.values.shape[0] == 64 and res.eliminated is not None
    assert int(res.eliminated.sum()) > 0  # the race ran and stopped restarts
    best = float(full.values.min())
    assert float(res.values.min()) == pytest.approx(best, rel=1e-9)
    global_min = wells(torch.as_tensor(well_minimisers(p)))[0].min()
    assert best == pytest.approx(float(global_min), rel=1e-9)
    # the restarts the race did not stop end at the minimiser of their full run
    kept = ~res.eliminated
    assert torch.allclose(x[kept], x_full[kept], atol=5e-3)
    # every eliminated restart was stopped at a value above the best
    assert bool((res.values[res.eliminated] > best).all())


def test_race_optima_equal_a_brute_force_clustering_of_the_independent_runs():
    """The distinct optima reported after a race equal the closed-form minimisers reached
    by the same (not eliminated) restarts run independently to the end."""
    p = 4
    x0 = starts(64, p, seed=5)
    x_full, _ = lbfgs_batched(wells, x0, tol=1e-12)
    _, res = lbfgs_restarts(wells, x0, patience=8, first_round=2, tol=1e-12)
    assert res.eliminated is not None and res.labels is not None
    kept = (~res.eliminated).numpy()
    minimisers = well_minimisers(p)
    ends = x_full.numpy()[kept]
    nearest = np.argmin(((ends[:, None, :] - minimisers[None]) ** 2).sum(-1), axis=1)
    labels, counts = np.unique(nearest, return_counts=True)
    values = wells(torch.as_tensor(minimisers[labels]))[0].numpy()
    expected = sorted(zip(np.round(values, 9).tolist(), counts.tolist(), strict=True))
    assert sorted((round(o.value, 9), o.count) for o in res.optima) == expected
    assert bool((res.labels[res.eliminated] == -1).all())
    lab = res.labels.numpy()[kept]
    assert np.array_equal(lab[:, None] == lab[None], nearest[:, None] == nearest[None])


def test_fewer_rows_than_the_pilot_run_as_one_batch():
    x0 = starts(6, 2, seed=4)
    x, res = lbfgs_restarts(wells, x0, patience=8, tol=1e-12)
    _, full = lbfgs_batched(wells, x0, tol=1e-12)
    assert x.shape == (6, 2) and sum(o.count for o in res.optima) == 6
    # merged rows stop within the optima tolerance of where they would end
    assert torch.allclose(res.values, full.values, rtol=1e-6, atol=0.0)


def test_without_a_stop_rule_the_batch_is_bitwise_unchanged():
    x0 = starts(16, 3, seed=6)
    x_a, a = lbfgs_batched(wells, x0, tol=1e-12)
    x_b, b = lbfgs_batched(wells, x0, tol=1e-12, stop=lambda k, x, f, run: torch.zeros_like(run))
    assert torch.equal(x_a, x_b) and torch.equal(a.values, b.values)
    assert (a.n_iter, a.n_eval, a.n_rows) == (b.n_iter, b.n_eval, b.n_rows)
    assert a.eliminated is None and b.eliminated is not None and not bool(b.eliminated.any())
