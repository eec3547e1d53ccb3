r"""Transformation invariance by finite differences (Ma et al., ICML 2020, section 7.1).

The derivative ``d/d alpha f(I(alpha))`` at ``alpha = 0`` of a function along a
transformation of the input is a bounded linear functional (section 2.1), represented by
``k(., I(alpha)) - k(., x)`` up to the factor ``1 / alpha`` when replaced by a finite
difference.  The experiments use "finite difference for all methods, with two pixels for
shifting, 10 degrees for rotation, and 0.1 unit for scaling"; the representer of
transformation ``T`` at training point ``x_j`` is therefore

.. math:: g_{T, j} = \tilde k_{T(x_j)} - \tilde k_{x_j}.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from kernelkit.invariance._base import FeatureMap, Invariance, Representers
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import check_random_state
from kernelkit.utils._validation import check_int, check_positive


class TransformInvariance(Invariance):
    r"""Invariance to input transformations ``T_1, ..., T_K`` by finite differences.

    Representers ``g_{t, j} = k~_{T_t(x_j)} - k~_{x_j}`` for every training point ``x_j`` and
    transformation ``T_t`` (section 7.1; see the module docstring).

    Parameters
    ----------
    transforms : sequence of callables
        Each maps a batch of inputs ``(n, n_features)`` (a float64 NumPy array) to the
        transformed batch of the same shape (array-like or tensor).
    names : sequence of str, optional
        A name per transform (for reports); ``transform_0, ...`` by default.
    n_points : int, optional
        Use a random subset of this many training points for the representers (all by
        default); ``random_state`` seeds the draw.

    Raises
    ------
    InputError
        Empty ``transforms``, a non-callable, or a transform returning the wrong shape
        (when the representers are built).
    """

    def __init__(
        self,
        transforms: Sequence[Callable[[Any], Any]],
        names: Sequence[str] | None = None,
        *,
        n_points: int | None = None,
        random_state: Any = None,
    ):
        self.transforms = transforms
        self.names = names
        self.n_points = n_points
        self.random_state = random_state

    def subset(self, n: int) -> np.ndarray:
        """Indices of the training points that get representers (sorted)."""
        if self.n_points is None or self.n_points >= n:
            return np.arange(n)
        size = check_int(self.n_points, name="n_points")
        return np.sort(check_random_state(self.random_state).choice(n, size, replace=False))

    def _checked_transforms(self) -> list[Callable[[Any], Any]]:
        transforms = list(self.transforms) if self.transforms is not None else []
        if not transforms:
            raise InputError(
                "transforms: expected at least one transformation (a callable mapping a batch "
                "of inputs to the transformed batch), got an empty invariance set"
            )
        for i, t in enumerate(transforms):
            if not callable(t):
                raise InputError(f"transforms[{i}]: expected a callable, got {type(t).__name__}")
        return transforms

    def transformed(self, X: torch.Tensor) -> list[torch.Tensor]:
        """``T_t(X)`` for every transform, checked to keep the shape of ``X``."""
        out = []
        for i, t in enumerate(self._checked_transforms()):
            result = t(X.detach().cpu().numpy())
            shape = tuple(getattr(result, "shape", np.shape(result)))
            if shape != tuple(X.shape):
                raise InputError(
                    f"transforms[{i}]: expected the transformed batch to keep the input shape "
                    f"{tuple(X.shape)}, got shape {shape}"
                )
            out.append(
                torch.as_tensor(np.ascontiguousarray(result), dtype=X.dtype, device=X.device)
            )
        return out

    def representers(self, embed: FeatureMap, X: torch.Tensor, y: Any = None) -> Representers:
        """Representers ``k~_{T_t(x_j)} - k~_{x_j}``, ordered transform-major."""
        index = torch.as_tensor(self.subset(X.shape[0]), device=X.device)
        X = X[index]
        base = embed(X)
        rows = [embed(XT) - base for XT in self.transformed(X)]
        n = X.shape[0]
        left = torch.cat(rows)[:, None, :]
        point = index.repeat(len(rows))
        kind = torch.arange(len(rows), device=X.device).repeat_interleave(n)
        return Representers(left=left, right=None, point=point, kind=kind)


def affine_images(images: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Apply 2-D affine maps to images ``(n, H, W)`` by bilinear resampling, zero outside.

    ``theta`` (``2 x 3``) maps *output* normalised coordinates to *input* ones, as in
    :func:`torch.nn.functional.affine_grid` (``align_corners=False``: pixel centres at
    ``(2 i + 1) / W - 1``), so the centre of the image is fixed by a linear map.
    """
    n = images.shape[0]
    grid = F.affine_grid(theta.expand(n, 2, 3), [n, 1, *images.shape[1:]], align_corners=False)
    return F.grid_sample(
        images[:, None], grid, mode="bilinear", padding_mode="zeros", align_corners=False
    )[:, 0]


