"""The applicability domain of a fitted kernel model: how similar new points are to its data.

``score(x) = max_i k(x, x_i) / sqrt(k(x, x) k(x_i, x_i))`` over the points ``x_i`` the fit
kept (the training points; the centres of a Nyström fit, which span its predictions): the
largest cosine similarity in the kernel's feature space, 1 for a training point, the
nearest-neighbour Tanimoto similarity for a Tanimoto kernel (the usual similarity-based
applicability domain of QSAR models; e.g. Sheridan et al., "Similarity to molecules in the
training set is a good discriminator for prediction accuracy in QSAR", J. Chem. Inf. Comput.
Sci. 44, 2004).  A point whose feature vector is zero (``k(x, x) = 0``) scores 0.
"""

from __future__ import annotations

import numpy as np
import torch

from kernelkit.gram import gram
from kernelkit.gram._centres import take
from kernelkit.kernels import Kernel
from kernelkit.kernels._base import Batch
from kernelkit.models._gp_nystrom import row_tiles


def max_similarity(kernel: Kernel, reference: Batch, X: Batch) -> torch.Tensor:
    """``max_i k(x, x_i) / sqrt(k(x, x) k(x_i, x_i))`` for each row ``x`` of ``X`` (module
    formula), in row tiles against ``reference``."""
    ref_diag = kernel.block_diag(reference).to(torch.float64)
    out = []
    for i, j in row_tiles(len(X), len(reference)):
        rows = X[i:j] if isinstance(X, torch.Tensor) else take(X, np.arange(i, j))
        K = gram(kernel, rows, reference).to(torch.float64)
        scale = torch.sqrt(kernel.block_diag(rows).to(torch.float64)[:, None] * ref_diag[None, :])
        S = torch.where(scale > 0, K / torch.where(scale > 0, scale, 1.0), torch.zeros_like(K))
        out.append(S.max(1).values)
    return torch.cat(out)
