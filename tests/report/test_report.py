"""The Markdown / HTML report and the plots of the command line."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit.report._document import Report


def _report() -> Report:
    report = Report("Codes <of> molecules")
    report.add_paragraph("R² & NMSE of 'x'")
    report.add_table(["method", "error"], [["K2AE", "0.5"], ["<KPCA>", "0.7"]])
    report.add_image("latent_2d.png", "2-D codes")
    report.add_files([("codes_2d.csv", "the codes")])
    return report


def test_markdown_and_html_hold_the_same_blocks(tmp_path):
    md_path, html_path = _report().write(tmp_path)
    md, page = md_path.read_text(), html_path.read_text()
    assert md.splitlines()[0] == "# Codes <of> molecules"
    assert "| method | error |\n|---|---|\n| K2AE | 0.5 |\n| <KPCA> | 0.7 |" in md
    assert "![2-D codes](latent_2d.png)" in md and "- [codes_2d.csv](codes_2d.csv): the codes" in md
    # HTML: everything escaped, images and links relative to the report
    assert "<title>Codes &lt;of&gt; molecules</title>" in page
    assert "<td>&lt;KPCA&gt;</td>" in page and "R² &amp; NMSE of &#x27;x&#x27;" in page
    assert '<img src="latent_2d.png" alt="2-D codes">' in page
    assert '<a href="codes_2d.csv">codes_2d.csv</a>' in page


def test_plots_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    from kernelkit.report._plots import latent_panels, training_curves

    rng = np.random.default_rng(0)
    codes = rng.normal(size=(50, 2))
    path = latent_panels(
        [("a", codes), ("b", -codes)], rng.normal(size=50), tmp_path / "l.png", colour_label="y"
    )
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    path = training_curves([("run", [3.0, 2.0, 1.5])], tmp_path / "c.png")
    assert path.stat().st_size > 1000


def test_latent_panels_with_classes_and_with_one_column_codes(tmp_path):
    """Classes are drawn with a legend; codes with fewer than two columns (kernel PCA of
    nearly identical records) are padded with zeros instead of raising IndexError."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from kernelkit.report import _plots as plots

    rng = np.random.default_rng(0)
    codes = rng.normal(size=(30, 2))
    labels = np.arange(30) % 3
    figures = []
    real_close = plt.close

    def keep(fig):
        figures.append(fig)
        real_close(fig)

    plt.close = keep
    try:
        plots.latent_panels(
            [("a", codes), ("b", codes[:, :1])],
            labels,
            tmp_path / "l.png",
            colour_label="kind",
            classes=["x", "y", "z"],
        )
    finally:
        plt.close = real_close
    legend = figures[0].axes[-1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["x", "y", "z"]
    assert legend.get_title().get_text() == "kind"
    assert len(figures[0].axes) == 2  # no colour bar
    np.testing.assert_array_equal(plots._two_columns(codes[:, :1])[:, 1], 0.0)
