"""Kernels by name: ``NAME:param=value,...`` specs and the default kernel of each input kind.

One table serves the command line (``--kernel gaussian:sigma=2``) and the estimators
(``KernelRidge(kernel="spectrum:k=4")``).  A spec names a kernel of :data:`KERNEL_SPECS` and
sets its hyperparameters; values are converted to the type of the parameter's default.

>>> from kernelkit.kernels._specs import parse_kernel_spec, build_kernel
>>> parse_kernel_spec("gaussian:sigma=2")
('gaussian', {'sigma': 2})
>>> build_kernel("spectrum:k=4", "sequences")
Spectrum(...)
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any

import numpy as np
import torch

from kernelkit.kernels._base import Kernel, squared_distances
from kernelkit.kernels._dot_product import (
    SphereExponential,
    SphereInversePolynomial,
    SpherePolynomial,
    SphereVovk,
)
from kernelkit.kernels._graphs import ShortestPath, WeisfeilerLehman
from kernelkit.kernels._measures import InverseGeneralizedVariance
from kernelkit.kernels._molecules import MinMax, Tanimoto
from kernelkit.kernels._mutual_information import MutualInformation
from kernelkit.kernels._neural import ArcCosine, ReLUNTK
from kernelkit.kernels._physico_chemical import PhysicoChemical
from kernelkit.kernels._precomputed import Precomputed
from kernelkit.kernels._sparse import SparseRows, row_keys
from kernelkit.kernels._strings import Mismatch, Spectrum, Subsequence
from kernelkit.kernels._vector import Gaussian, Laplacian, Linear, Matern, Polynomial
from kernelkit.kernels._weighted_degree import WeightedDegree
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._spec_text import parse_spec

__all__ = [
    "DEFAULT_KERNEL_SPECS",
    "KERNEL_SPECS",
    "KernelSpecError",
    "build_kernel",
    "default_kernel",
    "default_spec",
    "median_sigma",
    "parse_kernel_spec",
    "spec_defaults",
    "spec_kind",
    "weighted_median",
]


class KernelSpecError(InputError):
    """A kernel spec that names no kernel, an unknown parameter or a badly typed value."""


KERNEL_SPECS: dict[str, tuple[InputKind, type[Kernel]]] = {
    "gaussian": (InputKind.VECTOR, Gaussian),
    "laplacian": (InputKind.VECTOR, Laplacian),
    "linear": (InputKind.VECTOR, Linear),
    "matern": (InputKind.VECTOR, Matern),
    "polynomial": (InputKind.VECTOR, Polynomial),
    "arccos": (InputKind.VECTOR, ArcCosine),
    "relu-ntk": (InputKind.VECTOR, ReLUNTK),
    "sphere-exp": (InputKind.VECTOR, SphereExponential),
    "sphere-inverse-polynomial": (InputKind.VECTOR, SphereInversePolynomial),
    "sphere-polynomial": (InputKind.VECTOR, SpherePolynomial),
    "sphere-vovk": (InputKind.VECTOR, SphereVovk),
    "tanimoto": (InputKind.MOLECULE, Tanimoto),
    "minmax": (InputKind.MOLECULE, MinMax),
    "spectrum": (InputKind.STRING, Spectrum),
    "mismatch": (InputKind.STRING, Mismatch),
    "subsequence": (InputKind.STRING, Subsequence),
    "weighted-degree": (InputKind.STRING, WeightedDegree),
    "mutual-information": (InputKind.STRING, MutualInformation),
    "physico-chemical": (InputKind.STRING, PhysicoChemical),
    "wl": (InputKind.GRAPH, WeisfeilerLehman),
    "shortest-path": (InputKind.GRAPH, ShortestPath),
    "precomputed": (InputKind.GRAM, Precomputed),
    "igv": (InputKind.BAG, InverseGeneralizedVariance),
}
"""Kernel names of a spec: the kind of input each takes and its class."""

DEFAULT_KERNEL_SPECS: dict[InputKind, str] = {
    InputKind.VECTOR: "gaussian",
    InputKind.MOLECULE: "tanimoto:fingerprint=fragprints",
    InputKind.STRING: "spectrum:k=3",
    InputKind.GRAPH: "wl",
    InputKind.GRAM: "precomputed",
    InputKind.BAG: "igv",
}
"""The kernel of each kind of input when none is given (Gaussian: median-heuristic width;
aligned sequences, all of one length, take :data:`ALIGNED_STRING_SPEC` instead)."""

ALIGNED_STRING_SPEC = "weighted-degree:degree=8"
"""The default kernel of aligned sequences (every training sequence of one length): the
weighted-degree kernel of Rätsch & Sonnenburg (course part 2, "Weighted degree kernel"),
position-aware, where the spectrum kernel ignores where a k-mer sits (measured in
``docs/estimators.md``, "Default kernels per kind of input")."""


def default_spec(kind: InputKind, X: Any = None) -> str | None:
    """The spec of the default kernel of ``kind`` for the data ``X`` (see
    :data:`DEFAULT_KERNEL_SPECS`): sequences all of one length are aligned, and take the
    position-aware :data:`ALIGNED_STRING_SPEC`."""
    texts = getattr(X, "sequences", X)
    if hasattr(texts, "tolist"):  # NumPy arrays, pandas Series
        texts = texts.tolist()
    if kind is InputKind.STRING and isinstance(texts, (list, tuple)) and len(texts) > 1:
        if all(isinstance(s, str) for s in texts) and len({len(s) for s in texts}) == 1:
            return ALIGNED_STRING_SPEC
    return DEFAULT_KERNEL_SPECS.get(kind)


def _equal_rows(Z: torch.Tensor | SparseRows) -> torch.Tensor:
    """Boolean ``(n, n)`` mask of the pairs of identical rows (:func:`row_keys`)."""
    keys = torch.as_tensor(row_keys(Z).view(np.int64))
    if isinstance(Z, torch.Tensor):
        keys = keys.to(Z.device)
    return keys[:, None] == keys[None, :]


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """Median of ``values`` repeated ``weights`` times (``np.median`` of the repeated sample
    for integer weights): the mean of the smallest value whose cumulative weight reaches
    half the total and the smallest value whose cumulative weight exceeds it."""
    order = np.argsort(values, kind="stable")
    v, c = values[order], np.cumsum(weights[order])
    half = c[-1] / 2
    lower = v[min(np.searchsorted(c, half, side="left"), len(v) - 1)]
    upper = v[min(np.searchsorted(c, half, side="right"), len(v) - 1)]
    return float((lower + upper) / 2)


def median_sigma(Z: torch.Tensor, *, max_points: int = 1000, sample_weight: Any = None) -> float:
    """Median heuristic: the median pairwise Euclidean distance of (at most 1000 of) ``Z``.

    ``sigma = median_{i<j} ||z_i - z_j||`` (as ``np.median``: the mean of the two middle
    values for an even count) over the pairs at positive distance, on an
    evenly spaced subset of ``max_points`` rows when ``Z`` is larger; 1.0, with a warning
    that says how to set the width, when all rows are equal (the median width is 0).

    ``sample_weight`` makes it the median of the *repeated* sample, row ``i`` counted
    ``w_i`` times: pair ``(i, j)`` weighs ``w_i w_j`` (:func:`weighted_median`; copies of a
    row are at distance 0 and do not count, rows of weight 0 drop out), and the subset of a
    sample of total weight above ``max_points`` takes the rows at evenly spaced positions of
    the cumulative weight.  Integer weights give exactly the width of the repeated rows.
    """
    if not isinstance(Z, SparseRows):
        Z = torch.as_tensor(Z).detach()
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    total = Z.shape[0] if w is None else float(w.sum())
    if total > max_points:
        pos = torch.linspace(0, total - 1, max_points).long()
        idx = pos if w is None else torch.as_tensor(np.searchsorted(np.cumsum(w), pos, "right"))
        Z, w = Z[idx], None
    if isinstance(Z, SparseRows):
        Z = SparseRows.from_input(Z, torch.float64)
        d = squared_distances(Z, Z).sqrt_()
    else:
        d = torch.cdist(Z.to(torch.float64), Z.to(torch.float64))
    d[_equal_rows(Z)] = 0.0  # copies of a row at distance 0, not at round-off
    iu = torch.triu_indices(Z.shape[0], Z.shape[0], 1)
    vals = d[iu[0], iu[1]].cpu().numpy()
    pair_w = np.ones_like(vals) if w is None else w[iu[0].numpy()] * w[iu[1].numpy()]
    keep = (vals > 0) & (pair_w > 0)
    if not keep.any():
        warnings.warn(
            f"median heuristic: all {Z.shape[0]} rows are equal (every feature constant), so "
            "the median distance is 0; sigma = 1.0 is used. Pass sigma (e.g. "
            "Gaussian(sigma=...), --kernel gaussian:sigma=...) or drop the constant columns",
            UserWarning,
            stacklevel=2,
        )
        return 1.0
    if w is None:
        return float(np.median(vals[keep]))
    return weighted_median(vals[keep], pair_w[keep])


@functools.cache
def _parameters(cls: type[Kernel]) -> dict[str, inspect.Parameter]:
    """The constructor parameters of a kernel class, read once per class (``inspect`` is slow
    and every ``--kernel`` parse asks for all the classes); callers must not mutate it."""
    params = inspect.signature(cls.__init__).parameters
    return {k: p for k, p in params.items() if k != "self" and p.kind != p.VAR_KEYWORD}


def spec_defaults(cls: type[Kernel]) -> dict[str, Any]:
    """The parameters of a kernel class and their defaults (``None`` where none)."""
    return {k: None if p.default is p.empty else p.default for k, p in _parameters(cls).items()}


def parse_kernel_spec(spec: str, *, argument: str = "kernel") -> tuple[str, dict[str, Any]]:
    """Split ``NAME:a=1,b=x`` into the name and typed parameters (checked against the class).

    ``argument`` names the option or parameter in error messages (``--kernel``, ``kernel``);
    the text is read by :func:`kernelkit.utils._spec_text.parse_spec`.
    """
    table = {name: spec_defaults(cls) for name, (_, cls) in KERNEL_SPECS.items()}
    return parse_spec(spec, table, argument=argument, error=KernelSpecError)


def spec_kind(spec: str, *, argument: str = "kernel") -> InputKind:
    """The kind of input the kernel named in ``spec`` takes."""
    return KERNEL_SPECS[parse_kernel_spec(spec, argument=argument)[0]][0]


def kind_mismatch(argument: str, label: str, takes: InputKind, holds: InputKind) -> KernelSpecError:
    """The error of a kernel ``label`` that takes ``takes`` given input holding ``holds``,
    listing the kernel names for ``holds``."""
    others = ", ".join(n for n, (k, _) in KERNEL_SPECS.items() if k == holds)
    return KernelSpecError(
        f"{argument}: {label} takes {takes.plural}, but the input holds {holds.plural}; "
        f"kernels for {holds.plural}: {others}"
    )


def build_kernel(
    spec: str | None,
    kind: InputKind | str,
    *,
    sigma_from: Any = None,
    sample_weight: Any = None,
    alphabet: str | None = None,
    argument: str = "kernel",
) -> Kernel:
    """The kernel of ``spec`` (the default for ``kind`` when ``None``), checked against ``kind``.

    Parameters
    ----------
    spec : str or None
        ``NAME[:param=value,...]``; ``None`` takes :data:`DEFAULT_KERNEL_SPECS` of ``kind``.
    kind : InputKind or str
        The kind of input the kernel will see (a value or plural name of :class:`InputKind`).
    sigma_from : array-like, optional
        Vectors from which a missing Gaussian/Laplacian ``sigma`` is set by the median
        heuristic (:func:`median_sigma`).
    sample_weight : array-like, optional
        Weights of the rows of ``sigma_from`` (the median of the repeated sample).
    alphabet : str, optional
        The alphabet of sequences, set on string kernels that take one and were not given one.
    argument : str
        The option or parameter named in error messages.
    """
    kind = InputKind.parse(kind)
    if spec is None and kind not in DEFAULT_KERNEL_SPECS:
        raise KernelSpecError(f"{argument}: no default kernel for {kind.plural}; pass one")
    name, values = parse_kernel_spec(spec or DEFAULT_KERNEL_SPECS[kind], argument=argument)
    takes, cls = KERNEL_SPECS[name]
    if takes != kind:
        raise kind_mismatch(argument, name, takes, kind)
    params = _parameters(cls)
    if "sigma" in params and "sigma" not in values and sigma_from is not None:
        values["sigma"] = median_sigma(torch.as_tensor(sigma_from), sample_weight=sample_weight)
    if "alphabet" in params and "alphabet" not in values and alphabet is not None:
        values["alphabet"] = alphabet
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise KernelSpecError(f"{argument}: {spec}: {exc}") from None


def default_kernel(kind: InputKind | str, X: Any = None) -> Kernel:
    """The default kernel of an input kind, as the command line and estimators choose it.

    Tanimoto for molecules, ``Spectrum(k=3)`` for sequences (``WeightedDegree(8)`` for
    aligned ones, :func:`default_spec`), Weisfeiler-Lehman for graphs,
    ``Precomputed`` for Gram matrices and, for vectors, a Gaussian whose ``sigma`` is the
    median pairwise distance of ``X`` (median heuristic; ``sigma = 1`` without ``X``).
    """
    kind = InputKind.parse(kind)
    sigma_from = X if kind is InputKind.VECTOR and X is not None else None
    return build_kernel(default_spec(kind, X), kind, sigma_from=sigma_from)
