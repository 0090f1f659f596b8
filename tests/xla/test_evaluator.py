"""The HLO evaluator against numpy, and XLA's CPU semantics at the edges.

Expected values of the edge cases were produced once with real JAX 0.10.2 on the CPU
(`jax.jit` of the matching `jax.lax` function) and are written out here; the suite itself
never imports jax. Every module built here also passes the verifier.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jaxlite.xla import evaluator
from jaxlite.xla.evaluator import (
    CUSTOM_CALL_TARGETS,
    HloEvaluationError,
    evaluate_computation,
    evaluate_module,
)
from jaxlite.xla.ir import (
    ComputationBuilder,
    HloComputation,
    HloInstruction,
    HloModule,
    NameUniquer,
)
from jaxlite.xla.opcodes import Opcode as O
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference import infer_shape
from jaxlite.xla.shape_inference_base import Window
from jaxlite.xla.verifier import verify_module

BF16 = np.dtype(ml_dtypes.bfloat16)
NAMES = NameUniquer()


class Builder:
    """A computation builder that infers shapes unless one is given."""

    def __init__(self, name: str = "main") -> None:
        self.b = ComputationBuilder(name, NAMES)

    def param(self, dtype, dims=()) -> HloInstruction:
        return self.b.parameter(Shape(np.dtype(dtype), tuple(dims)))

    def const(self, value, dtype=None) -> HloInstruction:
        value = np.asarray(value, dtype)
        return self.b.add(O.CONSTANT, Shape(value.dtype, value.shape), attrs={"literal": value})

    def op(self, opcode, *operands, shape=None, called=(), **attrs) -> HloInstruction:
        shape = infer_shape(opcode, [o.shape for o in operands], attrs, called, shape)
        return self.b.add(opcode, shape, operands, attrs, called)

    def build(self, root) -> HloComputation:
        return self.b.build(root)


def run(comp: HloComputation, *args):
    module = HloModule("m", comp)
    verify_module(module)
    return evaluate_module(module, list(args))


def binary(opcode, dtype, name="combine") -> HloComputation:
    b = Builder(name)
    x, y = b.param(dtype), b.param(dtype)
    return b.build(b.op(opcode, x, y))


def elementwise(opcode, *args, **attrs):
    """Evaluate one elementwise instruction on arrays."""
    b = Builder()
    params = [b.param(np.asarray(a).dtype, np.shape(a)) for a in args]
    return run(b.build(b.op(opcode, *params, **attrs)), *args)


def convert(x, dtype):
    b = Builder()
    p = b.param(x.dtype, x.shape)
    return run(b.build(b.op(O.CONVERT, p, shape=Shape(np.dtype(dtype), x.shape))), x)


# ---------------------------------------------------------------- elementwise vs numpy

_DTYPES = [np.int8, np.int32, np.uint8, np.uint32, np.float32, np.float64]


@given(st.sampled_from(_DTYPES), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
       st.sampled_from([(O.ADD, np.add), (O.SUBTRACT, np.subtract),
                        (O.MULTIPLY, np.multiply)]), st.data())
def test_arithmetic_matches_numpy(dtype, shape, pair, data):
    opcode, fn = pair
    x = data.draw(hnp.arrays(dtype, shape))
    y = data.draw(hnp.arrays(dtype, shape))
    with np.errstate(all="ignore"):
        expected = fn(x, y)
    np.testing.assert_array_equal(elementwise(opcode, x, y), expected)


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=2, max_side=5),
                  elements=st.floats(-20, 20, width=32)))
def test_unary_math_matches_numpy(x):
    for opcode, fn in [(O.EXP, np.exp), (O.TANH, np.tanh), (O.SIN, np.sin),
                       (O.COS, np.cos), (O.NEGATE, np.negative), (O.FLOOR, np.floor),
                       (O.ABS, np.abs), (O.ATAN, np.arctan), (O.SINH, np.sinh)]:
        np.testing.assert_allclose(elementwise(opcode, x), fn(x), rtol=1e-6)
    np.testing.assert_allclose(elementwise(O.LOG1P, np.abs(x)), np.log1p(np.abs(x)), rtol=1e-6)


@given(st.sampled_from(["EQ", "NE", "LT", "LE", "GT", "GE"]),
       hnp.arrays(np.float32, 6, elements=st.sampled_from([0.0, -0.0, 1.0, np.nan, -np.inf])),
       hnp.arrays(np.float32, 6, elements=st.sampled_from([0.0, -0.0, 1.0, np.nan, np.inf])))
def test_compare_is_ieee(direction, x, y):
    ufunc = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
             "GT": np.greater, "GE": np.greater_equal}[direction]
    np.testing.assert_array_equal(elementwise(O.COMPARE, x, y, direction=direction),
                                  ufunc(x, y))


# ------------------------------------------------------------------ XLA's edge semantics

def test_integer_division_and_remainder():
    x = np.array([7, -7, 7, -7, 5, -2**31, 0, -5], np.int32)
    y = np.array([2, 2, -2, -2, 0, -1, 0, 3], np.int32)
    assert elementwise(O.DIVIDE, x, y).tolist() == [3, -3, -3, 3, -1, -2**31, -1, -1]
    assert elementwise(O.REMAINDER, x, y).tolist() == [1, -1, 1, -1, 5, 0, 0, -2]
    u, v = np.array([7, 0, 5], np.uint32), np.array([0, 0, 2], np.uint32)
    assert elementwise(O.DIVIDE, u, v).tolist() == [2**32 - 1, 2**32 - 1, 2]
    assert elementwise(O.REMAINDER, u, v).tolist() == [7, 0, 1]
    assert elementwise(O.REMAINDER, np.float32([5.5, -5.5]), np.float32([2, 2])).tolist() \
        == [1.5, -1.5]


def test_shifts_saturate():
    amount = np.array([-1, 0, 31, 32, 33, 4], np.int32)
    x = np.full(6, -8, np.int32)
    assert elementwise(O.SHIFT_LEFT, x, amount).tolist() == [0, -8, 0, 0, 0, -128]
    assert elementwise(O.SHIFT_RIGHT_ARITHMETIC, x, amount).tolist() == [-1, -8, -1, -1, -1, -1]
    assert elementwise(O.SHIFT_RIGHT_LOGICAL, x, amount).tolist() == [0, -8, 1, 0, 0, 268435455]


def test_float_to_int_conversion_truncates_and_saturates():
    f = np.array([np.nan, np.inf, -np.inf, 3.7, -3.7, 3e9, -3e9, 300.5, -1.5], np.float32)
    assert convert(f, np.int32).tolist() == [0, 2**31 - 1, -2**31, 3, -3, 2**31 - 1, -2**31,
                                             300, -1]
    assert convert(f, np.uint8).tolist() == [0, 255, 0, 3, 0, 255, 0, 255, 0]
    assert convert(f, np.int64).tolist() == [0, 2**63 - 1, -2**63, 3, -3, 3000000000,
                                             -3000000000, 300, -1]
    assert convert(np.array([1e20, -1, 5.5, np.nan]), np.uint64).tolist() == [2**64 - 1, 0,
                                                                              5, 0]
    assert convert(np.float32([0.0, -0.0, 0.1, np.nan]), np.bool_).tolist() == [
        False, False, True, True]
    assert convert(np.complex64([3 + 4j]), np.float32).tolist() == [3.0]
    bf = convert(np.float32([1.00390625, 1.01171875, np.nan, 3.4e38]), BF16)
    assert bf.dtype == BF16
    np.testing.assert_array_equal(bf.astype(np.float32), [1.0, 1.015625, np.nan, np.inf])


def test_rounding():
    r = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.0], np.float32)
    afz, even = elementwise(O.ROUND_AFZ, r), elementwise(O.ROUND_EVEN, r)
    assert afz.tolist() == [1.0, 2.0, 3.0, -1.0, -3.0, 0.0, -0.0]
    assert even.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 0.0, -0.0]
    assert np.signbit(afz[-1]) and np.signbit(even[3])


def test_maximum_minimum_propagate_nan_and_order_zeros():
    x = np.array([np.nan, 1, 0., -0., -0.], np.float32)
    y = np.array([1, np.nan, -0., 0., -0.], np.float32)
    high, low = elementwise(O.MAXIMUM, x, y), elementwise(O.MINIMUM, x, y)
    assert np.isnan(high[:2]).all() and np.isnan(low[:2]).all()
    assert np.signbit(high[2:]).tolist() == [False, False, True]
    assert np.signbit(low[2:]).tolist() == [True, True, True]


def test_clamp_select_popcnt_sign_abs():
    x = np.array([1, 3, np.nan, 5], np.float32)
    # min > max gives max; NaN propagates; the bounds may be scalars.
    assert np.array_equal(elementwise(O.CLAMP, np.float32(2), x, np.float32(1)),
                          [1, 1, np.nan, 1], equal_nan=True)
    assert elementwise(O.SELECT, np.array([True, False]), np.int8([1, 2]),
                       np.int8([3, 4])).tolist() == [1, 4]
    assert elementwise(O.POPCNT, np.array([-1, -128, 5, 0], np.int8)).tolist() == [8, 1, 2, 0]
    sign = elementwise(O.SIGN, np.array([-0., 0., np.nan, -3, 2], np.float32))
    assert np.array_equal(sign, [-0., 0., np.nan, -1, 1], equal_nan=True)
    assert np.signbit(sign[0])
    assert elementwise(O.ABS, np.array([-2**31, 3], np.int32)).tolist() == [-2**31, 3]
    assert elementwise(O.IS_FINITE, np.float32([1, np.inf, np.nan, -np.inf])).tolist() == [
        True, False, False, False]


def test_total_order_comparison():
    x = np.array([-np.nan, -np.inf, -0.0, 0.0, 1.0, np.nan], np.float32)
    less = elementwise(O.COMPARE, x[:, None].repeat(6, 1), x[None, :].repeat(6, 0),
                       direction="LT", type="TOTALORDER")
    assert (less == np.triu(np.ones((6, 6), bool), 1)).all()


def test_integer_and_float_power():
    a = np.array([2, -2, 1, -1, 0, 3, 0, -3, 2], np.int32)
    b = np.array([-1, -3, -5, -3, -2, 2, 0, 3, 31], np.int32)
    assert elementwise(O.POWER, a, b).tolist() == [0, 0, 1, -1, 0, 9, 1, -27, -2**31]
    got = elementwise(O.POWER, np.float32([2, -2, 0, 0, -8]), np.float32([.5, 2, 0, -1, 1/3]))
    np.testing.assert_array_equal(got, np.float32([math.sqrt(2), 4, 1, np.inf, np.nan]))


def test_complex_parts_and_atan2():
    z = elementwise(O.COMPLEX, np.float32([1, np.inf]), np.float32([np.inf, 2]))
    assert z.dtype == np.complex64 and z.tolist() == [complex(1, np.inf), complex(np.inf, 2)]
    assert elementwise(O.REAL, z).tolist() == [1, np.inf]
    assert elementwise(O.IMAG, z).tolist() == [np.inf, 2]
    magnitude = elementwise(O.ABS, np.complex64([complex(np.inf, np.nan), 3 + 4j]))
    assert magnitude.dtype == np.float32 and np.isnan(magnitude[0]) and magnitude[1] == 5
    angle = elementwise(O.ATAN2, np.float32([1, -1, 0, -0., 0]), np.float32([0, -1, -1, -1, 0]))
    np.testing.assert_allclose(angle, [np.pi / 2, -3 * np.pi / 4, np.pi, -np.pi, 0], rtol=1e-7)


def test_low_precision_computes_in_f32_and_rounds():
    got = elementwise(O.ADD, np.array([1, 256, 0.1], BF16), np.array([2**-8, 1, 0.2], BF16))
    assert got.dtype == BF16 and got.astype(np.float32).tolist() == [1.0, 256.0, 0.30078125]
    got = elementwise(O.EXP, np.array([0.3, 1.7, -2.2], BF16))
    assert got.astype(np.float32).tolist() == [1.3515625, 5.5, 0.1103515625]
    got = elementwise(O.DIVIDE, np.float16([1, 2, 1]), np.float16([3, 3, 0]))
    assert got.dtype == np.float16 and got.tolist() == [0.333251953125, 0.66650390625, np.inf]


def test_next_after():
    got = elementwise(O.NEXT_AFTER, np.float32([1, 0, -0., 1, np.nan]),
                      np.float32([2, -1, 1, 1, 0]))
    assert [float(v).hex() for v in got[:4]] == ['0x1.0000020000000p+0',
                                                '-0x1.0000000000000p-149',
                                                '0x1.0000000000000p-149', '0x1.0000000000000p+0']
    assert np.isnan(got[4])
    bf = elementwise(O.NEXT_AFTER, np.array([1.0], BF16), np.array([2.0], BF16))
    assert bf.astype(np.float32)[0] == 1.0078125


def test_special_functions_match_scipy():
    x = np.linspace(-0.999, 0.999, 41).astype(np.float32)
    np.testing.assert_allclose(elementwise(O.ERF_INV, x), scipy.special.erfinv(x), rtol=2e-6)
    assert elementwise(O.ERF_INV, np.float32([1, -1, 2])).tolist()[:2] == [np.inf, -np.inf]
    y = np.float32([-3.5, -0.5, 0.1, 1, 2.5, 7, 30, 1e4])
    np.testing.assert_allclose(elementwise(O.LGAMMA, y), scipy.special.gammaln(y), rtol=2e-6)
    np.testing.assert_allclose(elementwise(O.DIGAMMA, y), scipy.special.digamma(y), rtol=2e-6,
                               atol=1e-6)
    assert elementwise(O.LGAMMA, np.float32([0, -2])).tolist() == [np.inf, np.inf]
    assert np.isnan(elementwise(O.DIGAMMA, np.float32([0, -2, -np.inf]))).all()
    np.testing.assert_allclose(elementwise(O.ERFC, np.float32([-1, 0, 3])),
                               scipy.special.erfc([-1, 0, 3]), rtol=1e-6)
    for opcode, fn in [(O.ASINH, np.arcsinh), (O.ACOS, np.arccos), (O.ATANH, np.arctanh),
                       (O.EXP2, np.exp2), (O.COSH, np.cosh)]:
        np.testing.assert_allclose(elementwise(opcode, x), fn(x), rtol=1e-6)


# ------------------------------------------------------------------------ data movement

def unary_movement(opcode, x, shape=None, **attrs):
    b = Builder()
    p = b.param(x.dtype, x.shape)
    return run(b.build(b.op(opcode, p, shape=shape, **attrs)), x)


def test_broadcast_reshape_transpose_reverse_slice():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = unary_movement(O.BROADCAST, x, Shape(np.float32, (3, 4, 2)), dimensions=(2, 0))
    np.testing.assert_array_equal(out, np.broadcast_to(x.T[:, None, :], (3, 4, 2)))
    np.testing.assert_array_equal(
        unary_movement(O.RESHAPE, x, Shape(np.float32, (3, 2), (0, 1))), x.reshape(3, 2))
    np.testing.assert_array_equal(unary_movement(O.TRANSPOSE, x, dimensions=(1, 0)), x.T)
    np.testing.assert_array_equal(unary_movement(O.REVERSE, x, dimensions=(0, 1)), x[::-1, ::-1])
    got = unary_movement(O.SLICE, x, starts=(0, 1), limits=(2, 3), strides=(2, 1))
    np.testing.assert_array_equal(got, x[0:2:2, 1:3])
    np.testing.assert_array_equal(unary_movement(O.COPY, x), x)


def test_dynamic_slices_clamp_their_starts():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = Builder()
    p, i, j = b.param(np.int32, (3, 4)), b.param(np.int32), b.param(np.int32)
    comp = b.build(b.op(O.DYNAMIC_SLICE, p, i, j, sizes=(2, 2)))
    np.testing.assert_array_equal(run(comp, x, np.int32(5), np.int32(-3)), x[1:3, 0:2])
    b = Builder()
    p, u = b.param(np.int32, (3, 4)), b.param(np.int32, (2, 3))
    i, j = b.param(np.uint32), b.param(np.uint32)
    comp = b.build(b.op(O.DYNAMIC_UPDATE_SLICE, p, u, i, j))
    expected = x.copy()
    expected[1:3, 1:4] = -1
    got = run(comp, x, np.full((2, 3), -1, np.int32), np.uint32(7), np.uint32(2**32 - 1))
    np.testing.assert_array_equal(got, expected)


def test_concatenate_pad_iota_bitcast():
    b = Builder()
    p, q = b.param(np.int8, (2, 1)), b.param(np.int8, (2, 3))
    got = run(b.build(b.op(O.CONCATENATE, p, q, dimensions=(1,))), np.int8([[1], [2]]),
              np.int8([[3, 4, 5], [6, 7, 8]]))
    assert got.tolist() == [[1, 3, 4, 5], [2, 6, 7, 8]]
    b = Builder()
    p, v = b.param(np.float32, (2, 3)), b.const(np.float32(-1))
    comp = b.build(b.op(O.PAD, p, v, padding=((1, -1, 1), (-2, 2, 0))))
    got = run(comp, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert got.tolist() == [[-1, -1, -1], [2, -1, -1], [-1, -1, -1]]
    b = Builder()
    comp = b.build(b.op(O.IOTA, shape=Shape(np.float32, (2, 3)), iota_dimension=1))
    assert run(comp).tolist() == [[0, 1, 2], [0, 1, 2]]
    x = np.float32([1.0, -2.0])
    got = unary_movement(O.BITCAST_CONVERT, x, Shape(np.uint16, (2, 2)))
    np.testing.assert_array_equal(got, x.view(np.uint16).reshape(2, 2))
    back = unary_movement(O.BITCAST_CONVERT, got, Shape(np.float32, (2,)))
    np.testing.assert_array_equal(back, x)


def test_gather_clamps_start_indices():
    b = Builder()
    p, i = b.param(np.float32, (6,)), b.param(np.int32, (3, 1))
    comp = b.build(b.op(O.GATHER, p, i, offset_dims=(1,), collapsed_slice_dims=(),
                        start_index_map=(0,), index_vector_dim=1, slice_sizes=(3,)))
    got = run(comp, np.arange(6, dtype=np.float32), np.int32([[4], [-2], [1]]))
    assert got.tolist() == [[3, 4, 5], [0, 1, 2], [1, 2, 3]]


def test_gather_rows_and_batching_dims():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    b = Builder()
    p, i = b.param(np.int32, (2, 3, 4)), b.param(np.int32, (2, 5))
    # Per batch member k, pick rows indices[k, j] of x[k]: out[k, j, :] = x[k, idx[k, j], :].
    comp = b.build(b.op(O.GATHER, p, i, offset_dims=(2,), collapsed_slice_dims=(1,),
                        start_index_map=(1,), operand_batching_dims=(0,),
                        start_indices_batching_dims=(0,), index_vector_dim=2,
                        slice_sizes=(1, 1, 4)))
    idx = np.int32([[0, 2, 1, 1, 0], [2, 2, 0, 1, 2]])
    np.testing.assert_array_equal(run(comp, x, idx), np.take_along_axis(
        x, idx[:, :, None].repeat(4, 2), axis=1))


def scatter_comp(combiner, operand, updates, indices_shape, **dims):
    b = Builder()
    p, i, u = b.param(np.float32, operand), b.param(np.int32, indices_shape), \
        b.param(np.float32, updates)
    return b.build(b.op(O.SCATTER, p, i, u, called=(combiner,), **dims))


def test_scatter_add_skips_windows_out_of_bounds():
    comp = scatter_comp(binary(O.ADD, np.float32), (6,), (3, 4), (4, 1),
                        update_window_dims=(0,), inserted_window_dims=(),
                        scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    got = run(comp, np.zeros(6, np.float32), np.int32([[4], [1], [-1], [3]]),
              np.arange(1, 13, dtype=np.float32).reshape(4, 3).T)
    assert got.tolist() == [0, 4, 5, 16, 11, 12]


@given(st.lists(st.integers(0, 4), min_size=0, max_size=12), st.booleans())
def test_scatter_combines_duplicates_in_order(targets, generic):
    n = len(targets)
    dims = dict(update_window_dims=(), inserted_window_dims=(0,),
                scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    updates = np.arange(1, n + 1, dtype=np.float32)
    if generic:  # x * 2 + y: not a plain binary op, so each duplicate waits for the last
        b = Builder("twice_plus")
        x, y = b.param(np.float32), b.param(np.float32)
        combiner = b.build(b.op(O.ADD, b.op(O.MULTIPLY, x, b.const(np.float32(2))), y))
    else:
        combiner = binary(O.ADD, np.float32)
    comp = scatter_comp(combiner, (5,), (n,), (n, 1), **dims)
    expected = np.ones(5, np.float32)
    for t, u in zip(targets, updates):
        expected[t] = expected[t] * 2 + u if generic else expected[t] + u
    got = run(comp, np.ones(5, np.float32), np.int32(targets).reshape(n, 1), updates)
    np.testing.assert_array_equal(got, expected)


def test_scatter_set_keeps_the_last_update():
    b = Builder("second")
    b.param(np.float32)
    keep = b.build(b.param(np.float32))
    comp = scatter_comp(keep, (3,), (3,), (3, 1), update_window_dims=(),
                        inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                        index_vector_dim=1)
    got = run(comp, np.zeros(3, np.float32), np.int32([[1], [2], [1]]), np.float32([5, 6, 7]))
    assert got.tolist() == [0, 7, 6]


# ------------------------------------------------------------------------------ reductions

def reduce_comp(x_shape, dtype, dims, combiner, init):
    b = Builder()
    p = b.param(dtype, x_shape)
    return b.build(b.op(O.REDUCE, p, b.const(init, dtype), dimensions=dims,
                        called=(combiner,)))


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
                  elements=st.floats(-100, 100, width=32)), st.data())
def test_reduce_sum_and_max(x, data):
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, max(x.ndim - 1, 0)), max_size=x.ndim))
                        if x.ndim else ()))
    total = run(reduce_comp(x.shape, np.float32, dims, binary(O.ADD, np.float32), 0), x)
    np.testing.assert_allclose(total, np.sum(x, axis=dims), rtol=1e-5, atol=1e-3)
    top = run(reduce_comp(x.shape, np.float32, dims, binary(O.MAXIMUM, np.float32), -np.inf), x)
    np.testing.assert_array_equal(top, np.max(x, axis=dims, initial=-np.inf))


def argmax_combiner() -> HloComputation:
    """JAX's argmax reducer: (value, index) pairs; NaN wins, ties take the lower index."""
    b = Builder("argmax")
    v0, i0, v1, i1 = b.param(np.float32), b.param(np.int32), b.param(np.float32), \
        b.param(np.int32)
    gt = b.op(O.COMPARE, v0, v1, direction="GT")
    first_nan = b.op(O.COMPARE, v0, v0, direction="NE")
    pick_first = b.op(O.OR, gt, first_nan)
    tie = b.op(O.AND, b.op(O.COMPARE, v0, v1, direction="EQ"),
               b.op(O.COMPARE, i0, i1, direction="LT"))
    take = b.op(O.OR, pick_first, tie)
    return b.build(b.op(O.TUPLE, b.op(O.SELECT, pick_first, v0, v1),
                        b.op(O.SELECT, take, i0, i1)))


