"""kernelkit's options: the cost-model and tuning constants, in one place.

scikit-learn's convention: :func:`get_config` reads the options, :func:`set_config` changes
them for the rest of the process, :func:`config_context` for the duration of a ``with``
block (restored on the way out, exceptions included).  The code that uses an option reads it
when it runs (:func:`options`), so a change applies to the next fit.

Most options are the cost model of ``solver="auto"``
(:func:`kernelkit.models._falkon.solver_costs`): float64 GEMM flops per kernel value or per
update, fitted on the 2-core x86-64 benchmark machine (``docs/scale.md``, "Cost model");
another machine may want other values.  ``docs/configuration.md`` lists every option.

The options are one process-wide state (not thread-local as scikit-learn's): the tile loops'
worker threads then read what the caller set.  Two threads setting different values at the
same time see each other's; Dask workers, other processes, read only what they are sent (the
cost model and the tile sizes are read on the client).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

from kernelkit.utils._errors import InputError

_POSITIVE = "positive"
_FRACTION = "fraction"  # in (0, 1]
_AT_LEAST_ONE = "at_least_one"
_AT_LEAST_TWO = "at_least_two"
_NON_NEGATIVE = "non_negative"


def _option(default: float, rule: str = _POSITIVE) -> Any:
    """A dataclass field with its validation ``rule``; its type (int or float) is the
    default's."""
    return field(default=default, metadata={"rule": rule})


