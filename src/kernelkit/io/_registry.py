"""The registry of classes a model file may contain.

Adding a class
--------------
Classes are resolved **only** through the registry (:func:`class_table`), never by importing
a name read from a file.  Enrolled automatically, because they are classes of kernelkit
modules: every scikit-learn estimator (kind ``estimator``; the estimators exported by
``kernelkit.__all__`` are imported first, so a new top-level estimator such as
``InvariantEmbedding`` needs nothing), every :class:`~kernelkit.kernels.Kernel` subclass
(``kernel``) and every other ``torch.nn.Module`` subclass (``module``).  Plain data holders
(batches, result dataclasses) are listed in :func:`builtin_classes`; add a new one there, or
at run time::

    from kernelkit.io import register
    register(MyBatch, "dataclass")

Registry names are ``cls.__name__`` and must be unique.  A class whose instances hold only
supported values (arrays, tensors, kernels, registered objects, Python containers) needs
nothing else.  A value type that is neither (like NumPy random generators) gets a codec in
:mod:`kernelkit.io._values`.  How each kind is written and rebuilt is described in
:mod:`kernelkit.io._codec`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from torch import nn

from kernelkit.io._checks import (
    check_fingerprint_matrix,
    check_graph_batch,
    check_sparse_features,
    check_string_batch,
    check_svc,
)
from kernelkit.kernels import Kernel
from kernelkit.utils._errors import InputError

KINDS = ("estimator", "kernel", "module", "dataclass", "state")
"""How an object of a registered class is written and rebuilt (see :mod:`kernelkit.io._codec`)."""


@dataclass(frozen=True)
class ClassEntry:
    """A registered class, how its instances are written (one of :data:`KINDS`), and an
    optional structural check run on each loaded instance (``None`` or a refusal reason;
    see :mod:`kernelkit.io._checks`)."""

    cls: type
    kind: str
    check: Callable[[Any], str | None] | None = None


_EXTRA: dict[str, ClassEntry] = {}


def register(
    cls: type,
    kind: str,
    *,
    name: str | None = None,
    check: Callable[[Any], str | None] | None = None,
) -> type:
    """Allow instances of ``cls`` in model files; returns ``cls`` (usable as a decorator).

    Parameters
    ----------
    cls : type
        The class.
    kind : {"estimator", "kernel", "module", "dataclass", "state"}
        How it is written and rebuilt (see :mod:`kernelkit.io._codec`).
    name : str, optional
        Registry name written in the manifest (default ``cls.__name__``); must be unique.
    check : callable, optional
        ``check(obj)`` on every loaded instance: ``None``, or the reason to refuse the file
        (for classes whose arrays reach compiled code that does not check bounds).
    """
    if kind not in KINDS:
        raise InputError(f"kind: expected one of {KINDS}, got {kind!r}")
    key = name or cls.__name__
    known = class_table().get(key)
    if known is not None and known.cls is not cls:
        raise InputError(
            f"name: {key!r} is already registered for {known.cls.__module__}."
            f"{known.cls.__qualname__}; pass another name"
        )
    _EXTRA[key] = ClassEntry(cls, kind, check)
    return cls


def builtin_classes() -> dict[str, ClassEntry]:
    """Classes allowed in files that are not enrolled automatically (see :func:`class_table`).

    Plain data holders of kernelkit (batches, results, the Gram centerer, mixtures) and the
    foreign classes kernelkit models contain: scikit-learn's ``SVC`` (inside
    ``KernelSVC``), ``torch.nn.ModuleList`` and ``torch.nn.Linear`` (the CKN classifiers'
    head).
    """
    from sklearn.svm import SVC

    from kernelkit.data import BagBatch
    from kernelkit.data._graphs import GraphBatch
    from kernelkit.data._strings import StringBatch
    from kernelkit.gram._centering import GramCenterer
    from kernelkit.gram._nystrom import CholeskyBasis, NystromBasis, NystromMap
    from kernelkit.gram._random_features import RandomFourierMap
    from kernelkit.invariance import (
        ImageTransformInvariance,
        LabelLogicInvariance,
        MixupInvariance,
        TransformInvariance,
    )
    from kernelkit.invariance._base import Representers
    from kernelkit.invariance._embedding import SemiNorm
    from kernelkit.kernels._features import SparseFeatures
    from kernelkit.kernels._fingerprints import FingerprintMatrix
    from kernelkit.kernels._precomputed import PrecomputedBatch
    from kernelkit.models._autoencoder import TrainResult
    from kernelkit.models._concatenated import Mixture

    table = {
        "sklearn.svm.SVC": ClassEntry(SVC, "estimator", check_svc),
        "torch.nn.ModuleList": ClassEntry(nn.ModuleList, "module"),
        "torch.nn.Linear": ClassEntry(nn.Linear, "module"),
    }
    for cls, kind, check in (
        (Mixture, "state", None),
        (GramCenterer, "state", None),
        (TrainResult, "dataclass", None),
        (PrecomputedBatch, "dataclass", None),
        (StringBatch, "dataclass", check_string_batch),
        (BagBatch, "dataclass", None),
        (GraphBatch, "dataclass", check_graph_batch),
        (SparseFeatures, "dataclass", check_sparse_features),
        (FingerprintMatrix, "dataclass", check_fingerprint_matrix),
        (NystromBasis, "dataclass", None),
        (CholeskyBasis, "dataclass", None),
        (NystromMap, "dataclass", None),
        (RandomFourierMap, "dataclass", None),
        (Representers, "dataclass", None),
        (SemiNorm, "dataclass", None),
        # invariance settings; a TransformInvariance holding Python callables is refused at
        # save (functions are never written), the built-in image transforms are plain numbers
        (TransformInvariance, "state", None),
        (ImageTransformInvariance, "state", None),
        (MixupInvariance, "state", None),
        (LabelLogicInvariance, "state", None),
    ):
        table[cls.__name__] = ClassEntry(cls, kind, check)
    return table


def _kernelkit_subclasses(base: type) -> Iterator[type]:
    """Every subclass of ``base`` (at any depth) defined in a ``kernelkit`` module."""
    stack, seen = [base], set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if cls.__module__.startswith("kernelkit."):
            yield cls
        stack.extend(cls.__subclasses__())


def _enrol(table: dict[str, ClassEntry], classes: Iterator[type], kind: str) -> None:
    for cls in sorted(classes, key=lambda c: (c.__module__, c.__qualname__)):
        known = table.get(cls.__name__)
        if known is not None and known.cls is not cls:
            raise InputError(
                f"class name {cls.__name__!r} is used twice ({known.cls.__module__} and "
                f"{cls.__module__}); names must be unique to be saved"
            )
        table[cls.__name__] = ClassEntry(cls, kind)


def class_table() -> dict[str, ClassEntry]:
    """Registry name -> class entry of every class a model file may contain.

    Enrolled automatically, as classes of kernelkit modules (never from names in a file):
    scikit-learn estimators (kind ``estimator``; the top-level estimators of
    ``kernelkit.__all__`` are imported first), :class:`~kernelkit.kernels.Kernel` subclasses
    (``kernel``) and other ``torch.nn.Module`` subclasses (``module``).  Then the entries of
    :func:`builtin_classes` and of :func:`register`.
    """
    from sklearn.base import BaseEstimator

    import kernelkit

    for name in kernelkit.__all__:
        getattr(kernelkit, name)  # imports each estimator's module (and its models)
    table = builtin_classes()
    _enrol(table, _kernelkit_subclasses(BaseEstimator), "estimator")
    _enrol(table, _kernelkit_subclasses(Kernel), "kernel")
    modules = (c for c in _kernelkit_subclasses(nn.Module) if not issubclass(c, Kernel))
    _enrol(table, modules, "module")
    table.update(_EXTRA)
    return table
