r"""Convolutional kernel network for sequences: gapped k-mer kernel maps (CKN-seq / RKN).

Course part 3, section 10 (Chen, Jacob & Mairal 2019a, CKN-seq; 2019b, RKN).  A sequence is a
map ``x: {1..T} -> R^A`` (one-hot letters, or any position vectors; zero vectors are
padding).  For an index tuple ``i = (i_1 < ... < i_k)`` with ``gaps(i) = i_k - i_1 + 1 - k``
the base kernel on k-mers is the product over positions of homogeneous dot-product kernels

.. math:: K_0(x_{[i]}, x'_{[j]}) = \prod_{l=1}^k \|x_{i_l}\| \|x'_{j_l}\|\,
          \kappa\big(\langle \hat x_{i_l}, \hat x'_{j_l} \rangle\big),

(for one-hot letters and ``kappa(u) = exp(alpha (u - 1))`` it is the Gaussian
``exp(-(alpha/2) ||x_[i] - x'_[j]||^2)`` of CKN-seq), and the sequence kernel is

.. math:: K(x, x') = \sum_{i \in I(k, |x|)} \sum_{j \in I(k, |x'|)}
          \lambda^{\mathrm{gaps}(i)} \lambda^{\mathrm{gaps}(j)} K_0(x_{[i]}, x'_{[j]}),

the RKN relaxation of the substring kernel; ``lambda = 0`` keeps contiguous k-mers only
(CKN-seq, the relaxed mismatch kernel).  Its Nyström map on anchors
``z = (z_1, ..., z_k)`` with unit rows is ``Psi(x) = K_0(Z, Z)^{-1/2} h(x)`` with
``K_0(Z, Z) = prod_l kappa(Z_l Z_l^T)`` (entrywise) and

.. math:: h_z(x) = \sum_{i} \lambda^{\mathrm{gaps}(i)} \prod_l b_l(i_l), \qquad
          b_l(t) = \|x_t\| \kappa(\langle z_l, \hat x_t \rangle),

computed by the recursion of part 3, section 10: ``c_0 = 1``,
``c_l[t] = lambda c_l[t-1] + c_{l-1}[t-1] b_l(t)``, ``h[t] = c_{k-1}[t-1] b_k(t)``.  Unrolled,
``c_l = (c_{l-1}[. - 1] o b_l) Lambda`` with the ``T x T`` upper-triangular Toeplitz matrix
``Lambda[s, t] = lambda^{t - s}``, so each of the ``k`` steps is one GEMM over all positions
(no loop over positions).  Pooling over positions sums ``h[t]`` over the end positions ``t``
(``"sum"``, the kernel above) or averages it over the non-padding positions (``"mean"``).

Max pooling (``"max"``, RKN-max of Chen, Jacob & Mairal 2019b, section 3.3; the max variant of
the course digest, part 3, section 10): the sum over index tuples becomes a maximum,

.. math:: h^{\max}_z(x) = \max_{i \in I(k, |x|)} \lambda^{\mathrm{gaps}(i)} \prod_l b_l(i_l),

by the max-product recursion ``c_l[t] = max(lambda c_l[t-1], c_{l-1}[t-1] b_l(t))`` and
``h[t] = c_{k-1}[t-1] b_k(t)``, then the maximum of ``h[t]`` over the end positions ``t`` (of
each bin); ``Psi(x) = K_0(Z, Z)^{-1/2} h^max(x)``, the Nyström form of a relaxation of the
local alignment kernel's best alignment.  The scan ``c[t] = max_{s <= t} lambda^{t-s} v[s]``
is ``lambda^t cummax_s(lambda^{-s} v[s])`` in blocks short enough that ``lambda^{-s}`` stays
below the fourth root of the dtype's largest value (no loop over positions within a block).

Several layers (:class:`KmerStack`, multilayer CKN-seq / RKN; Chen, Jacob & Mairal 2019a,
section 3; 2019b, section 3.4): the position features ``psi_1[t] = K_1(Z_1, Z_1)^{-1/2} h_1[t]``
of layer 1 (k-mers ending at ``t``, not pooled) are the position vectors of layer 2, and so
on; only the last layer pools, in the bins of the input sequence.

Position bins (``n_bins = B > 1``): the non-padding positions ``0 .. L-1`` of a sequence are cut
into ``B`` consecutive bins, ``t`` in bin ``floor(t B / L)``, and ``h`` is pooled in each bin
separately, giving ``B`` blocks ``Psi_b(x) = K_0(Z, Z)^{-1/2} pool_{t in bin b} h(x)[t]``; the
kernel is ``sum_b K_b(x, x')`` with ``K_b`` the kernel above restricted to the k-mers ending in
bin ``b`` of both sequences, so k-mers only match at similar relative positions (for aligned
sequences: the same region), the position information a bag of k-mers discards (the
pooling of CKN-seq is global; bins interpolate between it, ``B = 1``, and the
weighted-degree kernel's exact positions, ``B = L``).

Pyramid of bins (``n_bins = (B_1, ..., B_m)``): the pooling above at each level ``B_j``, the
blocks concatenated, i.e. the kernel ``sum_j K^{(B_j)}``: ``(1, 4)`` matches k-mers anywhere
(the bag of k-mers) and, in addition, in the same quarter of both sequences, as the spatial
pyramid of the image CKN's pooling (course part 3, section 7) but over positions.

Normalisation (``normalize=True``): each level's block ``Psi^{(B_j)}(x)`` is scaled to unit
norm, the normalised kernel ``K(x, x') / sqrt(K(x, x) K(x', x'))`` of each level, as the
string kernels of :mod:`kernelkit.kernels` are normalised, so that sequences of different
lengths and levels of different scales weigh the same.

Several k-mer lengths (:class:`KmerLengthSum`): one layer per length ``k``, features
concatenated, the kernel ``sum_k K_k``, as the spectrum kernel summed over ``k`` of the string
kernels' table (``docs/strings.md``).
"""

