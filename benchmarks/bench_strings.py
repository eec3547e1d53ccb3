"""Spectrum-kernel Gram on 5000 peptides against scikit-learn's character n-gram counts.

What a scikit-learn user would write instead::

    F = CountVectorizer(analyzer="char", ngram_range=(k, k), lowercase=False).fit_transform(seqs)
    K = (F @ F.T).toarray()

kernelkit: ``kernelkit.gram.gram(Spectrum(k, alphabet="protein"), seqs)``, which featurises each
peptide independently (exact integer k-mer keys, no fitted vocabulary) and takes the same
sparse product.  Both timings start from the list of strings and end with the dense
5000 x 5000 Gram; the two Grams are checked equal before timing.

Data: the first 5000 peptides of modlAMP's ``AMPvsUniProt`` (7-174 aa) from ``--data``
(default ``<repo>/../shared/data``); without it, 5000 random peptides with log-normal lengths
of median 25 aa (clipped to 7-174) over the 20 amino acids.

Usage: ``python benchmarks/bench_strings.py [--n 5000] [--k 3 5] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import median_time, report

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def peptides(n: int, data: Path) -> tuple[list[str], str]:
    path = data / "amp" / "AMPvsUniProt.csv"
    if path.is_file():
        from kernelkit.data._datasets import load_amp

        seqs = load_amp(data, "AMPvsUniProt").sequences
        if len(seqs) >= n:
            return seqs[:n], "AMPvsUniProt"
    rng = np.random.default_rng(0)
    letters = np.array(list("ACDEFGHIKLMNPQRSTVWY"))
    lengths = np.clip(np.round(rng.lognormal(np.log(25), 0.5, n)), 7, 174).astype(int)
    return ["".join(rng.choice(letters, size=int(L))) for L in lengths], "random"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--k", type=int, nargs="+", default=[3, 5])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)

    from sklearn.feature_extraction.text import CountVectorizer

    from kernelkit.gram import gram
    from kernelkit.kernels import Spectrum

    seqs, source = peptides(args.n, args.data)
    rows = []
    for k in args.k:

        def ours(k=k):
            return gram(Spectrum(k, alphabet="protein"), seqs)

        def sklearn(k=k):
            vec = CountVectorizer(analyzer="char", ngram_range=(k, k), lowercase=False)
            F = vec.fit_transform(seqs)
            return (F @ F.T).toarray()

        K_ours, K_ref = ours(), sklearn()
        if not np.array_equal(K_ours, K_ref):
            raise AssertionError(f"k={k}: the two Grams differ by {np.abs(K_ours - K_ref).max()}")
        del K_ours, K_ref
        t_ours = median_time(ours, repeat=args.repeat)
        t_ref = median_time(sklearn, repeat=args.repeat)
        rows.append(
            {
                "case": f"spectrum k={k}, n={len(seqs)} ({source})",
                "kernelkit_s": t_ours,
                "baseline": "CountVectorizer(char) + sparse dot",
                "baseline_s": t_ref,
            }
        )
    report("bench_strings", rows)


if __name__ == "__main__":
    main()
