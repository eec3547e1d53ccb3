"""The report's verdict follows the random forest's numbers (oracle: the comparison by hand)."""

from __future__ import annotations

import itertools

import pytest

from kernelkit.cli._autoencode import verdict


def _results(scores, key="rf_r2"):
    return [
        {"method": method, "dims": d, "test_reconstruction_error": 0.5, key: value}
        for d, pair in scores.items()
        for method, value in zip(("K2AE", "KPCA"), pair, strict=True)
    ]


@pytest.mark.parametrize("key", ["rf_r2", "rf_accuracy"])
def test_verdict_follows_the_numbers(key):
    for a, b in itertools.product([(0.6, 0.5), (0.5, 0.6), (0.5, 0.5)], repeat=2):
        scores = {2: a, 10: b}
        text = verdict(_results(scores, key), "logp")
        wins = [d for d, (k2ae, kpca) in scores.items() if k2ae > kpca]
        if wins == [2, 10]:
            assert "beat the KPCA codes at every code size" in text
        elif not wins:
            assert "do not beat the KPCA codes at any code size" in text
        else:
            assert f"beat the KPCA codes only at {wins[0]}-D" in text
        assert text.startswith("Verdict on 'logp': the K2AE codes ")
        assert f"2-D: {a[0]:.3f} against {a[1]:.3f}; 10-D: {b[0]:.3f} against {b[1]:.3f}" in text


def test_verdict_of_measured_report():
    # the numbers of the 4200-molecule run reported in issue 51 (RF R², K2AE and KPCA)
    text = verdict(_results({2: (0.322, 0.231), 10: (0.610, 0.553)}), "logp")
    assert "every code size" in text and "RF R²" in text
    text = verdict(_results({2: (0.231, 0.322), 10: (0.610, 0.553)}), "logp")
    assert "only at 10-D" in text


def test_no_verdict_without_target():
    plain = [{"method": m, "dims": 2, "test_reconstruction_error": 0.5} for m in ("K2AE", "KPCA")]
    assert verdict(plain, None) is None
    assert verdict(_results({2: (0.6, 0.5)}), None) is None
