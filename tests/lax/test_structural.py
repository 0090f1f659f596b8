"""Edge cases of the comparison, bitwise, selection, shape and slicing primitives.

The generic record tests (test_primitives.py) check random cases; these pin the semantics
that random draws rarely reach: NaN and signed zeros, shifts past the bit width, out-of-range
selectors, derivatives at clamp ties, negative and interior padding, strided slices, bitcast
shapes, and the error messages. Expected values were taken from JAX 0.10.2 on the CPU.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax
from jaxlite.core import dtypes
from jaxlite.lax.convert import bitcast_convert_type

f32 = np.float32
BF16 = ml_dtypes.bfloat16
NAN = np.nan


def total(x):
    return lax.reduce_sum(x, tuple(range(np.ndim(x))))


def assert_array(actual, expected, dtype=None):
    actual = np.asarray(actual)
    expected = np.asarray(expected, dtype=dtype)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_array_equal(actual, expected)


# --------------------------------------------------------------------------- comparisons

@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32, np.complex64])
def test_nan_compares_unequal_to_everything(dtype):
    x = np.array([NAN, NAN, 1.0], dtype)
    y = np.array([NAN, 1.0, NAN], dtype)
    assert_array(lax.eq(x, y), [False, False, False])
    assert_array(lax.ne(x, y), [True, True, True])
    if dtype is not np.complex64:
        for op in (lax.lt, lax.le, lax.gt, lax.ge):
            assert_array(op(x, y), [False, False, False])


def test_signed_zeros_and_infinities_compare_as_ieee():
    x = np.array([-0.0, -np.inf, np.inf], f32)
    y = np.array([0.0, np.inf, np.inf], f32)
    assert_array(lax.eq(x, y), [True, False, True])
    assert_array(lax.lt(x, y), [False, True, False])
    assert_array(lax.le(x, y), [True, True, True])
    assert_array(lax.ge(x, y), [True, False, True])


def test_complex_equality_allowed_but_ordering_rejected():
    x = np.array([1 + 1j, 2j], np.complex64)
    assert_array(lax.eq(x, np.array([1 + 1j, 2], np.complex64)), [True, False])
    with pytest.raises(TypeError, match=r"lt does not accept dtype complex64"):
        lax.lt(x, x)


def test_comparison_dtype_mismatch_message():
    with pytest.raises(TypeError, match=r"lax\.eq requires arguments to have the same dtypes, "
                                        r"got float32, int32"):
        lax.eq(np.ones(2, f32), np.ones(2, np.int32))


def test_comparison_results_are_bool_and_weak_only_for_weak_operands():
    out = lax.eq(1, 2)
    assert out.dtype == np.bool_ and out.weak_type  # as in JAX
    out = lax.lt(np.ones(3, np.float16), 2)  # the scalar takes float16
    assert out.dtype == np.bool_ and not out.weak_type
    assert_array(out, [True, True, True])


def test_comparison_tangent_is_float0_zero():
    _, tangent = jax.jvp(lambda x: lax.gt(x, 0.0), (np.ones(2, f32),), (np.ones(2, f32),))
    assert np.asarray(tangent).dtype == dtypes.float0


# ------------------------------------------------------------------------------ bitwise

def test_shift_left_past_width_or_negative_gives_zero():
    x = np.array([1, 1, 1, 1, -3], np.int8)
    y = np.array([7, 8, 9, -1, 1], np.int8)
    assert_array(lax.shift_left(x, y), [-128, 0, 0, 0, -6], np.int8)
    assert_array(lax.shift_left(np.array([200] * 3, np.uint8), np.array([1, 8, 255], np.uint8)),
                 [144, 0, 0], np.uint8)
    assert_array(lax.shift_left(np.array([5], np.int32), np.array([-1], np.int32)), [0],
                 np.int32)


def test_shift_right_logical_shifts_the_bit_pattern():
    x = np.array([-128, -128, -128, -1, -3], np.int8)
    y = np.array([7, 8, 9, -1, 1], np.int8)
    assert_array(lax.shift_right_logical(x, y), [1, 0, 0, 0, 126], np.int8)
    assert_array(lax.shift_right_logical(np.array([2**31], np.uint32), np.uint32(31)), [1],
                 np.uint32)


def test_shift_right_arithmetic_fills_with_the_sign():
    x = np.array([-128, -128, -128, -1, 64], np.int8)
    y = np.array([7, 8, 9, -1, 10], np.int8)
    assert_array(lax.shift_right_arithmetic(x, y), [-1, -1, -1, -1, 0], np.int8)
    # Unsigned operands are shifted as the signed numbers with the same bits.
    assert_array(lax.shift_right_arithmetic(np.array([200] * 3, np.uint8),
                                            np.array([1, 8, 255], np.uint8)),
                 [228, 255, 255], np.uint8)


def test_population_count_counts_the_bit_pattern():
    assert_array(lax.population_count(np.array([-1, 3], np.int8)), [8, 2], np.int8)
    assert_array(lax.population_count(np.array([-1, 5, 0], np.int32)), [32, 2, 0], np.int32)
    assert_array(lax.population_count(np.uint32(2**32 - 1)), 32, np.uint32)


def test_bitwise_not_is_logical_on_bool():
    assert_array(lax.bitwise_not(np.array([True, False])), [False, True])
    assert_array(lax.bitwise_not(np.array([0, -1], np.int16)), [-1, 0], np.int16)


def test_bitwise_dtype_errors():
    with pytest.raises(TypeError, match="and does not accept dtype float32"):
        lax.bitwise_and(np.ones(2, f32), np.ones(2, f32))
    with pytest.raises(TypeError, match="shift_left does not accept dtype bool"):
        lax.shift_left(np.array([True]), np.array([True]))
    with pytest.raises(TypeError, match="population_count does not accept dtype bool"):
        lax.population_count(np.array([True]))
    with pytest.raises(TypeError, match=r"lax\.shift_left requires arguments to have the same"):
        lax.shift_left(np.ones(2, np.int32), np.ones(2, np.uint32))


def test_bitwise_of_python_ints_is_weak():
    out = lax.bitwise_and(1, 3)
    assert out.dtype == np.int32 and out.weak_type and int(out) == 1
    assert int(lax.shift_left(1, 3)) == 8


# ---------------------------------------------------------------------------- selection

def test_select_n_clamps_out_of_range_indices_like_xla_cpu():
    cases = [np.full(3, v, f32) for v in (1, 2, 3)]
    assert_array(lax.select_n(np.array([0, 5, -1], np.int32), *cases), [1, 3, 1], f32)


def test_select_n_accepts_any_integer_which_and_a_scalar_which():
    a, b = np.zeros(2, f32), np.ones(2, f32)
    assert_array(lax.select_n(np.array([0, 1], np.uint8), a, b), [0, 1], f32)
    assert_array(lax.select_n(True, a, b), [1, 1], f32)
    assert_array(lax.select(np.array([True, False]), 2.0, b), [2, 1], f32)


def test_select_n_errors():
    x = np.ones(2, f32)
    # JAX's key phrases.
    with pytest.raises(TypeError, match="^select with boolean `which` cannot have > 2 cases"):
        lax.select_n(np.array(True), x, x, x)
    with pytest.raises(TypeError, match="^select `which` must be boolean or integer type, "
                                        "got float32"):
        lax.select_n(np.array([0.0, 1.0], f32), x, x)
    with pytest.raises(TypeError, match=r"^select cases must have the same shapes, got "
                                        r"\[\(2,\), \(3,\)\]"):
        lax.select_n(np.array(True), x, np.ones(3, f32))
    with pytest.raises(TypeError, match=r"^select `which` must be scalar or have the same shape "
                                        r"as cases, got `which` shape \(3,\) but case shape "
                                        r"\(2,\)"):
        lax.select(np.array([True, False, True]), x, 1.0)
    with pytest.raises(TypeError, match=r"^clamp requires min.shape == operand.shape or "
                                        r"min.shape == \(\)"):
        lax.clamp(np.ones(3, f32), x, 1.0)
    with pytest.raises(TypeError, match=r"cases must have the same shapes, got \[\(2,\), \(3,\)"):
        lax.select_n_p.bind(np.array(True), x, np.ones(3, f32))
    with pytest.raises(TypeError, match=r"`which` shape \(3,\) but case shape \(2,\)"):
        lax.select_n_p.bind(np.array([0, 1, 1]), x, x)
    with pytest.raises(TypeError, match=r"lax\.select requires arguments to have the same "
                                        r"dtypes, got float32, int32\. \(Tip: jnp\.where"):
        lax.select_n(np.array(True), x, np.ones(2, np.int32))
    with pytest.raises(ValueError, match="at least one case"):
        lax.select_n(np.array(True))


def test_select_gradients_go_to_the_chosen_case():
    pred = np.array([True, False, True])

    def f(x, y):
        return total(lax.mul(lax.select(pred, x, y), np.arange(1, 4, dtype=f32)))
    gx, gy = jax.grad(f, argnums=(0, 1))(np.ones(3, f32), np.ones(3, f32))
    assert_array(gx, [1, 0, 3], f32)
    assert_array(gy, [0, 2, 0], f32)


def test_vmap_of_select_with_scalar_predicate_per_member():
    preds = np.array([True, False, True])
    x = np.arange(12, dtype=f32).reshape(3, 4)
    out = jax.vmap(lambda p, a: lax.select(p, a, lax.neg(a)))(preds, x)
    assert_array(out, np.where(preds[:, None], x, -x))
    out = jax.vmap(lambda a: lax.select(True, a, lax.neg(a)), in_axes=1)(x)
    assert_array(out, x.T)


def test_clamp_nan_and_inverted_bounds():
    x = np.arange(5, dtype=f32)
    assert np.isnan(np.asarray(lax.clamp(f32(NAN), x, f32(2)))).all()
    assert np.isnan(np.asarray(lax.clamp(f32(0), np.array([NAN], f32), f32(2)))).all()
    assert_array(lax.clamp(f32(3), x, f32(1)), [1] * 5, f32)  # min > max gives max


def test_clamp_orders_complex_lexicographically_and_accepts_bool():
    x = np.array([2 + 1j, -1 + 5j, 0.5 - 1j], np.complex64)
    assert_array(lax.clamp(np.complex64(0), x, np.complex64(1)), [1, 0, 0.5 - 1j], np.complex64)
    assert_array(lax.clamp(True, np.array([True, False]), True), [True, True])


@pytest.mark.parametrize("lo,x,hi,expected", [
    (1.0, 1.0, 2.0, (0, 0, 0)),    # x at min: no tangent passes, as in JAX
    (1.0, 2.0, 2.0, (0, 0, 0)),    # x at max
    (1.0, 1.5, 2.0, (0, 1, 0)),
    (1.5, 1.0, 2.0, (1, 0, 0)),
    (1.0, 2.5, 2.0, (0, 0, 1)),
    # min > max: the result is max, but, as in JAX, max gets the tangent only where x > max
    (3.0, 2.0, 1.0, (0, 0, 1)),
    (3.0, 0.0, 1.0, (0, 0, 0)),
])
def test_clamp_derivatives_at_ties_follow_jax(lo, x, hi, expected):
    grads = jax.grad(lambda a, b, c: lax.clamp(a, b, c), argnums=(0, 1, 2))(
        f32(lo), f32(x), f32(hi))
    assert tuple(float(g) for g in grads) == expected


def test_clamp_shape_error():
    with pytest.raises(TypeError, match=r"clamp requires min.shape == operand.shape or "
                                        r"min.shape == \(\), got min.shape=\(2,\)"):
        lax.clamp_p.bind(np.ones(2, f32), np.ones(4, f32), f32(1))
    with pytest.raises(TypeError, match=r"lax\.clamp requires arguments to have the same "
                                        r"dtypes, got int32, float32, int32\.$"):
        lax.clamp_p.bind(np.int32(0), np.ones(2, f32), np.int32(1))


def test_vmap_of_clamp_with_batched_scalar_bound():
    lo = np.array([0.0, 1.0, 2.0], f32)
    x = np.tile(np.arange(4, dtype=f32), (3, 1))
    out = jax.vmap(lambda m, v: lax.clamp(m, v, f32(2.5)))(lo, x)
    assert_array(out, np.minimum(np.maximum(x, lo[:, None]), 2.5))


# ------------------------------------------------------------------ bitcast_convert_type

def test_bitcast_to_narrower_type_adds_a_last_dimension():
    out = bitcast_convert_type(np.ones(2, f32), np.uint8)
    assert_array(out, [[0, 0, 128, 63]] * 2, np.uint8)
    assert_array(bitcast_convert_type(f32(1), np.int16), [0, 16256], np.int16)
    assert_array(bitcast_convert_type(np.array([1.0], f32), BF16), [[0, 1]], BF16)


def test_bitcast_to_wider_type_merges_the_last_dimension():
    x = np.array([[0, 16256], [0, -16512]], np.int16)
    assert_array(bitcast_convert_type(x, f32), [1.0, -1.0], f32)
    assert bitcast_convert_type(np.zeros((0, 4), np.uint8), np.int32).shape == (0,)


def test_bitcast_same_width_keeps_shape_and_is_exact():
    x = np.array([1.0, -0.0, np.inf], f32)
    assert_array(bitcast_convert_type(x, np.int32), [1065353216, -2**31, 2139095040], np.int32)
    assert_array(bitcast_convert_type(bitcast_convert_type(x, np.uint32), f32), x)


def test_bitcast_errors():
    with pytest.raises(ValueError, match=r"^Attempting to convert array of shape \(3, 4\) from "
                                         r"int16 of size 16 bits to float32 .* 4 \* 16 != 32"):
        bitcast_convert_type(np.ones((3, 4), np.int16), f32)
    with pytest.raises(ValueError, match="1 \\* 8 != 32"):
        bitcast_convert_type(np.int8(1), np.int32)
    with pytest.raises(TypeError, match="does not support bool or complex values"):
        bitcast_convert_type(np.array([True]), np.int8)
    with pytest.raises(TypeError, match="does not support bool or complex values"):
        bitcast_convert_type(np.array([1j], np.complex64), f32)


def test_bitcast_has_zero_tangent_and_batches_along_the_merged_axis():
    _, tangent = jax.jvp(lambda x: bitcast_convert_type(x, np.int32), (np.ones(2, f32),),
                         (np.ones(2, f32),))
    assert np.asarray(tangent).dtype == dtypes.float0
    pairs = np.array([[0, 16256], [0, -16512], [0, 0]], np.int16)
    # Mapping over the last axis moves the batch axis out of the way of the merge.
    out = jax.vmap(lambda x: bitcast_convert_type(x, f32), in_axes=1)(pairs.T.copy())
    assert_array(out, [1.0, -1.0, 0.0], f32)


# ---------------------------------------------------------------------------- shape ops

def test_squeeze_and_its_errors():
    assert lax.squeeze(np.ones((1, 2, 1), f32), [-1]).shape == (1, 2)
    jaxpr = jax.make_jaxpr(lambda x: lax.squeeze(x, [2, 0]))(np.ones((1, 2, 1), f32))
    assert "squeeze[dimensions=(0, 2)]" in str(jaxpr)
    with pytest.raises(ValueError, match="size not equal to one"):
        lax.squeeze(np.ones((2, 3), f32), [0])
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
        lax.squeeze(np.ones((1, 2, 1), f32), [3])
    with pytest.raises(ValueError, match="not unique"):
        lax.squeeze(np.ones((1, 2, 1), f32), [0, -3])


def test_expand_dims_is_a_broadcast():
    x = np.ones((2, 3), f32)
    assert lax.expand_dims(x, [0, -1]).shape == (1, 2, 3, 1)
    assert lax.expand_dims(x, [-1]).shape == (2, 3, 1)
    jaxpr = str(jax.make_jaxpr(lambda v: lax.expand_dims(v, [1]))(np.ones(2, f32)))
    assert "broadcast_in_dim" in jaxpr and "expand_dims" not in jaxpr
    with pytest.raises(ValueError, match="repeated axis"):
        lax.expand_dims(x, [0, 0])
    with pytest.raises(ValueError, match="axis 5 is out of bounds"):
        lax.expand_dims(x, [5])


def test_collapse():
    x = np.ones((2, 3, 4), f32)
    assert lax.collapse(x, 1).shape == (2, 12)
    assert lax.collapse(x, -2, None).shape == (2, 12)
    assert lax.collapse(x, 0, -1).shape == (6, 4)
    assert lax.collapse(x, 1, 1).shape == (2, 1, 3, 4)


def test_rev_errors():
    x = np.ones((2, 3), f32)
    with pytest.raises(TypeError, match="nonnegative"):
        lax.rev(x, [-1])
    with pytest.raises(TypeError, match="unique"):
        lax.rev(x, [0, 0])
    with pytest.raises(TypeError, match="less than operand ndim"):
        lax.rev(x, [2])


def test_iota_wraps_integers_and_rounds_floats_to_even():
    def last3(x):
        return np.asarray(x)[-3:]
    assert_array(last3(lax.iota(np.uint8, 300)), [41, 42, 43], np.uint8)
    assert_array(last3(lax.iota(np.int8, 300)), [41, 42, 43], np.int8)
    assert_array(last3(lax.iota(BF16, 300)), [296, 298, 300], BF16)
    assert_array(last3(lax.iota(np.float16, 3000)), [2996, 2998, 3000], np.float16)
    assert_array(lax.broadcasted_iota(np.int32, (2, 3), 0), [[0] * 3, [1] * 3], np.int32)


def test_iota_errors_and_dtype_canonicalization():
    with pytest.raises(TypeError, match="iota does not accept dtype bool"):
        lax.iota(np.bool_, 3)
    with pytest.raises(ValueError, match="dimension must be between 0 and len"):
        lax.broadcasted_iota(np.int32, (2, 3), 2)
    with pytest.raises(TypeError, match="nonnegative"):
        lax.iota(np.int32, -1)
    with pytest.warns(UserWarning, match="int64"):
        assert lax.iota(np.int64, 2).dtype == np.int32
    assert not lax.iota(int, 2).weak_type


# ------------------------------------------------------------------------------ slicing

def test_strided_slices():
    x = np.arange(10, dtype=np.int32)
    assert_array(lax.slice(x, (1,), (8,), (3,)), [1, 4, 7], np.int32)
    assert_array(lax.slice(x, (1,), (7,), (3,)), [1, 4], np.int32)
    assert lax.slice(x, (3,), (3,), (3,)).shape == (0,)
    y = np.arange(12, dtype=f32).reshape(3, 4)
    assert_array(lax.slice(y, (0, 1), (3, 4), (2, 2)), y[0:3:2, 1:4:2])


def test_slice_gradient_pads_back_with_zeros():
    g = jax.grad(lambda x: total(lax.slice(x, (1,), (8,), (3,))))(np.ones(10, f32))
    assert_array(g, [0, 1, 0, 0, 1, 0, 0, 1, 0, 0], f32)
    g = jax.grad(lambda x: total(lax.slice(x, (2,), (2,), (2,))))(np.ones(4, f32))
    assert_array(g, [0, 0, 0, 0], f32)


def test_slice_errors():
    x = np.ones((2, 3), f32)
    with pytest.raises(TypeError, match="strides must be positive"):
        lax.slice(x, (0, 0), (2, 3), (1, 0))
    with pytest.raises(TypeError, match="^slice slice_sizes must be greater than or equal to "
                                        "zero"):  # JAX's words
        lax.slice(x, (0, 2), (2, 1))
    with pytest.raises(TypeError, match="^slice slice_sizes must be less than or equal to "
                                        "operand shape"):
        lax.slice(x, (0, 0), (2, 4))
    with pytest.raises(TypeError, match="start_indices must be nonnegative"):
        lax.slice(x, (0, -1), (2, 3))
    with pytest.raises(TypeError, match="start_indices must have length equal"):
        lax.slice(x, (0,), (2, 3))


def test_slice_in_dim_and_index_in_dim():
    x = np.arange(6, dtype=f32).reshape(2, 3)
    assert_array(lax.slice_in_dim(x, -2, None, axis=-1), x[:, -2:])
    assert_array(lax.slice_in_dim(x, None, -1, 2, 1), x[:, :-1:2])
    assert_array(lax.index_in_dim(x, -1, 1), x[:, 2:])
    assert_array(lax.index_in_dim(x, 1, 1, keepdims=False), x[:, 1])
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        lax.index_in_dim(x, 3, 1)
    with pytest.raises(TypeError, match="slice_sizes must be less than or equal to operand"):
        lax.slice_in_dim(np.arange(5), 2, 10)


def test_interior_and_edge_padding():
    x = np.arange(1, 4, dtype=f32)
    assert_array(lax.pad(x, -1.0, [(1, 2, 1)]), [-1, 1, -1, 2, -1, 3, -1, -1], f32)
    assert_array(lax.pad(np.zeros(0, f32), 1.0, [(1, 1, 2)]), [1, 1], f32)
    y = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_array(lax.pad(y, np.int32(9), [(0, 1, 0), (1, 0, 1)]),
                 [[9, 0, 9, 1, 9, 2], [9, 3, 9, 4, 9, 5], [9] * 6], np.int32)


def test_negative_padding_crops():
    x = np.arange(1, 4, dtype=f32)
    assert_array(lax.pad(x, 0.0, [(-1, -2, 2)]), [0, 0, 2, 0], f32)  # crops padding too
    assert lax.pad(np.ones((2, 3), f32), 0.0, [(-2, 0, 0), (0, 0, 0)]).shape == (0, 3)
    assert_array(lax.pad(np.zeros(0, f32), 1.0, [(-1, 2, 2)]), [1], f32)
    assert_array(lax.pad(x, 7.0, [(2, -4, 0)]), [7], f32)  # high crop reaches into low pad


def test_pad_gradients_for_operand_and_padding_value():
    gx, gv = jax.grad(lambda x, v: total(lax.pad(x, v, [(-1, 2, 1)])), argnums=(0, 1))(
        np.arange(1, 4, dtype=f32), f32(5))
    assert_array(gx, [0, 1, 1], f32)
    assert float(gv) == 4.0  # one cropped-away padding element, four kept


def test_pad_with_a_padding_value_per_batch_member():
    x = np.ones((3, 2), f32)
    out = jax.vmap(lambda v, a: lax.pad(a, v, [(1, 1, 1)]))(np.arange(3, dtype=f32), x)
    assert_array(out, [[k, 1, k, 1, k] for k in range(3)], f32)


def test_pad_errors():
    x = np.ones((2, 3), f32)
    with pytest.raises(ValueError, match="interior padding in padding_config must be nonneg"):
        lax.pad(x, 0.0, [(0, 0, -1), (0, 0, 0)])
    with pytest.raises(ValueError, match=r"not at least 0, got result shape \(-1, 3\)"):
        lax.pad(x, 0.0, [(-3, 0, 0), (0, 0, 0)])
    with pytest.raises(ValueError, match="length of padding_config must equal"):
        lax.pad(x, 0.0, [(0, 0, 0)])
    with pytest.raises(ValueError, match="padding_value must be a scalar"):
        lax.pad(x, np.zeros(2, f32), [(0, 0, 0)] * 2)
    with pytest.raises(TypeError, match="must be same dtype: got float32 and int32"):
        lax.pad(x, np.int32(0), [(0, 0, 0)] * 2)


def test_pad_weak_type_needs_both_operands_weak():
    assert lax.pad(1.0, 2.0, []).weak_type
    assert not lax.pad(np.ones(2, f32), 2.0, [(1, 1, 0)]).weak_type


def test_concatenate_and_its_transpose():
    x, y = np.ones((2, 1), f32), np.zeros((2, 2), f32)
    assert_array(lax.concatenate([x, y], 1), [[1, 0, 0]] * 2, f32)
    weights = np.arange(5, dtype=f32)
    gx, gy = jax.grad(lambda a, b: total(lax.mul(lax.concatenate([a, b, a], 0), weights)),
                      argnums=(0, 1))(
        np.ones(2, f32), np.ones(1, f32))
    assert_array(gx, [3, 5], f32)
    assert_array(gy, [2], f32)
    out = jax.vmap(lambda a, b: lax.concatenate([a, b], 0), in_axes=(1, None))(
        np.ones((2, 3), f32), np.zeros(4, f32))
    assert out.shape == (3, 6)


def test_concatenate_errors():
    x = np.ones((2, 3), f32)
    with pytest.raises(TypeError, match="dimension out of bounds: dimension 2"):
        lax.concatenate([x, x], 2)
    with pytest.raises(TypeError, match="differ in dimensions other than the one"):
        lax.concatenate([x, x[:, :2]], 0)
    with pytest.raises(TypeError, match="different numbers of dimensions"):
        lax.concatenate([x, x[0]], 0)
    with pytest.raises(TypeError, match=r"lax\.concatenate requires arguments to have the same"):
        lax.concatenate([x, x.astype(np.int32)], 0)
    with pytest.raises(ValueError, match="non-empty"):
        lax.concatenate([], 0)
    assert lax.concatenate([x], 0) is x


# ------------------------------------------------------------ primitives of the core

def test_reduce_sum_rejects_out_of_range_axes():
    with pytest.raises(ValueError, match="contains out-of-bounds indices"):  # as JAX
        lax.reduce_sum(np.ones((2, 3), f32), (5,))
    np.testing.assert_array_equal(lax.reduce_sum(np.ones((2, 3), f32), (-1,)), [3.0, 3.0])


def test_negative_sizes_are_rejected():
    # JAX's types and messages.
    with pytest.raises(TypeError, match="reshape new_sizes must all be positive"):
        lax.reshape(np.ones((6,), f32), (-1, -6))
    with pytest.raises(TypeError, match="broadcast_in_dim shape must have every element be "
                                        "nonnegative"):
        lax.broadcast_in_dim(f32(1.0), (-2,), ())


# ------------------------------------------------------- batching of mixed operands

MIXED_BATCHING = {
    "select_n": (lambda w, a, b: lax.select_n(w, a, b),
                 [np.array([True, False, True]), np.ones((3,), f32), np.zeros((3,), f32)]),
    "select_n_scalar_which": (lambda w, a, b, c: lax.select_n(w, a, b, c),
                              [np.int32(1), np.ones((2, 3), f32), np.zeros((2, 3), f32),
                               np.full((2, 3), 2, f32)]),
    "clamp": (lambda lo, x, hi: lax.clamp(lo, x, hi),
              [f32(-0.5), np.linspace(-1, 1, 6, dtype=f32).reshape(2, 3), f32(0.25)]),
    "pad": (lambda x, v: lax.pad(x, v, [(1, -1, 1), (-1, 2, 0)]),
            [np.arange(6, dtype=f32).reshape(2, 3), f32(-1)]),
    "concatenate": (lambda a, b: lax.concatenate([a, b], 1),
                    [np.ones((2, 1), f32), np.zeros((2, 3), f32)]),
}


@pytest.mark.parametrize("name", sorted(MIXED_BATCHING))
def test_vmap_with_every_choice_of_mapped_operands(name):
    fun, args = MIXED_BATCHING[name]
    rng = np.random.default_rng(0)
    size = 2
    for mask in range(1, 2 ** len(args)):
        in_axes, batched, members = [], [], [[] for _ in range(size)]
        for i, arg in enumerate(args):
            if not mask >> i & 1:
                in_axes.append(None)
                batched.append(arg)
                for member in members:
                    member.append(arg)
                continue
            axis = int(rng.integers(0, np.ndim(arg) + 1))
            values = [arg if k == 0 else
                      (np.logical_not(arg) if arg.dtype == np.bool_ else arg + k).astype(arg.dtype)
                      for k in range(size)]
            in_axes.append(axis)
            batched.append(np.stack(values, axis))
            for member, value in zip(members, values):
                member.append(value)
        out = jax.vmap(fun, in_axes=tuple(in_axes))(*batched)
        expected = np.stack([np.asarray(fun(*m)) for m in members])
        np.testing.assert_array_equal(np.asarray(out), expected, err_msg=f"in_axes={in_axes}")