@dataclass(frozen=True)
class Options:
    """The values of kernelkit's options (field docstrings: what each is, where it came from).

    Flop counts are in float64 GEMM flops, the cost model's unit: one flop on one core of the
    benchmark machine at 17 GFLOP/s, 0.059 ns (``docs/scale.md``, "Cost model").
    """

    # --- cost model of solver="auto" (kernelkit.models._falkon.solver_costs) ---------------
    kernel_entry_flops: float = _option(100.0)
    """Cost of one kernel value in a PCG pass (the ``exp``, the float64 copy and the two
    products of its tile): measured, ``docs/scale.md``, "Cost model"."""

    onepass_entry_flops: float = _option(500.0)
    """Cost of one kernel value in a one-pass tile (the value, its copy, its share of the
    tile's feature map and accumulation overheads): fitted with ``onepass_update_flops`` to
    the measured one-pass fits (``docs/scale.md``, "Cost model")."""

    onepass_update_flops: float = _option(0.83)
    """Cost of each of the ``(g + 1) n m^2`` multiply-adds of the one-pass solver (the
    triangular solve of the feature map, one rank-``b`` update of ``H`` per weighting):
    fitted with ``onepass_entry_flops``."""

    onepass_shared_entry_flops: float = _option(720.0)
    """``onepass_entry_flops`` from ``shared_blas_centres`` centres (one worker whose BLAS
    uses every thread): fitted at n = 10^5, m = 2000 and 5000 (``docs/scale.md``)."""

    onepass_shared_update_flops: float = _option(0.38)
    """``onepass_update_flops`` from ``shared_blas_centres`` centres (fitted with
    ``onepass_shared_entry_flops``)."""

    kept_entry_flops: float = _option(37.0)
    """Cost of one kernel value in a PCG pass over the kept ``K_nm`` (no kernel evaluation,
    memory-bound): ``kernel_entry_flops`` times the measured ratio of a kept to a streamed
    pass (``docs/scale.md``, "Cost model")."""

    keep_fill_flops: float = _option(126.0)
    """Extra cost of one kernel value in the first PCG pass when ``K_nm`` is kept (writing
    the block to fresh memory): measured with ``kept_entry_flops``."""

    cg_passes_per_digit: float = _option(8.25)
    """Falkon CG iterations per decimal digit of ``tol`` at ``m = 1000`` centres and
    ``lam = cg_reference_lam``: measured on the benchmark problem (``docs/scale.md``)."""

    cg_lam_exponent: float = _option(0.3, _NON_NEGATIVE)
    """Exponent ``gamma`` of the rise of the CG iterations as ``lam`` falls,
    ``t ~ (lam / cg_reference_lam)^-gamma`` (about 2x per decade: measured at n = 10^5,
    m = 500 / 1000 / 2000, ``lam`` = 1e-7 ... 1e-2; ``docs/scale.md``)."""

    cg_reference_lam: float = _option(1e-6)
    """The ``lam`` at which ``cg_passes_per_digit`` was measured."""

    cg_centres_exponent: float = _option(2 / 3, _NON_NEGATIVE)
    """Exponent ``beta`` of the fall of the CG iterations with the centres, ``t ~ m^-beta``
    (the preconditioner improves with ``m``; measured, ``docs/scale.md``)."""

    unmapped_pass_fraction: float = _option(0.5, _FRACTION)
    """Cost of a one-pass ridge pass summed unmapped relative to the mapped one: measured
    0.47 / 0.48 / 0.52 / 0.54 on one thread at n = 10^5, m = 500 ... 5000
    (``benchmarks/screen_unmapped.py --threads 1``)."""

    eigh_flops: float = _option(6.0)
    """Cost of a symmetric ``k x k`` eigendecomposition with vectors per ``k^3`` (the ``lam``
    path's factorisation): measured 4.7, 5.5 and 6.7 at k = 1000, 2000 and 3000
    (``docs/model_selection.md``, "Measured")."""

    exact_flops: float = _option(3e11, _NON_NEGATIVE)
    """Modelled cost under which ``solver="auto"`` takes the exact solver whatever the
    Nyström cost: the exact answer while it is affordable in absolute terms (a choice, not a
    fit): the exact ``lam`` path (``lam="auto"``) up to n of about 3700, a fixed-``lam``
    fit up to about 9600 (``d = 0``; ``docs/configuration.md``)."""

    unmapped_rows_per_centre: int = _option(4, _AT_LEAST_ONE)
    """Fewest rows per centre for the unmapped one-pass sums (their final map costs ``2 m^3``;
    measured at n = 10^4: 1.8x faster at m = 2000, 0.82x at m = 5000,
    ``benchmarks/screen_unmapped.py``)."""

    bo_batch_candidates: int = _option(5000, _AT_LEAST_ONE)
    """Most candidates in the joint posterior covariance of a batch of
    :func:`kernelkit.bo.suggest` (Thompson sampling, kriging believer): the ``m x m``
    covariance and its Cholesky factor (5000: 200 MB, seconds); beyond it the candidates
    with the best single-point scores (a choice, not a fit)."""

    logistic_newton_steps: int = _option(8, _AT_LEAST_ONE)
    """Newton steps the cost model assumes for kernel logistic regression (an assumption:
    the benchmark fits of ``docs/scale.md`` took 6 to 10)."""

    # --- Nyström logistic regression (kernelkit.models._falkon_logistic) -------------------
    hessian_rows_per_centre: int = _option(8, _AT_LEAST_ONE)
    """Rows per centre of the uniform sample whose Hessian terms the row-sampled
    preconditioner averages (at most all ``n``; a choice, ``docs/scale.md``)."""

    hessian_sample_bytes: int = _option(256 << 20, _AT_LEAST_ONE)
    """Most bytes of that sample's float64 kernel rows (never fewer rows than centres)."""

    # --- the lam lattice of every lam="auto" (kernelkit.models._ridge_path.lam_grid) --------
    lam_grid_low: float = _option(1e-9)
    """Smallest value of the one ``lam`` lattice the ``lam="auto"`` selectors take their
    grids from (each a window of it, relative to the kernel's scale where stated)."""

    lam_grid_high: float = _option(10.0)
    """Largest value of the ``lam`` lattice."""

    lam_grid_per_decade: int = _option(2, _AT_LEAST_ONE)
    """Values of the ``lam`` lattice per decade (2: half decades)."""

    lam_zoom_points: int = _option(9, _AT_LEAST_TWO)
    """``lam="auto"`` of the ridge estimators: values of ``log lam`` scored per zoom round
    between the best lattice value's neighbours (``kernelkit.estimators._ridge_selection``;
    at least two, the round's ends)."""

    lam_zoom_rounds: int = _option(3, _NON_NEGATIVE)
    """Zoom rounds of a closed-form criterion (LOO or GCV from the spectrum): with the
    defaults a resolution of ``1/128`` decade from the half-decade lattice, then the vertex of
    the parabola (0: the lattice value)."""

    # --- lam="auto" of kernel logistic regression (kernelkit.models._logistic_path) --------
    logistic_holdout: float = _option(0.2, _FRACTION)
    """Fraction of the training rows held out to score the ``lam`` path."""

    logistic_patience: int = _option(1, _NON_NEGATIVE)
    """Grid values the path goes on past the last significant fall of the held-out loss."""

    logistic_path_cg_tol: float = _option(0.1, _FRACTION)
    """PCG only: relative CG residual of each path step (an inexact Newton step within 1% of
    the exact one)."""

    logistic_rebuild: float = _option(100.0, _AT_LEAST_ONE)
    """PCG only: the preconditioner is rebuilt when ``lam`` has fallen by this factor since
    it was built (or when the CG run with it cost as much as a build)."""

    # --- architecture search of the CKN estimators (kernelkit.estimators._ckn_search) ----
    ckn_search_seconds: float = _option(60.0)
    """Wall-time budget of the architecture search of the ``"auto"`` parameters of
    ``SequenceCKNClassifier`` and ``CKNClassifier`` (``max_iter="auto"`` included): a
    candidate after the first starts only while the seconds spent plus the first
    candidate's stay within it (a choice: one fit of a 100-sequence promoter fold under a
    minute on the 2-core machine, ``docs/ckn.md``)."""

    ckn_position_bins: int = _option(64, _AT_LEAST_ONE)
    """Most position bins of the candidate ``n_bins`` of ``SequenceCKNClassifier`` for aligned
    input (one bin per position up to this length): the features grow as the bins times
    the anchors (64 bins x 3 x 256 anchors x 8 bytes = 393 kB per sequence)."""

    # --- lam="auto" of GraphCKNClassifier (kernelkit.estimators._gckn) --------------------
    graph_ckn_cv_repeats: int = _option(2, _AT_LEAST_ONE)
    """Independent draws of the folds of ``GraphCKNClassifier``'s internal cross-validation
    below 1000 training graphs, their held-out scores summed (repeated 5-fold CV; one 3-fold
    draw from 1000): its choice among a dozen and more candidates on a few hundred graphs is
    less noisy, for twice the cross-validation's time (measured on the TU sets,
    ``docs/graphs.md``)."""

    # --- lam="auto" of the kernel autoencoder (kernelkit.estimators._autoencoder_lam) -------
    autoencoder_grid_rows: int = _option(500, _AT_LEAST_ONE)
    """Most training rows of each grid fit of ``KernelAutoencoder(lam="auto")`` (a uniform
    subsample of the fit part beyond it; the held-out rows and the refit are unchanged): an
    exact evaluation costs ``O(n^2 (n + r))``, so a grid fit on 500 of the 1800 fit rows of
    ``n = 2000`` costs about a twentieth of one on all of them (a choice, measured in
    ``docs/kae.md``, "lam='auto' on 2000 images")."""

    # --- streamed K_nm products (kernelkit.gram._streaming) --------------------------------
    keep_fraction: float = _option(0.25, _FRACTION)
    """Share of the available memory (a CUDA device's free memory, else the host's available
    memory; a Dask cluster's workers' limits) a kept ``K_nm`` may take by default."""

    shared_blas_centres: int = _option(4000, _AT_LEAST_ONE)
    """From this many centres the one-pass tiles run on one worker whose BLAS uses every
    thread instead of one single-threaded BLAS per worker (measured crossover:
    ``docs/scale.md``, "Cost model")."""

    nystrom_tile_bytes: int = _option(2 << 20, _AT_LEAST_ONE)
    """Default bytes of one ``b x m`` tile on the CPU: the block stays in the L2 cache between
    the kernel pass and the two products (the sweep: ``docs/measurements.md``)."""

    device_tile_bytes: int = _option(64 << 20, _AT_LEAST_ONE)
    """Default bytes of one tile on an accelerator: a pass is a few hundred kernel launches
    rather than thousands (a launch costs microseconds whatever the tile)."""

    gram_tile_bytes: int = _option(4 << 20, _AT_LEAST_ONE)
    """Default bytes of one tile of the Gram engine (1024 x 1024 in float32,
    :func:`kernelkit.gram._tiling.tile_size`): the fastest size of a sweep of the fused Gaussian
    Gram (``docs/measurements.md``)."""

    gp_tile_entries: int = _option(1 << 21, _AT_LEAST_ONE)
    """Kernel values per tile of the streamed passes of the Nyström Gaussian process
    (:mod:`kernelkit.models._gp_nystrom`; rows = this // m)."""

    # --- eigensolvers (kernelkit.solvers._eigen, kernelkit.solvers._spectra) ------------------
    preimage_tile_entries: int = _option(1 << 22, _AT_LEAST_ONE)
    """Distances per tile of the nearest-candidate pre-image search
    (``inverse_transform(codes, candidates=...)`` of ``KernelPCA`` and ``KernelAutoencoder``;
    candidates per tile = this // number of codes)."""

    eigen_full_max_n: int = _option(300, _NON_NEGATIVE)
    """Up to this size ``method="auto"`` of :func:`kernelkit.solvers.top_eigenpairs` takes a
    full ``eigh``: as fast as anything there (``docs/measurements.md``, "Top-k
    eigensolvers")."""

    eigen_block_max_fraction: float = _option(0.02, _FRACTION)
    """``method="auto"`` takes the block Krylov method for the largest ``k`` pairs while
    ``k <=`` this times ``n`` (``docs/measurements.md``, "Top-k eigensolvers")."""

    eigen_block_basis_bytes: int = _option(1 << 29, _AT_LEAST_ONE)
    """Memory cap (bytes) of the block Krylov basis ``Q`` and its image ``K Q`` together."""

    spectrum_dense_max_n: int = _option(200, _NON_NEGATIVE)
    """Up to this order a sparse matrix is densified and its spectrum computed by LAPACK
    (above: ARPACK's Lanczos)."""

    # --- graph explanations (kernelkit.models._graph_explain) ------------------------------
    explain_max_subgraphs: int = _option(20000, _AT_LEAST_ONE)
    """Most connected subgraphs of one size that ``GraphCKNClassifier.explain`` scores in its
    exact search; beyond, greedy pruning (a choice: 20 000 small graphs, a few minutes)."""


