"""Typed batches of structured objects (strings, graphs, molecules) and dataset loaders."""

from kernelkit.data._tu import TU_SETS, GraphDataset, load_tu
from kernelkit.data.datasets import SequenceDataset, load_amp, load_promoter
from kernelkit.data.detect import detect_input_kind
from kernelkit.data.graphs import GraphBatch, as_graph_batch
from kernelkit.data.molecule_datasets import MoleculeDataset, load_esol, load_solubility
from kernelkit.data.molecules import MoleculeBatch, as_molecule_batch
from kernelkit.data.strings import ALPHABETS, StringBatch, as_string_batch

__all__ = [
    "ALPHABETS",
    "TU_SETS",
    "GraphBatch",
    "GraphDataset",
    "MoleculeBatch",
    "MoleculeDataset",
    "SequenceDataset",
    "StringBatch",
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
