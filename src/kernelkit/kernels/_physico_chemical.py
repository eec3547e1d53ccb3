r"""The physico-chemical kernel: auto-correlations of residue properties along a protein.

Course part 2, section 3 (the string-kernel table, "physico-chemical"; Zhang et al. 2003):
a property ``h`` of the residues (hydrophobicity, polarity) turns a protein ``x`` of length
``n`` into the series ``h(x_1), ..., h(x_n)``, described by its auto-correlations

.. math:: r_j(x) = \frac{1}{n - j} \sum_{i=1}^{n - j} h(x_i)\, h(x_{i+j}),
          \qquad j = 1, \dots, J

(0 when ``n <= j``), one block of ``J`` values per property; on a constant sequence
``r_j = h^2``.  The kernel is the linear kernel of these explicit features, or the Gaussian
``exp(-||r(x) - r(y)||^2 / (2 sigma^2))`` of them; both p.d.  Property scales: Kyte &
Doolittle (1982) hydropathy and Grantham (1974) polarity, each standardised to mean 0 and
variance 1 over the 20 residues (so the unknown residue ``X``, given the mean 0, adds
nothing), or any ``(P, 20)`` table in the order of the ``"protein"`` alphabet.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.data._strings import ALPHABETS, StringBatch
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._strings_base import _PROT_X, _PROT_Y, _StringKernel
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive

_SCALES: dict[str, dict[str, float]] = {
    "hydrophobicity": dict(zip(
        "ARNDCQEGHILKMFPSTWYV",
        [1.8, -4.5, -3.5, -3.5, 2.5, -3.5, -3.5, -0.4, -3.2, 4.5,
         3.8, -3.9, 1.9, 2.8, -1.6, -0.8, -0.7, -0.9, -1.3, 4.2],
        strict=True,
    )),
    "polarity": dict(zip(
        "ARNDCQEGHILKMFPSTWYV",
        [8.1, 10.5, 11.6, 13.0, 5.5, 10.5, 12.3, 9.0, 10.4, 5.2,
         4.9, 11.3, 5.7, 5.2, 8.0, 9.2, 8.6, 5.4, 6.2, 5.9],
        strict=True,
    )),
}  # fmt: skip
"""Kyte-Doolittle hydropathy and Grantham polarity of the 20 standard residues."""


def property_table(properties: Any) -> np.ndarray:
    """The standardised ``(P, 20)`` table of ``properties`` (names of the scales above, or a
    numeric table in the order of the ``"protein"`` alphabet, standardised as given)."""
    letters = ALPHABETS["protein"]
    if isinstance(properties, str):
        properties = (properties,)
    if all(isinstance(p, str) for p in properties):
        unknown = [p for p in properties if p not in _SCALES]
        if unknown or not properties:
            raise InputError(
                f"properties: expected names among {sorted(_SCALES)} or a (P, 20) table, "
                f"got {properties!r}"
            )
        table = np.array([[_SCALES[p][a] for a in letters] for p in properties])
    else:
        table = np.atleast_2d(np.asarray(properties, dtype=np.float64))
        if table.ndim != 2 or table.shape[1] != len(letters) or not np.isfinite(table).all():
            raise InputError(
                f"properties: expected a finite (P, {len(letters)}) table over {letters!r}, "
                f"got shape {table.shape}"
            )
    std = table.std(1, keepdims=True)
    return (table - table.mean(1, keepdims=True)) / np.where(std > 0, std, 1.0)


class PhysicoChemical(_StringKernel):
    r"""Kernel on the auto-correlations ``r_j`` of residue properties (Zhang et al. 2003).

    ``Phi(x) = (r_{p,j}(x))_{p, j <= J}`` with ``r_{p,j} = (1/(n-j)) sum_i h_p(x_i)
    h_p(x_{i+j})`` (module docstring; course part 2, section 3); ``K = <Phi(x), Phi(y)>`` or
    its Gaussian.  p.d.

    Parameters
    ----------
    lags : int, default 5
        Largest lag ``J``.
    properties : str, sequence of str or array-like, default ("hydrophobicity", "polarity")
        Residue scales: names (``"hydrophobicity"``, ``"polarity"``) or a ``(P, 20)`` table
        over ``ACDEFGHIKLMNPQRSTVWY``; each is standardised over the 20 residues.
    sigma : float or None, default None
        None: the linear kernel of the features; else the Gaussian of width ``sigma``.
    """

    def __init__(
        self,
        lags: int = 5,
        properties: Any = ("hydrophobicity", "polarity"),
        sigma: float | None = None,
    ):
        super().__init__()
        self.lags = check_int(lags, name="lags", minimum=1)
        self.properties = properties
        self.sigma = None if sigma is None else check_positive(sigma, name="sigma")
        self.alphabet = "protein"
        self._table = property_table(properties)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [(cls(3), _PROT_X, _PROT_Y), (cls(2, "polarity", sigma=2.0), _PROT_X, _PROT_Y)]

    def features(self, X: StringBatch) -> torch.Tensor | None:
        """The explicit features of the linear kernel (:meth:`autocorrelations`); None for
        the Gaussian."""
        return self.autocorrelations(X) if self.sigma is None else None

    def autocorrelations(self, X: StringBatch) -> torch.Tensor:
        """``r_{p,j}``, shape ``(n, P J)`` (property-major)."""
        X = self._encoded(X)
        values = np.concatenate([self._table, np.zeros((len(self._table), 1))], axis=1)
        out = np.zeros((len(X), len(self._table), self.lags))
        for i, seq in enumerate(np.split(X.codes, X.offsets[1:-1])):
            h = values[:, seq]  # (P, n); the unknown residue has code 20, value 0
            for j in range(1, min(self.lags, len(seq) - 1) + 1):
                out[i, :, j - 1] = (h[:, :-j] * h[:, j:]).mean(1)
        return torch.as_tensor(out.reshape(len(X), -1))

    def block(self, X: StringBatch, Y: StringBatch) -> torch.Tensor:
        FX = self.autocorrelations(X)
        FY = FX if Y is X else self.autocorrelations(Y)
        if self.sigma is None:
            return FX @ FY.T
        return torch.exp(-(torch.cdist(FX, FY) ** 2) / (2 * self.sigma**2))

    def block_diag(self, X: StringBatch) -> torch.Tensor:
        F = self.autocorrelations(X)
        return (F**2).sum(1) if self.sigma is None else torch.ones(len(X), dtype=F.dtype)


__all__ = ["PhysicoChemical", "property_table"]
