"""``suggest``: the next candidates to measure, by an acquisition function of a fitted model."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import torch

from kernelkit.bo._acquisition import (
    ACQUISITIONS,
    expected_improvement,
    probability_of_improvement,
    upper_confidence_bound,
)
from kernelkit.solvers import cholesky_factor
from kernelkit.utils._config import options
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import check_random_state


def _take(candidates: Any, idx: np.ndarray) -> Any:
    """The candidates at positions ``idx`` in the container's own kind."""
    if hasattr(candidates, "iloc"):
        return candidates.iloc[idx]
    if isinstance(candidates, np.ndarray | torch.Tensor):
        return candidates[torch.as_tensor(idx) if isinstance(candidates, torch.Tensor) else idx]
    if isinstance(candidates, list | tuple):
        return [candidates[int(i)] for i in idx]
    try:
        return candidates[idx]
    except (TypeError, IndexError, KeyError) as exc:
        raise InputError(
            f"candidates: expected a list, an array, a tensor or a DataFrame that can be "
            f"indexed by positions, got {type(candidates).__name__}"
        ) from exc


def _vector(value: Any, name: str, m: int) -> torch.Tensor:
    """A model output as a 1-D float64 tensor of length ``m`` (single output only)."""
    t = torch.as_tensor(np.asarray(value, dtype=np.float64))
    if t.ndim != 1 or t.shape[0] != m:
        raise InputError(
            f"model: expected a single-output model whose {name} has shape ({m},) on the "
            f"{m} candidates, got shape {tuple(t.shape)}"
        )
    return t


def _incumbent(model: Any, best: float | None, sign: float) -> float:
    """The best observed value (``best`` or the model's ``y_train_``), in maximisation
    units."""
    if best is not None:
        if not isinstance(best, Real) or not np.isfinite(best):
            raise InputError(f"best: expected a finite number or None, got {best!r}")
        return sign * float(best)
    y = getattr(model, "y_train_", None)
    if y is None:
        raise InputError(
            "best: the model has no y_train_ to take the incumbent from; pass best=<the best "
            "value observed>"
        )
    arr = np.asarray(y, dtype=np.float64)
    if arr.ndim != 1:
        raise InputError(
            f"model: expected a single-output model, got y_train_ of shape {arr.shape}"
        )
    return float(np.nanmax(sign * arr))


def _score(
    acquisition: str, mu: torch.Tensor, sd: torch.Tensor, best: float, xi: float, beta: float
) -> torch.Tensor:
    if acquisition == "ei":
        return expected_improvement(mu, sd, best, xi)
    if acquisition == "pi":
        return probability_of_improvement(mu, sd, best, xi)
    return upper_confidence_bound(mu, sd, beta)


def _check_arguments(n: Any, acquisition: Any, batch: Any, xi: Any, beta: Any) -> None:
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
        raise InputError(f"n: expected a positive integer, got {n!r}")
    if acquisition not in ACQUISITIONS:
        raise InputError(f"acquisition: expected one of {ACQUISITIONS}, got {acquisition!r}")
    if batch not in ("believer", "thompson"):
        raise InputError(f"batch: expected 'believer' or 'thompson', got {batch!r}")
    for name, value in (("xi", xi), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, Real) or not value >= 0:
            raise InputError(f"{name}: expected a non-negative number, got {value!r}")