from __future__ import annotations

import itertools
import math
from numbers import Integral
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from kernelkit.kernels._dot_product import kappa_function, unit_rows
from kernelkit.models._ckn import layer_kappa
from kernelkit.models._spherical_kmeans import spherical_kmeans
from kernelkit.solvers._matfun import inverse_sqrt
from kernelkit.utils._errors import InputError

POOLINGS = ("mean", "sum", "max")
"""Pooling over positions of :class:`GappedKmerLayer`."""


def positive_ints(value: Any, name: str) -> tuple[int, ...]:
    """``value`` (an int or a non-empty sequence of ints, each ``>= 1``) as a tuple."""
    items = (value,) if isinstance(value, Integral) else tuple(value)
    if not items or not all(isinstance(v, Integral) and int(v) >= 1 for v in items):
        raise InputError(f"{name}: expected an integer >= 1 or a sequence of them, got {value!r}")
    return tuple(int(v) for v in items)


def gap_matrix(length: int, gap_penalty: float, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """``Lambda[s, t] = lambda^{t - s}`` for ``t >= s``, else 0 (``0^0 = 1``), shape (T, T)."""
    t = torch.arange(length, device=device)
    diff = (t[None, :] - t[:, None]).to(dtype)
    powers = torch.pow(torch.tensor(gap_penalty, dtype=dtype, device=device), diff.clamp_min(0))
    return torch.where(diff >= 0, powers, torch.zeros_like(powers))


def gap_max(v: torch.Tensor, gap_penalty: float) -> torch.Tensor:
    """``c[t] = max_{s <= t} lambda^{t - s} v[s]`` along the last axis (``0^0 = 1``).

    ``lambda^t cummax_s(lambda^{-s} v[s])`` within blocks of positions over which
    ``lambda^{-s}`` stays below ``finfo.max^{1/4}``; a block starts from ``lambda`` times the
    last value of the previous one.
    """
    if gap_penalty == 0.0:
        return v
    if gap_penalty == 1.0:
        return v.cummax(-1).values
    log_range = math.log(torch.finfo(v.dtype).max) / 4
    block = max(1, int(log_range / -math.log(gap_penalty)))
    parts: list[torch.Tensor] = []
    for start in range(0, v.shape[-1], block):
        seg = v[..., start : start + block]
        powers = gap_penalty ** torch.arange(seg.shape[-1], dtype=v.dtype, device=v.device)
        run = (seg / powers).cummax(-1).values * powers
        if parts:
            run = torch.maximum(run, parts[-1][..., -1:] * (gap_penalty * powers))
        parts.append(run)
    return torch.cat(parts, dim=-1)


def padded_lengths(x: torch.Tensor) -> torch.Tensor:
    """One past the last non-zero position vector of each sequence of ``x`` (``(n, A, T)``,
    padding = zero columns at the end); 0 for an all-zero row."""
    nonzero = torch.linalg.vector_norm(x, dim=1) > 0  # (n, T)
    last = x.shape[2] - torch.argmax(nonzero.flip(-1).to(torch.uint8), dim=-1)
    return torch.where(nonzero.any(-1), last, torch.zeros_like(last))


class GappedKmerLayer(nn.Module):
    r"""The gapped k-mer Nyström map ``Psi(x) = K_0(Z, Z)^{-1/2} pool(h(x))`` (module docstring).

    Parameters
    ----------
    in_channels : int
        Dimension ``A`` of a position vector (alphabet size for one-hot letters).
    n_filters : int
        Number ``q`` of anchors.
    k : int
        k-mer length.
    gap_penalty : float
        ``lambda`` in ``[0, 1]``; 0 keeps contiguous k-mers only.
    kappa : str
        A name of :data:`kernelkit.kernels._dot_product.KAPPAS`.
    sigma : float
        ``kappa="exp"``: ``kappa(u) = exp((u - 1) / sigma^2)`` per position.
    pooling : {"mean", "sum", "max"}
        Pooling of ``h[t]`` over the end positions ``t`` (of each bin); ``"max"`` also
        replaces the sum over index tuples by their maximum (RKN-max, module docstring).
    n_bins : int or sequence of int
        Number ``B`` of position bins pooled separately (output ``B q`` features, bin-major);
        a sequence ``(B_1, ..., B_m)`` is a pyramid (``(B_1 + ... + B_m) q`` features, level
        after level).
    normalize : bool
        Scale each level's block of features to unit norm (zero blocks stay zero).
    shift : float
        ``epsilon`` of ``(K_0(Z, Z)^{1/2} + epsilon I)^{-1}``; 0 is the exact Nyström map.
    dtype : torch.dtype
        Dtype of the anchors.

    Attributes
    ----------
    weight : nn.Parameter, shape (q, k, A)
        Unnormalised anchors; each anchor row ``z_l`` is normalised on use.
    """

    def __init__(
        self,
        in_channels: int,
        n_filters: int,
        k: int,
        *,
        gap_penalty: float = 0.0,
        kappa: str = "exp",
        sigma: float = 0.5,
        pooling: str = "mean",
        n_bins: int | tuple[int, ...] = 1,
        normalize: bool = False,
        shift: float = 0.0,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        if pooling not in POOLINGS:
            raise InputError(f"pooling: expected one of {POOLINGS}, got {pooling!r}")
        if not 0.0 <= gap_penalty <= 1.0:
            raise InputError(f"gap_penalty: expected a value in [0, 1], got {gap_penalty}")
        self.levels = positive_ints(n_bins, "n_bins")
        kappa_function(kappa)
        self.in_channels = int(in_channels)
        self.n_filters = int(n_filters)
        self.k = int(k)
        self.gap_penalty = float(gap_penalty)
        self.kappa_name = kappa
        self.sigma = float(sigma)
        self.pooling = pooling
        self.n_bins = sum(self.levels)
        self.normalize = bool(normalize)
        self.shift = float(shift)
        self.weight = nn.Parameter(
            torch.randn(self.n_filters, self.k, self.in_channels, dtype=dtype)
        )

    def kappa(self, u: torch.Tensor) -> torch.Tensor:
        """Per-position ``kappa`` (``exp`` with ``alpha = 1 / sigma^2``)."""
        return layer_kappa(self.kappa_name, self.sigma)(u)

    def anchors(self) -> torch.Tensor:
        """The anchors ``Z`` with unit rows ``z_l``, shape ``(q, k, A)``."""
        return self.weight / torch.linalg.vector_norm(self.weight, dim=2, keepdim=True)

    def set_anchors(self, Z: torch.Tensor) -> None:
        """Replace the anchors by ``Z`` (shape ``(q, k A)`` or ``(q, k, A)``)."""
        with torch.no_grad():
            self.weight.copy_(Z.reshape(self.weight.shape).to(self.weight))

    def anchor_gram(self) -> torch.Tensor:
        """``K_0(Z, Z) = prod_l kappa(Z_l Z_l^T)``, shape ``(q, q)``."""
        Z = self.anchors()
        cos = torch.einsum("pla,qla->lpq", Z, Z).clamp(-1.0, 1.0)
        return self.kappa(cos).prod(0)

    def position_map(self, x: torch.Tensor) -> torch.Tensor:
        r"""``h[t]``: the sum over index tuples ending at ``t``, shape ``(n, q, T)``.

        ``x`` has shape ``(n, A, T)`` (position vectors in columns, zero columns = padding).
        """
        length = x.shape[2]
        xu, norms = unit_rows(x.transpose(1, 2))  # (n, T, A), (n, T)
        if self.gap_penalty == 0.0 and self.kappa_name == "exp":
            return self._contiguous_exp_map(xu, norms)
        cos = torch.einsum("qla,nta->nlqt", self.anchors(), xu).clamp(-1.0, 1.0)
        b = self.kappa(cos) * norms[:, None, None, :]  # b_l(t), (n, k, q, T)
        # lambda = 0: Lambda is the identity; max pooling scans instead (gap_max)
        gapped = self.gap_penalty > 0 and self.pooling != "max"
        lam = gap_matrix(length, self.gap_penalty, x.dtype, x.device) if gapped else None
        c = torch.ones_like(b[:, 0])  # c_0[t - 1]
        for step in range(self.k - 1):
            v = c * b[:, step]
            if self.pooling == "max":
                v = gap_max(v, self.gap_penalty)
            elif lam is not None:
                v = v @ lam
            c = F.pad(v[..., :-1], (1, 0))  # c_l[t - 1], c_l[0] = 0
        return c * b[:, self.k - 1]

    def _contiguous_exp_map(self, xu: torch.Tensor, norms: torch.Tensor) -> torch.Tensor:
        r""":meth:`position_map` for contiguous k-mers (``lambda = 0``) and ``kappa = exp``.

        The product over the k-mer's positions is one exponential of a sum,
        ``h[t] = exp(alpha (sum_l <z_l, u[t-k+1+l]> - k)) prod_l ||x[t-k+1+l]||``, the sum
        a 1-d convolution of the unit position vectors ``u`` with the anchors (Chen, Jacob &
        Mairal 2019a, section 3: CKN-seq's k-mer kernel): one ``exp`` per anchor and position
        instead of ``k``.  The input is padded with ``k - 1`` zero vectors in front, so
        ``h[t] = 0`` for ``t < k - 1``, as in the recursion.
        """
        alpha = 1.0 / self.sigma**2
        start = self.k - 1
        windows = F.conv1d(F.pad(xu.transpose(1, 2), (start, 0)), self.anchors().permute(0, 2, 1))
        scale = F.pad(norms, (start, 0))
        norm_product = scale[:, start:]
        for step in range(start):
            norm_product = norm_product * scale[:, step : step + norms.shape[1]]
        # exp(alpha w) prod ||x|| as one exp: log of the norms' product, -inf where it is 0
        # (an exact 0 with no NaN gradient), the where's both branches finite
        positive = norm_product > 0
        log_norms = torch.where(positive, norm_product, torch.ones_like(norm_product)).log()
        offset = torch.where(positive, log_norms, torch.full_like(log_norms, -torch.inf))
        return torch.add(offset[:, None, :] - alpha * self.k, windows, alpha=alpha).exp_()

    def position_features(self, x: torch.Tensor) -> torch.Tensor:
        """``K_0(Z, Z)^{-1/2} h[t]`` at every position, shape ``(n, q, T)`` (padding stays 0):
        the input of the next layer of a :class:`KmerStack`."""
        inv = inverse_sqrt(self.anchor_gram(), shift=self.shift)
        return (self.position_map(x).transpose(1, 2) @ inv).transpose(1, 2)

    def bin_matrix(self, x: torch.Tensor, n_bins: int | None = None) -> torch.Tensor:
        """``M[n, t, b] = 1`` if position ``t`` of sequence ``n`` is in bin ``b``; ``(n, T, B)``.

        Bins cut the non-padding positions ``0 .. L_n - 1`` (``L_n`` the number of non-zero
        position vectors, padding at the end) into ``B`` consecutive parts,
        ``t -> floor(t B / L_n)``; padding positions are in no bin.  ``B`` is ``n_bins``
        (default: the first level).
        """
        n_bins = self.levels[0] if n_bins is None else n_bins
        lengths = (torch.linalg.vector_norm(x, dim=1) > 0).sum(-1, keepdim=True)  # (n, 1)
        t = torch.arange(x.shape[2], device=x.device)[None, :]
        idx = torch.div(t * n_bins, lengths.clamp_min(1), rounding_mode="floor")
        valid = (t < lengths).to(x.dtype)
        return F.one_hot(idx.clamp_max(n_bins - 1), n_bins).to(x.dtype) * valid[..., None]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``Psi(x)``, shape ``(n, B q)`` (bin ``b`` in columns ``b q .. (b + 1) q - 1``, the
        levels of a pyramid one after the other)."""
        return self.pool(self.position_map(x), x)

    def pool(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The pooled Nyström features of the position map ``h`` (``(n, q, T)``), in the
        bins of the input sequences ``x`` (``(n, A, T)``, zero columns = padding)."""
        inv = inverse_sqrt(self.anchor_gram(), shift=self.shift)
        blocks = []
        for n_bins in self.levels:
            bins = self.bin_matrix(x, n_bins)
            if self.pooling == "max":
                # h >= 0 (kappa >= 0 on [-1, 1], norms >= 0) and h = 0 at padding positions,
                # so one scatter of the maxima into zeros gives every bin's maximum (0 if
                # empty) wherever the padding falls
                bin_of = bins.argmax(-1)[:, None, :].expand(-1, h.shape[1], -1)
                pooled = h.new_zeros(h.shape[0], h.shape[1], n_bins)
                pooled = pooled.scatter_reduce(2, bin_of, h, "amax").transpose(1, 2)
            else:
                pooled = torch.einsum("nqt,ntb->nbq", h, bins)
            if self.pooling == "mean":
                pooled = pooled / bins.sum(1).clamp_min(1)[..., None]
            block = (pooled @ inv).reshape(x.shape[0], n_bins * self.n_filters)
            if self.normalize:
                norms = torch.linalg.vector_norm(block, dim=1, keepdim=True)
                block = block / torch.where(norms > 0, norms, torch.ones_like(norms))
            blocks.append(block)
        return torch.cat(blocks, dim=1)


class KmerLengthSum(nn.Module):
    r"""Several :class:`GappedKmerLayer` (one per k-mer length), features concatenated.

    ``Psi(x) = (Psi_{k_1}(x), ..., Psi_{k_m}(x))``, so ``<Psi(x), Psi(x')> = sum_j K_{k_j}(x,
    x')``: the sum of the k-mer kernels over lengths, as a spectrum kernel summed over
    ``k``.

    Parameters
    ----------
    layers : sequence of GappedKmerLayer
        The layers, all on the same input channels.
    """

    def __init__(self, layers: list[GappedKmerLayer]):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.n_bins = layers[0].n_bins
        self.n_filters = sum(layer.n_filters for layer in layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The concatenated features, shape ``(n, sum_j B q_j)``."""
        return torch.cat([layer(x) for layer in self.layers], dim=1)


class KmerStack(nn.Module):
    r"""Stacked :class:`GappedKmerLayer` s: multilayer CKN-seq / RKN (module docstring).

    ``Psi(x) = pool_L(h_L(psi_{L-1}(... psi_1(x))))`` with ``psi_l`` the position features
    (:meth:`GappedKmerLayer.position_features`) of layer ``l``; the last layer pools (its
    ``pooling``, ``n_bins``, ``normalize``) in the bins of the input ``x``.

    Parameters
    ----------
    layers : sequence of GappedKmerLayer
        The layers in order; layer ``l + 1`` has ``in_channels`` equal to the ``n_filters``
        of layer ``l``.
    """

    def __init__(self, layers: list[GappedKmerLayer]):
        super().__init__()
        for i, (low, high) in enumerate(itertools.pairwise(layers)):
            if high.in_channels != low.n_filters:
                raise InputError(
                    f"layers[{i + 1}]: expected {low.n_filters} input channels (the filters of "
                    f"layer {i}), got {high.in_channels}"
                )
        self.layers = nn.ModuleList(layers)
        self.n_bins = layers[-1].n_bins
        self.n_filters = layers[-1].n_filters

    def lower(self, x: torch.Tensor, n_layers: int | None = None) -> torch.Tensor:
        """Position features of the first ``n_layers`` layers (default: all but the last)."""
        n_layers = len(self.layers) - 1 if n_layers is None else n_layers
        for layer in list(self.layers)[:n_layers]:
            x = layer.position_features(x)
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The pooled features of the last layer, shape ``(n, B q_L)``."""
        last = self.layers[-1]
        return last.pool(last.position_map(self.lower(x)), x)


def kmer_layers(network: GappedKmerLayer | KmerLengthSum | KmerStack) -> list[GappedKmerLayer]:
    """The pooling :class:`GappedKmerLayer` s of ``network`` (itself, those of a sum, or the
    last layer of a stack)."""
    if isinstance(network, KmerStack):
        return [network.layers[-1]]
    return list(network.layers) if isinstance(network, KmerLengthSum) else [network]


def pyramid_prefixes(
    network: GappedKmerLayer | KmerLengthSum | KmerStack,
) -> tuple[torch.Tensor, ...]:
    """Boolean masks of the feature columns of the first ``1, 2, ..., m`` pyramid levels.

    Mask ``j`` keeps, in every layer's block, the columns of levels ``0 .. j`` (levels
    ``B_1, ..., B_{j+1}`` of ``n_bins``): the model that pools positions down to level
    ``j + 1`` and no finer (:func:`keep_levels`).
    """
    masks = []
    layers = kmer_layers(network)
    for j in range(len(layers[0].levels)):
        parts = [
            torch.full((b * layer.n_filters,), i <= j, dtype=torch.bool)
            for layer in layers
            for i, b in enumerate(layer.levels)
        ]
        masks.append(torch.cat(parts))
    return tuple(masks)


def keep_levels(network: GappedKmerLayer | KmerLengthSum | KmerStack, n_levels: int) -> None:
    """Keep the first ``n_levels`` levels of every layer's pyramid (``n_bins`` shortened)."""
    for layer in kmer_layers(network):
        layer.levels = layer.levels[:n_levels]
        layer.n_bins = sum(layer.levels)
    if isinstance(network, (KmerLengthSum, KmerStack)):
        network.n_bins = kmer_layers(network)[0].n_bins


def fit_kmer_anchors(
    layer: GappedKmerLayer | KmerLengthSum | KmerStack,
    x: torch.Tensor,
    *,
    n_kmers: int,
    n_iter: int,
    generator: torch.Generator,
) -> None:
    """Unsupervised anchors: spherical k-means on sampled contiguous k-mers.

    The k-mers ``(x_t, ..., x_{t+k-1})`` without padding positions are drawn uniformly (at
    most ``n_kmers``), and clustered on the product of the ``k`` unit spheres
    (:func:`~kernelkit.models._spherical_kmeans.spherical_kmeans` with ``blocks=k``), the anchor set
    of the layer; a :class:`KmerLengthSum` has each of its layers fitted in turn, a
    :class:`KmerStack` each layer on the position features of the fitted layers below it,
    computed on ``ceil(2 n_kmers / T)`` random sequences (all when fewer).
    """
    if isinstance(layer, KmerLengthSum):
        for sub in kmer_layers(layer):
            fit_kmer_anchors(sub, x, n_kmers=n_kmers, n_iter=n_iter, generator=generator)
        return
    if isinstance(layer, KmerStack):
        n_seq = min(x.shape[0], math.ceil(2 * n_kmers / max(1, x.shape[2])))
        x = x[torch.randperm(x.shape[0], generator=generator)[:n_seq].to(x.device)]
        for depth, sub in enumerate(layer.layers):
            with torch.no_grad():
                z = layer.lower(x, depth)
            fit_kmer_anchors(sub, z, n_kmers=n_kmers, n_iter=n_iter, generator=generator)
        return
    k, a = layer.k, layer.in_channels
    if x.shape[2] >= k:
        windows = x.unfold(2, k, 1).permute(0, 2, 3, 1)  # (n, T - k + 1, k, A)
        full = (torch.linalg.vector_norm(windows, dim=3) > 0).all(2)
        rows = windows[full].reshape(-1, k * a)
    else:
        rows = x.new_zeros((0, k * a))
    if rows.shape[0] > n_kmers:
        rows = rows[torch.randperm(rows.shape[0], generator=generator)[:n_kmers].to(x.device)]
    layer.set_anchors(
        spherical_kmeans(rows, layer.n_filters, n_iter=n_iter, generator=generator, blocks=k)
    )


__all__ = [
    "GappedKmerLayer",
    "KmerLengthSum",
    "KmerStack",
    "fit_kmer_anchors",
    "gap_matrix",
    "gap_max",
    "keep_levels",
    "kmer_layers",
    "padded_lengths",
    "positive_ints",
    "pyramid_prefixes",
]
