r"""Minibatch training of a landmark kernel autoencoder (KAE / K2AE at scale).

In landmark mode (Laforgue, Clémençon, d'Alché-Buc 2019, objective (4)/(5) with every layer
expanded over ``m`` landmark images, :mod:`kernelkit.models._autoencoder`) the objective is a
mean over the ``n`` training points plus penalties that depend on the landmarks only:

.. math:: J(\theta, \Phi_L) = \frac1n \sum_{i=1}^n \big(k(x_i, x_i) - \|b_i\|^2
          + \|b_i - \Phi_L^T c_i(\theta)\|^2\big) + \lambda_L \mathrm{tr}(\Phi_L^T K_L \Phi_L)
          + \sum_{l<L} \lambda_l \|f_l\|^2,

with ``b_i`` the coordinates of the output (the input ``x_i`` of a KAE; the Nyström
coordinates ``R^{-1} k_in(ref, x_i)`` of ``phi(x_i)`` for a K2AE), ``c_i = k_L(z_i, s)`` the
last layer's Gram row of the code ``z_i`` against the landmark codes ``s`` and ``K_L = k_L(s,
s)``.  The first-layer Gram rows ``k_1(x_i, ref)`` and ``b_i`` are fixed (the landmark Grams
do not move), so one pass over the data costs ``O(n m (p + r))`` (``p`` the layer widths,
``r`` the output rank: ``d`` for a KAE, ``m`` for a K2AE).

:func:`train_minibatch` runs Adam (Kingma & Ba 2015; the default minibatch solver of
scikit-learn's ``MLPRegressor``) on the inner layers' coefficients over shuffled minibatches
``I``, each step on the landmark objective of the minibatch alone, the last layer in closed
form inside it (variable projection on ``I``: ``min_Phi (1/|I|) sum_{i in I} ||b_i - Phi^T
c_i||^2 + lam_L tr(Phi^T K_L Phi)``, :func:`kernelkit.models.ridge_loss_projected`, gradient
through the closed form as in the full-batch fit).  After every epoch one streamed pass
(:func:`head_statistics`) accumulates the ``m x m`` and ``m x r`` sums ``C^T C`` and ``C^T B``
tile by tile in float64 and gives the exact closed-form last layer of all the data,
``Phi_L = M^{-1} C^T B`` with ``M = C^T C + n lam_L K_L``, and the exact objective
``(1/n)(tr K_out - tr(M^{-1} P^T P)) + inner penalties`` (``P = B^T C``), equal to the
full-batch landmark objective; the best epoch is kept.  A step costs ``O(b m (p + m + r) +
m^3)`` for a batch of ``b`` rows, an epoch ``O(n m (p + m + r))`` for ``b >= m``.

Why the last layer is re-solved on every minibatch: its coefficients are attached to the
landmark codes ``s``, which move with every step of the inner layers, so a last layer held
fixed over an epoch (Algorithm 1 of the paper, section 4.3, made stochastic: Adam steps on
the unbiased minibatch estimate ``(1/|I|) sum ||b_i - Phi_L^T c_i||^2`` at fixed ``Phi_L``)
stalls: on 4000 points (5-d, 100 landmarks, code 3) it stayed at objectives 0.30-0.43 after
20 epochs where the full-batch L-BFGS reaches 0.108, and the minibatch variable projection
0.118 (``batch_size`` 400, ``lr`` 1e-2).  The minibatch closed form is a biased estimate
(a ratio of minibatch sums, bias ``O(m / b)``), hence ``batch_size`` a few times ``m``.
Adam rather than a stochastic L-BFGS: curvature pairs from minibatch gradients are dominated
by sampling noise unless they are computed on a common batch (Byrd et al. 2016), which
doubles the passes; Adam needs one gradient per step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from kernelkit.models._autoencoder import AutoencoderData, KernelAutoencoderModel
from kernelkit.solvers import cholesky_factor
from kernelkit.solvers._cholesky import solve_triangular
from kernelkit.solvers._optimizers import first_order_optimizer
from kernelkit.solvers._training import Step, TrainResult, descend, patience, train_loop
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import Progress

__all__ = [
    "HeadSolution",
    "MinibatchResult",
    "StreamingData",
    "head_statistics",
    "row_tiles",
    "solve_head",
    "train_minibatch",
]


@dataclass
class StreamingData:
    """A landmark autoencoder's training data, read by rows.

    Attributes
    ----------
    K1_support : tensor, shape (m, m)
        First-layer Gram of the landmarks.
    rows : callable
        ``rows(index) -> (K1_rows, B_rows)``: the first-layer Gram rows ``k_1(x_i, ref)``
        (``b x m``) and the output coordinates ``b_i`` (``b x r``) of the points ``index``.
    n : int
        Number of training points.
    out_trace : float
        ``sum_i k(x_i, x_i)`` (K2AE) or ``sum_i ||x_i||^2`` (KAE).
    """

    K1_support: torch.Tensor
    rows: Callable[[np.ndarray], tuple[torch.Tensor, torch.Tensor]]
    n: int
    out_trace: float


@dataclass
class HeadSolution:
    """The closed-form last layer and the exact objective at the current inner layers."""

    coef: torch.Tensor
    supports: list[torch.Tensor]
    objective: float


@dataclass
class MinibatchResult(TrainResult):
    """:class:`~kernelkit.solvers.TrainResult` of :func:`train_minibatch`.

    ``history`` holds the exact objective after every epoch (the first entry at the start);
    ``n_iter`` counts epochs and ``n_eval`` Adam steps; ``head`` is the closed-form last layer
    of the best epoch.
    """

    head: HeadSolution | None = None


def row_tiles(n: int, rows: int) -> Iterator[np.ndarray]:
    """Consecutive index blocks ``[r0, r1)`` of at most ``rows`` rows covering ``range(n)``."""
    for r0 in range(0, n, rows):
        yield np.arange(r0, min(r0 + rows, n))


@torch.no_grad()
def head_statistics(
    model: KernelAutoencoderModel, data: StreamingData, tile: int
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor], torch.Tensor]:
    """``C^T C`` and ``C^T B`` (float64, summed over row tiles), the support images and the
    inner penalty ``sum_l lam_l ||f_l||^2``."""
    CtC = CtB = None
    passed = None
    for index in row_tiles(data.n, tile):
        K1, B = data.rows(index)
        passed = model.chain.forward_train(K1, data.K1_support)
        C = model.head_gram(passed.outputs[-1], passed.supports[-1]).to(torch.float64)
        B = B.to(torch.float64)
        CtC = C.mT @ C if CtC is None else CtC.add_(C.mT @ C)
        CtB = C.mT @ B if CtB is None else CtB.add_(C.mT @ B)
    assert passed is not None and CtC is not None and CtB is not None
    inner = sum(lam * nrm for lam, nrm in zip(model.lam[:-1], passed.norms, strict=True))
    return CtC, CtB, passed.supports, torch.as_tensor(inner, dtype=torch.float64)


@torch.no_grad()
def head_from_statistics(
    model: KernelAutoencoderModel,
    CtC: torch.Tensor,
    CtB: torch.Tensor,
    supports: list[torch.Tensor],
    n: int,
    out_trace: float,
    inner: float,
) -> HeadSolution:
    r"""``Phi_L = M^{-1} C^T B`` and ``J = (tr K_out - ||F^{-1} C^T B||^2) / n + inner`` with
    ``M = C^T C + n lam_L K_L = F F^T`` (the formula of
    :func:`kernelkit.models.ridge_loss_projected` from the sums ``C^T C``, ``C^T B``)."""
    S = supports[-1]
    M = CtC + (n * model.lam[-1]) * model.head_gram(S, S).to(torch.float64)
    factor = cholesky_factor(0.5 * (M + M.mT), name="C^T C + n lam K_mm")
    T = solve_triangular(factor.factor, CtB)
    value = (out_trace - float((T * T).sum())) / n + inner
    return HeadSolution(factor.solve(CtB).to(S.dtype), [s.detach() for s in supports], value)


@torch.no_grad()
def solve_head(model: KernelAutoencoderModel, data: StreamingData, tile: int) -> HeadSolution:
    """The optimal last layer and the exact objective, by one streamed pass
    (:func:`head_statistics`, :func:`head_from_statistics`)."""
    CtC, CtB, supports, inner = head_statistics(model, data, tile)
    return head_from_statistics(model, CtC, CtB, supports, data.n, data.out_trace, float(inner))


def train_minibatch(
    model: KernelAutoencoderModel,
    data: StreamingData,
    *,
    batch_size: int,
    max_iter: int = 300,
    lr: float = 1e-2,
    tol: float = 1e-5,
    n_iter_no_change: int = 10,
    random_state: int = 0,
    tile: int = 8192,
    progress: Progress | None = None,
) -> MinibatchResult:
    """Train the inner layers by minibatch Adam on the minibatch landmark objective (last
    layer in closed form on each minibatch); exact last layer and objective after each epoch.

    Parameters
    ----------
    model : KernelAutoencoderModel
        A landmark autoencoder with a closed-form last layer.
    data : StreamingData
        Row access to the training data.
    batch_size : int
        Rows per Adam step (the last batch of an epoch may be smaller).
    max_iter : int
        Most epochs (passes over the data, as scikit-learn's MLP counts ``max_iter``).
    lr : float
        Adam's step size (scikit-learn's ``learning_rate_init``).
    tol, n_iter_no_change : float, int
        Stop when for ``n_iter_no_change`` consecutive epochs the exact objective has not
        fallen below the best one by more than ``tol * |J_0|`` (scikit-learn's MLP rule with a
        tolerance relative to the initial objective ``J_0``).
    random_state : int
        Seed of the shuffling.
    tile : int
        Rows per tile of the streamed pass (:func:`solve_head`).
    progress : Progress, optional
        Receives the exact objective after every epoch.

    Returns
    -------
    MinibatchResult
        The model is left at the inner layers of the best epoch; ``result.head`` is its last
        layer.  The epochs run in :func:`kernelkit.solvers.train_loop` (best epoch kept,
        non-finite stop).
    """
    if not model.closed_form:
        raise InputError("model: minibatch training needs a closed-form last layer")
    params = [p for p in model.chain.parameters() if p.requires_grad]
    opt = first_order_optimizer("adam", params, lr=lr)
    rng = np.random.default_rng(random_state)
    steps = 0

    def epoch(it: int) -> Step:
        nonlocal steps
        for index in np.array_split(rng.permutation(data.n), max(1, -(-data.n // batch_size))):
            K1, B = data.rows(np.sort(index))
            descend(opt, model.objective(AutoencoderData(K1, B, 0.0, data.K1_support))[0])
            steps += 1
        head = solve_head(model, data, tile)
        return Step(head.objective, payload=head)

    head = solve_head(model, data, tile)
    run = train_loop(
        model,
        epoch,
        max_iter=max_iter,
        stop=patience(n_iter_no_change),
        improvement=tol * abs(head.objective),
        start=Step(head.objective, payload=head),
        progress=progress,
        unit="epoch",
    )
    fields = {k: v for k, v in vars(run).items() if k != "n_eval"}
    return MinibatchResult(**fields, n_eval=steps, head=run.best_payload)
