r"""Synthetic position-aware DNA classification tasks for the sequence CKN.

:func:`planted_position_dna` mimics the splice-site problem (exon/intron boundary,
intron/exon boundary, neither; aligned windows around a candidate site, as the UCI
"Primate splice-junction" set): background letters are i.i.d. uniform over ``ACGT``; a
sequence of class ``c < n_motifs`` carries motif ``c`` starting near the centre
(``centre - len(motif) // 2`` plus a uniform jitter in ``[-jitter, jitter]``); a sequence of
the last class carries one of the motifs (uniformly chosen) away from the centre (its start
uniform over the positions at least ``len(motif) + jitter`` away from the central start).
Every planted letter is replaced by a uniform random letter with probability ``mutation``.

Only the *position* of a motif separates the last class from the others, so a model that
pools k-mer matches over the whole sequence (bag of k-mers) cannot beat
``max(class frequencies)`` on the last class against the others, while pooling over
position bins (or a weighted-degree kernel) can.
"""

from __future__ import annotations

import numpy as np

from kernelkit.utils._errors import InputError

DNA = "ACGT"
SPLICE_MOTIFS = ("CAGGTAAGT", "TTTCCCTCAGG")
"""Consensus-like donor (exon|intron, ``..G|GTAAGT``) and acceptor (``..CAG|G``) motifs."""


def planted_position_dna(
    n_samples: int = 2000,
    length: int = 60,
    *,
    motifs: tuple[str, ...] = SPLICE_MOTIFS,
    weights: tuple[float, ...] | None = (0.25, 0.25, 0.5),
    jitter: int = 2,
    mutation: float = 0.1,
    random_state: int = 0,
) -> tuple[list[str], np.ndarray]:
    """Aligned DNA windows of ``len(motifs) + 1`` classes told apart by motif *and* position.

    Parameters
    ----------
    n_samples : int
        Number of sequences.
    length : int
        Sequence length (all sequences aligned, same length).
    motifs : tuple of str
        One motif per "site" class (letters of ``ACGT``).
    weights : tuple of float or None
        Class probabilities (``len(motifs) + 1`` values summing to 1); None: uniform.
    jitter : int
        Maximal shift of a central motif around the centre.
    mutation : float in [0, 1)
        Probability that a planted letter is replaced by a uniform random letter.
    random_state : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    sequences : list of str
    y : ndarray of int64, shape (n_samples,)
        Class ``c < len(motifs)``: motif ``c`` at the centre; class ``len(motifs)``: a motif
        away from the centre.
    """
    n_classes = len(motifs) + 1
    p = np.full(n_classes, 1.0 / n_classes) if weights is None else np.asarray(weights, float)
    if p.shape != (n_classes,) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise InputError(
            f"weights: expected {n_classes} non-negative class probabilities summing to 1, "
            f"got {weights}"
        )
    if any(set(m) - set(DNA) or not m for m in motifs):
        raise InputError(f"motifs: expected non-empty strings over {DNA!r}, got {motifs}")
    longest = max(len(m) for m in motifs)
    if length < 3 * (longest + jitter) + 2:
        raise InputError(
            f"length: expected at least {3 * (longest + jitter) + 2} for motifs of length "
            f"{longest} and jitter {jitter}, got {length}"
        )
    if not 0.0 <= mutation < 1.0:
        raise InputError(f"mutation: expected a value in [0, 1), got {mutation}")
    rng = np.random.default_rng(random_state)
    y = rng.choice(n_classes, size=n_samples, p=p).astype(np.int64)
    letters = np.array(list(DNA))
    out = []
    for label in y:
        seq = rng.choice(letters, size=length)
        motif_id = int(label) if label < len(motifs) else int(rng.integers(len(motifs)))
        motif = np.array(list(motifs[motif_id]))
        centre = length // 2 - len(motif) // 2
        if label < len(motifs):
            start = centre + int(rng.integers(-jitter, jitter + 1))
        else:
            far = len(motif) + jitter
            starts = [s for s in range(length - len(motif) + 1) if abs(s - centre) >= far]
            start = int(rng.choice(starts))
        mutate = rng.random(len(motif)) < mutation
        motif[mutate] = rng.choice(letters, size=int(mutate.sum()))
        seq[start : start + len(motif)] = motif
        out.append("".join(seq))
    return out, y


__all__ = ["planted_position_dna"]