_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    _POSITIVE: (lambda v: v > 0, "> 0"),
    _FRACTION: (lambda v: 0 < v <= 1, "in (0, 1]"),
    _AT_LEAST_ONE: (lambda v: v >= 1, ">= 1"),
    _AT_LEAST_TWO: (lambda v: v >= 2, ">= 2"),
    _NON_NEGATIVE: (lambda v: v >= 0, ">= 0"),
}

_FIELDS = {f.name: f for f in dataclasses.fields(Options)}
_lock = threading.Lock()
_current = Options()


def options() -> Options:
    """The options in force, as the frozen :class:`Options` (what the library reads)."""
    return _current


def get_config() -> dict[str, Any]:
    """The options in force: a new ``{name: value}`` dict (changing it changes nothing).

    Examples
    --------
    >>> import kernelkit
    >>> kernelkit.get_config()["exact_flops"]
    300000000000.0
    """
    return dataclasses.asdict(_current)


def _checked(name: str, value: Any) -> Any:
    """``value`` as option ``name``'s type, or an :class:`InputError` saying what is wrong."""
    spec = _FIELDS.get(name)
    if spec is None:
        raise InputError(
            f"{name}: not a kernelkit option; expected one of {', '.join(sorted(_FIELDS))}"
        )
    integral = isinstance(spec.default, int)
    kind = Integral if integral else Real
    if isinstance(value, bool) or not isinstance(value, kind):
        raise InputError(
            f"{name}: expected {'an int' if integral else 'a real number'}, "
            f"got {value!r} of type {type(value).__name__}"
        )
    value = int(value) if integral else float(value)
    check, text = _RULES[spec.metadata["rule"]]
    if not (math.isfinite(value) and check(value)):
        raise InputError(f"{name}: expected a finite value {text}, got {value!r}")
    return value