def test_variadic_reduce_argmax():
    x = np.float32([[1, 5, 5, 2], [3, np.nan, 7, np.nan], [0, 0, 0, 0]])
    b = Builder()
    p = b.param(np.float32, (3, 4))
    iota = b.op(O.IOTA, shape=Shape(np.int32, (3, 4)), iota_dimension=1)
    reduce = b.op(O.REDUCE, p, iota, b.const(np.float32(-np.inf)), b.const(np.int32(0)),
                  dimensions=(1,), called=(argmax_combiner(),))
    comp = b.build(reduce)
    values, indices = run(comp, x)
    assert indices.tolist() == [1, 1, 0] and values[0] == 5 and np.isnan(values[1])


def test_reduce_with_an_opaque_combiner_runs_element_by_element():
    # A combiner containing a reshape is not elementwise: the evaluator folds scalar by scalar.
    b = Builder("reshaping_add")
    x, y = b.param(np.int32), b.param(np.int32)
    as_vector = b.op(O.RESHAPE, b.op(O.ADD, x, y), shape=Shape(np.int32, (1,)))
    combiner = b.build(b.op(O.RESHAPE, as_vector, shape=Shape(np.int32, ())))
    x = np.arange(10, dtype=np.int32).reshape(2, 5)
    assert run(reduce_comp((2, 5), np.int32, (1,), combiner, 100), x).tolist() == [110, 135]


