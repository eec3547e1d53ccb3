"""The seeding rule of random kernels (docs/estimators.md): an int ``random_state``, ``0`` by
default, and ``k(x, y)`` independent of the batch and order the items come in."""

from __future__ import annotations

import inspect

import networkx as nx
import numpy as np
import pytest

from kernelkit import kernels
from kernelkit.utils._errors import InputError

RANDOM = [
    cls
    for name in kernels.__all__
    if isinstance(cls := getattr(kernels, name), type)
    and issubclass(cls, kernels.Kernel)
    and "random_state" in inspect.signature(cls).parameters
]


def _graphs(n: int, seed: int) -> list[nx.Graph]:
    out = []
    for k in range(n):
        g = nx.gnp_random_graph(5 + k % 4, 0.5, seed=seed + k)
        g.add_edges_from((i, i + 1) for i in range(len(g) - 1))  # connected
        nx.set_node_attributes(g, {v: str(g.degree(v) % 3) for v in g}, "label")
        nx.set_node_attributes(g, {v: [float(v), float(g.degree(v))] for v in g}, "attributes")
        out.append(g)
    return out


def _example(cls: type) -> kernels.Kernel:
    params = inspect.signature(cls).parameters
    if "node_attribute" in params:
        return cls(node_attribute="attributes")
    return cls()


def test_every_random_kernel_is_found():
    names = {cls.__name__ for cls in RANDOM}
    assert {"GraphletSampling", "LovaszTheta", "Propagation"} <= names


@pytest.mark.parametrize("cls", RANDOM, ids=lambda c: c.__name__)
def test_random_state_is_an_int_with_default_0(cls):
    assert inspect.signature(cls).parameters["random_state"].default == 0
    with pytest.raises((InputError, TypeError, ValueError)):
        cls(random_state=np.random.default_rng(0))


@pytest.mark.parametrize("cls", RANDOM, ids=lambda c: c.__name__)
def test_k_of_a_pair_does_not_depend_on_the_batch(cls):
    graphs = _graphs(6, seed=1)
    k = _example(cls)
    whole = np.asarray(k(graphs, graphs))
    order = [5, 2, 0, 4, 1, 3]
    shuffled = np.asarray(k([graphs[i] for i in order], graphs[:3]))
    np.testing.assert_allclose(shuffled, whole[order][:, :3], rtol=1e-10, atol=1e-12)
