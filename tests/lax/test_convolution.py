"""Convolution: JAX's values for typical configurations, the wrappers' conventions, the
transposes by the dot-product test, batching with groups, the lowering and the errors.

Expected values were computed once with JAX 0.10.2 on the CPU from the small integer-valued
inputs built below, and are written literally.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax
from jaxlite.lax.convolution import conv_general_dilated_p, dim_labels
from jaxlite.test_util import check_grads

X = (np.arange(2 * 2 * 4 * 3).reshape(2, 2, 4, 3) % 5 - 2).astype(np.float32)
W = (np.arange(4 * 1 * 2 * 2).reshape(4, 1, 2, 2) % 3 - 1).astype(np.float32)
W2 = (np.arange(3 * 2 * 2 * 2).reshape(3, 2, 2, 2) % 3 - 1).astype(np.float32)
XN = np.transpose(X, (0, 2, 3, 1))
WN = np.transpose(W2, (2, 3, 1, 0))

# strides_same: shape (2, 3, 2, 3)
STRIDES_SAME = np.array(
    [[[[4, 8, -2], [8, -3, -3]], [[0, -5, -2], [-5, -5, 4]], [[-4, -3, 4], [-3, 8, -1]]], [[[-5,
    4, 4], [4, 8, -2]], [[10, 0, -3], [0, -5, -2]], [[-5, -4, -1], [-4, -3, 4]]]], np.float32)

# dilations: shape (2, 3, 7, 2)
DILATIONS = np.array(
    [[[[-2, -2], [4, 1], [5, 3], [-1, -2], [-3, -2], [-1, 0], [4, -2]], [[-2, 1], [-2, -2], [-4,
    -1], [5, 3], [4, 2], [-3, -2], [-3, 0]], [[4, 1], [-2, 1], [-1, -2], [-4, -1], [-1, 0], [4,
    2], [-1, 2]]], [[[4, -2], [-1, 2], [-4, 3], [-1, -1], [-2, -2], [4, 1], [5, 3]], [[-3, 0],
    [4, -2], [5, -2], [-4, 3], [-2, 1], [-2, -2], [-4, -1]], [[-1, 2], [-3, 0], [-1, -1], [5,
    -2], [4, 1], [-2, 1], [-1, -2]]]], np.float32)

# groups: shape (2, 4, 3, 1)
GROUPS = np.array(
    [[[[1], [-2], [5]], [[-2], [3], [-2]], [[-2], [1], [-1]], [[-1], [1], [-2]]], [[[-3], [-1],
    [1]], [[-2], [3], [-2]], [[-3], [5], [-2]], [[5], [-3], [-1]]]], np.float32)

# batch_groups: shape (1, 2, 4, 3)
BATCH_GROUPS = np.array(
    [[[[2, -1, -2], [-1, 4, 8], [-1, -4, -5], [-1, 8, -3]], [[3, -3, -2], [-4, 10, 0], [-2, -5,
    0], [5, 0, -5]]]], np.float32)

# nhwc: shape (2, 4, 3, 3)
NHWC = np.array(
    [[[[4, 0, -4], [8, -5, -3], [-2, -2, 4]], [[-4, 0, 4], [-5, 10, -5], [5, -4, -1]], [[8, -5,
    -3], [-3, -5, 8], [-3, 4, -1]], [[-2, 5, -3], [3, -1, -2], [1, -2, 1]]], [[[-5, 10, -5], [4,
    0, -4], [4, -3, -1]], [[-3, -5, 8], [-4, 0, 4], [-4, 5, -1]], [[4, 0, -4], [8, -5, -3], [-2,
    -2, 4]], [[-2, 1, 1], [-2, 5, -3], [2, -2, 0]]]], np.float32)

# conv_transpose: shape (1, 8, 6, 3)
CONV_TRANSPOSE = np.array(
    [[[[2, -2, 0], [-2, 0, 2], [1, -2, 1], [-2, 1, 1], [0, -2, 2], [-2, 2, 0]], [[0, 2, -2], [2,
    -2, 0], [1, 1, -2], [1, -2, 1], [2, 0, -2], [0, -2, 2]], [[-1, 3, -2], [3, -2, -1], [-2, 3,
    -1], [3, -1, -2], [2, -2, 0], [-2, 0, 2]], [[-2, -1, 3], [-1, 3, -2], [-1, -2, 3], [-2, 3,
    -1], [0, 2, -2], [2, -2, 0]], [[1, -2, 1], [-2, 1, 1], [0, -2, 2], [-2, 2, 0], [-1, 3, -2],
    [3, -2, -1]], [[1, 1, -2], [1, -2, 1], [2, 0, -2], [0, -2, 2], [-2, -1, 3], [-1, 3, -2]],
    [[-2, 3, -1], [3, -1, -2], [2, -2, 0], [-2, 0, 2], [1, -2, 1], [-2, 1, 1]], [[-1, -2, 3],
    [-2, 3, -1], [0, 2, -2], [2, -2, 0], [1, 1, -2], [1, -2, 1]]]], np.float32)

# conv_transpose_tk: shape (1, 8, 4, 3)
CONV_TRANSPOSE_TK = np.array(
    [[[[2, -2, 0], [1, 0, -1], [1, -1, 0], [2, 0, -2]], [[-2, 0, 2], [0, -1, 1], [-1, 0, 1], [0,
    -2, 2]], [[-1, 3, -2], [-4, 2, 2], [1, -4, 3], [0, 2, -2]], [[3, -2, -1], [2, 2, -4], [-4,
    3, 1], [2, -2, 0]], [[1, -2, 1], [1, -1, 0], [1, 3, -4], [-2, -1, 3]], [[-2, 1, 1], [-1, 0,
    1], [3, -4, 1], [-1, 3, -2]], [[-2, 3, -1], [1, -4, 3], [1, 0, -1], [1, 1, -2]], [[3, -1,
    -2], [-4, 3, 1], [0, -1, 1], [1, -2, 1]]]], np.float32)


def assert_equal(actual, expected):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------ JAX's values

CONFIGS = {
    "strides_same": (lambda: lax.conv_general_dilated(X, W2, (2, 1), "SAME"), STRIDES_SAME),
    "dilations": (lambda: lax.conv_general_dilated(
        X, W2, (1, 1), ((1, 0), (0, 1)), lhs_dilation=(2, 1), rhs_dilation=(1, 2)), DILATIONS),
    "groups": (lambda: lax.conv_general_dilated(X, W, (1, 2), "VALID", feature_group_count=2),
               GROUPS),
    "batch_groups": (lambda: lax.conv_general_dilated(X, W2[:2], (1, 1), "SAME_LOWER",
                                                      batch_group_count=2), BATCH_GROUPS),
    "nhwc": (lambda: lax.conv_general_dilated(
        XN, WN, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), NHWC),
    "conv_transpose": (lambda: lax.conv_transpose(XN[:1], WN, (2, 2), "SAME"), CONV_TRANSPOSE),
    "conv_transpose_tk": (lambda: lax.conv_transpose(
        XN[:1], np.transpose(WN, (0, 1, 3, 2)), (2, 1), "VALID", transpose_kernel=True),
        CONV_TRANSPOSE_TK),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_values_match_jax(name):
    fun, expected = CONFIGS[name]
    assert_equal(fun(), expected)


@pytest.mark.parametrize("name", ["strides_same", "dilations", "groups", "batch_groups"])
def test_jit_matches_jax(name):
    fun, expected = CONFIGS[name]
    assert_equal(jax.jit(fun)(), expected)


def test_conv_and_conv_with_general_padding_use_nchw():
    assert_equal(lax.conv(X, W2, (2, 1), "SAME"), STRIDES_SAME)
    assert_equal(lax.conv_with_general_padding(X, W2, (1, 1), ((1, 0), (0, 1)), (2, 1),
                                               (1, 2)), DILATIONS)


def test_dimension_numbers_from_strings():
    got = lax.conv_dimension_numbers((1, 2, 3, 4), (4, 2, 3, 5), ("NHWC", "HWIO", "NHWC"))
    assert got == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    got = lax.conv_dimension_numbers((1, 2, 3), (4, 2, 3), ("NCH", "OIH", "NHC"))
    assert got == lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 2, 1))
    assert lax.conv_dimension_numbers((1, 2, 3), (4, 2, 3), None) == \
        lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))


def test_padtype_to_pads():
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 4), "SAME") == [(1, 1), (0, 0)]
    assert lax.padtype_to_pads((4,), (2,), (1,), "SAME") == [(0, 1)]
    assert lax.padtype_to_pads((4,), (2,), (1,), "SAME_LOWER") == [(1, 0)]
    assert lax.padtype_to_pads((4,), (2,), (1,), "VALID") == [(0, 0)]


# ------------------------------------------------------------------------ transposes

TRANSPOSE_CASES = [
    dict(window_strides=(2, 1), padding=((1, 2), (0, 1)), lhs_dilation=(1, 2),
         rhs_dilation=(2, 1)),
    dict(window_strides=(3, 2), padding=((0, -1), (2, 0)), feature_group_count=2),
    dict(window_strides=(1, 2), padding=((1, 1), (1, 0)), batch_group_count=2,
         rhs_dilation=(1, 2)),
    dict(window_strides=(2, 2), padding=((0, 0), (1, 1)), lhs_dilation=(2, 3),
         dimension_numbers=("NHWC", "OIHW", "CNWH")),
]


def _operands(params, rng):
    numbers = lax.conv_dimension_numbers((0,) * 4, (0,) * 4,
                                         params.get("dimension_numbers"))
    groups = params.get("feature_group_count", 1)
    lhs = [0] * 4
    rhs = [0] * 4
    for d, n in zip(numbers.lhs_spec, (4, 2 * groups, 6, 5)):
        lhs[d] = n
    for d, n in zip(numbers.rhs_spec, (4, 2, 2, 3)):
        rhs[d] = n
    return rng.standard_normal(lhs), rng.standard_normal(rhs)


@pytest.mark.parametrize("index", range(len(TRANSPOSE_CASES)))
def test_transposes_pass_the_dot_product_test(index):
    params = TRANSPOSE_CASES[index]
    rng = np.random.default_rng(index)
    with jax.enable_x64(True):
        lhs, rhs = _operands(params, rng)
        out = lax.conv_general_dilated(lhs, rhs, **params)
        ct = rng.standard_normal(np.shape(out))
        _, pull_lhs = jax.vjp(lambda a: lax.conv_general_dilated(a, rhs, **params), lhs)
        _, pull_rhs = jax.vjp(lambda b: lax.conv_general_dilated(lhs, b, **params), rhs)
        (lhs_ct,), (rhs_ct,) = pull_lhs(ct), pull_rhs(ct)
        total = float(np.sum(np.asarray(out) * ct))
        assert np.isclose(float(np.sum(np.asarray(lhs_ct) * lhs)), total, rtol=1e-10)
        assert np.isclose(float(np.sum(np.asarray(rhs_ct) * rhs)), total, rtol=1e-10)
        check_grads(lambda a, b: lax.conv_general_dilated(a, b, **params), (lhs, rhs),
                    order=1, modes=("rev",))


# ------------------------------------------------------------------------ batching

@pytest.mark.parametrize("groups", [dict(), dict(feature_group_count=2),
                                    dict(batch_group_count=2)])
def test_vmap_with_groups_matches_a_loop(groups):
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((3, 2, 4, 5, 4)).astype(np.float32)
    in_features = 2 if "feature_group_count" in groups else 4
    rhs = rng.standard_normal((3, 4, in_features, 2, 2)).astype(np.float32)

    def fun(a, b):
        return lax.conv_general_dilated(a, b, (1, 2), "SAME", **groups)
    got = jax.vmap(fun, in_axes=(0, 0))(lhs, rhs)
    expected = np.stack([np.asarray(fun(a, b)) for a, b in zip(lhs, rhs)])
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)
    got = jax.vmap(fun, in_axes=(None, 0))(lhs[0], rhs)
    expected = np.stack([np.asarray(fun(lhs[0], b)) for b in rhs])
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)
    got = jax.vmap(fun, in_axes=(1, None), out_axes=2)(np.swapaxes(lhs, 0, 1), rhs[0])
    expected = np.stack([np.asarray(fun(a, rhs[0])) for a in lhs], axis=2)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------ lowering, errors

def test_dim_labels_text():
    numbers = lax.conv_dimension_numbers((1,) * 4, (1,) * 4, ("NHWC", "HWIO", "NHWC"))
    assert dim_labels(numbers) == "b01f_01io->b01f"
    assert dim_labels(lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))) == \
        "bf0_oi0->bf0"


def test_lowered_text_names_the_convolution():
    text = jax.jit(lambda a, b: lax.conv_general_dilated(a, b, (2, 1), "SAME")).lower(
        X, W2).as_text()
    assert "convolution(" in text and "dim_labels=bf01_oi01->bf01" in text


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="feature_group_count"):
        lax.conv_general_dilated(X, W2, (1, 1), "VALID", feature_group_count=2)
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(X, W2, (1, 1), "SAME", lhs_dilation=(2, 1))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv_general_dilated(X, W2.astype(np.float16), (1, 1), "VALID")
    with pytest.raises(TypeError, match="convolution requires lhs and rhs ndim to be equal"):
        lax.conv_general_dilated(X, W2[0], (1, 1), "VALID")
    with pytest.raises(RuntimeError, match="Unrecognized padding"):  # JAX's type
        lax.conv_general_dilated(X, W2, (1, 1), "FULL")
    with pytest.raises(ValueError, match="window_strides"):
        lax.conv_general_dilated(X, W2, (1,), "VALID")


def test_primitive_is_registered_with_every_rule():
    for rule in ("abstract_eval", "reference", "jvp", "transpose", "batch", "lower"):
        assert getattr(conv_general_dilated_p, rule, None) is not None