def test_reduce_bf16_rounds_each_step():
    x = np.ones(600, BF16)
    total = run(reduce_comp((600,), BF16, (0,), binary(O.ADD, BF16), 0), x)
    # A sequential bf16 sum would stall at 256 (256 + 1 rounds back to 256); the pairwise
    # tree adds equal-sized partial sums, which stay exact here (600 needs 7 bits).
    assert total.dtype == BF16 and float(total) == 600.0


def test_reduce_16_bit_floats_accumulates_in_float32():
    # JAX 0.10.2 (XLA's CPU compiler sums in float32), recorded with
    # float(jnp.sum(((np.arange(4096) % 10 + 1) * 0.01).astype(jnp.bfloat16))): 225.0, and
    # 225.125 in float16. A pairwise tree in bfloat16 gives 226.0.
    for dtype, expected in ((BF16, 225.0), (np.dtype(np.float16), 225.125)):
        x = ((np.arange(4096) % 10 + 1) * 0.01).astype(dtype)
        total = run(reduce_comp((4096,), dtype, (0,), binary(O.ADD, dtype), 0), x)
        assert total.dtype == dtype and float(total) == expected


def naive_reduce_window(x, init, op, window: Window):
    padded = np.pad(x, list(zip(window.pad_low, window.pad_high)), constant_values=init)
    out_shape = [(p - s) // st + 1 for p, s, st in zip(padded.shape, window.size,
                                                       window.stride)]
    out = np.empty(out_shape, x.dtype)
    for pos in np.ndindex(*out_shape):
        block = padded[tuple(slice(q * st, q * st + s)
                             for q, st, s in zip(pos, window.stride, window.size))]
        out[pos] = op.reduce(block.reshape(-1), initial=init)
    return out


