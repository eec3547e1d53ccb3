r"""Convolutional kernel networks on images (Mairal 2016; course part 3, section 7).

One layer maps a feature map ``x_{k-1}: Omega -> R^{C}`` to ``x_k = A_k M_k P_k x_{k-1}``:

* ``P_k`` (:func:`extract_patches`): the patch ``(x(u + v))_{v in S_k}`` at every position
  ``u``, zero padded so that every pixel is a patch centre (``unfold``);
* ``M_k``: the Nyström map of the homogeneous dot-product kernel
  ``K(z, z') = ||z|| ||z'|| kappa(<z, z'> / (||z|| ||z'||))`` with ``kappa(1) = 1``
  (:mod:`kernelkit.kernels._dot_product`) on ``p`` anchors ``Z`` of the unit sphere,

  .. math:: \psi(z) = \|z\|\, \kappa(Z^\top Z)^{-1/2} \kappa\big(Z^\top z / \|z\|\big),

  so ``<psi(z), psi(z')> = K(z, z')`` whenever ``z / ||z||`` and ``z' / ||z'||`` are anchors
  (course part 3, section 6, "Nyström for dot-product kernels");
* ``A_k`` (:func:`gaussian_pool`): linear Gaussian pooling sampled with stride ``s``, a
  depthwise convolution with the normalised filter ``h(i) h(j)``, ``h`` of size ``2s + 1``
  and standard deviation ``s / sqrt(2)`` (the reference implementation's discretisation,
  course part 3, section 7); ``sum h = 1`` makes it non-expansive (Young's inequality).

The patch products ``Z^T P`` over all positions, and the patch norms, are convolutions
(im2col + GEMM in the backend; :func:`extract_patches` gives the same patches explicitly);
``A_k`` and ``kappa(Z^T Z)^{-1/2}`` are linear and act on different axes, so the
pooling is applied first, on ``p`` channels, and the ``p x p`` product after it on the
subsampled map, as in the reference code.  Everything is torch and runs on the device of the
input.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from kernelkit.kernels._dot_product import KappaFunction, kappa_function
from kernelkit.solvers._matfun import inverse_sqrt
from kernelkit.utils._errors import InputError

Pair = tuple[int, int]


def as_pair(value: int | tuple[int, int], name: str) -> Pair:
    """``(v, v)`` for an int, the pair itself otherwise (both ``>= 1``)."""
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, int) and v >= 1 for v in pair):
        raise InputError(f"{name}: expected a positive int or a pair of them, got {value!r}")
    return (int(pair[0]), int(pair[1]))


def pad_same(x: torch.Tensor, patch: Pair) -> torch.Tensor:
    """Zero padding of ``(ph - 1, pw - 1)`` pixels split before/after, so ``P x`` keeps H x W."""
    ph, pw = patch
    return F.pad(x, ((pw - 1) // 2, pw // 2, (ph - 1) // 2, ph // 2))


def extract_patches(x: torch.Tensor, patch: Pair) -> torch.Tensor:
    """``P x``: every ``ph x pw`` patch of ``x`` (n, C, H, W), zero padded, shape (n, C ph pw, H W).

    Patch ``u = (i, j)`` (column ``i W + j``) has pixel ``(i + a - (ph - 1) // 2,
    j + b - (pw - 1) // 2)`` of channel ``c`` at row ``(c ph + a) pw + b``; pixels outside the
    image are 0.
    """
    n, c, h, w = x.shape
    ph, pw = patch
    windows = pad_same(x, patch).unfold(2, ph, 1).unfold(3, pw, 1)  # (n, C, H, W, ph, pw)
    return windows.permute(0, 1, 4, 5, 2, 3).reshape(n, c * ph * pw, h * w)


def safe_sqrt(t: torch.Tensor) -> torch.Tensor:
    """``sqrt(max(t, 0))`` with a zero (not infinite) gradient where ``t <= 0``."""
    positive = t > 0
    return torch.where(positive, torch.where(positive, t, torch.ones_like(t)).sqrt(), 0.0)


def gaussian_filter(subsampling: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """The 1-D pooling filter of stride ``s``: size ``2s + 1``, std ``s / sqrt(2)``, sum 1."""
    t = torch.arange(-subsampling, subsampling + 1, dtype=dtype, device=device)
    h = torch.exp(-(t**2) / subsampling**2)
    return h / h.sum()


def gaussian_pool(x: torch.Tensor, subsampling: Pair) -> torch.Tensor:
    """``A x``: Gaussian pooling of every channel sampled with stride ``s`` (per axis).

    Output size ``ceil(H / s_h) x ceil(W / s_w)``; an axis with ``s = 1`` is left unpooled.
    The filter ``h_h(i) h_w(j)`` sums to 1, so ``||A x|| <= ||x||``.
    """
    sh, sw = subsampling
    if sh == 1 and sw == 1:
        return x
    c = x.shape[1]
    one = torch.ones(1, dtype=x.dtype, device=x.device)
    hh = gaussian_filter(sh, x.dtype, x.device) if sh > 1 else one
    hw = gaussian_filter(sw, x.dtype, x.device) if sw > 1 else one
    weight = (hh[:, None] * hw[None, :]).expand(c, 1, -1, -1)
    pad = (sh if sh > 1 else 0, sw if sw > 1 else 0)
    return F.conv2d(x, weight, stride=(sh, sw), padding=pad, groups=c)


def layer_kappa(name: str, sigma: float) -> KappaFunction:
    """The ``kappa`` of a CKN layer: ``exp((u - 1) / sigma^2)`` for ``"exp"`` (the reference
    parametrisation, ``alpha = 1 / sigma^2``), the parameter-free ``kappa`` otherwise."""
    return kappa_function(name, alpha=1.0 / sigma**2) if name == "exp" else kappa_function(name)


class CKNLayer(nn.Module):
    r"""One CKN layer ``x -> A M P x`` (module docstring) with ``p`` anchors on the sphere.

    Parameters
    ----------
    in_channels : int
        Channels ``C`` of the input map.
    n_filters : int
        Number ``p`` of anchors (output channels).
    patch_size : int or (int, int)
        ``ph x pw`` patches (zero padded).
    subsampling : int or (int, int)
        Pooling stride ``s`` (1: no pooling).
    kappa : str
        A name of :data:`kernelkit.kernels._dot_product.KAPPAS`.
    sigma : float
        ``kappa="exp"``: ``kappa(u) = exp((u - 1) / sigma^2)``; ignored otherwise.
    shift : float
        ``epsilon`` of ``(kappa(Z^T Z)^{1/2} + epsilon I)^{-1}``
        (:func:`kernelkit.solvers.inverse_sqrt`); 0 is the exact Nyström map.
    dtype : torch.dtype
        Dtype of the anchors.

    Attributes
    ----------
    weight : nn.Parameter, shape (p, C ph pw)
        Unnormalised anchors; the anchors are its rows divided by their norms.
    """

    def __init__(
        self,
        in_channels: int,
        n_filters: int,
        patch_size: int | Pair = 3,
        subsampling: int | Pair = 1,
        *,
        kappa: str = "exp",
        sigma: float = 0.6,
        shift: float = 0.0,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        self.in_channels = int(in_channels)
        self.n_filters = int(n_filters)
        self.patch_size = as_pair(patch_size, "patch_size")
        self.subsampling = as_pair(subsampling, "subsampling")
        self.kappa_name = kappa
        self.sigma = float(sigma)
        self.shift = float(shift)
        kappa_function(kappa)  # validates the name
        dim = self.in_channels * self.patch_size[0] * self.patch_size[1]
        self.weight = nn.Parameter(torch.randn(self.n_filters, dim, dtype=dtype))

    @property
    def patch_dim(self) -> int:
        """Dimension ``C ph pw`` of a patch."""
        return int(self.weight.shape[1])

    def kappa(self, u: torch.Tensor) -> torch.Tensor:
        """``kappa`` of the layer (``exp`` with ``alpha = 1 / sigma^2``)."""
        return layer_kappa(self.kappa_name, self.sigma)(u)

    def anchors(self) -> torch.Tensor:
        """The anchors ``Z`` (rows of unit norm), shape ``(p, C ph pw)``."""
        return self.weight / torch.linalg.vector_norm(self.weight, dim=1, keepdim=True)

    def set_anchors(self, Z: torch.Tensor) -> None:
        """Replace the anchors by the rows of ``Z`` (normalised on use)."""
        with torch.no_grad():
            self.weight.copy_(Z.to(self.weight))

    def nystrom_factor(self) -> torch.Tensor:
        """``(kappa(Z^T Z)^{1/2} + shift I)^{-1}``, shape ``(p, p)``."""
        Z = self.anchors()
        return inverse_sqrt(self.kappa((Z @ Z.T).clamp(-1.0, 1.0)), shift=self.shift)

    def kernel_map(self, x: torch.Tensor) -> torch.Tensor:
        """``||z|| kappa(Z^T z / ||z||)`` at every position (before ``kappa(Z^T Z)^{-1/2}``).

        Shape ``(n, p, H, W)``; zero patches map to 0 (homogeneity).
        """
        ph, pw = self.patch_size
        xp = pad_same(x, self.patch_size)
        Z = self.anchors().view(self.n_filters, self.in_channels, ph, pw)
        ones = torch.ones((1, self.in_channels, ph, pw), dtype=x.dtype, device=x.device)
        norms = safe_sqrt(F.conv2d(xp * xp, ones))  # (n, 1, H, W)
        cos = F.conv2d(xp, Z) / norms.clamp_min(torch.finfo(x.dtype).tiny)
        return norms * self.kappa(cos.clamp(-1.0, 1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``A M P x``, shape ``(n, p, ceil(H / s_h), ceil(W / s_w))``."""
        pooled = gaussian_pool(self.kernel_map(x), self.subsampling)
        return torch.einsum("pq,nqhw->nphw", self.nystrom_factor(), pooled)


class CKN(nn.Module):
    """A stack of :class:`CKNLayer` (``x_k = A_k M_k P_k x_{k-1}``, course part 3, section 7).

    Parameters
    ----------
    in_channels : int
        Channels of the input images.
    n_filters, patch_sizes, subsamplings : sequences of the same length
        Per-layer anchors, patch sizes and pooling strides.
    kappa, sigma, shift, dtype :
        As in :class:`CKNLayer`, shared by all layers.
    """

    def __init__(
        self,
        in_channels: int,
        n_filters: tuple[int, ...],
        patch_sizes: tuple[int | Pair, ...],
        subsamplings: tuple[int | Pair, ...],
        *,
        kappa: str = "exp",
        sigma: float = 0.6,
        shift: float = 0.0,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        if not len(n_filters) == len(patch_sizes) == len(subsamplings) >= 1:
            raise InputError(
                "n_filters, patch_sizes, subsamplings: expected sequences of the same length "
                f">= 1, got lengths {len(n_filters)}, {len(patch_sizes)}, {len(subsamplings)}"
            )
        channels = [int(in_channels), *map(int, n_filters)]
        self.layers = nn.ModuleList(
            CKNLayer(
                channels[i],
                channels[i + 1],
                patch_sizes[i],
                subsamplings[i],
                kappa=kappa,
                sigma=sigma,
                shift=shift,
                dtype=dtype,
            )
            for i in range(len(n_filters))
        )

    def forward(self, x: torch.Tensor, depth: int | None = None) -> torch.Tensor:
        """The map after the first ``depth`` layers (all by default), shape ``(n, p, h, w)``."""
        for layer in self.layers[: len(self.layers) if depth is None else depth]:
            x = layer(x)
        return x

    def output_shape(
        self, height: int, width: int, depth: int | None = None
    ) -> tuple[int, int, int]:
        """``(channels, h, w)`` of the map after the first ``depth`` layers (all by default)."""
        layers = self.layers[: len(self.layers) if depth is None else depth]
        channels = self.layers[0].in_channels
        for layer in layers:
            sh, sw = layer.subsampling
            channels, height, width = layer.n_filters, math.ceil(height / sh), math.ceil(width / sw)
        return (channels, height, width)


__all__ = [
    "CKN",
    "CKNLayer",
    "as_pair",
    "extract_patches",
    "gaussian_filter",
    "gaussian_pool",
    "layer_kappa",
    "pad_same",
    "safe_sqrt",
]