def suggest(
    model: Any,
    candidates: Any,
    n: int = 1,
    acquisition: str = "ei",
    *,
    batch: str = "believer",
    maximize: bool = True,
    best: float | None = None,
    xi: float = 0.0,
    beta: float = 4.0,
    exclude: Sequence[int] | np.ndarray | None = None,
    random_state: Any = None,
) -> np.ndarray:
    r"""Indices of the ``n`` candidates to measure next (Bayesian optimisation over a library).

    The fitted ``model``'s posterior of the latent ``f`` at the candidates (mean ``mu``,
    standard deviation ``sigma``) scores each one (:mod:`kernelkit.bo._acquisition`):
    expected improvement ``(mu - f* - xi) Phi(z) + sigma phi(z)`` (Jones et al. 1998),
    probability of improvement ``Phi(z)``, ``z = (mu - f* - xi) / sigma``, or the upper
    confidence bound ``mu + sqrt(beta) sigma`` (Srinivas et al. 2010), ``f*`` the best value
    observed.  ``"thompson"`` draws ``f`` jointly at the candidates from the posterior and
    takes the best of each draw (Thompson sampling; Kandasamy et al., "Parallelised Bayesian
    optimisation via Thompson sampling", AISTATS 2018, for batches).

    Batches (``n > 1``) of EI / PI / UCB use the kriging believer (Ginsbourger, Le Riche and
    Carraro, "Kriging is well-suited to parallelize optimization", 2010): after each pick the
    model believes its own mean there, as a noiseless observation, so the joint posterior
    covariance ``C`` of the candidates is updated as ``C - c c^T / c_*`` (``c`` the pick's
    column; the mean is unchanged) and the incumbent becomes ``max(f*, mu_*)``.  Batches need
    the candidates' joint covariance (``model.predict(X, return_cov=True)``): among more than
    ``options().bo_batch_candidates`` candidates, only those with the largest single-point
    scores (``mu + 3 sigma`` for Thompson sampling) enter it.

    Parameters
    ----------
    model : fitted regressor
        A single-output model with ``predict(X, return_std=True)`` (and ``return_cov=True``
        for Thompson sampling and batches), e.g. :class:`~kernelkit.GaussianProcessRegressor`
        (also through its Nyström solver, for large libraries); its ``y_train_`` gives the
        incumbent unless ``best`` is given.
    candidates : list, array, tensor or DataFrame
        What ``model.predict`` takes: SMILES, fingerprints, graphs, vectors.
    n : int, default 1
        Number of indices to return (distinct).
    acquisition : {"ei", "pi", "ucb", "thompson"}, default "ei"
    batch : {"believer", "thompson"}, default "believer"
        How EI / PI / UCB choose ``n > 1`` points (``"thompson"``: one joint draw per point,
        whatever ``acquisition``).
    maximize : bool, default True
        False minimises (the model's mean and ``best`` are negated).
    best : float, optional
        The incumbent ``f*`` (default: the best of ``model.y_train_``, NaN ignored).
    xi : float, default 0.0
        Margin of EI and PI.
    beta : float, default 4.0
        UCB's ``beta`` (``mu + 2 sigma``).
    exclude : sequence of int, optional
        Candidate indices never returned (those already measured).
    random_state : None, int, RandomState or Generator
        Seed of Thompson sampling.

    Returns
    -------
    ndarray of int, shape (n,)
        Indices into ``candidates``, best first.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelkit import GaussianProcessRegressor
    >>> from kernelkit.bo import suggest
    >>> X = np.linspace(0, 1, 8)[:, None]
    >>> gp = GaussianProcessRegressor().fit(X, np.sin(6 * X[:, 0]))
    >>> grid = np.linspace(0, 1, 101)[:, None]
    >>> suggest(gp, grid, n=2).shape
    (2,)
    """
    _check_arguments(n, acquisition, batch, xi, beta)
    sign = 1.0 if maximize else -1.0
    shape = getattr(candidates, "shape", None)
    m = int(shape[0]) if shape is not None and len(shape) else len(candidates)
    allowed = np.ones(m, dtype=bool)
    if exclude is not None:
        ex = np.asarray(exclude, dtype=np.int64).ravel()
        if ex.size and (ex.min() < -m or ex.max() >= m):
            raise InputError(f"exclude: expected indices in [0, {m}), got {ex.tolist()[:5]}...")
        allowed[ex] = False
    if allowed.sum() < n:
        raise InputError(f"n: asked for {n} candidates, only {int(allowed.sum())} are allowed")
    thompson = acquisition == "thompson" or (n > 1 and batch == "thompson")
    f_best = 0.0 if acquisition == "ucb" and not thompson else _incumbent(model, best, sign)
    mean, std = model.predict(candidates, return_std=True)
    mu, sd = sign * _vector(mean, "mean", m), _vector(std, "std", m)
    if not thompson:
        score = _score(acquisition, mu, sd, f_best, float(xi), float(beta))
        score[torch.as_tensor(~allowed)] = -torch.inf
        if n == 1:
            return np.array([int(torch.argmax(score))])
        pool = _pool(score, allowed, options().bo_batch_candidates)
        return pool[_believer(model, candidates, pool, n, acquisition, f_best, xi, beta, sign)]
    pool = _pool(mu + 3 * sd, allowed, options().bo_batch_candidates)
    _, cov = model.predict(_take(candidates, pool), return_cov=True)
    mu_p = mu[torch.as_tensor(pool)]
    C = torch.as_tensor(np.asarray(cov, dtype=np.float64))
    L = cholesky_factor(C, name="cov").factor
    rng = check_random_state(random_state)
    z = torch.as_tensor(rng.standard_normal((len(pool), n)), dtype=L.dtype)
    draws = mu_p[:, None] + L @ z
    chosen: list[int] = []
    for k in range(n):
        d = draws[:, k].clone()
        d[chosen] = -torch.inf
        chosen.append(int(torch.argmax(d)))
    return pool[np.array(chosen)]


def _pool(score: torch.Tensor, allowed: np.ndarray, size: int) -> np.ndarray:
    """Indices of the allowed candidates, the ``size`` best by ``score`` when more."""
    idx = np.flatnonzero(allowed)
    if len(idx) <= size:
        return idx
    order = torch.argsort(score[torch.as_tensor(idx)], descending=True)[:size]
    return np.sort(idx[order.numpy()])


def _believer(
    model: Any,
    candidates: Any,
    pool: np.ndarray,
    n: int,
    acquisition: str,
    f_best: float,
    xi: float,
    beta: float,
    sign: float,
) -> np.ndarray:
    """Kriging-believer batch among ``pool`` (positions into it; see :func:`suggest`)."""
    mean, cov = model.predict(_take(candidates, pool), return_cov=True)
    mu = sign * _vector(mean, "mean", len(pool))
    C = torch.as_tensor(np.asarray(cov, dtype=np.float64)).clone()
    chosen: list[int] = []
    for _ in range(n):
        sd = C.diagonal().clamp_min(0.0).sqrt()
        score = _score(acquisition, mu, sd, f_best, float(xi), float(beta))
        score[chosen] = -torch.inf
        j = int(torch.argmax(score))
        chosen.append(j)
        f_best = max(f_best, float(mu[j])) if acquisition != "ucb" else f_best
        c = C[:, j].clone()
        if float(c[j]) > 0:
            C -= torch.outer(c, c) / c[j]
    return np.array(chosen)
