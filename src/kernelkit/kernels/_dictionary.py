r"""Dictionary-based kernels: the empirical kernel map over a reference set, and motif kernels.

Course part 2, section 3 (the string-kernel table, "dictionary-based"): a dictionary
``D = (d_1, ..., d_m)`` and a score ``s`` give the explicit features

.. math:: \Phi_D(x) = (s(x, d_1), \dots, s(x, d_m)), \qquad K(x, y) = \langle \Phi_D(x),
          \Phi_D(y) \rangle,

p.d. for *any* ``s`` (a linear kernel on explicit features), so a score that is not a kernel
(Smith-Waterman, BLAST) still gives a p.d. Gram.  Two dictionaries of the literature:

* the **SVM-pairwise** kernel (Liao & Noble 2003): ``D`` is a reference set (the training
  sequences) and ``s`` a similarity; here ``s`` is any kernelkit :class:`Kernel` (local
  alignment, spectrum, or a kernel on vectors or graphs: the empirical kernel map
  ``Phi_D(x) = (k(x, d_j))_j`` is generic), and the input kind is that kernel's;
* the **motif** kernel (Logan et al. 2001; Ben-Hur & Brutlag 2003): ``D`` is a motif library
  and ``s(x, m) = 1`` when motif ``m`` occurs in ``x``, else 0; a motif is a regular
  expression (PROSITE ``[ST]-x-[RK]`` is ``[ST].[RK]``) searched in the upper-case string (the
  case rule of :mod:`kernelkit.data._strings`; a motif's ``.`` also matches ``N`` / ``X``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

import torch

from kernelkit.data._strings import StringBatch, fold_case
from kernelkit.kernels._base import Batch, Kernel, batch_dtype
from kernelkit.kernels._strings import Spectrum
from kernelkit.kernels._strings_base import _DNA_X, _DNA_Y, _PROT_X, _PROT_Y
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind


class DictionaryKernel(Kernel):
    r"""``K(x, y) = <Phi_D(x), Phi_D(y)>`` with ``Phi_D(x) = (s(x, d_j))_{j <= m}``.

    The SVM-pairwise empirical kernel map over a reference set (``kernel`` given, Liao &
    Noble 2003) or the motif kernel (``kernel=None``, ``dictionary`` of regular expressions;
    Logan et al. 2001); course part 2, section 3; see the module docstring.  p.d. (explicit
    features) whatever the score.

    Parameters
    ----------
    dictionary : sequence
        The reference items ``d_j`` (any input the ``kernel`` takes), or motifs (regular
        expressions over upper-case letters) when ``kernel`` is None.
    kernel : Kernel or None, default None
        The score ``s(x, d) = kernel(x, d)``; None: motif presence.
    """

    differentiable: ClassVar[bool] = False

    def __init__(self, dictionary: Sequence[Any], kernel: Kernel | None = None):
        super().__init__()
        if kernel is not None and not isinstance(kernel, Kernel):
            raise InputError(f"kernel: expected a kernelkit Kernel or None, got {kernel!r}")
        if len(dictionary) == 0:
            raise InputError("dictionary: expected at least one item, got none")
        if kernel is None:
            for motif in dictionary:
                try:
                    re.compile(motif)
                except (re.error, TypeError) as exc:
                    raise InputError(
                        f"dictionary: expected regular expressions, got {motif!r} ({exc})"
                    ) from exc
        self.dictionary = dictionary
        self.kernel = kernel

    @property
    def input_kind(self) -> InputKind:  # type: ignore[override]
        return InputKind.STRING if self.kernel is None else self.kernel.input_kind

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(["GA.T", "C[AG]T", "AC", "G{3}"]), _DNA_X, _DNA_Y),
            (cls(_PROT_X[:3], Spectrum(2, alphabet="protein")), _PROT_X, _PROT_Y),
        ]

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> Batch:
        if self.kernel is None:
            return StringBatch.from_sequences(X, None, name="X")
        return self.kernel.prepare(X, dtype=dtype)

    def features(self, X: Batch) -> torch.Tensor:
        """``Phi_D(X)``, shape ``(len(X), m)``."""
        if self.kernel is None:
            motifs = [re.compile(m) for m in self.dictionary]
            rows = [
                [float(m.search(fold_case(s, X.alphabet)) is not None) for m in motifs] for s in X
            ]
            return torch.tensor(rows, dtype=torch.float64).reshape(len(X), len(motifs))
        D = self.kernel.prepare(self.dictionary, dtype=batch_dtype(X), reference=True)
        return self.kernel.block(X, D)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        FX = self.features(X)
        FY = FX if Y is X else self.features(Y)
        return FX @ FY.T

    def block_diag(self, X: Batch) -> torch.Tensor:
        return (self.features(X) ** 2).sum(1)


__all__ = ["DictionaryKernel"]