@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_reduce_window_matches_a_loop(shape, data):
    rank = len(shape)
    sizes = tuple(data.draw(st.integers(1, s + 1)) for s in shape)
    strides = tuple(data.draw(st.integers(1, 3)) for _ in shape)
    pads = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in shape)
    window = Window(sizes, strides, tuple(p[0] for p in pads), tuple(p[1] for p in pads),
                    (1,) * rank, (1,) * rank, (False,) * rank)
    x = np.random.default_rng(0).integers(-9, 9, shape).astype(np.float32)
    b = Builder()
    p = b.param(np.float32, shape)
    comp = b.build(b.op(O.REDUCE_WINDOW, p, b.const(np.float32(0)), window=window,
                        called=(binary(O.ADD, np.float32),)))
    np.testing.assert_array_equal(run(comp, x), naive_reduce_window(x, 0, np.add, window))


def test_reduce_window_dilations():
    x = np.arange(7, dtype=np.float32)
    b = Builder()
    p = b.param(np.float32, (7,))
    window = {"size": (2,), "stride": (3,), "lhs_dilate": (2,), "rhs_dilate": (2,),
              "pad": ((1, 0),)}
    comp = b.build(b.op(O.REDUCE_WINDOW, p, b.const(np.float32(-np.inf)), window=window,
                        called=(binary(O.MAXIMUM, np.float32),)))
    # Padded, dilated base: [-inf, 0, -inf, 1, -inf, 2, ..., -inf, 6]; the windows start at
    # 0, 3, 6, 9 and take the elements at +0 and +2 (values from jax.lax.reduce_window).
    assert run(comp, x).tolist() == [-np.inf, 2, -np.inf, 5]
    b = Builder()
    p = b.param(np.float32, (7,))
    window = {"size": (3,), "stride": (2,), "lhs_dilate": (3,), "pad": ((2, 1),)}
    comp = b.build(b.op(O.REDUCE_WINDOW, p, b.const(np.float32(0)), window=window,
                        called=(binary(O.ADD, np.float32),)))
    assert run(comp, x).tolist() == [0, 0, 1, 2, 2, 3, 4, 4, 5, 6]


