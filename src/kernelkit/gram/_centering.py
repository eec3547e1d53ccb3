r"""Centering of Gram matrices in feature space (course part 1, slide "Example 3: Centering data in
the feature space").

Centering the feature map, :math:`\tilde\varphi(x) = \varphi(x) - \bar\varphi` with
:math:`\bar\varphi = \frac1n \sum_k \varphi(x_k)` over the training points, gives

.. math:: K^c = (I - U) K (I - U), \quad U_{ij} = 1/n,
   \qquad K^c_{ij} = K_{ij} - \frac1n \sum_k (K_{ik} + K_{jk}) + \frac1{n^2} \sum_{kl} K_{kl}.

For a new point :math:`x` (not given in the slides; it follows from the same centred feature
map, with the *training* mean, as in kernel PCA, course section 4.2):

.. math:: K^c(x, x_j) = K(x, x_j) - \frac1n \sum_k K(x, x_k) - \frac1n \sum_k K(x_j, x_k)
   + \frac1{n^2} \sum_{kl} K(x_k, x_l).
"""

from __future__ import annotations

from typing import Any

import torch

from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import to_tensor


def _square(K: Any, name: str) -> torch.Tensor:
    K = to_tensor(K, name=name)
    if K.shape[0] != K.shape[1]:
        raise InputError(
            f"{name}: expected a square Gram matrix (n x n), got shape {tuple(K.shape)}"
        )
    return K


def center_gram(K: Any) -> torch.Tensor:
    r"""The centred Gram ``H K H`` with ``H = I - 1 1^T / n``.

    Course part 1, slide "Example 3: Centering data in the feature space".

    Computed elementwise in ``O(n^2)``:
    :math:`K^c_{ij} = K_{ij} - \bar K_{i\cdot} - \bar K_{\cdot j} + \bar K_{\cdot\cdot}`.

    Parameters
    ----------
    K : array-like or tensor, shape (n, n)
        A square Gram matrix.

    Returns
    -------
    torch.Tensor
        The centred Gram, a new tensor of ``K``'s dtype.
    """
    return GramCenterer().fit_transform(K)


class GramCenterer:
    r"""Centre Gram matrices with the feature-space mean of the training points.

    ``fit(K_train)`` stores the column means :math:`\bar K_{\cdot j}` and the grand mean
    :math:`\bar K_{\cdot\cdot}` of the training Gram; ``transform(K_rows)`` centres rows
    ``K(x, x_j)`` of any points against the training points:

    .. math:: K^c(x, x_j) = K(x, x_j) - \frac1n \sum_k K(x, x_k) - \bar K_{\cdot j}
       + \bar K_{\cdot\cdot}

    (course part 1, slide "Centering data in the feature space", extended to new points with
    the training mean).
    ``fit_transform(K_train)`` equals ``H K H``.  Equivalent to scikit-learn's
    ``KernelCenterer``.

    Attributes
    ----------
    col_means_ : torch.Tensor, shape (n,)
        :math:`\frac1n \sum_k K(x_k, x_j)` for each training point ``j``.
    grand_mean_ : float
        :math:`\frac1{n^2} \sum_{kl} K(x_k, x_l)`.
    """

    def fit(self, K: Any) -> GramCenterer:
        """Store the means of the square training Gram ``K`` (n x n)."""
        K = _square(K, "K")
        self.col_means_ = K.mean(0)
        self.grand_mean_ = float(self.col_means_.mean())
        return self

    def transform(self, K: Any) -> torch.Tensor:
        """Centre rows ``K(x, x_j)`` (m x n) of new points against the training means."""
        if not hasattr(self, "col_means_"):
            raise InputError("GramCenterer: call fit(K_train) before transform")
        K = to_tensor(K, name="K", dtype=self.col_means_.dtype)
        n = self.col_means_.shape[0]
        if K.shape[1] != n:
            raise InputError(
                f"K: expected rows against the {n} training points (m x {n}), "
                f"got shape {tuple(K.shape)}"
            )
        row_means = K.mean(1, keepdim=True)
        out = K - row_means
        out -= self.col_means_.to(K.device)[None, :]
        out += self.grand_mean_
        return out

    def fit_transform(self, K: Any) -> torch.Tensor:
        """``fit(K)`` then ``transform(K)``: the centred training Gram ``H K H``."""
        return self.fit(K).transform(K)
