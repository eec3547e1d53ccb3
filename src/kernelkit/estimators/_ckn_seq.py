r"""Sequence convolutional kernel networks (CKN-seq / RKN) as scikit-learn estimators.

Course part 3, section 10 (Chen, Jacob & Mairal 2019a,b).  :class:`SequenceCKNFeatures`
returns ``Psi(x) = K_0(Z, Z)^{-1/2} pool_t h(x)[t]``, the Nyström map of the gapped k-mer
kernel of :mod:`kernelkit.models._ckn_seq` with anchors learned by spherical k-means on
sampled k-mers; :class:`SequenceCKNClassifier` trains the anchors end to end with a
multinomial logistic classifier on top.

Input: strings (list, tuple, 1-D array or pandas Series of ``str``) one-hot encoded over
``alphabet`` (an unknown letter is an :class:`~kernelkit.utils.InputError` naming it), or
numeric arrays: ``(n, T)`` (sequences of scalars) or ``(n, T, A)`` (sequences of position
vectors, e.g. one-hot, PSSM or substitution-matrix profiles).  ``encoding="blosum62"``
encodes the letters of protein strings by BLOSUM62 rows instead of one-hot: letter ``a`` is
the vector of odds ratios ``2^{s(a, b) / 2}`` (BLOSUM62 scores ``s`` are in half bits)
over the letters ``b``, scaled to sum 1 (the BLOSUM62 input of Chen, Jacob & Mairal 2019b,
section 5).

Several layers: ``n_filters=(q_1, ..., q_L)`` stacks ``L`` gapped k-mer layers
(:class:`~kernelkit.models._ckn_seq.KmerStack`; multilayer CKN-seq / RKN), ``k`` one length
for all of them or one per layer; ``pooling="max"`` with ``gap_penalty > 0`` is RKN-max.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import (
    ClassifierMixin,
)
from sklearn.utils.validation import check_is_fitted

from kernelkit.data._strings import StringBatch
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
from kernelkit.kernels._alignment import blosum62
from kernelkit.models._ckn_logos import draw_logos, filter_pwms, information_content
from kernelkit.models._ckn_seq import (
    POOLINGS,
    GappedKmerLayer,
    KmerLengthSum,
    KmerStack,
    fit_kmer_anchors,
    keep_levels,
    kmer_layers,
    padded_lengths,
    positive_ints,
    pyramid_prefixes,
)
from kernelkit.utils._config import options
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import VerboseLike

__all__ = ["SequenceCKNClassifier", "SequenceCKNFeatures"]


def shared_length(lengths: torch.Tensor) -> int | None:
    """The length every sequence has (aligned input), or None when lengths differ."""
    first = int(lengths[0]) if len(lengths) else 0
    return first if first > 0 and bool((lengths == first).all()) else None


def is_string_input(X: Any) -> bool:
    """Whether ``X`` holds strings (a 1-D container, or a :class:`StringBatch`)."""
    if isinstance(X, StringBatch):
        return True
    if isinstance(X, torch.Tensor) or sp.issparse(X):  # sparse: rejected as a numeric array
        return False
    if isinstance(X, (list, tuple)):
        return len(X) > 0 and isinstance(X[0], str)
    arr = np.asarray(X, dtype=object) if hasattr(X, "__len__") else None
    return arr is not None and arr.ndim == 1 and len(arr) > 0 and isinstance(arr[0], str)


def one_hot(batch: StringBatch, dtype: torch.dtype) -> torch.Tensor:
    """One-hot ``(n, |alphabet|, max_len)`` tensor of a string batch; padding columns and the
    unknown-residue letter (:func:`kernelkit.data._strings.unknown_letter`) are 0."""
    codes, _ = batch.padded(pad_value=-1)
    out = torch.zeros(len(batch), len(batch.alphabet), codes.shape[1], dtype=dtype)
    valid = (codes >= 0) & (codes < len(batch.alphabet))
    rows, cols = torch.nonzero(valid, as_tuple=True)
    out[rows, codes[valid], cols] = 1.0
    return out


def blosum_rows(alphabet: str, dtype: torch.dtype) -> torch.Tensor:
    """``R[a, b] = 2^{s(a, b) / 2} / sum_c 2^{s(a, c) / 2}`` over ``alphabet`` (module
    docstring); an alphabet BLOSUM62 does not cover is an :class:`InputError`."""
    odds = torch.as_tensor(2.0 ** (blosum62(alphabet) / 2.0), dtype=dtype)
    return odds / odds.sum(1, keepdim=True)


def blosum_input(X: Any, alphabet: str | None) -> bool:
    """Whether ``X`` are protein strings BLOSUM62 covers: strings over ``alphabet`` with a
    letter outside ``ACGTUN``, every letter in BLOSUM62 (strings that do not parse: no)."""
    if not is_string_input(X):
        return False
    try:
        letters = StringBatch.from_sequences(X, alphabet).alphabet
        blosum62(letters)
    except InputError:
        return False
    return bool(set(letters) - set("ACGTUN"))


class _SequenceCKN(_CKNBase):
    """Sequence input and the gapped k-mer layer of the sequence CKN estimators."""

    alphabet: Any
    n_filters: int | tuple[int, ...]
    k: int
    gap_penalty: float
    pooling: str
    n_kmers: int
    encoding: str

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        return tags

    _aligned_length: int | None = None
    """The length every training sequence shares (aligned input), else None; set by fit."""

    def _lengths(self, X: torch.Tensor) -> torch.Tensor:
        return padded_lengths(X)

    def _inputs(self, X: Any, *, reset: bool) -> torch.Tensor:
        strings = is_string_input(X)
        if not reset and strings != (self.input_kind_ == "strings"):
            raise InputError(
                f"X: the model was fitted on {self.input_kind_}, got "
                f"{'strings' if strings else 'a numeric array'}"
            )
        if strings:
            batch = StringBatch.from_sequences(X, self.alphabet if reset else self.alphabet_)
            dtype = torch.float64 if reset else next(self.network_.parameters()).dtype
            x = one_hot(batch, dtype)
            if self._setting("encoding") == "blosum62":
                x = torch.einsum("nat,ab->nbt", x, blosum_rows(batch.alphabet, dtype))
            if reset:
                self.alphabet_, self.input_kind_ = batch.alphabet, "strings"
                self._aligned_length = shared_length(torch.as_tensor(batch.lengths))
            return x
        Xt = float_tensor(X, self, reset=reset, allow_nd=True)
        if Xt.ndim not in (2, 3):
            raise InputError(
                f"X: expected strings, an (n, T) or an (n, T, A) array, got shape {tuple(Xt.shape)}"
            )
        x = Xt[:, None, :] if Xt.ndim == 2 else Xt.transpose(1, 2)
        if reset:
            self.alphabet_, self.input_kind_ = None, "numeric arrays"
            self.n_channels_ = int(x.shape[1])
            self._aligned_length = shared_length(padded_lengths(x))
        elif x.shape[1] != self.n_channels_:
            raise InputError(
                f"X: expected {self.n_channels_} values per position as in fit, got {x.shape[1]}"
            )
        return x.to(next(self.network_.parameters()).dtype) if not reset else x

    def _make_network(self, X: torch.Tensor) -> GappedKmerLayer | KmerLengthSum | KmerStack:
        lengths = positive_ints(self.k, "k")
        filters = positive_ints(self.n_filters, "n_filters")
        n_bins = self._setting("n_bins")
        positive_ints(n_bins, "n_bins")
        stacked = len(filters) > 1
        if stacked and len(lengths) not in (1, len(filters)):
            raise InputError(
                f"k: expected one length or one per layer ({len(filters)} layers in "
                f"n_filters), got {self.k!r}"
            )
        if stacked:
            per_layer = lengths * len(filters) if len(lengths) == 1 else lengths
            plan = list(zip(filters, per_layer, strict=True))
        else:
            plan = [(filters[0], k) for k in lengths]
        layers = []
        for i, (q, k) in enumerate(plan):
            top = not stacked or i == len(plan) - 1
            layers.append(
                GappedKmerLayer(
                    layers[-1].n_filters if stacked and i else X.shape[1],
                    q,
                    k,
                    gap_penalty=self.gap_penalty,
                    kappa=self.kappa,
                    sigma=self.sigma,
                    pooling=self._setting("pooling"),
                    n_bins=n_bins if top else 1,
                    normalize=self.normalize and top,
                    shift=self.shift,
                    dtype=X.dtype,
                )
            )
        if stacked:
            return KmerStack(layers)
        return layers[0] if isinstance(self.k, Integral) else KmerLengthSum(layers)

    def logos(self, n_logos: int = 16) -> tuple[list[np.ndarray], Any]:
        """Position weight matrices of the first-layer filters, and a figure of their logos.

        The pre-image of each filter (:mod:`kernelkit.models._ckn_logos`): ``P[j, l, a]``
        proportional to the response of position ``l`` of filter ``j`` to letter ``a``
        (string input: the letters of ``alphabet_`` in their encoding; numeric input: the
        unit vector of each channel).

        Parameters
        ----------
        n_logos : int, default 16
            Logos drawn: the filters of largest total information content, all k-mer
            lengths together.

        Returns
        -------
        pwms : list of ndarray
            One ``(q, k, |A|)`` array per first-layer k-mer length.
        figure : matplotlib.figure.Figure
            The logos (needs matplotlib, the ``plot`` extra).
        """
        check_is_fitted(self, "network_")
        net = self.network_
        first = [net.layers[0]] if isinstance(net, KmerStack) else kmer_layers(net)
        dtype = first[0].weight.dtype
        if self.alphabet_ is None:
            letters: list[str] = [str(c) for c in range(self.n_channels_)]
            encodings = torch.eye(self.n_channels_, dtype=dtype)
        else:
            letters = list(self.alphabet_)
            encodings = torch.eye(len(letters), dtype=dtype)
            if self._setting("encoding") == "blosum62":
                encodings = blosum_rows(self.alphabet_, dtype)
        pwms = [filter_pwms(layer, encodings) for layer in first]
        panels = [
            (f"k={layer.k}, filter {j}", pwm[j], float(information_content(pwm[j]).sum()))
            for layer, pwm in zip(first, pwms, strict=True)
            for j in range(pwm.shape[0])
        ]
        panels.sort(key=lambda panel: -panel[2])
        figure = draw_logos([(title, pwm) for title, pwm, _ in panels[:n_logos]], letters)
        return pwms, figure

    def _fit_anchors(
        self, network: GappedKmerLayer, X: torch.Tensor, generator: torch.Generator
    ) -> None:
        fit_kmer_anchors(
            network, X, n_kmers=self.n_kmers, n_iter=self.kmeans_iter, generator=generator
        )


SEQUENCE_CONSTRAINTS: dict[str, list[Any]] = {
    "n_filters": [Interval(Integral, 1, None, closed="left"), tuple, list],
    "k": [Interval(Integral, 1, None, closed="left"), tuple, list],
    "gap_penalty": [Interval(Real, 0, 1, closed="both")],
    "pooling": [StrOptions(set(POOLINGS))],
    "n_bins": [Interval(Integral, 1, None, closed="left"), tuple, list],
    "normalize": ["boolean"],
    "alphabet": [str, None],
    "n_kmers": [Interval(Integral, 1, None, closed="left")],
    "encoding": [StrOptions({"one_hot", "blosum62"})],
    **COMMON_CONSTRAINTS,
}

_SEQ_PARAMS_DOC = """
    n_filters : int or sequence of int, default {n_filters}
        Number ``q`` of anchors (of each k-mer length); a sequence ``(q_1, ..., q_L)`` of
        two or more stacks ``L`` layers (multilayer CKN-seq / RKN,
        :class:`~kernelkit.models._ckn_seq.KmerStack`): the position features of layer ``l``
        are the input of layer ``l + 1``, the last layer pools.
    k : int or sequence of int, default {k}
        k-mer length; with one layer a sequence of lengths sums their kernels (one layer of
        ``n_filters`` anchors per length, features concatenated:
        :class:`~kernelkit.models._ckn_seq.KmerLengthSum`); with stacked layers one length
        for all or one per layer.
    gap_penalty : float in [0, 1], default 0.0
        ``lambda``: each skipped position inside a k-mer costs a factor ``lambda``; 0 keeps
        contiguous k-mers only (CKN-seq).
    pooling : {pooling_options}, default {pooling}
        Sum of ``h[t]`` over end positions, or its mean over the non-padding positions, or
        ``"max"``: the best gapped k-mer, a maximum over index tuples and end positions
        (RKN-max with ``gap_penalty > 0``; :mod:`kernelkit.models._ckn_seq`).{pooling_auto}
    n_bins : int or sequence of int, default {n_bins}
        Number of position bins pooled separately (:mod:`kernelkit.models._ckn_seq`):
        1 is the global pooling of CKN-seq (a bag of k-mers), ``B > 1`` keeps where along
        the sequence a k-mer ends (aligned sequences: splice sites, promoters); a sequence
        such as ``(1, 4)`` is a pyramid, the sum of the kernels of its levels.{n_bins_auto}
    normalize : bool, default {normalize}
        Scale each level's features to unit norm (the normalised kernel of each length and
        level).
    alphabet : None, "dna", "rna", "protein" or str
        Letters of the one-hot encoding of string input (``None``: the letters of the
        training strings); ignored for numeric arrays.  Lower case is the upper-case letter
        and ``N`` / ``X`` of a named alphabet have a zero one-hot column (the case rule of
        :mod:`kernelkit.data._strings`).
    encoding : {encoding_options}, default {encoding}
        Position vectors of string input: one-hot letters, or BLOSUM62 rows (normalised
        odds ratios, module docstring; protein alphabets only).{encoding_auto}
    kappa : {"exp", "inverse_polynomial", "polynomial", "vovk"}, default "exp"
        Per-position dot-product kernel.
    sigma : float, default {sigma}
        ``kappa(u) = exp((u - 1) / sigma^2)`` per position (``kappa="exp"``).
    shift : float, default 0.01
        ``epsilon`` in ``(K_0(Z, Z)^{1/2} + epsilon I)^{-1}``.
    n_kmers : int, default 10000
        k-mers sampled for the spherical k-means.
    kmeans_iter : int, default 10
        Lloyd iterations.
    batch_size : int, default 256
        Sequences per forward batch.
    random_state : None, int, RandomState or Generator
        Seed of the k-mer sampling, the k-means seeds and the minibatches."""


_POOLING_AUTO = """
        ``"auto"``: ``"mean"`` or ``"max"``, chosen on the training data (Notes)."""

_N_BINS_AUTO = """
        ``"auto"``: the pyramid ``(1, 4)``, or for aligned input (every training sequence
        of one length ``L``) one bin per position (``min(L, 64)`` bins, the option
        ``ckn_position_bins``: the weighted-degree kernel's comparison of the k-mers at the
        same positions) where it cross-validates better beyond one standard error (Notes)."""

_ENCODING_AUTO = """
        ``"auto"``: on protein strings (a letter outside ``ACGTUN``, every letter in
        BLOSUM62) ``"blosum62"``, or ``"one_hot"`` where it cross-validates better beyond one
        standard error (Notes); numeric input and DNA / RNA strings are one-hot."""


class SequenceCKNFeatures(CKNTransformerMixin, _SequenceCKN):
    __doc__ = (
        r"""Unsupervised CKN-seq features: the gapped k-mer Nyström map with k-means anchors.

    ``<Psi(x), Psi(x')>`` approximates ``sum_{i, j} lambda^{gaps(i)} lambda^{gaps(j)}
    K_0(x_[i], x'_[j])`` (course part 3, section 10; see :mod:`kernelkit.models._ckn_seq`).

    Parameters
    ----------"""
        + _SEQ_PARAMS_DOC.replace("{k}", "8")
        .replace("{pooling_options}", '{"mean", "sum", "max"}')
        .replace("{pooling}", '"mean"')
        .replace("{pooling_auto}", "")
        .replace("{encoding_options}", '{"one_hot", "blosum62"}')
        .replace("{encoding}", '"one_hot"')
        .replace("{encoding_auto}", "")
        .replace("{n_bins}", "1")
        .replace("{sigma}", "0.6")
        .replace("{n_bins_auto}", "")
        .replace("{normalize}", "False")
        .replace("{n_filters}", "64")
        + r"""

    Attributes
    ----------
    network_ : kernelkit.models.GappedKmerLayer
        The layer with its anchors.
    alphabet_ : str or None
        Letters of the one-hot encoding (None for numeric input).
    input_kind_ : str
        ``"strings"`` or ``"numeric arrays"``.

    Notes
    -----
    Objective: no loss is fitted; the anchors ``z_1, ..., z_p`` (unit norm) maximise the
    spherical k-means criterion over the sampled (normalised one-hot) k-mers ``u``,

    .. math:: \max_{\|z_j\| = 1} \sum_{u} \max_{j} \langle u, z_j \rangle,

    and ``Psi`` is the Nyström map on their features (course part 3, section 10).
    """
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = SEQUENCE_CONSTRAINTS

    def __init__(
        self,
        n_filters: int | tuple[int, ...] = 64,
        k: int | tuple[int, ...] = 8,
        *,
        gap_penalty: float = 0.0,
        pooling: str = "mean",
        n_bins: int | tuple[int, ...] = 1,
        normalize: bool = False,
        alphabet: str | None = None,
        encoding: str = "one_hot",
        kappa: str = "exp",
        sigma: float = 0.6,
        shift: float = 0.01,
        n_kmers: int = 10000,
        kmeans_iter: int = 10,
        batch_size: int = 256,
        random_state: Any = None,
    ):
        store_params(self, locals())

    @property
    def n_components_(self) -> int:
        """Number of output features (``n_bins`` times the anchors ``q``)."""
        check_is_fitted(self, "network_")
        return self.network_.n_bins * self.network_.n_filters


class SequenceCKNClassifier(ClassifierMixin, CKNClassifierMixin, _SequenceCKN):
    __doc__ = (
        r"""Supervised CKN-seq: anchors and a linear classifier trained end to end.

    Spherical k-means anchors (as :class:`SequenceCKNFeatures`) and the logistic regression
    on their features, then minibatch Adam on
    ``(1/n) sum_i CE(W Psi_Z(x_i) + b, y_i) + lam ||W||^2`` over ``Z`` and ``(W, b)`` with
    the best held-out epoch kept, as :class:`~kernelkit.estimators.CKNClassifier`
    (course part 3, sections 6 and 10; Chen, Jacob & Mairal 2019a).

    Parameters
    ----------"""
        + _SEQ_PARAMS_DOC.replace("{k}", "(3, 4, 5)")
        .replace("{pooling_options}", '{"auto", "mean", "sum", "max"}')
        .replace("{pooling}", '"auto"')
        .replace("{pooling_auto}", _POOLING_AUTO)
        .replace("{encoding_options}", '{"auto", "one_hot", "blosum62"}')
        .replace("{encoding}", '"auto"')
        .replace("{encoding_auto}", _ENCODING_AUTO)
        .replace("{n_bins}", '"auto"')
        .replace("{sigma}", "0.8")
        .replace("{n_bins_auto}", _N_BINS_AUTO)
        .replace("{normalize}", "True")
        .replace("{n_filters}", "256")
        + """
    lam : float or "auto", default "auto"
        Ridge penalty of the classifier; ``"auto"``: chosen among ``1e-7 .. 1e-1``
        (:func:`~kernelkit.models._ckn_head.lam_cv_grid`), together with how many levels of
        the ``n_bins`` pyramid to keep (``(1,)`` or ``(1, 4)`` for the pyramid), by 5-fold
        stratified cross-validated accuracy of the classifier on the k-means features of
        the training part (:func:`~kernelkit.models._ckn_head.cross_validate_lam`): the
        fewest levels whose accuracy is within one standard error of the best (the
        one-standard-error rule, :func:`~kernelkit.models._ckn_head.parsimonious_choice`),
        then the ``lam`` of best accuracy at that depth; the network keeps the chosen
        levels.  The same cross-validation scores the architectures of the parameters set
        to ``"auto"`` (Notes).
    max_iter : int or "auto", default 0
        Training epochs.  The default 0 is the unsupervised model (k-means anchors,
        logistic regression on their features), fitted on all of ``X`` (no held-out part):
        on the four sets of ``docs/ckn.md`` the supervised epochs beat it on one, by one
        test sequence.  ``"auto"``: ``clip(ceil(20000 / n), 10, 100)`` epochs or none,
        chosen by the architecture search (Notes)."""
        + SUPERVISED_PARAMS_DOC
        + """

    Attributes
    ----------
    network_, alphabet_, input_kind_ :
        As in :class:`SequenceCKNFeatures` (anchors after training).
    head_ : torch.nn.Linear
        The linear classifier.
    architecture_ : dict
        What the fit chose: ``"n_bins"`` (the pyramid levels kept), ``"lam"`` and the
        values of the parameters set to ``"auto"``; where the search had more than one
        candidate also ``"cv_accuracy"`` (the chosen model's cross-validated accuracy),
        ``"candidates"`` (every candidate scored, with its ``"cv_accuracy"``), ``"skipped"``
        (the candidates the time budget left out) and ``"seconds"`` (the search's wall
        time)."""
        + SUPERVISED_ATTRIBUTES_DOC
        + r"""

    Notes
    -----
    Objective: over the anchors ``Z`` and the classifier ``(W, b)``, on the ``n``
    training sequences kept after the held-out split (the best held-out epoch is kept),

    .. math:: \min_{Z, W, b} \frac{1}{n} \sum_{i=1}^n \mathrm{CE}(W \Psi_Z(x_i) + b, y_i)
              + \lambda \|W\|_F^2.

    Architecture search (:mod:`kernelkit.estimators._ckn_search`): the parameters set to
    ``"auto"`` are chosen on the training part only, in the order ``encoding`` (on protein
    strings ``"blosum62"``, then ``"one_hot"``: the BLOSUM62 input of Chen, Jacob & Mairal
    2019b, section 5, better than one-hot there), ``n_bins`` (the pyramid ``(1, 4)``, then,
    for aligned input, one bin per position: the k-mers compared at the same positions, as
    the weighted-degree kernel of Rätsch & Sonnenburg does on splice sites), ``pooling``
    (``"mean"``, then ``"max"``; nothing to choose over bins of one position), each
    candidate with the other parameters at their best values so far, by the stratified
    cross-validated accuracy of the logistic regression on its k-means features (``lam`` and
    the pyramid's depth chosen with it, as ``lam="auto"``).  A candidate replaces the best
    one so far only when its error rate is lower by more than one standard error of the
    difference of the two error rates (:func:`~kernelkit.models._ckn_head.beats_by_one_se`;
    the earlier candidate, the plain CKN-seq, is preferred against the noise of small
    folds).  Time budget: the option
    ``ckn_search_seconds`` (:func:`kernelkit.get_config`, default 60): the first candidate is
    always scored, another one starts only while the seconds spent plus the first
    candidate's seconds stay within the budget (so a slow machine may score fewer
    candidates; ``architecture_["skipped"]`` names them).  A value given explicitly is not
    searched; with one candidate only (``pooling`` given, DNA or numeric input of unequal
    lengths) nothing is scored beyond ``lam="auto"``.  With ``max_iter="auto"`` the chosen
    network trained end to end on each fold is the last candidate, kept only when it is more
    accurate on the held-out folds than the unsupervised model; with ``max_iter > 0`` the
    held-out part keeps the starting (unsupervised) model when no epoch beats it.
    """
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **SEQUENCE_CONSTRAINTS,
        "pooling": [StrOptions({*POOLINGS, "auto"})],
        "encoding": [StrOptions({"one_hot", "blosum62", "auto"})],
        "n_bins": [*SEQUENCE_CONSTRAINTS["n_bins"], StrOptions({"auto"})],
        **SUPERVISED_CONSTRAINTS,
    }
    _searched = ("encoding", "n_bins", "pooling")
    _parsimony = True
    _blosum = False  # protein strings (blosum_input), set by fit

    def __init__(
        self,
        n_filters: int | tuple[int, ...] = 256,
        k: int | tuple[int, ...] = (3, 4, 5),
        *,
        gap_penalty: float = 0.0,
        pooling: str = "auto",
        n_bins: int | tuple[int, ...] | str = "auto",
        normalize: bool = True,
        alphabet: str | None = None,
        encoding: str = "auto",
        kappa: str = "exp",
        sigma: float = 0.8,
        shift: float = 0.01,
        n_kmers: int = 10000,
        kmeans_iter: int = 10,
        lam: float | str = "auto",
        max_iter: int | str = 0,
        lr: float = 0.01,
        training: str = "alternating",
        head_init: str = "linear",
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 5,
        batch_size: int = 256,
        verbose: VerboseLike = 0,
        random_state: Any = None,
        on_error: str = "raise",
    ):
        store_params(self, locals())

    def fit(self, X: Any, y: Any) -> SequenceCKNClassifier:
        """Initialise the anchors by spherical k-means, then train everything end to end."""
        self._blosum = self.encoding == "auto" and blosum_input(X, self.alphabet)
        return self._fit_classifier(X, y)

    def _candidate_columns(self) -> tuple[torch.Tensor | None, ...]:
        """The pyramid's prefixes (position pooling down to each level), or all columns."""
        masks = pyramid_prefixes(self.network_)
        return (None,) if len(masks) == 1 else masks

    def _keep_candidate(self, index: int) -> None:
        keep_levels(self.network_, index + 1)

    def _architecture_values(self, name: str) -> tuple[Any, ...]:
        """``encoding``: BLOSUM62 rows first, then one-hot, for protein strings
        (:func:`blosum_input`), else one-hot; ``n_bins``: the pyramid ``(1, 4)``, then for
        aligned input one bin per position (at most ``ckn_position_bins``); ``pooling``:
        mean, max (mean only over bins of one position each, where they are equal)."""
        if name == "pooling":
            one_position = self._aligned_length is not None and positive_ints(
                self._setting("n_bins"), "n_bins"
            ) == (self._aligned_length,)
            return ("mean",) if one_position else ("mean", "max")
        if name == "n_bins":
            if self._aligned_length is None:
                return ((1, 4),)
            return ((1, 4), (min(self._aligned_length, options().ckn_position_bins),))
        return ("blosum62", "one_hot") if self._blosum else ("one_hot",)

    def _architecture_extras(self) -> dict[str, Any]:
        return {"n_bins": kmer_layers(self.network_)[0].levels}
