"""Typed batches of structured objects (strings, graphs, molecules, bags) and dataset loaders."""

from kernelkit.data._bags import BagBatch, as_bag_batch
from kernelkit.data._datasets import SequenceDataset, load_amp, load_promoter
from kernelkit.data._detect import detect_input_kind
from kernelkit.data._graphs import GraphBatch, as_graph_batch
from kernelkit.data._molecule_datasets import MoleculeDataset, load_esol, load_solubility
from kernelkit.data._molecules import MoleculeBatch, as_molecule_batch
from kernelkit.data._scaffold import ScaffoldKFold
from kernelkit.data._strings import ALPHABETS, StringBatch, as_string_batch
from kernelkit.data._tu import TU_SETS, GraphDataset, load_tu  # noqa: F401 (TU_SETS: importable)

__all__ = [
    "ALPHABETS",
    "BagBatch",
    "GraphBatch",
    "GraphDataset",
    "MoleculeBatch",
    "MoleculeDataset",
    "ScaffoldKFold",
    "SequenceDataset",
    "StringBatch",
    "as_bag_batch",
    "as_graph_batch",
    "as_molecule_batch",
    "as_string_batch",
    "detect_input_kind",
    "load_amp",
    "load_esol",
    "load_promoter",
    "load_solubility",
    "load_tu",
]
