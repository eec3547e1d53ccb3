"""Bayesian optimisation over a discrete set of candidates (molecules, sequences, graphs, vectors).

:func:`suggest` ranks the candidates by an acquisition function of a fitted probabilistic
model (a :class:`~kernelkit.GaussianProcessRegressor`, or anything with
``predict(X, return_std=True)`` and, for batches, ``return_cov=True``) and returns the indices
of the next ones to measure.
"""

from kernelkit.bo._suggest import suggest

__all__ = ["suggest"]