def set_config(**values: Any) -> None:
    """Set kernelkit's options for the rest of the process (``docs/configuration.md``).

    Parameters
    ----------
    **values
        ``name=value`` for each option to change (the names of :func:`get_config`); the
        others keep their values.

    Raises
    ------
    InputError
        If a name is not an option (the message lists them), or a value has the wrong type
        or is out of range; then no option changes.

    Examples
    --------
    >>> import kernelkit
    >>> kernelkit.set_config(kernel_entry_flops=150.0)
    >>> kernelkit.get_config()["kernel_entry_flops"]
    150.0
    >>> kernelkit.set_config(kernel_entry_flops=100.0)
    """
    global _current
    checked = {name: _checked(name, value) for name, value in values.items()}
    with _lock:
        _current = dataclasses.replace(_current, **checked)


@contextmanager
def config_context(**values: Any) -> Iterator[None]:
    """Set kernelkit's options inside a ``with`` block, restoring them on the way out.

    Parameters
    ----------
    **values
        As :func:`set_config`.

    Raises
    ------
    InputError
        As :func:`set_config`, on entering the block.

    Examples
    --------
    >>> import kernelkit
    >>> with kernelkit.config_context(exact_flops=0.0):
    ...     kernelkit.get_config()["exact_flops"]
    0.0
    >>> kernelkit.get_config()["exact_flops"]
    300000000000.0
    """
    global _current
    previous = _current
    set_config(**values)
    try:
        yield
    finally:
        with _lock:
            _current = previous


def deprecated_options(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``names`` (old constant -> option) for one release.

    Reading ``module.OLD`` warns (``FutureWarning``, naming the option) and returns the
    option's value in force; any other unknown name raises the usual ``AttributeError``.
    """

    def __getattr__(name: str) -> Any:
        option = names.get(name)
        if option is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is deprecated and will be removed in the next release; read "
            f"kernelkit.get_config()[{option!r}] (change it with kernelkit.set_config or "
            f"kernelkit.config_context)",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(_current, option)

    return __getattr__


__all__ = ["Options", "config_context", "deprecated_options", "get_config", "options", "set_config"]