def test_select_and_scatter_skips_padding():
    # Values from jax's _select_and_scatter_add (which pads with -inf explicitly) on the same
    # operand: the selection never lands on padding.
    operand = np.float32([[1, 5, 5, 2], [3, 0, 7, 7], [1, 2, 3, 4]])
    source = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    b = Builder()
    p, s = b.param(np.float32, (3, 4)), b.param(np.float32, (3, 3))
    ge = Builder("ge")
    ge_comp = ge.build(ge.op(O.COMPARE, ge.param(np.float32), ge.param(np.float32),
                             direction="GE"))
    window = Window((2, 2), (1, 2), (1, 1), (0, 1), (1, 1), (1, 1), (False, False))
    comp = b.build(b.op(O.SELECT_AND_SCATTER, p, s, b.const(np.float32(0)), window=window,
                        called=(ge_comp, binary(O.ADD, np.float32))))
    assert run(comp, operand, source).tolist() == [[1, 2, 0, 3], [11, 0, 13, 15],
                                                   [0, 0, 0, 0]]


# ---------------------------------------------------------------------- dot, convolution

def dot(x, y, out_dtype=None, **dims):
    b = Builder()
    p, q = b.param(x.dtype, x.shape), b.param(y.dtype, y.shape)
    declared = None if out_dtype is None else Shape(np.dtype(out_dtype), ())
    shape = infer_shape(O.DOT, [p.shape, q.shape], dims, (), declared)
    return run(b.build(b.op(O.DOT, p, q, shape=shape, **dims)), x, y)


