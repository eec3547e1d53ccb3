r"""Fisher kernels: inner products of Fisher scores of a generative model.

Course part 2, section 2 ("Kernels from probabilistic models"; Jaakkola & Haussler 1999):
the Fisher score ``Phi(x) = grad_theta log P_theta(x)`` at a fitted ``theta_0`` and the
kernel ``K(x, y) = Phi(x)^T I^{-1} Phi(y)``, p.d. with ``I`` positive definite or replaced by
the identity (common in practice).  The kernels here have explicit features (a tensor from
:meth:`features`), so the Gram is one product.

* :class:`FisherVector`: the Gaussian-mixture Fisher vector of Perronnin & Dance (2007), the
  mean and standard-deviation scores normalised by the diagonal closed-form approximation of
  ``I^{-1/2}``.
* :class:`HMMFisher`: the score of a discrete hidden Markov model on strings with respect to
  its emission parameters, posteriors from hmmlearn's forward-backward.
* :class:`HMMMarginalized`: the marginalised count kernel of the same HMM (Tsuda et al. 2002,
  course part 2, section 2), the expected (symbol, state) counts under those posteriors, or
  (``order=2``) the expected counts of adjacent (symbol, state) pairs under the pairwise
  posteriors of a scaled forward-backward pass (:func:`pair_posteriors`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.data._strings import StringBatch
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._strings_base import _StringKernel
from kernelkit.utils._errors import InputError
from kernelkit.utils._optional import require


def _probabilities(value: Any, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A float64 array of probabilities summing to 1 along its last axis."""
    arr = np.array(value, dtype=np.float64)
    if shape is not None and arr.shape != shape:
        raise InputError(f"{name}: expected shape {shape}, got {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any() or not np.allclose(arr.sum(-1), 1.0):
        raise InputError(f"{name}: expected non-negative probabilities summing to 1 along rows")
    return arr


class FisherVector(Kernel):
    r"""The Fisher kernel of a diagonal Gaussian mixture: ``K = <phi(x), phi(y)>``.

    For a mixture with weights ``pi_j``, means ``mu_j`` and standard deviations ``sigma_j``
    (diagonal) and soft assignments ``gamma_j(x) = pi_j N(x; mu_j, sigma_j) / sum_l ...``,
    the Fisher vector of ``x`` (Perronnin & Dance 2007; course part 2, section 2) is

    .. math:: \phi_{\mu_j}(x) = \frac{\gamma_j(x)}{\sqrt{\pi_j}} \frac{x - \mu_j}{\sigma_j},
              \qquad
              \phi_{\sigma_j}(x) = \frac{\gamma_j(x)}{\sqrt{2 \pi_j}}
              \Big(\frac{(x - \mu_j)^2}{\sigma_j^2} - 1\Big)

    (elementwise), of dimension ``2 k p``: the gradients of ``log P(x)`` in ``mu_j`` and
    ``sigma_j`` multiplied by ``sigma_j / sqrt(pi_j)`` and ``sigma_j / sqrt(2 pi_j)``, the
    diagonal closed-form approximation of ``I^{-1/2}``; the ``pi`` scores are dropped.  For
    a set of descriptors the course averages these over the set; here each item is one
    vector.

    Parameters
    ----------
    weights : array-like, shape (k,)
        Mixture weights (non-negative, summing to 1).
    means : array-like, shape (k, p)
        Component means.
    variances : array-like, shape (k, p)
        Diagonal variances ``sigma_j^2 > 0``.
    """

    def __init__(self, weights: Any, means: Any, variances: Any):
        super().__init__()
        self.weights, self.means, self.variances = weights, means, variances
        self._pi = _probabilities(weights, "weights")
        self._mu = np.array(means, dtype=np.float64)
        self._var = np.array(variances, dtype=np.float64)
        k = len(self._pi)
        if self._mu.ndim != 2 or self._mu.shape[0] != k:
            raise InputError(f"means: expected shape ({k}, p), got {self._mu.shape}")
        if self._var.shape != self._mu.shape or not (self._var > 0).all():
            raise InputError(
                f"variances: expected positive values of shape {self._mu.shape} (as means), "
                f"got shape {self._var.shape}"
            )

    @classmethod
    def from_mixture(cls, mixture: Any) -> FisherVector:
        """From a fitted ``sklearn.mixture.GaussianMixture(covariance_type="diag")``."""
        if getattr(mixture, "covariance_type", None) != "diag":
            raise InputError(
                "mixture: expected a fitted GaussianMixture with covariance_type='diag', got "
                f"{mixture!r}"
            )
        return cls(mixture.weights_, mixture.means_, mixture.covariances_)

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        g = torch.Generator().manual_seed(0)
        X = torch.randn(10, 2, generator=g, dtype=torch.float64)
        kernel = cls([0.3, 0.7], [[0.0, 0.0], [1.0, -1.0]], [[1.0, 0.5], [2.0, 1.0]])
        return kernel, X, torch.randn(6, 2, generator=g, dtype=torch.float64)

    def features(self, X: torch.Tensor) -> torch.Tensor:
        """Fisher vectors, shape ``(n, 2 k p)``: the ``mu`` block then the ``sigma`` block."""
        mu = torch.as_tensor(self._mu, dtype=X.dtype, device=X.device)
        var = torch.as_tensor(self._var, dtype=X.dtype, device=X.device)
        pi = torch.as_tensor(self._pi, dtype=X.dtype, device=X.device)
        if X.shape[1] != mu.shape[1]:
            raise InputError(f"X: expected {mu.shape[1]} features (as means), got {X.shape[1]}")
        z = (X[:, None, :] - mu[None]) / var.sqrt()[None]  # (n, k, p)
        log_p = -0.5 * (z**2 + torch.log(2 * math.pi * var)[None]).sum(-1) + torch.log(pi)
        gamma = torch.softmax(log_p, dim=1)[:, :, None]  # (n, k, 1)
        phi_mu = gamma * z / pi.sqrt()[None, :, None]
        phi_sigma = gamma * (z**2 - 1.0) / (2.0 * pi).sqrt()[None, :, None]
        return torch.cat([phi_mu.flatten(1), phi_sigma.flatten(1)], dim=1)

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        return self.features(X) @ self.features(Y).T

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return (self.features(X) ** 2).sum(1)


class _HMMStringKernel(_StringKernel):
    """A kernel built from a discrete HMM's state posteriors on strings (hmmlearn)."""

    _centred: ClassVar[bool]  # features centred by the emission probabilities (Fisher score)

    def __init__(self, startprob: Any, transmat: Any, emissionprob: Any, alphabet: str = "dna"):
        super().__init__()
        self.startprob, self.transmat, self.emissionprob = startprob, transmat, emissionprob
        self._start = _probabilities(startprob, "startprob")
        S = len(self._start)
        self._trans = _probabilities(transmat, "transmat", (S, S))
        if alphabet is None:
            raise InputError(
                f"alphabet: {type(self).__name__} needs the alphabet of its emissions, got None"
            )
        self.alphabet = alphabet
        A = len(self._alphabet_chars())
        self._emit = _probabilities(emissionprob, "emissionprob", (S, A))

    @classmethod
    def from_hmm(cls, model: Any, alphabet: str) -> _HMMStringKernel:
        """From a fitted ``hmmlearn.hmm.CategoricalHMM`` whose symbols index ``alphabet``."""
        return cls(model.startprob_, model.transmat_, model.emissionprob_, alphabet)

    @classmethod
    def _example(cls) -> tuple[Kernel, Any, Any]:
        """A two-state DNA model with strings of several lengths (the conformance example)."""
        kernel = cls(
            [0.6, 0.4], [[0.9, 0.1], [0.2, 0.8]], [[0.4, 0.1, 0.1, 0.4], [0.1] * 3 + [0.7]]
        )
        return kernel, ["GATTACA", "ACGT", "TTTTT", "GCGCGC", "A", "CATCATG"], ["TTAG", "GGG"]

    def _model(self) -> Any:
        hmm = require("hmmlearn.hmm", purpose=f"The {type(self).__name__} kernel")
        model = hmm.CategoricalHMM(n_components=len(self._start), init_params="", params="")
        model.n_features = self._emit.shape[1]
        model.startprob_, model.transmat_ = self._start, self._trans
        model.emissionprob_ = self._emit
        return model

    def _known(self, X: StringBatch) -> StringBatch:
        """``X`` encoded with the kernel's alphabet; the unknown residue is refused by name."""
        X = self._encoded(X)
        if not X.known.all():
            p = int(np.argmin(X.known))
            i = int(np.searchsorted(X.offsets, p, side="right") - 1)
            raise InputError(
                f"X: sequence {i} has the unknown-residue letter at position "
                f"{p - int(X.offsets[i])}; {type(self).__name__} needs letters its HMM emits "
                f"({self._alphabet_chars()!r}); drop or replace the unknown residues"
            )
        return X

    def features(self, X: StringBatch) -> torch.Tensor:
        """``sum_t P(y_t = s | x) (1[x_t = a] - c b_{s,a})``, shape ``(n, S A)`` (state-major).

        ``c = 1`` for the Fisher score (``_centred``), ``c = 0`` for the expected counts.

        Raises
        ------
        InputError
            For the unknown-residue letter (``N``, ``X``): an emission needs a known letter.
        """
        X = self._known(X)
        lengths = X.lengths
        S, A = self._emit.shape
        out = np.zeros((len(X), S, A))
        nonempty = lengths > 0
        if nonempty.any():
            codes = X.codes.reshape(-1, 1)
            post = self._model().predict_proba(codes, lengths[nonempty])  # (T, S)
            onehot = np.eye(A)[X.codes]  # (T, A)
            centre = self._emit[None] if self._centred else 0.0
            per_t = post[:, :, None] * (onehot[:, None, :] - centre)
            starts = X.offsets[:-1][nonempty]
            out[nonempty] = np.add.reduceat(per_t, starts, axis=0)
        return torch.as_tensor(out.reshape(len(X), S * A))

    def block(self, X: StringBatch, Y: StringBatch) -> torch.Tensor:
        FX = self.features(X)
        return FX @ (FX if Y is X else self.features(Y)).T

    def block_diag(self, X: StringBatch) -> torch.Tensor:
        return (self.features(X) ** 2).sum(1)


class HMMFisher(_HMMStringKernel):
    r"""The Fisher kernel of a discrete hidden Markov model on strings (Jaakkola & Haussler).

    For an HMM with emission probabilities ``b_s = softmax(eta_s)`` over the alphabet, the
    score of a string ``x`` with respect to the emission logits is

    .. math:: U_{s, a}(x) = \frac{\partial \log P(x)}{\partial \eta_{s, a}}
              = \sum_t P(y_t = s \mid x) \big(\mathbb{1}[x_t = a] - b_{s, a}\big),

    the expected emission counts minus their expectation under the model (state posteriors
    by forward-backward, from hmmlearn's ``CategoricalHMM.predict_proba``).  The kernel is
    ``K(x, y) = <U(x), U(y)>`` (identity in place of the Fisher information; course part 2,
    section 2); ``.normalized()`` gives the cosine.  p.d. (explicit features).

    Parameters
    ----------
    startprob : array-like, shape (S,)
        Initial state distribution.
    transmat : array-like, shape (S, S)
        Transition matrix (rows sum to 1).
    emissionprob : array-like, shape (S, A)
        Emission probabilities over the alphabet's ``A`` characters (rows sum to 1).
    alphabet : "dna", "rna", "protein" or str
        The characters, in the order of ``emissionprob``'s columns.
    """

    _centred: ClassVar[bool] = True

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        return cls._example()


class HMMMarginalized(_HMMStringKernel):
    r"""The marginalised count kernel of a discrete hidden Markov model (Tsuda et al. 2002).

    A marginalised kernel averages a kernel ``K_Z`` on (visible, hidden) pairs over the hidden
    states' posteriors, ``K(x, x') = sum_{h, h'} P(h | x) P(h' | x') K_Z((x, h), (x', h'))``,
    p.d. whenever ``K_Z`` is (course part 2, section 2).  With ``K_Z`` the count kernel of
    (symbol, state) pairs, ``K_Z = sum_{a, s} c_{a,s}(x, h) c_{a,s}(x', h')`` where
    ``c_{a,s}(x, h) = #{t : x_t = a, h_t = s}``, the average factorises into

    .. math:: K(x, x') = \sum_{a, s} \Phi_{a,s}(x) \Phi_{a,s}(x'),\qquad
              \Phi_{a,s}(x) = \sum_t \mathbb{1}[x_t = a] P(y_t = s \mid x),

    the expected (symbol, state) counts (the course's 1-spectrum marginalised over HMM states;
    state posteriors by hmmlearn's forward-backward).  Tsuda et al. divide ``Phi`` by ``|x|``;
    ``.normalized()`` removes the length scale altogether.  p.d. (explicit features).

    The second-order marginalised count kernel (``order=2``; Tsuda et al. 2002, section 4)
    counts adjacent pairs,

    .. math:: \Phi_{(a,s),(b,u)}(x) = \sum_{t=1}^{|x|-1} \mathbb{1}[x_t = a, x_{t+1} = b]\,
              P(y_t = s, y_{t+1} = u \mid x),

    with the pairwise posteriors of :func:`pair_posteriors`.

    Parameters
    ----------
    startprob, transmat, emissionprob, alphabet
        The HMM and its alphabet, as for :class:`HMMFisher`.
    order : {1, 2}, default 1
        Count single (symbol, state) pairs or adjacent pairs of them.
    """

    _centred: ClassVar[bool] = False

    def __init__(
        self,
        startprob: Any,
        transmat: Any,
        emissionprob: Any,
        alphabet: str = "dna",
        order: int = 1,
    ):
        super().__init__(startprob, transmat, emissionprob, alphabet)
        if order not in (1, 2):
            raise InputError(f"order: expected 1 or 2, got {order!r}")
        self.order = order

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        kernel, X, Y = cls._example()
        second = cls(kernel.startprob, kernel.transmat, kernel.emissionprob, order=2)
        return [(kernel, X, Y), (second, X, Y)]

    def features(self, X: StringBatch) -> torch.Tensor:
        """Expected counts: ``(n, S A)`` for ``order=1``, ``(n, (S A)^2)`` for ``order=2``
        (index ``((s A + a) S + u) A + b``)."""
        if self.order == 1:
            return super().features(X)
        X = self._known(X)
        S, A = self._emit.shape
        out = np.zeros((len(X), S, A, S, A))
        for i, seq in enumerate(np.split(X.codes, X.offsets[1:-1])):
            if len(seq) < 2:
                continue
            xi = pair_posteriors(seq, self._start, self._trans, self._emit)  # (T-1, S, S)
            for t in range(len(seq) - 1):
                out[i, :, seq[t], :, seq[t + 1]] += xi[t]
        return torch.as_tensor(out.reshape(len(X), (S * A) ** 2))


def pair_posteriors(
    codes: np.ndarray, start: np.ndarray, trans: np.ndarray, emit: np.ndarray
) -> np.ndarray:
    """``P(y_t = s, y_{t+1} = u | x)`` for ``t < |x| - 1``, shape ``(|x| - 1, S, S)``.

    Scaled forward-backward (Rabiner 1989, section V.A): ``alpha_t`` normalised by
    ``c_t = sum_s alpha_t(s)``, ``beta_t`` by the same constants, and
    ``xi_t(s, u) = alpha_t(s) T(s, u) B(u, x_{t+1}) beta_{t+1}(u) / c_{t+1}``.
    """
    T, S = len(codes), len(start)
    alpha, beta, scale = np.zeros((T, S)), np.ones((T, S)), np.zeros(T)
    a = start * emit[:, codes[0]]
    for t in range(T):
        if t:
            a = (alpha[t - 1] @ trans) * emit[:, codes[t]]
        scale[t] = a.sum()
        alpha[t] = a / scale[t]
    for t in range(T - 2, -1, -1):
        beta[t] = trans @ (emit[:, codes[t + 1]] * beta[t + 1]) / scale[t + 1]
    right = emit[:, codes[1:]].T * beta[1:] / scale[1:, None]  # (T-1, S)
    return alpha[:-1, :, None] * trans[None] * right[:, None, :]


__all__ = ["FisherVector", "HMMFisher", "HMMMarginalized", "pair_posteriors"]
