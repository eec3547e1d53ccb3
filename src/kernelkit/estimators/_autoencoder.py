r"""Kernel autoencoders as a scikit-learn transformer (Laforgue, Clémençon, d'Alché-Buc 2019).

:class:`KernelAutoencoder` fits the KAE of objective (4) on vectors (``input_kernel=None``) or
the K2AE of objective (5) on anything a kernel takes (``input_kernel`` a kernel on strings,
graphs, molecules, ... or ``Precomputed()``), with the engine of :mod:`kernelkit.models`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.data import detect_input_kind
from kernelkit.estimators._autoencoder_lam import (
    AUTO_FALLBACK_LAM,
    ae_lam_grid,
    auto_split,
    fit_auto,
    lam_curve,
)
from kernelkit.estimators._autoencoder_minibatch import fit_minibatch
from kernelkit.estimators._autoencoder_setup import (
    FitSetup,
    check_params,
    fit_full_batch,
    supports_and_first_kernel,
)
from kernelkit.estimators._base import (
    MEMORY_BUDGET_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    result_dtype,
    warn_max_iter,
)
from kernelkit.estimators._preimage import (
    chosen,
    nearest_candidates,
    pick,
    squared_code_distances,
)
from kernelkit.gram import gram
from kernelkit.gram._centres import take
from kernelkit.gram._nystrom import CENTRE_METHODS
from kernelkit.kernels import Kernel, Linear
from kernelkit.kernels._base import Batch
from kernelkit.models._autoencoder import reconstruction_errors
from kernelkit.models._autoencoder_minibatch import row_tiles
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._seeding import RandomStateLike, as_seed
from kernelkit.utils._validation import like_input, owned, to_tensor

__all__ = ["KernelAutoencoder"]


class KernelAutoencoder(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, KernelEstimatorMixin, BaseEstimator
):
    r"""Kernel autoencoder (KAE) and kernel-input kernel autoencoder (K2AE).

    Minimises objective (4) of Laforgue et al. (2019), section 2.4,

    .. math:: \frac1n \sum_i \|x_i - f_L \circ\dots\circ f_1(x_i)\|^2
              + \sum_{l=1}^L \lambda_l \|f_l\|^2_{\mathcal H_l},

    over layers of vector-valued RKHSs with decomposable kernels ``k_l(., .) A_l`` (eq. 10),
    parameterised by the representer theorem (Theorem 6).  With ``input_kernel`` set, ``x_i``
    is replaced by its feature map ``phi(x_i)`` (objective (5), the K2AE): the data are used
    only through ``K_in``, the last layer is infinite-dimensional and solved in closed form
    (eqs. 13, 54), and the reconstruction error is measured in the input kernel's RKHS
    (appendix B.7).  Closed forms carry ``n * lam`` (ERM convention
    ``(1/n) sum loss + lam ||f||^2``; scikit-learn's ``KernelRidge(alpha=n * lam)``).

    Parameters
    ----------
    dims : sequence of int
        Widths of the hidden layers between input and reconstruction: ``(10,)`` is the
        2-layer autoencoder with a 10-d code; ``(50, 10, 50)`` a 4-layer one.
    kernels : Kernel, sequence of L Kernel or None, optional
        Scalar kernel of each of the ``L = len(dims) + 1`` layers; one kernel is used for all.
        ``None`` (or a ``None`` entry): ``Gaussian(sigma)`` with the median heuristic on that
        layer's input at initialisation.  The first kernel acts on the input: on vectors
        directly, or for a K2AE on the feature space of ``input_kernel`` through ``K_in``
        (``Linear()``: the first layer's Gram is ``K_in``; ``Gaussian(sigma)``:
        ``exp(-d_in(x, y)^2 / (2 sigma^2))`` with the RKHS distance ``d_in``).
    input_kernel : Kernel, str or None, optional
        A kernel, kernel spec or scikit-learn name (``"precomputed"``: ``X`` is the Gram
        matrix) for the K2AE.  ``None``: a finite KAE on vectors, and on any other kind of
        input (sequences, molecules, graphs, detected by
        :func:`kernelkit.data.detect_input_kind`) the K2AE with that kind's default kernel
        (``Spectrum(k=3)``, ``Tanimoto()``, ``WeisfeilerLehman()``).
    lam : float, sequence of L floats or "auto"
        ``lam_l >= 0``; the last one must be ``> 0`` unless the last kernel is ``Linear()``.
        ``"auto"`` (default): one value for all layers, the one of ``ae_lam_grid() = (1e-5, ...,
        1e-1)`` whose fit on the rest of the training data (on a uniform subsample of
        ``autoencoder_grid_rows`` of it, an option of :func:`kernelkit.get_config`, when it is
        larger) has the lowest mean held-out reconstruction error on ``validation_fraction``
        of it (:mod:`kernelkit.estimators._autoencoder_lam`): fits from ``1e-1`` down,
        stopping at the first rise of the held-out error, then the best fit refitted on all
        the training data from its own functions (minibatch fits: every grid value on the
        whole fit part, then a refit).  With
        fewer than ``AUTO_MIN_VALIDATION = 10`` held-out points (``n < 95`` at the default
        fraction) it is ``AUTO_FALLBACK_LAM = 1e-3``, without a split.
    operators : sequence of L-1 PSD matrices, optional
        Operators ``A_l`` of the inner layers (``None``: identities).
    code_layer : int, optional
        Index in ``dims`` of the code returned by ``transform`` (default: the narrowest).
    closed_form : bool
        Solve the last layer in closed form inside the objective (variable projection).
        ``False`` trains it with the others (finite KAE only).
    algorithm : {"joint", "alternating"}
        ``joint``: all inner layers by ``optimizer`` with the exact gradient through the
        closed-form last layer; ``alternating``: the paper's Algorithm 1 (gradient steps of
        size ``lr`` with the last layer fixed, then its closed-form update).
    optimizer : {"lbfgs", "adam"}
        Full-batch L-BFGS (default) or Adam (rate ``lr``).
    max_iter : int
        Most iterations of the optimiser: L-BFGS iterations (each takes one or more objective
        evaluations in its line search; at most ``1.25 max_iter + 1`` evaluations in all),
        Adam steps or alternating epochs.  Stopping there warns with
        :class:`kernelkit.utils._errors.ConvergenceWarning`.
    tol : float
        Relative tolerance on the change of the objective: L-BFGS stops when two successive
        objectives differ by less than ``tol * |J_0|`` (``J_0`` the initial objective), the
        gradient's largest entry is below ``tol`` or the step's largest entry is below ``tol``
        times the largest initial coefficient.  The defaults (``max_iter=300``,
        ``tol=1e-5``) stop within 0.2% of the objective of ``tol=1e-7`` on the shipped
        molecules (``docs/measurements.md``).
    lr : float
        Step size of Adam and of the alternating algorithm.
    init : {"kpca", "random"}
        Kernel PCA map initialisation (section 3.2) or random.
    n_centers : int, optional
        Restrict every layer's representer expansion to ``m`` landmark points (Nyström
        centres; their images under the previous layers); the K2AE output Gram then enters
        through its Nyström factor on the same landmarks (the reconstruction error stays
        exact: the part of ``phi(x)`` orthogonal to the landmarks' span is added back).  Cost
        ``O(n m^2)`` per evaluation instead of ``O(n^3)``.  ``None``: the exact autoencoder;
        more than the training points: the exact one too, with a warning that says so.
    centers : {"uniform", "kmeans++", "greedy"} or array of points, default "uniform"
        How the landmarks are chosen among the training points, in the first layer's input
        feature space (:func:`kernelkit.gram._nystrom.choose_centres`: uniform sample,
        k-means++ seeding, greedy pivoted Cholesky), or the landmarks themselves (points of
        the input kind; ``n_centers`` is then ignored and the fit is in landmark mode).
    landmarks, landmark_method : optional
        Deprecated aliases of ``n_centers`` and ``centers`` (``landmark_method``'s
        ``"random"`` is ``"uniform"``, ``"kmeans"`` is ``"kmeans++"``; ``FutureWarning``,
        removed in the next release).
    random_state : int, RandomState, Generator or None
        Seed of the random initialisation and of the landmark choice (``None``: fresh
        entropy, so two fits differ; an int for reproducible fits).  A generator is
        consumed; fits from generators in the same state are identical (see
        :mod:`kernelkit.utils._seeding`).
    verbose : int, bool or callable
        ``0``: silent.  ``>= 1``: progress on stderr (:mod:`kernelkit.utils._progress`: a bar
        on a terminal, else ``[KernelAutoencoder] eval k/N objective=J`` lines, per 5% of
        ``N``, of L-BFGS evaluations (``N = 1.25 max_iter + 1``, their most), Adam steps
        (``step``, ``N = max_iter``) or epochs (``epoch``), and a final ``done after ...``
        line).  A callable ``report(evaluation, objective)`` is
        called at every evaluation instead (the command line's progress bar).
    memory_budget : int, optional
        Bytes of scratch memory allowed besides the Gram blocks themselves, with the meaning of
        :func:`kernelkit.gram.gram`: every Gram block (input kernel, first layer, the layers
        on the codes, the last layer) is computed by the tiled engine within it, and the
        blocks on the codes are differentiated tile by tile (:mod:`kernelkit.gram._autodiff`).
        ``None``: no limit (the blocks on the codes are evaluated whole, fastest).
    validation_fraction : float
        Fraction of the training data held out to choose ``lam`` when ``lam="auto"``
        (drawn with ``as_seed(random_state)``, as scikit-learn's ``MLPRegressor`` holds
        out ``validation_fraction`` for early stopping); unused otherwise.  ``lam="auto"``
        needs ``round(validation_fraction * n) >= 10`` held-out points, else it falls back.
    batch_size : int, optional
        ``None`` (default): full-batch training.  An int: minibatch training of a landmark
        autoencoder (needs ``landmarks`` and ``optimizer="adam"``;
        :mod:`kernelkit.models._autoencoder_minibatch`): Adam steps of rate ``lr`` on the
        inner layers over shuffled minibatches of ``batch_size`` points with the last layer
        fixed, then its closed form and the exact objective by one pass in row tiles, per
        epoch; ``max_iter`` counts epochs (as scikit-learn's ``MLPRegressor``).  The landmark
        Grams are fixed and the Gram rows of each minibatch are computed when needed, so an
        epoch costs ``O(n m (p + r))`` time (``p`` the layer widths, ``r`` the output rank:
        the input dimension of a KAE, ``m`` for a K2AE) and memory independent of ``n``
        besides the data and the codes.
    n_iter_no_change : int
        Minibatch training stops when for ``n_iter_no_change`` consecutive epochs the
        objective has not fallen below the best one by more than ``tol * |J_0|`` (the rule of
        scikit-learn's MLP, relative to the initial objective ``J_0``).

    Attributes
    ----------
    model_ : kernelkit.models.KernelAutoencoderModel
        The fitted layers.
    kernels_ : list of Kernel
        The kernel of every layer (resolved defaults); ``kernels_[0]`` acts on the input.
    codes_ : ndarray or tensor, shape (n_samples, dims[code_layer_])
        Training codes.
    history_ : list of float
        Objective along training: at every evaluation (full batch) or after every epoch, the
        first entry at the start (minibatches); with ``lam="auto"``, that of the refit on all
        the training data.  The curve of ``lam="auto"`` is ``lam_curve_``.
    objective_ : float
        Final objective on all the training data.
    n_iter_ : int
        Iterations used (``<= max_iter``; see ``max_iter``; the refit's with ``"auto"``).
    n_eval_ : int
        Objective evaluations used (the refit's with ``"auto"``).
    landmark_indices_ : ndarray or None
        Indices of the landmarks among the training points (-1 for landmarks given as
        points); ``None`` in exact mode.
    lam_ : float or sequence of float
        The ``lam`` of the fit (``lam``, the one ``"auto"`` chose, or its fallback ``1e-3``).
    lam_curve_ : list of (float, float) or None
        With ``lam="auto"``: ``(lam, mean held-out reconstruction error)`` for every grid
        value fitted (full batch: from the largest down, as fitted); ``None`` for a numeric
        ``lam`` and for the small-sample fallback.

    Notes
    -----
    Objective: objective (4) of Laforgue et al. (2019) (with ``input_kernel``, ``x_i`` is
    its feature ``phi(x_i)``, objective (5)),

    .. math:: \min_{f_1, \dots, f_L} \frac{1}{n} \sum_{i=1}^n
              \|x_i - f_L \circ \dots \circ f_1(x_i)\|^2 + \sum_{l=1}^L \lambda_l \|f_l\|^2.
    """

    def __init__(
        self,
        dims: Sequence[int] = (10,),
        kernels: Kernel | Sequence[Kernel | None] | None = None,
        input_kernel: Kernel | None = None,
        lam: float | Sequence[float] | str = "auto",
        *,
        operators: Sequence[Any] | None = None,
        code_layer: int | None = None,
        closed_form: bool = True,
        algorithm: str = "joint",
        optimizer: str = "lbfgs",
        max_iter: int = 300,
        tol: float = 1e-5,
        lr: float = 1e-2,
        init: str = "kpca",
        n_centers: int | None = None,
        centers: str | Any = "uniform",
        landmarks: int | None = None,
        landmark_method: str | None = None,
        random_state: RandomStateLike = None,
        verbose: int | bool | Callable[[int, float], None] = 0,
        memory_budget: int | None = None,
        validation_fraction: float = 0.1,
        batch_size: int | None = None,
        n_iter_no_change: int = 10,
    ):
        self.dims = dims
        self.kernels = kernels
        self.input_kernel = input_kernel
        self.lam = lam
        self.operators = operators
        self.code_layer = code_layer
        self.closed_form = closed_form
        self.algorithm = algorithm
        self.optimizer = optimizer
        self.max_iter = max_iter
        self.tol = tol
        self.lr = lr
        self.init = init
        self.n_centers = n_centers
        self.centers = centers
        self.landmarks = landmarks
        self.landmark_method = landmark_method
        self.random_state = random_state
        self.verbose = verbose
        self.memory_budget = memory_budget
        self.validation_fraction = validation_fraction
        self.batch_size = batch_size
        self.n_iter_no_change = n_iter_no_change

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "dims": [Interval(Integral, 1, None, closed="left"), list, tuple],
        "kernels": [Kernel, list, tuple, None],
        "input_kernel": [Kernel, str, None],
        "lam": [Interval(Real, 0, None, closed="left"), list, tuple, StrOptions({"auto"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "operators": [list, tuple, None],
        "code_layer": [Interval(Integral, 0, None, closed="left"), None],
        "closed_form": ["boolean"],
        "algorithm": [StrOptions({"joint", "alternating"})],
        "optimizer": [StrOptions({"lbfgs", "adam"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "lr": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"kpca", "random"})],
        "n_centers": [Interval(Integral, 1, None, closed="left"), None],
        "centers": [StrOptions(set(CENTRE_METHODS)), "array-like"],
        "landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "landmark_method": [StrOptions({"random", "kmeans"}), None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "verbose": VERBOSE_CONSTRAINT,
        "memory_budget": MEMORY_BUDGET_CONSTRAINT,
    }

    # the input handling of KernelEstimatorMixin reads ``kernel``
    @property
    def kernel(self) -> Kernel | None:  # type: ignore[override]
        return self.input_kernel

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None) -> KernelAutoencoder:
        """Fit the autoencoder on ``X`` (vectors, or anything ``input_kernel`` takes).

        With ``lam="auto"`` the fits of the grid are on the ``1 - validation_fraction`` part
        of ``X``, all with the one seed ``as_seed(random_state)`` (see ``lam``).
        """
        self._validate_params()
        lam, random_state = self.lam, self.random_state
        self.lam_curve_ = None
        if isinstance(lam, str):
            random_state = as_seed(random_state)
        dims, lams, kerns = check_params(self, ae_lam_grid()[-1] if isinstance(lam, str) else lam)
        if self.input_kernel is not None or detect_input_kind(X) is not InputKind.VECTOR:
            if not self.closed_form:
                raise InputError(
                    "closed_form: a K2AE (input_kernel set, or input that is not vectors) has "
                    "an infinite-dimensional last layer, which exists only in closed form; got "
                    "closed_form=False"
                )
            Xb = self._fit_X(X)
            self.input_kernel_ = self.kernel_
        else:
            self.input_kernel_ = None
            Xb = owned(self._prepare(Linear(), X, reset=True), X)
            self.X_fit_ = Xb
        n = len(Xb)
        split = None
        if isinstance(lam, str):
            split = auto_split(n, self.validation_fraction, random_state)
            lam = AUTO_FALLBACK_LAM if split is None else ae_lam_grid()[-1]
            if split is not None and self.batch_size is not None:
                self.lam_curve_ = lam_curve(self, X, random_state, split)
                lam, split = min(self.lam_curve_, key=lambda point: point[1])[0], None
            dims, lams, kerns = check_params(self, lam)
        idx, ref, first = supports_and_first_kernel(
            self, Xb, kerns[0], None if split is None else split[0], random_state
        )
        self.landmark_indices_ = idx
        setup = FitSetup(Xb, ref, first, dims, kerns, lams, random_state)
        if self.batch_size is not None:
            model, res = fit_minibatch(self, setup)
            self._head_coef, self.supports_ = res.head.coef, res.head.supports
            self.objective_ = res.best
        else:
            if split is None:
                model, res, data = fit_full_batch(self, setup)
            else:
                model, res, data, self.lam_curve_, lam = fit_auto(self, setup, split)
            self._head_coef, self.supports_ = model.head_coefficients(data)
            with torch.no_grad():
                self.objective_ = float(model.objective(data)[0])
                codes = model.chain.forward_train(data.K1, data.K1_support).outputs
        self.lam_ = lam
        if res.stopped == "max_iter":
            warn_max_iter(self, f"{res.n_eval} objective evaluations")
        self.model_ = model
        self.kernels_ = [
            first,
            *[layer.kernel for layer in model.chain.layers[1:]],
            model.head_kernel,
        ]
        self.history_ = res.history
        self.n_iter_ = res.n_iter
        self.n_eval_ = res.n_eval
        self.stopped_ = res.stopped
        self.n_layers_ = len(dims) + 1
        self.code_layer_ = int(np.argmin(dims)) if self.code_layer is None else int(self.code_layer)
        self.dims_ = dims
        self._ref = ref
        self.ref_ = like_input(ref, X) if isinstance(ref, torch.Tensor) else ref
        self.head_coef_ = like_input(self._head_coef, X)
        if self.batch_size is None:
            self.codes_ = like_input(codes[self.code_layer_].detach(), X)
        else:
            Z = self._rowwise(Xb, lambda _, K1: self._encode(K1, self.code_layer_ + 1))
            self.codes_ = like_input(Z, X)
        return self

    def _gram(self, kernel: Kernel, X: Batch, Y: Batch | None, dtype: torch.dtype) -> torch.Tensor:
        """``K(X, Y)`` (``Y`` None: ``K(X, X)``) by the Gram engine within ``memory_budget``.

        The differentiable mode keeps vector inputs on the kernel's own ``block`` when no
        budget is set (the results of the non-convex fit do not move by a last bit).
        """
        budget = self.memory_budget
        return gram(kernel, X, Y, memory_budget=budget, differentiable=True).to(dtype)

    # ------------------------------------------------------------------ inference
    def _prepared(self, X: Any) -> Batch:
        if self.input_kernel_ is None:
            return self._prepare(Linear(), X, reset=False).to(result_dtype(self.X_fit_))
        return self._predict_X(X)

    def _rowwise(
        self, Xb: Batch, fn: Callable[[Batch, torch.Tensor], torch.Tensor]
    ) -> torch.Tensor:
        """``fn(rows, K1_rows)`` on row tiles of ``Xb`` (``K1_rows`` their first-layer Gram
        against the supports), concatenated; tiles of :attr:`tile_rows` rows, so that the
        ``n x m`` first-layer Gram of many new points is never held whole."""
        dtype = result_dtype(self._ref)
        first, ref = self.kernels_[0], self._ref
        outs = []
        with torch.no_grad():
            for index in row_tiles(len(Xb), self._tile_rows(len(ref))):
                rows = Xb if len(index) == len(Xb) else take(Xb, index)
                outs.append(fn(rows, self._gram(first, rows, ref, dtype)).detach())
        return torch.cat(outs)

    def _tile_rows(self, m: int) -> int:
        """Rows per tile of the streamed passes (inference; minibatch fits) with ``m``
        supports: 8192, or fewer so that a tile's first-layer Gram and its temporaries (four
        ``rows x m`` float64 blocks) fit ``memory_budget``."""
        if self.memory_budget is None:
            return 8192
        return max(1, min(8192, self.memory_budget // (4 * 8 * max(m, 1))))

    def _encode(self, K1_new: torch.Tensor, stop: int) -> torch.Tensor:
        return self.model_.chain.encode(K1_new, self.supports_, stop)

    def transform(self, X: Any) -> Any:
        """Codes ``f_c o ... o f_1(x)`` (``c = code_layer_``); cross-kernel rows only."""
        check_is_fitted(self, "model_")
        Z = self._rowwise(self._prepared(X), lambda _, K1: self._encode(K1, self.code_layer_ + 1))
        return like_input(Z, X)

    def _decode_coords(self, Z: torch.Tensor, start: int) -> torch.Tensor:
        """Last-layer output (coordinates of the output factor) from layer-``start`` codes."""
        chain = self.model_.chain
        Z = chain.propagate(Z, self.supports_, start + 1)
        rows = self.model_.head_rows(Z, self.supports_[-1], self.landmark_indices_ is None)
        return rows @ self._head_coef

    def inverse_transform(
        self,
        X: Any,
        candidates: Any = None,
        *,
        return_index: bool = False,
        return_distance: bool = False,
    ) -> Any:
        r"""Decode codes: reconstructions (finite KAE) or the nearest of ``candidates``.

        Without ``candidates``: the reconstructions ``f_L o ... o f_{c+1}(z)`` in the input
        space (finite KAE only; a K2AE reconstructs in the RKHS of ``input_kernel``, where no
        pre-image is computed, section 2 of the paper).  With ``candidates`` (items of the
        input kind): for each code ``z`` the candidate ``c`` nearest to the reconstruction
        ``hat phi(z)`` in the output space, ``||c - hat x(z)||^2`` for a KAE and for a K2AE
        (appendix B.7, with ``b(c)`` the coordinates of ``phi(c)`` on the reference features
        and ``C(z)`` those of ``hat phi(z)``)

        .. math:: \|\phi(c) - \hat\phi(z)\|^2 = k(c, c) - \|b(c)\|^2 + \|b(c) - C(z)\|^2,

        by tiles of candidates (``preimage_tile_entries`` of :func:`kernelkit.get_config`).
        ``return_index`` / ``return_distance`` also return the chosen positions and squared
        distances, in that order (as :meth:`KernelPCA.inverse_transform`).
        """
        check_is_fitted(self, "model_")
        if candidates is None and self.input_kernel_ is not None:
            raise InputError(
                "inverse_transform: a K2AE reconstructs in the RKHS of input_kernel, where no "
                "pre-image is computed; pass candidates= to choose the nearest items, or use "
                "reconstruction_error(X)"
            )
        dtype = result_dtype(self.X_fit_)
        Z = to_tensor(X, name="X", dtype=dtype)
        width = self.dims_[self.code_layer_]
        if Z.shape[1] != width:
            raise InputError(f"X: expected codes of width {width}, got shape {tuple(Z.shape)}")
        with torch.no_grad():
            out = self._decode_coords(Z, self.code_layer_)
            if candidates is None:
                return like_input(out, X)
            index, dist = nearest_candidates(
                len(Z),
                self._prepared(candidates),
                lambda tile: self._candidate_distances(out, tile),
            )
        return chosen(pick(candidates, index), index, dist, return_index, return_distance)

    def _candidate_distances(self, coords: torch.Tensor, tile: Batch) -> torch.Tensor:
        """Squared output-space distances between decoded ``coords`` and candidates."""
        if self.input_kernel_ is None:
            return squared_code_distances(coords, tile.to(coords.dtype))
        base, dtype = self.input_kernel_, coords.dtype
        b = self.ref_basis_.features(self._gram(base, tile, self._ref, dtype))
        residual = (base.block_diag(tile).to(dtype) - (b * b).sum(1)).clamp_min(0)
        return residual[None, :] + squared_code_distances(coords, b)

    def reconstruction_error(self, X: Any) -> Any:
        r"""Per-sample squared reconstruction error ``||x - f_L o ... o f_1(x)||^2``.

        In the input space for a finite KAE; in the RKHS of ``input_kernel`` for a K2AE
        (appendix B.7): with ``b(x) = K_in(x, ref) R^{-T}`` the coordinates of the projection
        of ``phi(x)`` on the span of the reference features (``R R^T = K_in(ref, ref)``),

        .. math:: \|\phi(x) - \hat\phi(x)\|^2 = k(x, x) - \|b(x)\|^2 + \|b(x) - c(x)\Phi_L\|^2,

        equal to B.7's ``k(x,x) + k_x^T N_L k_x - 2 k_x^T W^{-1} K_in(X, x)`` in exact mode.
        """
        check_is_fitted(self, "model_")
        err = self._rowwise(self._prepared(X), self._tile_error)
        return like_input(err, X)

    def _tile_error(self, Xb: Batch, K1: torch.Tensor) -> torch.Tensor:
        """:meth:`reconstruction_error` of the rows ``Xb`` with first-layer Gram rows ``K1``."""
        exact = self.landmark_indices_ is None
        model, coef, supports = self.model_, self._head_coef, self.supports_
        if self.input_kernel_ is None:
            return reconstruction_errors(model, coef, supports, exact, K1, Xb)
        base, dtype = self.input_kernel_, coef.dtype
        b = self.ref_basis_.features(self._gram(base, Xb, self._ref, dtype))
        kxx = base.block_diag(Xb).to(dtype)
        return reconstruction_errors(model, coef, supports, exact, K1, b, kxx)

    def score(self, X: Any, y: Any = None) -> float:
        """Minus the mean reconstruction error (higher is better)."""
        err = self.reconstruction_error(X)
        return -float(np.mean(err.detach().cpu().numpy() if torch.is_tensor(err) else err))

    @property
    def _n_features_out(self) -> int:
        return self.dims_[self.code_layer_]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