def test_dot_general_matches_einsum():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(5, 2, 6, 4))
    got = dot(x, y, lhs_batch=(0,), rhs_batch=(1,), lhs_contracting=(3, 2),
              rhs_contracting=(0, 3))
    np.testing.assert_allclose(got, np.einsum("bmkc,cbnk->bmn", x, y), rtol=1e-12)
    np.testing.assert_allclose(dot(x[0, 0], y[:, 0, 0]), np.multiply.outer(x[0, 0],
                                                                          y[:, 0, 0]))


def test_dot_integer_and_low_precision_accumulation():
    x = np.full((1, 300), 100, np.int8)
    assert dot(x, x.T, lhs_contracting=(1,), rhs_contracting=(0,)).tolist() == [[-64]]
    got = dot(x, x.T, np.int32, lhs_contracting=(1,), rhs_contracting=(0,))
    assert got.dtype == np.int32 and got.tolist() == [[3000000]]
    ones = np.ones((1, 600), BF16)
    got = dot(ones, ones.T, lhs_contracting=(1,), rhs_contracting=(0,))
    assert got.dtype == BF16 and float(got[0, 0]) == 600.0  # accumulated in f32


def conv(lhs, rhs, window, dim_labels, **attrs):
    b = Builder()
    p, q = b.param(lhs.dtype, lhs.shape), b.param(rhs.dtype, rhs.shape)
    comp = b.build(b.op(O.CONVOLUTION, p, q, window=window, dim_labels=dim_labels, **attrs))
    return run(comp, lhs, rhs)


