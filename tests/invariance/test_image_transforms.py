"""ImageTransformInvariance: the four transformations of section 7.1 against scipy.ndimage."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage
import torch

from kernelkit.invariance import ImageTransformInvariance
from kernelkit.utils._errors import InputError


@pytest.fixture
def images():
    rng = np.random.default_rng(0)
    img = np.zeros((3, 12, 10))
    img[:, 3:9, 2:8] = rng.random((3, 6, 6))
    return img


def _transformed(images, **kwargs):
    inv = ImageTransformInvariance(shape=images.shape[1:], **kwargs)
    X = torch.as_tensor(images.reshape(len(images), -1))
    return [t.numpy().reshape(images.shape) for t in inv.transformed(X)]


def test_shifts_move_pixels_left_and_up(images):
    left, up = _transformed(images, transforms=("shift_left", "shift_up"), shift=2)
    expected_left = np.zeros_like(images)
    expected_left[:, :, :-2] = images[:, :, 2:]
    expected_up = np.zeros_like(images)
    expected_up[:, :-2, :] = images[:, 2:, :]
    np.testing.assert_allclose(left, expected_left, atol=1e-12)
    np.testing.assert_allclose(up, expected_up, atol=1e-12)


def test_rotation_matches_scipy_bilinear_rotation(images):
    square = np.zeros((3, 12, 12))
    square[:, :, 1:11] = images
    (rot,) = _transformed(square, transforms=("rotate",), angle=10.0)
    expected = np.stack([scipy.ndimage.rotate(im, 10.0, reshape=False, order=1) for im in square])
    if np.abs(rot - expected).max() > 1e-6:  # the sense of rotation is a convention
        expected = np.stack(
            [scipy.ndimage.rotate(im, -10.0, reshape=False, order=1) for im in square]
        )
    np.testing.assert_allclose(rot[:, 2:-2, 2:-2], expected[:, 2:-2, 2:-2], atol=1e-6)


def test_scaling_matches_scipy_zoom_about_the_centre(images):
    (scaled,) = _transformed(images, transforms=("scale",), scale=0.1)
    h, w = images.shape[1:]
    centre = np.array([(h - 1) / 2, (w - 1) / 2])
    matrix = np.eye(2) / 1.1
    offset = centre - matrix @ centre
    expected = np.stack(
        [scipy.ndimage.affine_transform(im, matrix, offset=offset, order=1) for im in images]
    )
    np.testing.assert_allclose(scaled[:, 1:-1, 1:-1], expected[:, 1:-1, 1:-1], atol=1e-6)


def test_image_invariance_errors():
    X = torch.zeros(2, 12)
    with pytest.raises(InputError, match="X: expected 30 features"):
        ImageTransformInvariance(shape=(5, 6)).transformed(X)
    with pytest.raises(InputError, match="transforms: expected names"):
        ImageTransformInvariance(shape=(3, 4), transforms=("flip",)).transformed(X)
    with pytest.raises(InputError, match="empty"):
        ImageTransformInvariance(shape=(3, 4), transforms=()).transformed(X)
