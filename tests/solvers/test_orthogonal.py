"""Column-pivoted QR, polar factor and Procrustes rotation against independent oracles."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from kernelkit.solvers._orthogonal import column_pivots, polar_factor, procrustes_rotation

RNG = np.random.default_rng(11)


def _greedy_pivots(A: np.ndarray, k: int) -> list[int]:
    """Businger-Golub by brute force: repeatedly take the column of largest norm after
    projecting out the columns already taken (Gram-Schmidt on the chosen ones)."""
    R = A.astype(float).copy()
    chosen: list[int] = []
    for _ in range(k):
        norms = np.linalg.norm(R, axis=0)
        norms[chosen] = -1.0
        j = int(norms.argmax())
        chosen.append(j)
        q = R[:, j] / np.linalg.norm(R[:, j])
        R = R - np.outer(q, q @ R)
    return chosen


def test_column_pivots_follow_the_greedy_rule():
    V = RNG.normal(size=(4, 30)) * np.linspace(1.0, 3.0, 30)  # distinct norms: no ties
    assert list(column_pivots(V)[:4]) == _greedy_pivots(V, 4)
    assert sorted(column_pivots(V)) == list(range(30))


def test_polar_factor_is_orthogonal_with_a_psd_symmetric_part():
    A = RNG.normal(size=(5, 5))
    Q = polar_factor(A)
    np.testing.assert_allclose(Q.T @ Q, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(Q, scipy.linalg.polar(A)[0], atol=1e-10)
    P = Q.T @ A
    np.testing.assert_allclose(P, P.T, atol=1e-12)
    assert np.linalg.eigvalsh((P + P.T) / 2).min() > -1e-12


def test_procrustes_rotation_matches_scipy_orthogonal_procrustes():
    M = RNG.normal(size=(6, 6))
    Q, trace = procrustes_rotation(M)
    R, scale = scipy.linalg.orthogonal_procrustes(np.eye(6), M)
    np.testing.assert_allclose(Q, R, atol=1e-10)
    assert abs(trace - scale) < 1e-10 and abs(np.trace(Q.T @ M) - trace) < 1e-10