def test_convolution_matches_jax_with_groups_dilations_and_negative_padding():
    lhs = (np.arange(2 * 7 * 5 * 4) % 11 - 5).astype(np.float32).reshape(2, 7, 5, 4)
    rhs = (np.arange(3 * 2 * 2 * 6) % 7 - 3).astype(np.float32).reshape(3, 2, 2, 6)
    window = Window((3, 2), (2, 1), (1, 2), (-1, 0), (1, 2), (2, 1), (False, False))
    out = conv(lhs, rhs, window, "b01f_01io->bf01", feature_group_count=2)
    assert out.shape == (2, 6, 2, 10) and out.sum() == 71
    assert out.reshape(-1)[:8].tolist() == [0, -23, -3, 16, 24, -11, -15, 6]
    assert out.reshape(-1)[-5:].tolist() == [-30, 21, 7, 6, 22]
    rhs = (np.arange(2 * 2 * 4 * 6) % 5 - 2).astype(np.float32).reshape(2, 2, 4, 6)
    out = conv(lhs, rhs, {"size": (2, 2)}, "b01f_01io->b01f", batch_group_count=2)
    assert out.shape == (1, 6, 4, 6) and out.sum() == 12
    assert out.reshape(-1)[:8].tolist() == [33, 0, -18, 3, -27, -27, -8, -15]


def test_convolution_window_reversal_is_correlation_with_a_flipped_kernel():
    rng = np.random.default_rng(2)
    x, k = rng.normal(size=(1, 1, 9)), rng.normal(size=(1, 1, 3))
    flipped = conv(x, k, {"size": (3,), "rhs_reversal": (True,)}, "bf0_oi0->bf0")
    np.testing.assert_allclose(flipped[0, 0], np.convolve(x[0, 0], k[0, 0], "valid"))
    plain = conv(x, k, {"size": (3,)}, "bf0_oi0->bf0")
    np.testing.assert_allclose(plain[0, 0], np.correlate(x[0, 0], k[0, 0], "valid"))


# ------------------------------------------------------------------------------------ sort

def less_than(dtype, operands=1, descending=False) -> HloComputation:
    """Compare by the first operand (total order), ignoring the others."""
    b = Builder("compare")
    params = [b.param(dtype if i < 2 else np.int32) for i in range(2 * operands)]
    return b.build(b.op(O.COMPARE, params[0], params[1], type="TOTALORDER",
                        direction="GT" if descending else "LT"))


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=9),
                  elements=st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, np.nan, np.inf])),
       st.data())
def test_sort_with_comparator_is_stable(x, data):
    dim = data.draw(st.integers(0, x.ndim - 1))
    b = Builder()
    p = b.param(np.float32, x.shape)
    iota = b.op(O.IOTA, shape=Shape(np.int32, x.shape), iota_dimension=dim)
    comp = b.build(b.op(O.SORT, p, iota, dimension=dim, is_stable=True,
                        called=(less_than(np.float32, 2),)))
    values, order = run(comp, x)
    # numpy's stable argsort on the total-order key gives the same permutation.
    bits = x.view(np.int32)
    key = np.where(bits < 0, ~(bits & 0x7FFFFFFF), bits)
    expected = np.argsort(key, axis=dim, kind="stable")
    np.testing.assert_array_equal(order, expected)
    np.testing.assert_array_equal(values.view(np.int32),
                                  np.take_along_axis(x, expected, dim).view(np.int32))


def test_sort_descending_multi_operand():
    keys = np.int32([3, 1, 3, 2, 1])
    payload = np.float32([10, 20, 30, 40, 50])
    b = Builder()
    p, q = b.param(np.int32, (5,)), b.param(np.float32, (5,))
    c = Builder("greater")
    k0, k1, _, _ = c.param(np.int32), c.param(np.int32), c.param(np.float32), \
        c.param(np.float32)
    greater = c.build(c.op(O.COMPARE, k0, k1, direction="GT"))
    sorted_keys, sorted_payload = run(b.build(b.op(O.SORT, p, q, dimension=0,
                                                   called=(greater,))), keys, payload)
    assert sorted_keys.tolist() == [3, 3, 2, 1, 1]
    assert sorted_payload.tolist() == [10, 30, 40, 20, 50]


