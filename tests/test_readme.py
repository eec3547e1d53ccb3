"""The README's quickstarts run as written, its tables are generated, and it stays short."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_is_short_and_says_how_to_install():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    assert re.search(r"^pip install .*\[all\]", text, re.M)
    assert "make test" in text and "make demo" in text


def test_readme_quickstart_runs():
    blocks = _python_blocks()
    assert blocks, "the README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    assert namespace["codes"].shape == (200, 2)
    assert tuple(namespace["k"](namespace["X"][:3], namespace["X"][:4]).shape) == (3, 4)


def test_readme_quickstart_per_input_kind_runs():
    """Molecules, sequences and graphs, two samples: each block runs on its own."""
    import warnings

    found = {}
    for block in _python_blocks()[1:]:
        namespace: dict = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a tiny K2AE may stop at max_iter
            exec(compile(block, str(README), "exec"), namespace)
        found.update(namespace)
    assert found["codes"].shape == (8, 2) and found["std"].shape == (1,)
    assert found["clf"].predict(["ACGTACGTAA"]).tolist() == [1]
    assert found["K"].shape == (4, 4)
    assert len(_python_blocks()) == 4


# ---------------------------------------------------------------------- performance table
def _readme_table_module():
    spec = importlib.util.spec_from_file_location(
        "readme_table", README.parent / "benchmarks" / "readme_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _table_lines(block: str) -> list[list[str]]:
    rows = [line for line in block.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:]]


PERFORMANCE = README.parent / "docs" / "performance.md"


@pytest.mark.parametrize("summary", [False, True], ids=["docs/performance.md", "README"])
def test_readme_performance_table_is_generated_from_the_json_results(summary):
    table = _readme_table_module()
    block = table.readme_block((README if summary else PERFORMANCE).read_text())
    assert block == table.build_table(summary=summary), "run `python benchmarks/readme_table.py`"
    results = table.load_results()
    shown = table.table_rows(results, summary=summary)
    lines = _table_lines(block)
    assert len(lines) == len(shown) > 0
    if summary:
        assert len(lines) == len(table.SUMMARY) <= 15
    # every table row is one JSON row: its case, kind and kernelkit time
    for cells, (kind, row) in zip(lines, shown, strict=True):
        assert cells[0] == row["case"] and cells[1] == kind
        assert cells[2] == f"{row['kernelkit_s']:.3g} s"


@pytest.mark.parametrize("page", [PERFORMANCE, README], ids=["docs/performance.md", "README"])
def test_readme_performance_table_is_honest(page):
    table = _readme_table_module()
    lines = _table_lines(table.readme_block(page.read_text()))
    by_case = {cells[0]: cells for cells in lines}
    # losses are shown: the Tanimoto Gram against RDKit, save / load against pickle
    tanimoto = [c for case, c in by_case.items() if "Tanimoto" in case and "RDKit" in c[3]]
    pickle_rows = [c for c in lines if c[3].startswith("pickle:")]
    assert tanimoto and pickle_rows
    for cells in [*tanimoto, *pickle_rows]:
        ratio = float(cells[4].split("x")[0])
        assert (ratio < 1) == cells[4].endswith("(kernelkit slower)")
    # float32 against float32, float64 against float64
    for cells in lines:
        assert table.same_dtype({"case": cells[0], "baseline": cells[3]}), cells
    # kernelkit against kernelkit is an ablation, never an alternative
    for cells in lines:
        if "loop of 64 single-restart fits" in cells[3] or cells[3].startswith("--threads"):
            assert cells[1] == "ablation", cells


def test_readme_table_generator_on_synthetic_results(tmp_path):
    table = _readme_table_module()
    machine = {"machine": "x86_64", "python": "3", "torch": "2", "numpy": "2", "scipy": "1",
               "sklearn": "1", "torch_threads": 2}  # fmt: skip
    rows = [
        {"case": "KRR float32", "kernelkit_s": 2.0, "baseline": "sk float64", "baseline_s": 4.0},
        {"case": "KRR float32", "kernelkit_s": 2.0, "baseline": "sk float32", "baseline_s": 1.0},
    ]
    payload = {"benchmark": "bench_estimators", "machine": machine, "rows": rows}
    (tmp_path / "bench_estimators.json").write_text(json.dumps(payload))
    lines = _table_lines(table.build_table(tmp_path))
    assert lines == [
        ["KRR float32", "alternative", "2 s", "sk float32: 1 s", "0.50x (kernelkit slower)"]
    ]
    # run_all.json of a run that a failing script stopped: the machine line says so
    run = {"finished": "2026-11-27 03:59", "total_s": 60.0, "scripts": {"bench_a": 30.0}}
    (tmp_path / "run_all.json").write_text(json.dumps({**run, "complete": False}))
    assert "only bench_a." in table.build_table(tmp_path)
    (tmp_path / "run_all.json").write_text(
        json.dumps({**run, "complete": False, "failed": "bench_b"})
    )
    assert "only bench_a; stopped by bench_b, which failed." in table.build_table(tmp_path)


def test_tu_table_of_graphs_page_is_generated_from_tu_json():
    table = _readme_table_module()
    page = README.parent / "docs" / "graphs.md"
    block = table.readme_block(page.read_text(), table.TU_BEGIN, table.TU_END)
    assert block == table.build_tu_table(), "run `python benchmarks/readme_table.py`"
    results = json.loads((table.RESULTS_DIR / "tu.json").read_text())
    lines = _table_lines(block)
    assert [cells[0] for cells in lines] == list(results)
    for cells in lines:
        for (_, key), score in zip(table.TU_METHODS, cells[2::2], strict=True):
            row = results[cells[0]].get(key)
            mean, std = (100 * row["accuracy_mean"], 100 * row["accuracy_std"]) if row else (0, 0)
            assert score.strip("*") == (f"{mean:.1f} ± {std:.1f}" if row else "–")


def test_tu_table_generator_on_synthetic_results(tmp_path):
    table = _readme_table_module()
    row = {"accuracy_std": 0.05, "seconds": 12.4}
    results = {
        "A": {"n_graphs": 10, "WL subtree (h, C by inner CV)": {**row, "accuracy_mean": 0.8},
              "GraphCKNClassifier()": {**row, "accuracy_mean": 0.9}},
        "B": {"n_graphs": 20, "WL subtree (h, C by inner CV)": {**row, "accuracy_mean": 0.5},
              "GraphCKNClassifier()": {**row, "accuracy_mean": 0.4},
              "WWL (n_iter, gamma, C by inner CV)": {**row, "accuracy_mean": 0.6},
              "measured": "2026-11-29 18:00 UTC, load 1.0, 2.0, 3.0"},
    }  # fmt: skip
    (tmp_path / "tu.json").write_text(json.dumps(results))
    block = table.build_tu_table(tmp_path)
    assert _table_lines(block) == [
        ["A", "10", "80.0 ± 5.0", "12 s", "**90.0 ± 5.0**", "12 s", "–", "–"],
        ["B", "20", "50.0 ± 5.0", "12 s", "40.0 ± 5.0", "12 s", "**60.0 ± 5.0**", "12 s"],
    ]
    assert "B 2026-11-29 18:00 UTC, load 1.0, 2.0, 3.0." in block
    page = tmp_path / "graphs.md"
    page.write_text(f"text\n{table.TU_BEGIN}\nold\n{table.TU_END}\nmore\n")
    assert table._update(page, block, table.TU_BEGIN, table.TU_END)
    assert page.read_text() == f"text\n{block}\nmore\n"


def test_estimators_page_example_runs():
    """docs/estimators.md: its example asserts the kernel-name mapping, the precomputed
    equality and the default kernel of each kind."""
    page = README.parent / "docs" / "estimators.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    namespace: dict = {}
    exec(compile(blocks[0], str(page), "exec"), namespace)
    assert namespace["graph_model"].kernel_.n_iter == 3
