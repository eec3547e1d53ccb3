r"""Shared machinery of the CKN estimators (images and sequences, course part 3, sections 6-7
and 10): input validation, the fitting of the network, the supervised training and the
transformer interface of :mod:`kernelkit.estimators._ckn` and
:mod:`kernelkit.estimators._ckn_seq`.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from kernelkit.data._detect import detect_input_kind, drop_invalid_records
from kernelkit.estimators._base import (
    ON_ERROR_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    progress_of,
    to_numpy,
)
from kernelkit.estimators._ckn_search import search_architecture
from kernelkit.kernels._dot_product import KAPPAS
from kernelkit.models._ckn_head import cross_validate_lam, fit_linear_head, lam_cv_grid
from kernelkit.models._ckn_train import (
    map_in_batches,
    train_alternating,
    train_classifier,
    validation_split,
)
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import torch_generator
from kernelkit.utils._validation import check_finite, like_input

COMMON_CONSTRAINTS: dict[str, list[Any]] = {
    "kappa": [StrOptions(set(KAPPAS))],
    "sigma": [Interval(Real, 0, None, closed="neither")],
    "shift": [Interval(Real, 0, None, closed="left")],
    "kmeans_iter": [Interval(Integral, 0, None, closed="left")],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "random_state": RANDOM_STATE_CONSTRAINT,
}
"""Parameters shared by the image and sequence CKN estimators."""

SUPERVISED_CONSTRAINTS: dict[str, list[Any]] = {
    "lam": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
    "max_iter": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
    "training": [StrOptions({"alternating", "joint"})],
    "verbose": VERBOSE_CONSTRAINT,
    "lr": [Interval(Real, 0, None, closed="neither")],
    "head_init": [StrOptions({"linear", "zeros"})],
    "validation_fraction": [Interval(Real, 0, 1, closed="left")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "on_error": ON_ERROR_CONSTRAINT,
}
"""Parameters of the supervised CKN estimators."""

EPOCH_BUDGET = 20000
"""``max_iter="auto"``: ``clip(ceil(EPOCH_BUDGET / n_train), 10, 100)`` epochs, so a fit
processes about ``max(10 n, EPOCH_BUDGET)`` samples: at most 10 passes over large sets, more
epochs (cheap ones) on small sets."""


def auto_epochs(n_train: int) -> int:
    """Epoch cap of ``max_iter="auto"`` for ``n_train`` training samples (:data:`EPOCH_BUDGET`)."""
    return int(min(100, max(10, -(-EPOCH_BUDGET // max(n_train, 1)))))


def float_tensor(X: Any, estimator: Any, *, reset: bool, allow_nd: bool) -> torch.Tensor:
    """Validated float tensor of ``X`` (float32 kept, anything else float64).

    Arrays go through scikit-learn's ``validate_data`` (NaN/inf, empty input,
    ``n_features_in_`` = ``X.shape[1]``); tensors stay on their device.
    """
    if isinstance(X, torch.Tensor):
        X = X.detach()
        if X.ndim < 2 or X.shape[0] == 0:
            raise InputError(f"X: expected an array of >= 2 dimensions, got {tuple(X.shape)}")
        if X.dtype not in (torch.float32, torch.float64):
            X = X.to(torch.float64)
        check_finite(X, name="X")
        if reset:
            estimator.n_features_in_ = int(X.shape[1])
        elif X.shape[1] != estimator.n_features_in_:
            raise InputError(
                f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
                f"{estimator.n_features_in_} features as input"
            )
        return X
    try:
        arr = validate_data(
            estimator, X, reset=reset, allow_nd=allow_nd, dtype=[np.float64, np.float32]
        )
    except ValueError as exc:
        raise InputError(str(exc) if str(exc).startswith("X") else f"X: {exc}") from exc
    return torch.from_numpy(np.ascontiguousarray(arr))


def store_params(estimator: Any, params: dict[str, Any]) -> None:
    """Set each ``__init__`` argument in ``params`` (its ``locals()``) as an attribute."""
    for name, value in params.items():
        if name != "self":
            setattr(estimator, name, value)


class _CKNBase(BaseEstimator):
    """Fitting and prediction shared by the image and sequence CKN estimators.

    Subclasses define ``_inputs(X, reset)`` (validated tensor), ``_make_network(X)`` (the
    torch module, anchors at random) and ``_fit_anchors(network, X, generator)``.
    """

    batch_size: int
    random_state: Any

    def _inputs(self, X: Any, *, reset: bool) -> torch.Tensor:
        raise NotImplementedError

    def _make_network(self, X: torch.Tensor) -> torch.nn.Module:
        raise NotImplementedError

    def _fit_anchors(self, network: Any, X: torch.Tensor, generator: torch.Generator) -> None:
        raise NotImplementedError

    _validate_params = KernelEstimatorMixin._validate_params

    def _fit_network(self, X: Any) -> tuple[torch.Tensor, torch.Generator]:
        self._validate_params()
        Xt = self._inputs(X, reset=True)
        generator = torch_generator(self.random_state)
        network = self._make_network(Xt).to(Xt.device)
        self._fit_anchors(network, Xt, generator)
        self.network_ = network
        return Xt, generator

    def _setting(self, name: str) -> Any:
        """The value in force of parameter ``name``: for ``"auto"`` the one the architecture
        search chose or is scoring (``architecture_``), else the parameter."""
        value = getattr(self, name)
        return self.architecture_[name] if isinstance(value, str) and value == "auto" else value

    def _lengths(self, X: torch.Tensor) -> torch.Tensor | None:
        """Sequence lengths for length-ordered batches (:func:`map_in_batches`); None here."""
        return None

    def _features(self, X: torch.Tensor) -> torch.Tensor:
        network = self.network_.to(X.device)
        return map_in_batches(lambda b: network(b).flatten(1), X, self.batch_size, self._lengths(X))

    def _transform(self, X: Any) -> Any:
        check_is_fitted(self, "network_")
        return like_input(self._features(self._inputs(X, reset=False)), X)


SUPERVISED_PARAMS_DOC = """
    lr : float, default 0.01
        Initial Adam learning rate.
    training : {"alternating", "joint"}
        ``"alternating"``: Chen, Jacob & Mairal (2019) and Mairal (2016, §4), epochs of Adam
        on the anchors alone (projected on unit rows) with the classifier solved exactly
        between epochs, the learning rate halved on a held-out plateau, the epoch of lowest
        held-out loss kept (:func:`kernelkit.models.train_alternating`);
        ``"joint"``: Adam on anchors and classifier together with a cosine decay, the epoch
        of best held-out accuracy kept (:func:`kernelkit.models._ckn_train.train_classifier`).
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress on stderr (:mod:`kernelkit.utils._progress`: a bar on a
        terminal, else one ``[Name] epoch k/max_iter objective=...`` line per epoch with the
        held-out accuracy and cross-entropy, and the learning rate with
        ``training="alternating"``, then a ``done after ...`` line); a callable receives
        ``(epoch, objective)``.
    head_init : {"linear", "zeros"}, default "linear"
        Starting classifier: the multinomial logistic regression (same ``lam``) on the
        features of the k-means anchors, fitted by L-BFGS on the training part (Mairal 2016,
        §3), or zero.
    validation_fraction : float in [0, 1), default 0.1
        Part of every class held out from training to choose the epoch (model of best
        held-out accuracy, the initial one included) and to stop early; 0 trains on
        everything for ``max_iter`` epochs and keeps the last.  Without epochs
        (``max_iter=0``) nothing is held out.
    n_iter_no_change : int, default 5
        Epochs without a better held-out accuracy before training stops.
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind (images: rows with a NaN or
        infinite entry): refused by name, or ``"skip"``: left out of the fit with their
        labels, named in a warning (the shared route of every supervised estimator,
        :func:`kernelkit.data._detect.drop_invalid_records`)."""

SUPERVISED_ATTRIBUTES_DOC = """
    classes_ : ndarray
        Class labels.
    history_ : list of float
        Mean objective of each epoch.
    lam_ : float
        The ridge penalty used (``lam``, or the one chosen by internal cross-validation for
        ``lam="auto"``: :func:`kernelkit.models._ckn_head.cross_validate_lam`).
    validation_scores_ : list of float
        Held-out accuracy before training (entry 0) and after each epoch (empty when
        ``validation_fraction=0``).
    best_epoch_ : int
        Epoch of the kept parameters (0: the initialisation).
    n_iter_ : int
        Epochs run."""


class CKNClassifierMixin:
    """End-to-end training and prediction of the supervised CKN estimators."""

    network_: Any
    _fit_network: Any
    _features: Any
    _inputs: Any
    batch_size: int
    lam: float | str
    max_iter: int | str
    lr: float
    training: str
    verbose: int
    on_error: str

    def _fit_classifier(self, X: Any, y: Any) -> Any:
        X, y, _ = drop_invalid_records(X, y, None, detect_input_kind(X), self.on_error)
        searched = [name for name in self._searched if getattr(self, name) == "auto"]
        if self._searched:
            self.architecture_ = {name: self._architecture_values(name)[0] for name in searched}
        Xt, generator = self._fit_network(X)
        y = column_or_1d(to_numpy(y), warn=True)
        if len(y) != Xt.shape[0]:
            raise InputError(f"y: expected {Xt.shape[0]} labels (one per sample), got {len(y)}")
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        codes = torch.as_tensor(codes, device=Xt.device)
        tune = self.max_iter == "auto"
        n_epochs = 0 if tune else self.max_iter
        fraction = self.validation_fraction if n_epochs > 0 else 0.0
        train, held = validation_split(codes, fraction, generator)
        lam = self.lam
        if tune or any(len(self._architecture_values(name)) > 1 for name in searched):
            Xt, generator, lam, features = search_architecture(
                self, X, (Xt, generator), codes[train], train,
                epochs=auto_epochs(len(codes)) if tune else 0,
            )  # fmt: skip
            if tune and self.architecture_["max_iter"] > 0:
                n_epochs = self.architecture_["max_iter"]
                train, held = validation_split(codes, self.validation_fraction, generator)
                features = features[train]
            train_features = (features, codes[train])
        else:
            train_features = (self._features(Xt[train]), codes[train])
            if lam == "auto":
                columns = self._candidate_columns()
                lam, chosen = cross_validate_lam(
                    *train_features,
                    len(self.classes_),
                    generator=generator,
                    column_sets=columns,
                    grid=self._lam_grid(),
                    parsimony=self._parsimony,
                    n_repeats=self._lam_cv_repeats(len(train)),
                )
                if columns[chosen] is not None:
                    self._keep_candidate(chosen)
                    train_features = (train_features[0][:, columns[chosen]], train_features[1])
            if self._searched:
                self.architecture_.update({**self._architecture_extras(), "lam": lam})
        held_out = (Xt[held], codes[held]) if len(held) else None
        head, log = self._train_epochs(
            self.network_, train_features, Xt[train], held_out, lam, n_epochs, generator,
            progress=progress_of(self, n_epochs, unit="epoch"),
        )  # fmt: skip
        self.lam_ = lam
        self.head_ = head
        self.history_ = log.objective
        self.validation_scores_ = [acc for acc, _ in log.validation]
        self.best_epoch_ = log.best_epoch
        self.n_iter_ = len(self.history_)
        return self

    def _train_epochs(
        self,
        network: Any,
        features: tuple[torch.Tensor, torch.Tensor],
        X: torch.Tensor,
        held_out: tuple[torch.Tensor, torch.Tensor] | None,
        lam: float,
        n_epochs: int,
        generator: torch.Generator,
        progress: Any = None,
    ) -> tuple[torch.nn.Linear, Any]:
        """The starting classifier on ``features = (Phi(X), y)`` (``head_init``), then
        ``n_epochs`` epochs of ``training`` on ``(X, y)`` that move ``network`` in place, the
        best ``held_out`` epoch kept; returns the classifier and the training record."""
        head = torch.nn.Linear(
            int(features[0].shape[1]), len(self.classes_), dtype=X.dtype, device=X.device
        )
        if self.head_init == "linear":
            fit_linear_head(head, *features, lam=lam)
        else:
            torch.nn.init.zeros_(head.weight)
            torch.nn.init.zeros_(head.bias)
        fit_epochs = train_alternating if self.training == "alternating" else train_classifier
        log = fit_epochs(
            network, head, X, features[1], lam=lam, n_epochs=n_epochs, lr=self.lr,
            batch_size=self.batch_size, generator=generator, validation=held_out,
            n_iter_no_change=self.n_iter_no_change, progress=progress,
        )  # fmt: skip
        return head, log

    _searched: tuple[str, ...] = ()
    """Parameters whose value ``"auto"`` is chosen by :func:`search_architecture`, in the
    order of the search; an estimator with a non-empty tuple records ``architecture_``."""

    _parsimony: bool = False
    """Choose the pyramid's depth and the searched candidates by the one-standard-error rule
    (:func:`kernelkit.models._ckn_head.parsimonious_choice`) instead of the best
    cross-validated accuracy."""

    def _architecture_values(self, name: str) -> tuple[Any, ...]:
        """Candidate values of the searched parameter ``name`` (the first one is the start);
        after the network's first fit they may depend on the input (e.g. its alphabet)."""
        raise NotImplementedError

    def _architecture_extras(self) -> dict[str, Any]:
        """Entries of ``architecture_`` besides the searched values (e.g. the pyramid levels
        kept)."""
        return {}

    def _lam_grid(self) -> tuple[float, ...]:
        """Penalties that ``lam="auto"`` tries: the CKNs' window of the one lattice,
        :func:`~kernelkit.models._ckn_head.lam_cv_grid`."""
        return lam_cv_grid()

    def _lam_cv_repeats(self, n_samples: int) -> int:
        """Independent fold draws of the ``lam="auto"`` cross-validation on ``n_samples``
        training samples (their scores summed): one."""
        return 1

    def _candidate_columns(self) -> tuple[torch.Tensor | None, ...]:
        """Feature-column subsets that ``lam="auto"`` cross-validates with ``lam``: all."""
        return (None,)

    def _keep_candidate(self, index: int) -> None:
        """Restrict the network to the column subset ``index`` of :meth:`_candidate_columns`."""

    def _logits(self, X: Any) -> torch.Tensor:
        check_is_fitted(self, "head_")
        Xt = self._inputs(X, reset=False)
        head = self.head_.to(Xt.device)
        return map_in_batches(
            lambda b: head(self.network_(b).flatten(1)), Xt, self.batch_size, self._lengths(Xt)
        )

    def decision_function(self, X: Any) -> Any:
        """Class scores ``W Phi(x) + b``; for two classes the score of ``classes_[1]``."""
        logits = self._logits(X)
        scores = logits[:, 1] - logits[:, 0] if logits.shape[1] == 2 else logits
        return like_input(scores, X)

    def predict_proba(self, X: Any) -> Any:
        """Softmax of the class scores, shape ``(n_samples, n_classes)``."""
        return like_input(F.softmax(self._logits(X), dim=1), X)

    def predict(self, X: Any) -> Any:
        """The class of largest score (labels of ``classes_``; a tensor for tensor input
        when the labels are numeric)."""
        best = to_numpy(self._logits(X).argmax(1))
        labels = self.classes_[best]
        if isinstance(X, torch.Tensor) and labels.dtype.kind in "biuf":
            return torch.as_tensor(labels, device=X.device)
        return labels


class CKNTransformerMixin(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """``fit`` (unsupervised anchors) and ``transform`` of the CKN feature transformers."""

    n_components_: int
    _fit_network: Any
    _transform: Any

    def fit(self, X: Any, y: Any = None) -> Any:
        """Learn the anchors by spherical k-means on sampled patches (``y`` is ignored)."""
        self._fit_network(X)
        return self

    def transform(self, X: Any) -> Any:
        """The CKN features, shape ``(n_samples, n_components_)``, in the container of ``X``."""
        return self._transform(X)

    @property
    def _n_features_out(self) -> int:
        return self.n_components_

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
