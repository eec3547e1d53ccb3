"""Image CKN layers against the maths of course part 3, sections 6-8.

Oracles: explicit loops over patch positions, the exact homogeneous patch kernel, the
pooling operator written as a dense matrix (its spectral norm), and the translation bound
``||Phi(L_c x) - Phi(x)|| <= ||L_c h - h||_1 sqrt(|S_1| |S_2|) ||x||`` of section 8.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from kernelkit.kernels._dot_product import kappa_exp, kappa_inverse_polynomial
from kernelkit.models._ckn import CKN, CKNLayer, extract_patches, gaussian_filter, gaussian_pool
from kernelkit.models._ckn_train import fit_image_anchors
from kernelkit.models._spherical_kmeans import spherical_kmeans
from kernelkit.solvers import symmetric_eigh

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _images(n=3, c=2, h=5, w=6, seed=0):
    return torch.as_tensor(np.random.default_rng(seed).standard_normal((n, c, h, w)))


@pytest.mark.parametrize("patch", [(3, 3), (2, 3), (1, 1), (4, 2)])
def test_extract_patches_matches_a_loop_over_positions(patch):
    x = _images()
    P = extract_patches(x, patch)
    ph, pw = patch
    n, c, h, w = x.shape
    top, left = (ph - 1) // 2, (pw - 1) // 2
    for i, j in itertools.product(range(h), range(w)):
        expected = torch.zeros(n, c, ph, pw, dtype=x.dtype)
        for a, b in itertools.product(range(ph), range(pw)):
            r, s = i + a - top, j + b - left
            if 0 <= r < h and 0 <= s < w:
                expected[:, :, a, b] = x[:, :, r, s]
        torch.testing.assert_close(P[:, :, i * w + j], expected.reshape(n, -1), rtol=0, atol=0)


def _exact_patch_kernel(P, Q, kappa):
    """``||p|| ||q|| kappa(<p, q> / (||p|| ||q||))`` between the rows of P and Q."""
    out = torch.zeros(P.shape[0], Q.shape[0], dtype=P.dtype)
    for i, j in itertools.product(range(P.shape[0]), range(Q.shape[0])):
        np_, nq = P[i].norm(), Q[j].norm()
        if np_ > 0 and nq > 0:
            out[i, j] = np_ * nq * kappa(torch.dot(P[i], Q[j]) / (np_ * nq))
    return out


@pytest.mark.parametrize("kappa", ["exp", "inverse_polynomial"])
def test_nystrom_layer_with_all_patches_as_anchors_is_the_exact_patch_kernel(kappa):
    x = _images(n=2, c=1, h=4, w=3, seed=1)
    layer = CKNLayer(1, 4 * 3 * 2, patch_size=3, subsampling=1, kappa=kappa, sigma=0.8)
    patches = extract_patches(x, (3, 3)).permute(0, 2, 1).reshape(-1, 9)
    layer.set_anchors(patches)
    out = layer(x).permute(0, 2, 3, 1).reshape(-1, layer.n_filters)  # psi(p) per position
    fn = (lambda u: kappa_exp(u, 1 / 0.8**2)) if kappa == "exp" else kappa_inverse_polynomial
    K = _exact_patch_kernel(patches, patches, fn)
    torch.testing.assert_close(out @ out.T, K, rtol=0, atol=1e-8 * float(K.abs().max()))


def test_layer_is_homogeneous_and_equals_the_explicit_unfold_gemm():
    x = _images(n=2, c=3, h=6, w=5)
    layer = CKNLayer(3, 7, patch_size=(3, 2), subsampling=2, shift=0.01)
    torch.testing.assert_close(layer(2.5 * x), 2.5 * layer(x))
    P = extract_patches(x, (3, 2))
    norms = P.norm(dim=1, keepdim=True)
    explicit = norms * kappa_exp((layer.anchors() @ P) / norms, 1 / 0.6**2)
    torch.testing.assert_close(layer.kernel_map(x).flatten(2), explicit)


def _pool_matrix(shape, subsampling):
    c, h, w = shape
    eye = torch.eye(c * h * w, dtype=torch.float64).reshape(-1, c, h, w)
    return gaussian_pool(eye, subsampling).reshape(c * h * w, -1).T


@pytest.mark.parametrize("subsampling", [(2, 2), (3, 2), (1, 4), (5, 5)])
def test_pooling_operator_norm_is_at_most_one(subsampling):
    A = _pool_matrix((2, 9, 8), subsampling)
    top = float(symmetric_eigh(A @ A.T).values.max()) ** 0.5
    assert top <= 1.0 + 1e-12
    h = gaussian_filter(subsampling[0], torch.float64, torch.device("cpu"))
    assert abs(float(h.sum()) - 1.0) < 1e-14 and len(h) == 2 * subsampling[0] + 1


def test_pooling_subsamples_to_ceil_size():
    assert gaussian_pool(_images(h=7, w=9), (2, 3)).shape[2:] == (4, 3)


def _shift(x, c):
    return torch.roll(x, shifts=c, dims=3)


@pytest.mark.parametrize("stride", [2, 4])
def test_translation_stability_bound(stride):
    """Part 3, section 8: ``||Phi(L_c x) - Phi(x)|| <= ||L_c A - A|| ||M_2 P_2 M_1 P_1 x||``.

    Layers without pooling commute with translations (checked); the last pooling ``A`` has
    stride 1 and the Gaussian filter ``h`` of scale ``s / sqrt(2)``, so
    ``||L_c A - A|| <= ||L_c h - h||_1`` (Young) ``<= 2 c max h`` (total variation of a
    unimodal filter, the discrete ``C c / sigma``), and ``||M P y|| <= sqrt(|S|) ||y||``
    (``||psi(z)|| <= ||z||``, each pixel lies in ``|S|`` patches).  Images have a zero border
    wider than the receptive field, so zero padding does not break equivariance.
    """
    rng = np.random.default_rng(3)
    x = torch.zeros(4, 1, 24, 24, dtype=torch.float64)
    x[:, :, 8:16, 8:16] = torch.as_tensor(rng.standard_normal((4, 1, 8, 8)))
    net = CKN(1, (6, 8), (3, 3), (1, 1), sigma=0.7)
    fit_image_anchors(net, x, n_patches=200, n_iter=5, generator=torch.Generator().manual_seed(0))
    h1 = gaussian_filter(stride, torch.float64, torch.device("cpu"))
    weight = torch.outer(h1, h1).expand(8, 1, -1, -1)

    def pool(y):
        return torch.nn.functional.conv2d(y, weight, padding=stride, groups=8)

    y = net(x)
    for c in (1, 2, 3):
        moved = net(_shift(x, c))
        torch.testing.assert_close(moved, _shift(y, c))  # equivariance before pooling
        l1 = float((torch.cat([torch.zeros(c), h1]) - torch.cat([h1, torch.zeros(c)])).abs().sum())
        assert l1 <= 2 * c * float(h1.max()) + 1e-15
        diff = (pool(moved) - pool(y)).flatten(1).norm(dim=1)
        bound = l1 * 3.0 * x.flatten(1).norm(dim=1)  # sqrt(|S_1| |S_2|) = sqrt(9 * 9)
        assert bool((diff <= bound).all())
        assert bool((diff > 0).all())


def test_spherical_kmeans_recovers_separated_directions():
    gen = torch.Generator().manual_seed(0)
    centers = torch.eye(4, dtype=torch.float64)
    X = torch.cat(
        [c + 0.05 * torch.randn(50, 4, generator=gen, dtype=torch.float64) for c in centers]
    )
    C = spherical_kmeans(X, 4, n_iter=20, generator=gen)
    assert torch.allclose(C.norm(dim=1), torch.ones(4, dtype=torch.float64))
    assert sorted(C.argmax(1).tolist()) == [0, 1, 2, 3]
    assert float((C @ centers.T).max(1).values.min()) > 0.99


def test_gradient_flows_to_the_anchors_through_the_inverse_square_root():
    x = _images(n=2, c=1, h=5, w=5)
    layer = CKNLayer(1, 4, patch_size=3, subsampling=2, shift=0.01)
    Z = layer.weight.detach().clone().requires_grad_(True)
    del layer.weight

    def output(weight):
        layer.weight = weight
        return layer(x).sum()

    assert torch.autograd.gradcheck(output, (Z,), eps=1e-6, atol=1e-5)
