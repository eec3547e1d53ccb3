"""Falkon's Nyström system for points on a Dask cluster (:mod:`kernelkit.gram._distributed`).

The same :class:`~kernelkit.models._falkon.NystromSystem` as in memory, with
:class:`~kernelkit.gram._distributed_nystrom.DistributedNystromOperator` as ``K_nm``: the
centres are drawn by row position, the chunks holding them kept for the passes
(:func:`~kernelkit.gram._distributed.draw_kept_centres`), ``chol(K_mm)`` is formed on the
client, and :func:`~kernelkit.models._falkon.nystrom_ridge` and
:func:`~kernelkit.models._falkon_logistic.nystrom_logistic_fit` run on it unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.gram._distributed import cluster_keep_budget, draw_kept_centres
from kernelkit.gram._distributed_nystrom import DistributedNystromOperator
from kernelkit.kernels._base import Kernel
from kernelkit.models._falkon import NystromSystem, centre_gram

__all__ = ["distributed_nystrom_system"]


def distributed_nystrom_system(
    kernel: Kernel,
    X: Any,
    n_centers: int,
    *,
    random_state: Any = None,
    centres: Any = None,
    indices: np.ndarray | None = None,
    client: Any = None,
    lam: float | None = None,
    memory_budget: int | None = None,
) -> NystromSystem:
    """``K_nm`` streamed on the workers and ``K_mm`` on the client.

    Parameters
    ----------
    kernel : Kernel
        Any kernelkit kernel.
    X : dask.array.Array, dask.bag.Bag or RowBlocks
        The ``n`` training rows (persisted on the workers for repeated passes), or their
        blocks as :func:`~kernelkit.gram._distributed.draw_kept_centres` returns them.
    n_centers : int
        Number ``m`` of uniform centres drawn by row position
        (:func:`~kernelkit.gram._distributed.draw_kept_centres`, whose kept blocks the system
        then passes over).
    random_state : None, int, RandomState or Generator
        Seed of the centre draw.
    centres, indices : optional
        Centres already gathered (and their indices; ``None`` for centres given as points),
        instead of drawing them.
    client : distributed.Client, optional
        The client to run on.
    lam : float, optional
        The smallest ``lam`` the system will be solved for (the jitter of ``T`` for float32
        blocks, :func:`~kernelkit.solvers.centre_factor`).
    memory_budget : int, optional
        Bytes the workers may keep ``K_nm`` in, so that the passes after the first read it
        instead of ``X`` (:class:`~kernelkit.gram._distributed_nystrom.DistributedNystromOperator`);
        ``None``: :func:`~kernelkit.gram._distributed.cluster_keep_budget`, a quarter of the
        workers' memory; 0: every pass streams.
    """
    if centres is None:
        indices, centres, X = draw_kept_centres(X, n_centers, random_state, client=client)
    budget = cluster_keep_budget(client) if memory_budget is None else memory_budget
    op = DistributedNystromOperator(kernel, X, centres, client=client, memory_budget=budget)
    block_dtype = op.centres.dtype if isinstance(op.centres, torch.Tensor) else torch.float64
    K_mm = centre_gram(kernel, op.centres)
    index = None if indices is None else np.asarray(indices)
    return NystromSystem(op, K_mm, index, block_dtype, lam)
