r"""The weights on the network of a model fitted with :class:`~kernelkit.kernels.NetworkLinear`.

Rapaport, Zinovyev, Dutreix, Barillot & Vert, BMC Bioinformatics 8:35, 2007 (course part 2,
"Kernels on graphs", applications): a dual model ``f(x) = sum_i alpha_i x_i^T K_G x (+ b)``
is the linear function ``f(x) = beta^T x (+ b)`` with ``beta = K_G X^T alpha``; ``beta``
has one weight per node (gene) and is drawn on the network to read the pathways the model
uses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted

from kernelkit.kernels import Linear, NetworkLinear
from kernelkit.utils._errors import InputError

__all__ = ["network_weights"]


def _as_array(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().double().numpy()
    return np.asarray(value, dtype=np.float64)


def network_weights(estimator: Any) -> np.ndarray:
    r"""``beta = K_G X^T alpha``: the weights on the network nodes of a fitted dual model.

    For a model fitted with ``kernel=NetworkLinear(K_G)`` its decision function is
    ``f(x) = sum_i alpha_i x_i^T K_G x + b = beta^T x + b`` (Rapaport et al. 2007; the RKHS
    norm is ``beta^T K_G^{-1} beta``).  Supported: :class:`~kernelkit.KernelSVC` (its support
    vectors and ``dual_coef_``), and the estimators whose ``dual_coef_`` has one row per
    training point (:class:`~kernelkit.KernelRidge`, :class:`~kernelkit.KernelLogisticRegression`,
    :class:`~kernelkit.BiasFreeSVC` ...) or per Nyström centre (``center_indices_``).

    Parameters
    ----------
    estimator : fitted estimator
        Fitted with a :class:`~kernelkit.kernels.NetworkLinear` kernel (or a
        :class:`~kernelkit.kernels.Linear` one: ``K_G = I``, ``beta = X^T alpha``, the
        plain linear model's weights, for comparison).

    Returns
    -------
    np.ndarray
        Shape ``(m,)`` for one output (binary classification, one regression target),
        ``(m, c)`` with one column per output (libsvm's one-vs-one pairs for a multi-class
        ``KernelSVC``, in ``dual_coef_``'s order), ``m`` the number of nodes.

    Raises
    ------
    InputError
        When the estimator was not fitted with a ``NetworkLinear`` kernel or has no dual
        coefficients.
    """
    check_is_fitted(estimator)
    kernel = getattr(estimator, "kernel_", None)
    if not isinstance(kernel, (NetworkLinear, Linear)):
        raise InputError(
            "estimator: expected a model fitted with kernel=NetworkLinear(...) (or Linear()), "
            f"got kernel_ = {kernel!r}"
        )
    coef = getattr(estimator, "dual_coef_", None)
    if coef is None:
        raise InputError(
            f"estimator: {type(estimator).__name__} has no dual_coef_ (a dual model "
            "f = sum_i alpha_i k(x_i, .) is needed)"
        )
    alpha = _as_array(coef)
    if hasattr(estimator, "support_vectors_"):  # libsvm: dual_coef_ is (classes - 1, n_sv)
        points = _as_array(estimator.support_vectors_)
        alpha = alpha.T
    else:
        points = _as_array(estimator.X_fit_)
        index = getattr(estimator, "center_indices_", None)
        if index is not None and len(alpha) != len(points):
            points = points[np.asarray(index)]
    if alpha.ndim == 1:
        alpha = alpha[:, None]
    if len(alpha) != len(points):
        raise InputError(
            f"estimator: dual_coef_ has {len(alpha)} rows for {len(points)} points; cannot map "
            "it on the network"
        )
    beta = points.T @ alpha
    if isinstance(kernel, NetworkLinear):
        beta = kernel.network_gram().numpy() @ beta
    return beta[:, 0] if beta.shape[1] == 1 else beta
