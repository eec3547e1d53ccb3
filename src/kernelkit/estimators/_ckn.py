r"""Convolutional kernel networks as scikit-learn estimators (course part 3, sections 6-7).

:class:`CKNFeatures` (transformer) learns the anchors of every layer by spherical k-means on
sampled patches and returns the flattened last map ``Phi_n(x) = A_n M_n P_n ... A_1 M_1 P_1 x``,
so that a linear model on it is a kernel machine with the CKN kernel
``K(x, x') = <Phi_n(x), Phi_n(x')>``.  :class:`CKNClassifier` starts from the same anchors
and trains them end to end with a multinomial logistic classifier on top
(:func:`kernelkit.models._ckn_train.train_classifier`).  The maths is in
:mod:`kernelkit.models._ckn`.

Images are ``(n, H, W)`` or ``(n, C, H, W)`` arrays or tensors, or flattened ``(n, d)`` rows
with ``image_shape=(H, W)`` or ``(C, H, W)``; flattened rows without ``image_shape`` are read as
``1 x 1`` images with ``d`` channels (the CKN is then a deep dot-product kernel network on
vectors; patches must be ``1 x 1``).  NumPy in, NumPy out; torch in, torch out on the input's
device; float32 input computes in float32.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._ckn_base import (
    COMMON_CONSTRAINTS,
    SUPERVISED_ATTRIBUTES_DOC,
    SUPERVISED_CONSTRAINTS,
    SUPERVISED_PARAMS_DOC,
    CKNClassifierMixin,
    CKNTransformerMixin,
    _CKNBase,
    float_tensor,
    store_params,
)
from kernelkit.models._ckn import CKN, as_pair
from kernelkit.models._ckn_train import fit_image_anchors
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import VerboseLike

__all__ = ["CKNClassifier", "CKNFeatures"]


class _ImageCKN(_CKNBase):
    """Image handling and the CKN stack of :class:`CKNFeatures` and :class:`CKNClassifier`."""

    n_filters: Any
    patch_sizes: Any
    subsamplings: Any
    image_shape: Any

    def _layer_spec(self) -> tuple[tuple[int, ...], list[tuple[int, int]], list[tuple[int, int]]]:
        n_filters, subsamplings = self._setting("n_filters"), self._setting("subsamplings")
        filters = tuple(int(f) for f in n_filters)
        if not filters or any(f < 1 for f in filters):
            raise InputError(f"n_filters: expected positive ints, got {n_filters!r}")
        if not len(self.patch_sizes) == len(subsamplings) == len(filters):
            raise InputError(
                "n_filters, patch_sizes, subsamplings: expected one entry per layer, got "
                f"{len(filters)}, {len(self.patch_sizes)}, {len(subsamplings)}"
            )
        patches = [as_pair(p, "patch_sizes") for p in self.patch_sizes]
        strides = [as_pair(s, "subsamplings") for s in subsamplings]
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

_SEARCH_DOC = """
        ``"auto"`` (``n_filters`` too): chosen on the training data (Notes)."""

_IMAGE_PARAMS_DOC = """
    n_filters : sequence of int{n_filters_auto}, default (64, 256)
        Anchors (output channels) of each layer.
    patch_sizes : sequence of int or (int, int), default (3, 3)
        Patch size of each layer (zero padding keeps every pixel as a patch centre).
    subsamplings : sequence of int or (int, int), default (2, 5)
        Pooling stride of each layer (1: no pooling); the Gaussian filter has size ``2s + 1``
        and standard deviation ``s / sqrt(2)``.{subsamplings_auto}
    image_shape : (H, W) or (C, H, W), optional
        Shape of the images when ``X`` holds flattened rows.
    kappa : {"exp", "inverse_polynomial", "polynomial", "vovk"}, default "exp"
        The dot-product kernel ``kappa`` (:mod:`kernelkit.kernels._dot_product`).
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
        + _IMAGE_PARAMS_DOC.replace("{n_filters_auto}", "").replace("{subsamplings_auto}", "")
        + r"""

    Attributes
    ----------
    network_ : kernelkit.models.CKN
        The fitted layers (anchors in ``network_.layers[k].anchors()``).
    image_shape_ : (C, H, W)
        Shape of the training images.
    n_features_in_ : int
        ``X.shape[1]`` of the training input.

    Notes
    -----
    Objective: no loss is fitted; each layer's anchors ``z_1, ..., z_p`` (unit norm)
    maximise the spherical k-means criterion over the sampled patches ``u`` of the previous
    map (Mairal 2016, section 3),

    .. math:: \max_{\|z_j\| = 1} \sum_{u} \max_{j} \Big\langle \frac{u}{\|u\|}, z_j \Big\rangle,

    and the layer maps a patch to ``||u|| kappa(Z^T Z)^{-1/2} kappa(Z^T u / ||u||)``, the
    projection of its feature onto the span of the anchors' features.
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

    Mairal (2016, §3) and its reference implementation: the anchors start from the spherical
    k-means of :class:`CKNFeatures` and the classifier from the multinomial logistic
    regression on those fixed features (``head_init="linear"``, by L-BFGS); then minibatch
    Adam minimises ``(1/n) sum_i CE(W Phi_Z(x_i) + b, y_i) + lam ||W||^2`` over the anchors
    ``Z`` of every layer and ``(W, b)``, with a cosine learning-rate decay, on all but a
    held-out ``validation_fraction`` of the training set (stratified), and keeps the epoch of
    best held-out accuracy (:func:`kernelkit.models._ckn_train.train_classifier`).  With
    ``max_iter=0`` the network is the unsupervised :class:`CKNFeatures` network and the
    classifier the logistic regression on its features.

    Parameters
    ----------"""
        + _IMAGE_PARAMS_DOC.replace("{n_filters_auto}", ' or "auto"').replace(
            "{subsamplings_auto}", _SEARCH_DOC
        )
        + """
    lam : float or "auto", default "auto"
        Ridge penalty ``lam ||W||^2`` of the classifier; ``"auto"``: chosen among
        ``1e-7 .. 1e-1`` by the stratified cross-validated accuracy (5 folds below 1000
        images, else 3) of the classifier on the k-means features of the training part
        (:func:`~kernelkit.models._ckn_head.cross_validate_lam`).
    max_iter : int or "auto", default 0
        Training epochs.  The default 0 is the unsupervised model (k-means anchors,
        logistic regression on their features, nothing held out): on MNIST the epochs did
        not beat it (``docs/ckn.md``).  ``"auto"``: ``clip(ceil(20000 / n), 10, 100)``
        epochs or none, chosen by the architecture search (Notes)."""
        + SUPERVISED_PARAMS_DOC
        + """

    Attributes
    ----------
    network_ : kernelkit.models.CKN
        The trained layers.
    head_ : torch.nn.Linear
        The linear classifier ``(W, b)``.
    architecture_ : dict
        What the fit chose: ``"lam"``, the values of the parameters set to ``"auto"`` and,
        with ``max_iter="auto"``, the epochs kept (``"max_iter"``: 0 or the cap); after a
        search also ``"cv_accuracy"``, ``"candidates"``, ``"skipped"`` and ``"seconds"`` as
        in :class:`~kernelkit.SequenceCKNClassifier`."""
        + SUPERVISED_ATTRIBUTES_DOC
        + r"""
    image_shape_, n_features_in_ :
        As in :class:`CKNFeatures`.

    Notes
    -----
    Objective: over the anchors ``Z`` of every layer and the classifier ``(W, b)``, on the
    ``n`` training images kept after the held-out split (the best held-out epoch is kept),

    .. math:: \min_{Z, W, b} \frac{1}{n} \sum_{i=1}^n \mathrm{CE}(W \Phi_Z(x_i) + b, y_i)
              + \lambda \|W\|_F^2.

    Architecture search (:mod:`kernelkit.estimators._ckn_search`, the one of
    :class:`~kernelkit.SequenceCKNClassifier`): the parameters set to ``"auto"`` are chosen
    on the training part, in the order ``subsamplings`` (the last layer's pooling factor 5,
    then 3; Mairal 2016, section 5 varies the subsampling factors and the anchors), then
    ``n_filters`` (``16 * 4^l`` anchors at layer ``l = 1 .. L``, then twice as many), each
    by the stratified cross-validated accuracy of the logistic regression on the k-means
    features (``lam`` chosen with it), within ``ckn_search_seconds``
    (:func:`kernelkit.get_config`); with ``max_iter="auto"`` the chosen network trained end
    to end on each fold is the last candidate, kept only when it is more accurate on the
    held-out folds than the unsupervised model.  The number of layers and the patch sizes
    are not searched.
    """
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **IMAGE_CONSTRAINTS,
        "n_filters": [tuple, list, StrOptions({"auto"})],
        "subsamplings": [tuple, list, StrOptions({"auto"})],
        **SUPERVISED_CONSTRAINTS,
    }
    _searched = ("subsamplings", "n_filters")

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
        lam: float | str = "auto",
        max_iter: int | str = 0,
        lr: float = 0.01,
        training: str = "joint",
        head_init: str = "linear",
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 5,
        batch_size: int = 256,
        verbose: VerboseLike = 0,
        random_state: Any = None,
        on_error: str = "raise",
    ):
        store_params(self, locals())

    def fit(self, X: Any, y: Any) -> CKNClassifier:
        """Spherical k-means anchors and the logistic regression on their features, then
        end-to-end training with the best held-out epoch kept."""
        return self._fit_classifier(X, y)

    def _architecture_values(self, name: str) -> tuple[Any, ...]:
        """``subsamplings``: 2 at every layer but the last, 5 or 3 there; ``n_filters``:
        ``16 * 4^l`` anchors at layer ``l``, or twice as many (``L = len(patch_sizes)``)."""
        depth = len(self.patch_sizes)
        if name == "subsamplings":
            return tuple((2,) * (depth - 1) + (last,) for last in (5, 3))
        return tuple(tuple(width * 16 * 4**layer for layer in range(1, depth + 1))
                     for width in (1, 2))  # fmt: skip
