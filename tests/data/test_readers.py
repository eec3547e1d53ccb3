"""The file readers of the command line: formats, ids, targets and record-precise errors."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest

from kernelkit.data.readers import detect_kind, read_data, read_labels
from kernelkit.utils._errors import DataFileError, InputError
from kernelkit.utils._kinds import InputKind


def test_tsv_vectors_with_header_id_column_and_target(tmp_path):
    path = tmp_path / "v.tsv"
    path.write_text("name\tx\ty\tlabel\nA\t1\t2.5\tpos\nB\t-3\t4e-1\tneg\n\nC\t0\t0\tpos\n")
    data = read_data(path, target="label")
    assert data.kind is InputKind.VECTOR and data.ids == ["A", "B", "C"]
    np.testing.assert_array_equal(data.items, [[1, 2.5], [-3, 0.4], [0, 0]])
    assert data.lines == [2, 3, 5] and data.feature_names == ["x", "y"]
    targets = data.target("label")
    assert targets.classes == ["neg", "pos"] and targets.values.tolist() == [1, 0, 1]


def test_headerless_gzipped_csv(tmp_path):
    path = tmp_path / "v.csv.gz"
    path.write_bytes(gzip.compress(b"1,2\n3,4\n"))
    data = read_data(path)
    np.testing.assert_array_equal(data.items, [[1, 2], [3, 4]])
    assert data.feature_names == ["0", "1"]


def test_multiline_fasta_records_and_header_fields(tmp_path):
    path = tmp_path / "s.fa"
    path.write_text(">r1 class=a\nacgt\nAC\n; comment\n>r2 class=b extra\nGGT\n")
    data = read_data(path)
    assert data.items == ["ACGTAC", "GGT"] and data.ids == ["r1", "r2"]
    assert data.alphabet == "dna" and data.columns == {"class": ["a", "b"]}
    assert read_data(path, alphabet="protein").alphabet == "protein"


def test_soft_masked_dna_is_dna_and_the_note_says_how_letters_were_read(tmp_path):
    path = tmp_path / "soft.fa"
    path.write_text(">a\nacgtNNacgt\nTTGA\n>b\nACGTnnAC\n")
    data = read_data(path)
    assert data.alphabet == "dna" and data.items == ["ACGTNNACGTTTGA", "ACGTNNAC"]
    assert data.note == (
        "alphabet dna: 10 lower-case letters (soft-masking) read as upper case; "
        "4 unknown residues 'N' match nothing"
    )
    rna = tmp_path / "r.fa"
    rna.write_text(">a\nacguN\n")
    assert read_data(rna).alphabet == "rna"
    protein = tmp_path / "p.fa"
    protein.write_text(">a\nmkvlX\n")
    data = read_data(protein)
    assert data.alphabet == "protein" and data.items == ["MKVLX"]
    assert "4 lower-case letters" in data.note and "1 unknown residues 'X'" in data.note


def test_a_csv_sequence_column_follows_the_case_rule(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("seq,y\nacgtn,1\nACGTA,2\n")
    data = read_data(path, kind="sequences", column="seq")
    assert data.alphabet == "dna" and data.items == ["ACGTN", "ACGTA"]
    assert "5 lower-case letters" in data.note and "1 unknown residues 'N'" in data.note
    plain = tmp_path / "u.csv"
    plain.write_text("seq\nACGT\n")
    assert read_data(plain, kind="sequences", column="seq").note == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ACGT\n>r1\nAC\n", "s.fa:1: sequence before the first '>' header"),
        (">r1\n>r2\nAC\n", "s.fa:1: record 'r1' has no sequence"),
        (">r1\nAC\nKW*\n", "s.fa:3: unknown letter '*' in record 'r1' (alphabet protein"),
    ],
)
def test_fasta_errors_name_the_line(tmp_path, text, message):
    path = tmp_path / "s.fa"
    path.write_text(text)
    with pytest.raises(DataFileError, match=re.escape(message)):
        read_data(path)


def test_folder_of_edge_lists_with_node_labels(tmp_path):
    pytest.importorskip("networkx")
    (tmp_path / "a.edges").write_text("# triangle\n0 1\n1 2\n2 0\n")
    (tmp_path / "a.nodes").write_text("0 C\n1 C\n2 O\n")
    (tmp_path / "b.edges").write_text("x y\n")
    (tmp_path / "b.nodes").write_text("x N\ny C\n")
    data = read_data(tmp_path)
    assert data.kind is InputKind.GRAPH and data.ids == ["a", "b"]
    assert data.items.n_nodes.tolist() == [3, 2] and data.items.n_edges.tolist() == [3, 1]
    # same label names give the same codes across graphs
    labels = data.items.node_labels
    assert labels[0] == labels[1] == labels[4] and len(set(labels.tolist())) == 3
    (tmp_path / "c.edges").write_text("0 1 2 3\n")
    with pytest.raises(DataFileError, match=r"c.edges:1: expected 'u v \[edge label\]'"):
        read_data(tmp_path)


def test_partly_labelled_graphs_name_the_node(tmp_path):
    pytest.importorskip("networkx")
    (tmp_path / "a.edges").write_text("0 1\n1 2\n")
    (tmp_path / "a.nodes").write_text("0 C\n1 C\n")
    with pytest.raises(
        DataFileError, match=re.escape("a.edges: node '2' has no attribute 'label'")
    ):
        read_data(tmp_path)


def test_edge_labels_and_node_attributes_from_edge_lists(tmp_path):
    pytest.importorskip("networkx")
    (tmp_path / "a.edges").write_text("0 1 single\n1 2 double\n")
    (tmp_path / "a.nodes").write_text("0 C\n1 C\n2 O\n")
    (tmp_path / "a.attributes").write_text("0 0.5 1\n1 0.5,2\n2 0.8 1\n")
    (tmp_path / "b.edges").write_text("x y double\n")
    (tmp_path / "b.nodes").write_text("x N\ny C\n")
    (tmp_path / "b.attributes").write_text("x 0.7 3\ny 0.5 1\n")
    batch = read_data(tmp_path).items
    assert batch.edge_label == "label" and batch.node_attribute == "attributes"
    np.testing.assert_allclose(
        batch.node_attributes, [[0.5, 1], [0.5, 2], [0.8, 1], [0.7, 3], [0.5, 1]]
    )
    a, b = batch.to_networkx(0), batch.to_networkx(1)
    assert a.edges[0, 1]["label"] != a.edges[1, 2]["label"] == b.edges[0, 1]["label"]
    plain = read_data(tmp_path, edge_label=None, node_attribute=None).items
    assert plain.edge_labels is None and plain.node_attributes is None
    (tmp_path / "b.attributes").write_text("x 0.7\ny 0.5\n")
    with pytest.raises(DataFileError, match="different lengths"):
        read_data(tmp_path)
    (tmp_path / "b.attributes").write_text("x 0.7 q\ny 0.5 1\n")
    with pytest.raises(DataFileError, match="not numeric"):
        read_data(tmp_path)


def test_graphml_and_gml_attributes_renamable(tmp_path):
    nx = pytest.importorskip("networkx")
    g = nx.Graph()
    g.add_node(0, atom="C", feat="0.5 1.0")
    g.add_node(1, atom="O", feat="[0.25, 2.0]")
    g.add_edge(0, 1, bond="double")
    nx.write_graphml(g, tmp_path / "g.graphml")
    batch = read_data(
        tmp_path / "g.graphml", node_label="atom", edge_label="bond", node_attribute="feat"
    ).items
    np.testing.assert_allclose(batch.node_attributes, [[0.5, 1.0], [0.25, 2.0]])
    assert batch.edge_labels is not None and batch.node_labels is not None
    h = nx.Graph()
    h.add_node(0, attributes=[1.0, 2.0, 3.0])
    h.add_node(1, attributes=[0.0, 1.0, 0.0])
    h.add_edge(0, 1, label="single")
    h.add_edge(1, 2, label="single")
    nx.write_gml(h, tmp_path / "h.gml")
    with pytest.raises(DataFileError, match="node '2' has no attribute 'attributes'"):
        read_data(tmp_path / "h.gml")
    h.nodes[2]["attributes"] = [1.0, 1.0, 1.0]
    nx.write_gml(h, tmp_path / "h.gml")
    batch = read_data(tmp_path / "h.gml").items
    assert batch.node_attributes.shape == (3, 3) and batch.edge_labels is not None


def test_labels_file_and_kind_detection(tmp_path):
    path = tmp_path / "y.txt"
    path.write_text("1.5\n\n-2\n")
    targets = read_labels(path)
    assert targets.values.tolist() == [1.5, -2.0] and targets.classes is None
    assert detect_kind(tmp_path / "m.smi") is InputKind.MOLECULE
    assert detect_kind(tmp_path / "K.npy") is InputKind.GRAM
    with pytest.raises(InputError, match="--kind: cannot tell the kind"):
        detect_kind(tmp_path / "data.xyz")
    with pytest.raises(
        DataFileError, match=re.escape("a .smi input holds molecules, but sequences")
    ):
        (tmp_path / "m.smi").write_text("CCO\n")
        read_data(tmp_path / "m.smi", kind="sequences")


def _column(tmp_path, cells):
    path = tmp_path / "t.csv"
    path.write_text("x,y\n" + "".join(f"{i},{c}\n" for i, c in enumerate(cells)))
    return read_data(path, target="y")


def test_one_text_cell_in_a_numeric_target_is_an_error_with_its_line(tmp_path):
    data = _column(tmp_path, [f"{0.5 * i}" for i in range(20)] + ["2.O"] + ["1.25"] * 3)
    with pytest.raises(DataFileError, match=r"t.csv:22: y: expected a number, got '2.O'"):
        data.target("y")
    targets = data.target("y", task="classification")
    assert "2.O" in targets.classes and len(targets.values) == 24
    with pytest.raises(DataFileError, match=r"t.csv:22:"):
        data.target("y", task="regression")
    with pytest.raises(InputError, match="--task: expected one of regression, classification"):
        data.target("y", task="ranking")


def test_few_integer_values_are_classes_named_as_written_sorted_by_value(tmp_path):
    data = _column(tmp_path, ["10", "9", "2", "9", "10.0", "2"] * 3)
    targets = data.target("y")
    assert targets.classes == ["2", "9", "10"] and "taken as classes" in targets.note
    assert targets.values.tolist()[:6] == [2, 1, 0, 1, 2, 0]
    regression = data.target("y", task="regression")
    assert regression.classes is None and regression.values[:3].tolist() == [10.0, 9.0, 2.0]
    many = _column(tmp_path, [str(i) for i in range(30)]).target("y")
    assert many.classes is None and many.values[-1] == 29.0


def test_text_target_holds_classes(tmp_path):
    targets = _column(tmp_path, ["a", "b", "3", "a"]).target("y")
    assert targets.classes == ["3", "a", "b"] and targets.values.tolist() == [1, 2, 0, 1]


def test_column_without_kind_points_to_kind_option(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("smiles,y\nCCO,1\n")
    with pytest.raises(InputError, match=r"--column 'smiles'.*--kind molecules"):
        read_data(path, column="smiles")
    assert read_data(path, column="smiles", kind="molecules").items == ["CCO"]
    assert read_data(path, kind=InputKind.MOLECULE).kind is InputKind.MOLECULE


def test_a_table_with_a_smiles_or_sequence_column_holds_those_records(tmp_path):
    # a .csv is vectors by its extension, but a header naming a column "smiles" (any case)
    # or "sequence" says what the records are; the note says so, --columns keeps vectors
    mols = tmp_path / "mols.csv"
    mols.write_text("SMILES,logp\nCCO,-0.0014\nc1ccccc1,1.6866\nCC(=O)O,0.0909\n")
    data = read_data(mols)
    assert data.kind is InputKind.MOLECULE and data.items == ["CCO", "c1ccccc1", "CC(=O)O"]
    assert "column 'SMILES' read as molecules" in data.note
    assert data.take([0, 2]).note == data.note
    vectors = read_data(mols, columns=["logp"])
    assert vectors.kind is InputKind.VECTOR and vectors.items.shape == (3, 1)
    seqs = tmp_path / "seqs.csv"
    seqs.write_text("sequence,y\nACGTAC,1\nacgttt,0\n")
    data = read_data(seqs)
    assert data.kind is InputKind.STRING and data.items == ["ACGTAC", "ACGTTT"]
    assert data.note.startswith("column 'sequence' read as sequences")
    with pytest.raises(DataFileError, match="expected a number"):
        read_data(mols, kind="vectors")
