"""conv_general_dilated_patches and conv_general_dilated_local against a numpy reference
written from their definitions, in several layouts, and against values of JAX 0.10.2
(/tmp/jaxvenv/bin/python, the same calls: the first entries and sums below)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 5, 6)).astype(np.float32)  # NCHW


def reference_patches(x, filter_shape, strides, pads, lhs_dilation=(1, 1),
                      rhs_dilation=(1, 1)):
    """NCHW patches: out[n, c * window + k, i, j] = x at window position k of (i, j)."""
    n, c, h, w = x.shape
    dilated = np.zeros((n, c, (h - 1) * lhs_dilation[0] + 1, (w - 1) * lhs_dilation[1] + 1),
                       x.dtype)
    dilated[:, :, ::lhs_dilation[0], ::lhs_dilation[1]] = x
    padded = np.pad(dilated, [(0, 0), (0, 0), *pads])
    extent = [(f - 1) * d + 1 for f, d in zip(filter_shape, rhs_dilation)]
    out_h = (padded.shape[2] - extent[0]) // strides[0] + 1
    out_w = (padded.shape[3] - extent[1]) // strides[1] + 1
    window = int(np.prod(filter_shape))
    out = np.zeros((n, c * window, out_h, out_w), x.dtype)
    for i, j in itertools.product(range(out_h), range(out_w)):
        for k, (a, b) in enumerate(itertools.product(*map(range, filter_shape))):
            out[:, np.arange(c) * window + k, i, j] = padded[
                :, :, i * strides[0] + a * rhs_dilation[0], j * strides[1] + b * rhs_dilation[1]]
    return out


@pytest.mark.parametrize("compiled", [False, True])
def test_patches_nchw(compiled):
    def run(f):
        return np.asarray((jax.jit(f) if compiled else f)(X))
    np.testing.assert_array_equal(
        run(lambda x: lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID")),
        reference_patches(X, (2, 3), (1, 1), [(0, 0), (0, 0)]))
    out = run(lambda x: lax.conv_general_dilated_patches(x, (2, 2), (2, 1), "SAME",
                                                           rhs_dilation=(1, 2)))
    assert out.shape == (2, 12, 3, 6)  # JAX 0.10.2
    np.testing.assert_array_equal(
        out, reference_patches(X, (2, 2), (2, 1), [(0, 1), (1, 1)], rhs_dilation=(1, 2)))


def test_patches_other_layouts_match_jax():
    xn = np.transpose(X, (0, 2, 3, 1))
    out = lax.conv_general_dilated_patches(xn, (3, 2), (1, 2), [(1, 0), (0, 1)],
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
    expected = reference_patches(X, (3, 2), (1, 2), [(1, 0), (0, 1)])
    np.testing.assert_array_equal(out, np.transpose(expected, (0, 2, 3, 1)))
    out = lax.conv_general_dilated_patches(xn, (3, 2), (1, 1), [(0, 1), (1, 1)],
                                           lhs_dilation=(2, 1),
                                           dimension_numbers=("NHWC", "WHOI", "CNHW"))
    assert out.shape == (18, 2, 6, 10)  # JAX 0.10.2
    assert abs(float(np.asarray(out).sum()) - 18.459) < 1e-3  # JAX 0.10.2 gives 18.459


def test_local_is_an_unshared_convolution():
    rhs = RNG.standard_normal((4, 3 * 6, 4, 4)).astype(np.float32)
    out = lax.conv_general_dilated_local(X, rhs, (1, 1), "VALID", (2, 3))
    patches = reference_patches(X, (2, 3), (1, 1), [(0, 0), (0, 0)])
    np.testing.assert_allclose(out, np.einsum("npij,opij->noij", patches, rhs), rtol=1e-5,
                               atol=1e-5)
    xn = np.transpose(X, (0, 2, 3, 1))
    rhs2 = RNG.standard_normal((3, 6, 3 * 6, 4)).astype(np.float32)
    out = lax.conv_general_dilated_local(xn, rhs2, (2, 1), "SAME", (2, 3),
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
    patches = reference_patches(X, (2, 3), (2, 1), [(0, 1), (1, 1)])
    np.testing.assert_allclose(out, np.einsum("npij,ijpo->nijo", patches, rhs2), rtol=1e-5,
                               atol=1e-5)
    grad = jax.grad(lambda x: lax.conv_general_dilated_local(x, rhs, (1, 1), "VALID",
                                                             (2, 3)).sum())(jnp.asarray(X))
    assert grad.shape == X.shape
    with pytest.raises(ValueError, match="String padding is not implemented for transposed"):
        lax.conv_general_dilated_patches(X, (2, 2), (1, 1), "VALID", lhs_dilation=(2, 1))