class ImageTransformInvariance(TransformInvariance):
    r"""The four image transformations of section 7.1, on flattened images.

    Rotation by ``angle`` degrees about the image centre, isotropic scaling by ``1 + scale``,
    and shifts by ``shift`` pixels to the left and upwards, each a bilinear resampling with
    zeros outside the image; the representers are the finite differences of
    :class:`TransformInvariance`.  (The sets are symmetric, so ``+-angle`` is implied.)

    Parameters
    ----------
    shape : tuple of int
        Image shape ``(height, width)``; inputs have ``height * width`` features, row-major.
    angle : float
        Rotation in degrees (10 in the paper).
    scale : float
        Relative scaling (0.1 in the paper).
    shift : float
        Shift in pixels (2 in the paper).
    transforms : sequence of str
        Subset and order of ``("rotate", "scale", "shift_left", "shift_up")``.
    n_points, random_state : int or None, int, Generator or None
        As in :class:`TransformInvariance`.
    """

    KINDS = ("rotate", "scale", "shift_left", "shift_up")

    def __init__(
        self,
        shape: tuple[int, int] = (28, 28),
        *,
        angle: float = 10.0,
        scale: float = 0.1,
        shift: float = 2.0,
        transforms: Sequence[str] = KINDS,
        n_points: int | None = None,
        random_state: Any = None,
    ):
        self.shape = shape
        self.angle = angle
        self.scale = scale
        self.shift = shift
        self.transforms = transforms
        self.names = None
        self.n_points = n_points
        self.random_state = random_state

    def _thetas(self) -> list[torch.Tensor]:
        if len(tuple(self.shape)) != 2:
            raise InputError(f"shape: expected (height, width), got {self.shape!r}")
        h, w = (check_int(s, name="shape") for s in self.shape)
        check_positive(self.scale + 1.0, name="1 + scale")
        kinds = list(self.transforms)
        if not kinds:
            raise InputError(
                f"transforms: expected a non-empty subset of {self.KINDS}, got an empty set"
            )
        thetas = []
        for kind in kinds:
            if kind == "rotate":
                a = math.radians(float(self.angle))
                # output pixel (x, y) samples the input at R(-a) (x, y); y points down
                theta = [
                    [math.cos(a), -math.sin(a) * h / w, 0.0],
                    [math.sin(a) * w / h, math.cos(a), 0.0],
                ]
            elif kind == "scale":
                c = 1.0 / (1.0 + float(self.scale))
                theta = [[c, 0.0, 0.0], [0.0, c, 0.0]]
            elif kind == "shift_left":
                theta = [[1.0, 0.0, 2.0 * float(self.shift) / w], [0.0, 1.0, 0.0]]
            elif kind == "shift_up":
                theta = [[1.0, 0.0, 0.0], [0.0, 1.0, 2.0 * float(self.shift) / h]]
            else:
                raise InputError(f"transforms: expected names among {self.KINDS}, got {kind!r}")
            thetas.append(torch.tensor(theta, dtype=torch.float64))
        return thetas

    def transformed(self, X: torch.Tensor) -> list[torch.Tensor]:
        """The transformed images, flattened like ``X``."""
        thetas = self._thetas()
        h, w = self.shape
        if X.shape[1] != h * w:
            raise InputError(
                f"X: expected {h * w} features (images of shape {tuple(self.shape)}), "
                f"got {X.shape[1]}"
            )
        images = X.reshape(-1, h, w)
        return [
            affine_images(images, theta.to(X.dtype).to(X.device)).reshape(X.shape)
            for theta in thetas
        ]
