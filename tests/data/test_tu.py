"""The TU reader (kernelkit.data.load_tu) against the independent JSON-lines conversion of the
same sets (``tu_graphs/NAME/NAME.jsonl``) and the published counts of their README."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kernelkit.data import load_tu
from kernelkit.utils._errors import InputError

nx = pytest.importorskip("networkx")

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
TU = DATA / "tu_graphs"


@pytest.mark.skipif(not TU.is_dir(), reason="shared data not found (../shared/data/tu_graphs)")
@pytest.mark.parametrize(
    ("name", "n_graphs", "classes"),
    [
        ("MUTAG", 188, {1: 125, -1: 63}),
        ("PTC_MR", 344, {1: 152, -1: 192}),
        ("ENZYMES", 600, {c: 100 for c in range(1, 7)}),
    ],
)
def test_reader_equals_the_jsonl_conversion(name, n_graphs, classes):
    data = load_tu(DATA, name)
    lines = [json.loads(line) for line in (TU / name / f"{name}.jsonl").open()]
    assert len(data) == len(lines) == n_graphs
    assert dict(zip(*np.unique(data.y, return_counts=True), strict=True)) == classes
    assert data.y.tolist() == [ref["label"] for ref in lines]
    for g, ref in zip(data.graphs, lines, strict=True):
        assert g.number_of_nodes() == len(ref["nodes"])
        assert [g.nodes[v]["label"] for v in range(len(ref["nodes"]))] == ref["nodes"]
        edges = {(u, v): lab for u, v, lab in ref["edges"]}
        assert {tuple(sorted(e)) for e in g.edges} == set(edges)
        if any(lab is not None for lab in edges.values()):
            assert all(g.edges[u, v]["label"] == lab for (u, v), lab in edges.items())
        if "attributes" in ref:
            got = np.array([g.nodes[v]["attributes"] for v in range(len(ref["nodes"]))])
            np.testing.assert_allclose(got, np.array(ref["attributes"]), rtol=1e-12)


def test_missing_folder_names_the_argument(tmp_path):
    with pytest.raises(InputError, match=r"data_dir: expected MUTAG_A\.txt"):
        load_tu(tmp_path, "MUTAG")
