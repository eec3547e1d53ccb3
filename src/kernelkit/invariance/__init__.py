r"""Convex invariant representations in semi-inner-product spaces (Ma et al., ICML 2020).

An invariance written as a semi-norm ``R(f) = sup_{g in S} <f, g>`` (Proposition 1) warps
the RKHS of a kernel into a semi-inner-product space; the kernel representers ``G_x`` of that
space, embedded in Euclidean space by the convex polar problem (28), are features that carry
the invariance: a plain linear model on them respects it.

Public API::

    from kernelkit import InvariantEmbedding
    from kernelkit.invariance import (TransformInvariance, ImageTransformInvariance,
                                      MixupInvariance, LabelLogicInvariance)
    from kernelkit.kernels import Gaussian

    emb = InvariantEmbedding(
        kernel=Gaussian(sigma=5.0),
        invariances=[ImageTransformInvariance(shape=(28, 28))],
        n_centers=None,              # Nyström landmarks: all training points by default
        aggregate="max",             # "max" (s.i.p.) or "sum" (quadratic = kernel warping)
        reading="pairs",             # where the max is taken (section 7.1):
                                     #   "pairs"      max over every (transform, point) (eq. 28)
                                     #   "transforms" max over transforms of the sum over points
                                     #   "sum_of_max" sum over points of the max over transforms
        strength=1.0,                # s in J(v) = ||v||^2 + s R(v)^2
        strength_unit="spectral",    # s = strength / sup_{||v||=1} R(v)^2
        basis="auto",                # centres: landmarks + transformed inputs (input invariances)
        features="auto",             # M^-1/2 k~ (metric map; iota for "transforms")
        tol=1e-8,                    # certified relative duality gap of every point
    )
    Z = emb.fit(X_train).transform(X_test)   # Euclidean features for any linear model
    emb.certificates_                         # relative gaps of the training points
    result = emb.embed(X_test)                # InvariantFeatures: features, gap, primal, dual
    emb.sip_kernel(X, Y)                      # G(x, y) = <iota(G_x), k~_y>; "sum": eq. (1)

Dual RRM (section 3, appendix D) on the same semi-norm::

    result = fit_dual_rrm(emb, X_train, y_pm1, lam=1e-3, loss="logistic")
    scores = emb.nystrom_features(X_test) @ result.iota

Joint invariances (``MixupInvariance``, ``LabelLogicInvariance``) need ``y`` in ``fit`` and
give one representation per (x, label): ``transform`` returns ``(n, n_labels, d * n_labels)``
and :func:`kernelkit.invariance._joint.joint_scores` turns a linear model's weights into
per-label scores.
"""

from kernelkit._moved import moved_names
from kernelkit.invariance._base import Invariance
from kernelkit.invariance._dual import fit_dual_rrm
from kernelkit.invariance._embedding import (  # noqa: F401 (vocabularies, importable, not in __all__)
    AGGREGATES,
    FEATURE_MAPS,
    READINGS,
    InvariantFeatures,
    SemiNorm,
)
from kernelkit.invariance._joint import LabelLogicInvariance, MixupInvariance
from kernelkit.invariance._transforms import (
    ImageTransformInvariance,
    TransformInvariance,
    affine_images,
)

__all__ = [
    "ImageTransformInvariance",
    "Invariance",
    "InvariantFeatures",
    "LabelLogicInvariance",
    "MixupInvariance",
    "SemiNorm",
    "TransformInvariance",
    "affine_images",
    "fit_dual_rrm",
]

# Public before 0.2; importable from here for one more release, with a FutureWarning.
__getattr__ = moved_names(
    __name__,
    {
        "Representers": "kernelkit.invariance._base",
        "assemble": "kernelkit.invariance._embedding",
        "embed_points": "kernelkit.invariance._embedding",
        "joint_scores": "kernelkit.invariance._joint",
        "seminorm_scale": "kernelkit.invariance._embedding",
    },
)