# ---------------------------------------------------------------------------- control flow

def test_while_loop_computes_a_sum():
    state = Shape.tuple([Shape(np.int32, ()), Shape(np.float32, (3,))])
    c = Builder("cond")
    s = c.b.parameter(state)
    condition = c.build(c.op(O.COMPARE, c.op(O.GET_TUPLE_ELEMENT, s, index=0),
                             c.const(np.int32(10)), direction="LT"))
    body = Builder("body")
    s = body.b.parameter(state)
    i, acc = body.op(O.GET_TUPLE_ELEMENT, s, index=0), body.op(O.GET_TUPLE_ELEMENT, s, index=1)
    as_float = body.op(O.CONVERT, i, shape=Shape(np.float32, ()))
    spread = body.op(O.BROADCAST, as_float, shape=Shape(np.float32, (3,)), dimensions=())
    body_comp = body.build(body.op(O.TUPLE, body.op(O.ADD, i, body.const(np.int32(1))),
                                   body.op(O.ADD, acc, spread)))
    b = Builder()
    x = b.param(np.float32, (3,))
    loop = b.op(O.WHILE, b.op(O.TUPLE, b.const(np.int32(0)), x),
                called=(condition, body_comp))
    out = run(b.build(b.op(O.GET_TUPLE_ELEMENT, loop, index=1)), np.float32([0, 1, 2]))
    assert out.tolist() == [45, 46, 47]


def test_conditional_on_pred_and_index():
    def branch(opcode, name):
        c = Builder(name)
        p = c.param(np.float32, (2,))
        return c.build(c.op(opcode, p))
    neg, exp, floor = (branch(O.NEGATE, "neg"), branch(O.EXP, "exp"),
                       branch(O.FLOOR, "floor"))
    b = Builder()
    flag, x = b.param(np.bool_), b.param(np.float32, (2,))
    comp = b.build(b.op(O.CONDITIONAL, flag, x, x, called=(neg, exp)))
    x = np.float32([0.5, -1.5])
    assert run(comp, True, x).tolist() == [-0.5, 1.5]
    np.testing.assert_allclose(run(comp, False, x), np.exp(x))
    b = Builder()
    index, p = b.param(np.int32), b.param(np.float32, (2,))
    comp = b.build(b.op(O.CONDITIONAL, index, p, p, p, called=(neg, exp, floor)))
    assert run(comp, np.int32(2), x).tolist() == [0, -2]
    assert run(comp, np.int32(7), x).tolist() == [0, -2]  # out of range: the last branch
    assert run(comp, np.int32(-1), x).tolist() == [0, -2]
    assert run(comp, np.int32(0), x).tolist() == [-0.5, 1.5]


def test_fusion_and_call_evaluate_their_computation():
    f = Builder("fused")
    p, q = f.param(np.float32, (4,)), f.param(np.float32, (4,))
    fused = f.build(f.op(O.MULTIPLY, f.op(O.ADD, p, q), q))
    b = Builder()
    x, y = b.param(np.float32, (4,)), b.param(np.float32, (4,))
    fusion = b.op(O.FUSION, x, y, called=(fused,), kind="kLoop")
    call = b.op(O.CALL, fusion, y, called=(fused,))
    comp = b.build(b.op(O.TUPLE, fusion, call))
    x, y = np.float32([1, 2, 3, 4]), np.float32([2, 2, 2, 2])
    first, second = run(comp, x, y)
    assert first.tolist() == [6, 8, 10, 12] and second.tolist() == [16, 20, 24, 28]


def test_custom_call_registry(monkeypatch):
    b = Builder()
    x = b.param(np.float32, (3,))
    comp = b.build(b.op(O.CUSTOM_CALL, x, shape=Shape(np.float32, (3,)), target="twice"))
    with pytest.raises(HloEvaluationError, match="no custom-call target 'twice'"):
        run(comp, np.float32([1, 2, 3]))
    monkeypatch.setitem(CUSTOM_CALL_TARGETS, "twice", lambda inst, a: a * 2)
    assert run(comp, np.float32([1, 2, 3])).tolist() == [2, 4, 6]
    assert evaluator.CUSTOM_CALL_TARGETS is CUSTOM_CALL_TARGETS


def test_arguments_are_checked():
    b = Builder()
    comp = b.build(b.op(O.NEGATE, b.param(np.float32, (2,))))
    with pytest.raises(HloEvaluationError, match="takes 1 arguments"):
        evaluate_computation(comp, [])
    with pytest.raises(HloEvaluationError, match=r"dimensions \(2,\)"):
        evaluate_computation(comp, [np.zeros(3, np.float32)])
    with pytest.raises(HloEvaluationError, match="element type"):
        evaluate_computation(comp, [np.zeros(2, np.int32)])
    assert evaluate_computation(comp, [[1, 2]]).tolist() == [-1, -2]  # lists are converted
