"""Distinct optima and restarts that stop when they agree (issue 14, item 3).

Oracles: closed-form minimisers of separable tilted double wells (roots of the cubic
``4 t^3 - 4 t + a = 0`` by ``numpy.roots``) for a brute-force clustering of the final rows,
the full batch run without the option, a brute-force ranking for the successive-halving
rule, and a problem whose restarts are known to agree (a convex quadratic); for the pilot's
early end, every completion of the running rows by lower values (sampled) and the pilot's own
trajectory recorded alone.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from kernelkit.solvers import lbfgs_restarts
from kernelkit.solvers._lbfgs import halving, lbfgs_batched, pilot_disagrees
from kernelkit.solvers._optima import DistinctOptima

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
    assert res.eliminated is not None and not bool(res.eliminated.any())
    # merged rows stop within the optima tolerance of where they would end
    assert torch.allclose(res.values, full.values, rtol=1e-6, atol=0.0)


def test_without_a_stop_rule_the_batch_is_bitwise_unchanged():
    x0 = starts(16, 3, seed=6)
    x_a, a = lbfgs_batched(wells, x0, tol=1e-12)
    x_b, b = lbfgs_batched(wells, x0, tol=1e-12, stop=lambda k, x, f, run: torch.zeros_like(run))
    assert torch.equal(x_a, x_b) and torch.equal(a.values, b.values)
    assert (a.n_iter, a.n_eval, a.n_rows) == (b.n_iter, b.n_eval, b.n_rows)
    assert a.eliminated is None and b.eliminated is not None and not bool(b.eliminated.any())


def _agree(values: np.ndarray, rtol: float) -> bool:
    """The pilot's agreement test on final values (brute force)."""
    spread = values.max() - values.min()
    return bool(np.all(np.isfinite(values)) and spread <= rtol * abs(values.min()))


@pytest.mark.parametrize("seed", range(6))
def test_pilot_disagreement_is_certain_for_every_completion(seed):
    """Oracle: sampled completions of the running rows (each ends at or below its current
    value, L-BFGS values only decrease).  When the rule says "certain", no completion agrees;
    when every row has stopped, the rule is the negation of the agreement test."""
    rng = np.random.default_rng(seed)
    rtol = 1e-3
    for _ in range(300):
        m = int(rng.integers(1, 6))
        base = float(rng.choice([-2.0, 1.0, 5.0]))
        values = base + rng.choice([0.0, 1e-4, 5e-3, -5e-3, 0.5, -0.5], size=m)
        running = rng.random(m) < 0.5
        certain = pilot_disagrees(torch.tensor(values), torch.tensor(running), rtol)
        if not running.any():
            assert certain is not _agree(values, rtol)
            continue
        completions = [values.copy()]  # the running rows stop where they are
        for drop in (1e-5, 1e-3, 0.1, 10.0):
            done = values.copy()
            done[running] -= drop * rng.random(int(running.sum()))
            completions.append(done)
        if certain:
            assert not any(_agree(c, rtol) for c in completions)


def test_an_admitted_row_follows_its_path_from_the_start():
    """Rows held back and admitted after 5 iterations end bitwise where they end when they
    run from the start (their empty history slots add nothing)."""
    x0 = starts(12, 4, seed=7)
    x_full, full = lbfgs_batched(wells, x0, tol=1e-12)
    hold = torch.arange(12) >= 4
    count = [0]

    def admit(values, running, held):
        count[0] += 1
        return held if count[0] > 5 else torch.zeros_like(held)

    x, res = lbfgs_batched(wells, x0, tol=1e-12, hold=hold, admit=admit)
    assert torch.equal(x, x_full) and torch.equal(res.values, full.values)
    assert res.held is not None and not bool(res.held.any())
    _, never = lbfgs_batched(wells, x0, tol=1e-12, hold=hold, admit=lambda v, r, h: h & False)
    assert never.held is not None and torch.equal(never.held, hold)
    assert bool(torch.isnan(never.values[hold]).all())
    assert torch.equal(never.values[~hold], full.values[~hold])


def test_the_race_starts_as_soon_as_the_pilot_is_certain_to_disagree():
    """Oracle: the pilot run alone, its values and running rows recorded per iteration; the
    other rows are first evaluated right after the first iteration at which
    ``pilot_disagrees`` holds there, before the pilot's slowest row ends."""
    x0 = starts(64, 4, seed=8)
    trace: list[bool] = []

    def record(k, x, f, running):
        trace.append(pilot_disagrees(f, running, 1e-6))
        return torch.zeros_like(running)

    _, alone = lbfgs_batched(wells, x0[:8], tol=1e-12, distinct=DistinctOptima(1e-6), stop=record)
    first = trace.index(True) + 1  # iterations of the pilot before the race starts
    assert first < alone.n_iter
    calls: list[int] = []

    def counted(x):
        calls.append(x.shape[0])
        return wells(x)

    lbfgs_restarts(counted, x0, patience=8, first_round=2, tol=1e-12)
    admission = calls.index(56)  # the one evaluation of the 56 admitted rows
    _, pilot_only = lbfgs_batched(
        wells, x0[:8], tol=1e-12, max_iter=first, distinct=DistinctOptima(1e-6)
    )
    assert admission == pilot_only.n_eval
