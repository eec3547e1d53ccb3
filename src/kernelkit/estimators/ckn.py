r"""Convolutional kernel networks as scikit-learn estimators (course part 3, sections 6-7).

:class:`CKNFeatures` (transformer) learns the anchors of every layer by spherical k-means on
sampled patches and returns the flattened last map ``Phi_n(x) = A_n M_n P_n ... A_1 M_1 P_1 x``,
so that a linear model on it is a kernel machine with the CKN kernel
``K(x, x') = <Phi_n(x), Phi_n(x')>``.  :class:`CKNClassifier` starts from the same anchors
and trains them end to end with a multinomial logistic classifier on top
(:func:`kernelkit.models.ckn_train.train_classifier`).  The maths is in
:mod:`kernelkit.models.ckn`.

Images are ``(n, H, W)`` or ``(n, C, H, W)`` arrays or tensors, or flattened ``(n, d)`` rows
with ``image_shape=(H, W)`` or ``(C, H, W)``; flattened rows without ``image_shape`` are read as
``1 x 1`` images with ``d`` channels (the CKN is then a deep dot-product kernel network on
vectors; patches must be ``1 x 1``).  NumPy in, NumPy out; torch in, torch out on the input's
device; float32 input computes in float32.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from kernelkit.estimators._base import RANDOM_STATE_CONSTRAINT, KernelEstimatorMixin, to_numpy
from kernelkit.kernels.dot_product import KAPPAS
from kernelkit.models.ckn import CKN, as_pair
from kernelkit.models.ckn_train import fit_image_anchors, map_in_batches, train_classifier
from kernelkit.utils.errors import InputError
from kernelkit.utils.seeding import torch_generator
from kernelkit.utils.validation import check_finite, like_input

__all__ = ["CKNClassifier", "CKNFeatures"]

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
    "lam": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 0, None, closed="left")],
    "lr": [Interval(Real, 0, None, closed="neither")],
}
"""Parameters of the supervised CKN estimators."""


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

    def _features(self, X: torch.Tensor) -> torch.Tensor:
        network = self.network_.to(X.device)
        return map_in_batches(lambda b: network(b).flatten(1), X, self.batch_size)

    def _transform(self, X: Any) -> Any:
        check_is_fitted(self, "network_")
        return like_input(self._features(self._inputs(X, reset=False)), X)


class CKNClassifierMixin:
    """End-to-end training and prediction of the supervised CKN estimators."""

    network_: Any
    _fit_network: Any
    _features: Any
    _inputs: Any
    batch_size: int
    lam: float
    max_iter: int
    lr: float

    def _fit_classifier(self, X: Any, y: Any) -> Any:
        Xt, generator = self._fit_network(X)
        y = column_or_1d(to_numpy(y), warn=True)
        if len(y) != Xt.shape[0]:
            raise InputError(f"y: expected {Xt.shape[0]} labels (one per sample), got {len(y)}")
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        n_features = int(self._features(Xt[:1]).shape[1])
        head = torch.nn.Linear(n_features, len(self.classes_), dtype=Xt.dtype, device=Xt.device)
        torch.nn.init.zeros_(head.weight)
        torch.nn.init.zeros_(head.bias)
        self.history_ = train_classifier(
            self.network_,
            head,
            Xt,
            torch.as_tensor(codes, device=Xt.device),
            lam=self.lam,
            n_epochs=self.max_iter,
            lr=self.lr,
            batch_size=self.batch_size,
            generator=generator,
        )
        self.head_ = head
        self.n_iter_ = len(self.history_)
        return self

    def _logits(self, X: Any) -> torch.Tensor:
        check_is_fitted(self, "head_")
        Xt = self._inputs(X, reset=False)
        head = self.head_.to(Xt.device)
        return map_in_batches(lambda b: head(self.network_(b).flatten(1)), Xt, self.batch_size)

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


class _ImageCKN(_CKNBase):
    """Image handling and the CKN stack of :class:`CKNFeatures` and :class:`CKNClassifier`."""

    n_filters: Any
    patch_sizes: Any
    subsamplings: Any
    image_shape: Any

    def _layer_spec(self) -> tuple[tuple[int, ...], list[tuple[int, int]], list[tuple[int, int]]]:
        filters = tuple(int(f) for f in self.n_filters)
        if not filters or any(f < 1 for f in filters):
            raise InputError(f"n_filters: expected positive ints, got {self.n_filters!r}")
        if not len(self.patch_sizes) == len(self.subsamplings) == len(filters):
            raise InputError(
                "n_filters, patch_sizes, subsamplings: expected one entry per layer, got "
                f"{len(filters)}, {len(self.patch_sizes)}, {len(self.subsamplings)}"
            )
        patches = [as_pair(p, "patch_sizes") for p in self.patch_sizes]
        strides = [as_pair(s, "subsamplings") for s in self.subsamplings]
        return filters, patches, strides

    def _image_shape(self, X: torch.Tensor) -> tuple[int, int, int]:
        if X.ndim == 4:
            return tuple(X.shape[1:])
        if X.ndim == 3:
            return (1, *X.shape[1:])
        if X.ndim != 2:
            raise InputError(f"X: expected 2-D, 3-D or 4-D images, got shape {tuple(X.shape)}")
        if self.image_shape is None:
            return (int(X.shape[1]), 1, 1)
        shape = tuple(int(s) for s in self.image_shape)
        shape = (1, *shape) if len(shape) == 2 else shape
        if len(shape) != 3 or int(np.prod(shape)) != X.shape[1]:
            raise InputError(
                f"image_shape: expected (H, W) or (C, H, W) with {X.shape[1]} pixels in all "
                f"(the width of X), got {self.image_shape!r}"
            )
        return shape

    def _inputs(self, X: Any, *, reset: bool) -> torch.Tensor:
        Xt = float_tensor(X, self, reset=reset, allow_nd=True)
        shape = self._image_shape(Xt)
        if reset:
            self.image_shape_ = shape
            self._check_patches(shape)
        elif shape != self.image_shape_:
            raise InputError(
                f"X: expected images of shape (C, H, W) = {self.image_shape_} as in fit, got "
                f"{shape} (input shape {tuple(Xt.shape)})"
            )
        Xt = Xt.reshape(Xt.shape[0], *shape)
        if not reset and Xt.dtype != self.network_.layers[0].weight.dtype:
            Xt = Xt.to(self.network_.layers[0].weight.dtype)
        return Xt

    def _check_patches(self, shape: tuple[int, int, int]) -> None:
        _, patches, strides = self._layer_spec()
        h, w = shape[1:]
        for i, ((ph, pw), (sh, sw)) in enumerate(zip(patches, strides, strict=True)):
            if ph > h or pw > w:
                raise InputError(
                    f"patch_sizes: layer {i + 1} has {ph}x{pw} patches, larger than its {h}x{w} "
                    f"input map (images of shape (C, H, W) = {shape} from "
                    f"{int(np.prod(shape))} feature(s); flattened images need image_shape)"
                )
            h, w = -(-h // sh), -(-w // sw)

    def _make_network(self, X: torch.Tensor) -> CKN:
        filters, patches, strides = self._layer_spec()
        return CKN(
            X.shape[1],
            filters,
            tuple(patches),
            tuple(strides),
            kappa=self.kappa,
            sigma=self.sigma,
            shift=self.shift,
            dtype=X.dtype,
        )

    def _fit_anchors(self, network: CKN, X: torch.Tensor, generator: torch.Generator) -> None:
        fit_image_anchors(
            network,
            X,
            n_patches=self.n_patches,
            n_iter=self.kmeans_iter,
            generator=generator,
            batch_size=self.batch_size,
        )


IMAGE_CONSTRAINTS: dict[str, list[Any]] = {
    "n_filters": [tuple, list],
    "patch_sizes": [tuple, list],
    "subsamplings": [tuple, list],
    "image_shape": [tuple, list, None],
    "n_patches": [Interval(Integral, 1, None, closed="left")],
    **COMMON_CONSTRAINTS,
}

_IMAGE_PARAMS_DOC = """
    n_filters : sequence of int, default (64, 256)
        Anchors (output channels) of each layer.
    patch_sizes : sequence of int or (int, int), default (3, 3)
        Patch size of each layer (zero padding keeps every pixel as a patch centre).
    subsamplings : sequence of int or (int, int), default (2, 5)
        Pooling stride of each layer (1: no pooling); the Gaussian filter has size ``2s + 1``
        and standard deviation ``s / sqrt(2)``.
    image_shape : (H, W) or (C, H, W), optional
        Shape of the images when ``X`` holds flattened rows.
    kappa : {"exp", "inverse_polynomial", "polynomial", "vovk"}, default "exp"
        The dot-product kernel ``kappa`` (:mod:`kernelkit.kernels.dot_product`).
    sigma : float, default 0.6
        ``kappa(u) = exp((u - 1) / sigma^2)`` for ``kappa="exp"``.
    shift : float, default 0.01
        ``epsilon`` in ``(kappa(Z^T Z)^{1/2} + epsilon I)^{-1}`` (reference value 0.01; 0 is
        the exact Nyström map).
    n_patches : int, default 10000
        Patches sampled per layer for the spherical k-means.
    kmeans_iter : int, default 10
        Lloyd iterations of the spherical k-means.
    batch_size : int, default 256
        Images per forward batch.
    random_state : None, int, RandomState or Generator
        Seed of the patch sampling, the k-means seeds and (supervised) the minibatches."""


class CKNFeatures(CKNTransformerMixin, _ImageCKN):
    __doc__ = (
        r"""Unsupervised convolutional kernel network features of images (Mairal 2016).

    ``fit`` learns the anchors of each layer by spherical k-means on patches of the previous
    layer's map; ``transform`` returns the flattened last map ``Phi_n(x)`` (course part 3,
    section 7), of size ``p_n h_n w_n``.

    Parameters
    ----------"""
        + _IMAGE_PARAMS_DOC
        + """

    Attributes
    ----------
    network_ : kernelkit.models.ckn.CKN
        The fitted layers (anchors in ``network_.layers[k].anchors()``).
    image_shape_ : (C, H, W)
        Shape of the training images.
    n_features_in_ : int
        ``X.shape[1]`` of the training input.
    """
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = IMAGE_CONSTRAINTS

    def __init__(
        self,
        n_filters: Any = (64, 256),
        patch_sizes: Any = (3, 3),
        subsamplings: Any = (2, 5),
        *,
        image_shape: Any = None,
        kappa: str = "exp",
        sigma: float = 0.6,
        shift: float = 0.01,
        n_patches: int = 10000,
        kmeans_iter: int = 10,
        batch_size: int = 256,
        random_state: Any = None,
    ):
        store_params(self, locals())

    @property
    def n_components_(self) -> int:
        """Number of output features ``p_n h_n w_n``."""
        check_is_fitted(self, "network_")
        c, h, w = self.network_.output_shape(*self.image_shape_[1:])
        return c * h * w


class CKNClassifier(ClassifierMixin, CKNClassifierMixin, _ImageCKN):
    __doc__ = (
        r"""Supervised convolutional kernel network: anchors and a linear classifier trained
    end to end (course part 3, section 6, "learning a linear subspace of the RKHS").

    The anchors start from the spherical k-means of :class:`CKNFeatures`; then minibatch
    Adam minimises ``(1/n) sum_i CE(W Phi_Z(x_i) + b, y_i) + lam ||W||^2`` (multinomial
    logistic loss) over the anchors ``Z`` of every layer and ``(W, b)``, with a cosine
    learning-rate decay (:func:`kernelkit.models.ckn_train.train_classifier`).

    Parameters
    ----------"""
        + _IMAGE_PARAMS_DOC
        + """
    lam : float, default 1e-4
        Ridge penalty ``lam ||W||^2`` of the classifier.
    max_iter : int, default 20
        Training epochs.
    lr : float, default 0.01
        Initial Adam learning rate.

    Attributes
    ----------
    network_ : kernelkit.models.ckn.CKN
        The trained layers.
    head_ : torch.nn.Linear
        The linear classifier ``(W, b)``.
    classes_ : ndarray
        Class labels.
    history_ : list of float
        Mean objective of each epoch.
    image_shape_, n_features_in_ :
        As in :class:`CKNFeatures`.
    """
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **IMAGE_CONSTRAINTS,
        **SUPERVISED_CONSTRAINTS,
    }

    def __init__(
        self,
        n_filters: Any = (64, 256),
        patch_sizes: Any = (3, 3),
        subsamplings: Any = (2, 5),
        *,
        image_shape: Any = None,
        kappa: str = "exp",
        sigma: float = 0.6,
        shift: float = 0.01,
        n_patches: int = 10000,
        kmeans_iter: int = 10,
        lam: float = 1e-4,
        max_iter: int = 20,
        lr: float = 0.01,
        batch_size: int = 256,
        random_state: Any = None,
    ):
        store_params(self, locals())

    def fit(self, X: Any, y: Any) -> CKNClassifier:
        """Initialise the anchors by spherical k-means, then train everything end to end."""
        return self._fit_classifier(X, y)
