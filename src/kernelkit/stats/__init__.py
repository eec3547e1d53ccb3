"""Comparing distributions with kernels: mean embeddings, MMD, two-sample and independence tests.

Course part 3, sections 1-3 (``spec/course_part3.md``): the empirical kernel mean embedding
(:class:`MeanEmbedding`), the maximum mean discrepancy (:func:`mmd`: biased, unbiased,
linear-time and block estimators), its witness function (:func:`witness`), the two-sample
test (:func:`two_sample_test`: permutation, spectral, linear-time and block nulls), the
choice of a kernel by estimated test power (:func:`select_kernel`,
:func:`gaussian_width_grid`) or by the aggregated permutation test over a list of kernels
(:mod:`kernelkit.stats._aggregate`; :func:`width_and_moment_grid` adds the mean and
covariance tests to the Gaussian widths) and the HSIC independence test (:func:`hsic`,
:func:`independence_test`).  Every input kind works (vectors, sequences, graphs,
molecules, or a Gram matrix of the pooled sample) through :mod:`kernelkit.gram`.

>>> import numpy as np
>>> from kernelkit.stats import two_sample_test
>>> rng = np.random.default_rng(0)
>>> res = two_sample_test(rng.normal(size=(100, 2)), rng.normal(size=(100, 2)) + 1,
...                       n_permutations=200, random_state=0)
>>> res.pvalue < 0.05
True
"""

from kernelkit.stats._hsic import IndependenceResult, hsic, independence_test
from kernelkit.stats._mmd import MeanEmbedding, mmd, witness
from kernelkit.stats._selection import (
    KernelChoice,
    gaussian_width_grid,
    select_kernel,
    width_and_moment_grid,
)
from kernelkit.stats._two_sample import TwoSampleResult, two_sample_test

__all__ = [
    "IndependenceResult",
    "KernelChoice",
    "MeanEmbedding",
    "TwoSampleResult",
    "gaussian_width_grid",
    "hsic",
    "independence_test",
    "mmd",
    "select_kernel",
    "two_sample_test",
    "width_and_moment_grid",
    "witness",
]
