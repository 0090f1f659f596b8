"""Edge cases of the elementwise primitives that the generic record tests do not reach.

Expected values come from JAX 0.10.2 on the CPU (XLA's semantics): integer division by
zero, INT_MIN / -1, nan propagation, signed zeros, rounding ties, subnormal steps of
nextafter, the derivative conventions at kinks, weak types, and error messages. The special
functions are compared with scipy (a test-time oracle only) at tolerances of a few ulps.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax
from jaxlite.core import dtypes
from jaxlite.lax.arithmetic import elementwise_operands

scipy_special = pytest.importorskip("scipy.special")

bf16 = dtypes.bfloat16
NAN, INF = np.nan, np.inf


def f32(*values):
    return np.array(values, np.float32)


def assert_same(actual, expected):
    """Equal values, dtypes and signs of zero (nan equal to nan)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_array_equal(actual, expected)
    if np.issubdtype(expected.dtype, np.floating) or expected.dtype == bf16:
        numbers = ~np.isnan(expected.astype(np.float32))  # a nan's sign bit is unspecified
        np.testing.assert_array_equal(np.signbit(actual)[numbers], np.signbit(expected)[numbers])


def host(value):
    """A result, or a tuple of results, as Python numbers (no jaxlite operators needed)."""
    if isinstance(value, tuple):
        return tuple(host(v) for v in value)
    return np.asarray(value).item()


# ------------------------------------------------------------------------ integer division

def test_signed_division_truncates_and_defines_division_by_zero():
    x = np.array([7, -7, 7, -7, 0, 5, -5, -2**31, -2**31, 1], np.int32)
    y = np.array([2, 2, -2, -2, 0, 0, 0, -1, 1, -1], np.int32)
    assert_same(lax.div(x, y), np.array([3, -3, -3, 3, -1, -1, -1, -2**31, -2**31, -1],
                                        np.int32))
    assert_same(lax.rem(x, y), np.array([1, -1, 1, -1, 0, 5, -5, 0, 0, 0], np.int32))


@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_narrow_int_min_over_minus_one(dtype):
    low = np.iinfo(dtype).min
    x = np.array([7, low, 0], dtype)
    y = np.array([0, -1, 0], dtype)
    assert_same(lax.div(x, y), np.array([-1, low, -1], dtype))
    assert_same(lax.rem(x, y), np.array([7, 0, 0], dtype))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_unsigned_division_by_zero_sets_all_bits(dtype):
    top = np.iinfo(dtype).max
    x = np.array([7, 0, top], dtype)
    y = np.array([0, 0, 2], dtype)
    assert_same(lax.div(x, y), np.array([top, top, top // 2], dtype))
    assert_same(lax.rem(x, y), np.array([7, 0, 1], dtype))


def test_float_division_and_remainder_special_values():
    x = f32(5.5, -5.5, INF, 1, NAN, -0.0, 0.0)
    y = f32(2, 2, 2, 0, 1, 1, -1)
    assert_same(lax.div(x, y), f32(2.75, -2.75, INF, INF, NAN, -0.0, -0.0))
    assert_same(lax.rem(x, y), f32(1.5, -1.5, NAN, NAN, NAN, -0.0, 0.0))


def test_integer_overflow_wraps():
    big = np.array([2**31 - 1], np.int32)
    assert_same(lax.add(big, np.array([1], np.int32)), np.array([-2**31], np.int32))
    assert_same(lax.neg(np.array([3], np.uint8)), np.array([253], np.uint8))
    assert_same(lax.abs(np.array([-2**31, 3], np.int32)), np.array([-2**31, 3], np.int32))
    assert_same(lax.integer_pow(np.array([2**20], np.int32), 3), np.array([0], np.int32))
    assert_same(lax.integer_pow(np.array([3], np.uint8), 7), np.array([139], np.uint8))


# ------------------------------------------------------------------------------ max, min

def test_max_min_propagate_nan_and_order_signed_zeros():
    x = f32(NAN, 1, 0.0, -0.0, -0.0)
    y = f32(1, NAN, -0.0, 0.0, -0.0)
    assert_same(lax.max(x, y), f32(NAN, NAN, 0.0, 0.0, -0.0))
    assert_same(lax.min(x, y), f32(NAN, NAN, -0.0, -0.0, -0.0))


def test_max_min_of_complex_and_bool():
    x = np.array([1 + 2j, 1 + 1j, 2 + 0j], np.complex64)
    y = np.array([1 + 1j, 1 + 2j, 1 + 5j], np.complex64)
    assert_same(lax.max(x, y), np.array([1 + 2j, 1 + 2j, 2 + 0j], np.complex64))
    assert_same(lax.min(x, y), np.array([1 + 1j, 1 + 1j, 1 + 5j], np.complex64))
    a, b = np.array([True, False, False]), np.array([False, False, True])
    assert_same(lax.max(a, b), np.array([True, False, True]))
    assert_same(lax.min(a, b), np.array([False, False, False]))


def test_max_min_derivatives_split_ties_and_ignore_nan():
    assert host(jax.grad(lax.max, argnums=(0, 1))(1.0, 1.0)) == (0.5, 0.5)
    assert host(jax.grad(lax.min, argnums=(0, 1))(1.0, 1.0)) == (0.5, 0.5)
    assert host(jax.grad(lax.max, argnums=(0, 1))(2.0, 1.0)) == (1.0, 0.0)
    assert host(jax.grad(lax.min, argnums=(0, 1))(2.0, 1.0)) == (0.0, 1.0)
    assert host(jax.grad(lax.max, argnums=(0, 1))(np.float32(NAN), 1.0)) == (0.0, 0.0)


# ------------------------------------------------------------------- sign, abs, rounding

def test_sign_keeps_signed_zero_and_nan():
    assert_same(lax.sign(f32(-2, 0.0, -0.0, NAN, 3)), f32(-1, 0.0, -0.0, NAN, 1))
    assert_same(lax.sign(np.array([-2, 0, 3], np.int32)), np.array([-1, 0, 1], np.int32))
    assert_same(lax.sign(np.array([0, 3], np.uint8)), np.array([0, 1], np.uint8))


def test_complex_sign_and_abs():
    z = np.array([3 + 4j, 0j, complex(INF, 1), complex(NAN, 0)], np.complex64)
    expected = np.array([0.6 + 0.8j, 0j, complex(NAN, 0), complex(NAN, NAN)], np.complex64)
    np.testing.assert_allclose(np.asarray(lax.sign(z)), expected, rtol=1e-6)
    w = np.array([3 + 4j, complex(INF, NAN), complex(NAN, INF), complex(INF, INF),
                  complex(1e30, 1e30)], np.complex64)
    np.testing.assert_allclose(np.asarray(lax.abs(w)), f32(5, NAN, NAN, INF, 1.4142135e30),
                               rtol=1e-6)
    assert lax.abs(w).dtype == np.float32


def test_abs_derivatives():
    assert host(jax.grad(lax.abs)(0.0)) == 1.0  # JAX's convention at the kink
    assert host(jax.grad(lax.abs)(-2.0)) == -1.0
    out, tangent = host(jax.jvp(lax.abs, (np.complex64(3 + 4j),), (np.complex64(1),)))
    assert (out, tangent) == (5.0, pytest.approx(0.6))
    assert host(jax.jvp(lax.abs, (np.complex64(0),), (np.complex64(1),))[1]) == 0.0
    assert complex(jax.grad(lax.abs)(np.complex64(3 + 4j))) == pytest.approx(0.6 - 0.8j)


def test_rounding_ties_and_methods():
    x = f32(0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 0.49999997, -0.3)
    assert_same(lax.round(x), f32(1, 2, 3, -1, -3, -0.0, 0, -0.0))
    assert_same(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                f32(0, 2, 2, -0.0, -2, -0.0, 0, -0.0))
    assert_same(lax.round(x, 1), lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))
    halves = np.array([0.5, 1.5, -2.5], bf16)
    assert_same(lax.round(halves), np.array([1, 2, -3], bf16))
    assert [int(m) for m in lax.RoundingMethod] == [0, 1]


def test_floor_ceil_keep_signed_zero_and_reject_integers():
    assert_same(lax.floor(f32(-0.5, -0.0, 1.5, INF)), f32(-1, -0.0, 1, INF))
    assert_same(lax.ceil(f32(-0.5, -0.0, 1.5, NAN)), f32(-0.0, -0.0, 2, NAN))
    for function in (lax.floor, lax.ceil, lax.round):
        with pytest.raises(TypeError, match="does not accept dtype int32"):
            function(np.array([1, 2], np.int32))


# ----------------------------------------------------------------------------- nextafter

def test_nextafter_steps_one_ulp_including_subnormals():
    x = f32(0.0, 1, 1, NAN, 0.0, -0.0, INF, 1)
    y = f32(1, 2, 0, 1, -1, 1, 0, NAN)
    tiny = np.float32(1.4012985e-45)
    assert_same(lax.nextafter(x, y),
                f32(tiny, 1.0000001, 0.99999994, NAN, -tiny, tiny,
                    np.finfo(np.float32).max, NAN))


def test_nextafter_equal_operands_give_the_second():
    assert_same(lax.nextafter(f32(1, -0.0, 0.0), f32(1, 0.0, -0.0)), f32(1, 0.0, -0.0))


def test_nextafter_in_narrow_formats():
    assert_same(lax.nextafter(np.array([1.0], bf16), np.array([2.0], bf16)),
                np.array([1.0078125], bf16))
    assert_same(lax.nextafter(np.array([1.0, 0.0], np.float16),
                              np.array([2.0, 1.0], np.float16)),
                np.array([1.0009766, 5.9604645e-08], np.float16))


def test_nextafter_has_no_derivative():
    with pytest.raises(NotImplementedError, match="nextafter"):
        jax.grad(lax.nextafter)(1.0, 2.0)


# ----------------------------------------------------------------------------------- pow

def test_pow_special_values():
    base = f32(0, NAN, 1, -8, -0.0, -0.0, 0)
    exponent = f32(0, 0, NAN, 1 / 3, -1, -2, -1)
    assert_same(lax.pow(base, exponent), f32(1, 1, 1, NAN, -INF, INF, INF))


def test_pow_with_integer_exponents():
    x = f32(2, -2, 0, 0.5)
    assert_same(lax.pow(x, np.array([2, 3, -1, 2], np.int32)), f32(4, -8, INF, 0.25))
    assert_same(lax.pow(x, np.array([2, 3, -1, 2], np.int8)), f32(4, -8, INF, 0.25))
    big = lax.pow(f32(1.0000001, 2, -0.0), np.array([2**30, -2**31, -1], np.int32))
    assert_same(big, f32(INF, 0, -INF))
    assert_same(lax.pow(np.array([2], bf16), np.array([2], np.int32)), np.array([4], bf16))
    assert_same(lax.pow(x, 2), f32(4, 4, 0, 0.25))


def test_complex_pow():
    x = np.array([1 + 1j, -1 + 0j, 0j, 0j, 0j, 0j], np.complex64)
    y = np.array([2 + 0j, 0.5 + 0j, 0j, 2 + 0j, 1j, -1 + 0j], np.complex64)
    expected = np.array([2j, 1j, 1, 0, complex(NAN, NAN), complex(NAN, NAN)], np.complex64)
    np.testing.assert_allclose(np.asarray(lax.pow(x, y)), expected, atol=2e-7)
    ints = lax.pow(np.zeros(3, np.complex64), np.array([2, 0, -1], np.int32))
    np.testing.assert_allclose(np.asarray(ints), np.array([0, 1, complex(NAN, NAN)]))


def test_pow_derivatives_follow_jax_at_zero():
    assert np.isnan(jax.grad(lax.pow)(0.0, 0.0))  # 0 * 0**-1, as in JAX
    assert host(jax.grad(lax.pow, argnums=1)(0.0, 0.0)) == 0.0
    assert host(jax.grad(lax.pow, argnums=(0, 1))(0.0, 2.0)) == (0.0, 0.0)
    assert host(jax.grad(lax.pow)(0.0, 1.0)) == 1.0
    assert np.isnan(jax.grad(lax.pow, argnums=1)(-2.0, 2.0))
    assert host(jax.grad(lax.pow)(3.0, np.int32(2))) == 6.0
    assert host(jax.grad(lax.pow)(0.0, np.int32(0))) == 0.0  # the integer exponent 0 is exact


def test_integer_pow():
    x = f32(2, -2, 0, 0.5)
    assert_same(lax.integer_pow(x, -2), f32(0.25, 0.25, INF, 4))
    assert_same(lax.integer_pow(x, 0), f32(1, 1, 1, 1))
    assert_same(lax.integer_pow(np.array([1 + 2j], np.complex64), 3),
                np.array([-11 - 2j], np.complex64))
    assert host(jax.grad(lambda v: lax.integer_pow(v, 0))(0.0)) == 0.0
    assert host(jax.grad(lambda v: lax.integer_pow(v, 1))(0.0)) == 1.0
    assert host(jax.grad(lambda v: lax.integer_pow(v, -2))(2.0)) == -0.25
    assert np.asarray(lax.reciprocal(f32(4)))[0] == 0.25


def test_pow_dtype_errors():
    with pytest.raises(TypeError, match="pow does not accept dtype int32"):
        lax.pow(np.array([2, 3], np.int32), np.array([2, 3], np.int32))
    with pytest.raises(TypeError, match="the second argument must have an inexact or integer"):
        lax.pow(f32(2), np.array([2], np.float16))
    with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
        lax.integer_pow(np.array([2, 3], np.int32), -1)
    with pytest.raises(TypeError, match="integer_pow does not accept dtype bool"):
        lax.integer_pow(np.array([True]), 3)


# -------------------------------------------------------------- weak types and operands

def test_python_scalars_take_the_array_dtype():
    out = lax.add(f32(1, 2), 2.0)
    assert out.dtype == np.float32 and not out.weak_type
    out = lax.add(np.array([1], np.int8), 3)
    assert out.dtype == np.int8 and not out.weak_type
    # Differences from JAX: jax.lax rejects bfloat16 + 1.0 (it makes 1.0 a float32).
    out = lax.mul(np.array([1.5], bf16), 2.0)
    assert out.dtype == bf16 and np.asarray(out)[0] == 3.0
    out = lax.add(np.array([1 + 1j], np.complex64), 2.0)
    assert out.dtype == np.complex64


def test_weak_type_propagates_only_when_all_operands_are_weak():
    weak = lax.add(2.0, 3.0)
    assert weak.dtype == np.float32 and weak.weak_type and float(weak) == 5.0
    assert lax.mul(weak, 2.0).weak_type
    assert lax.exp(weak).weak_type
    assert not lax.add(weak, np.float32(1)).weak_type
    assert lax.abs(lax.add(1j, 1j)).weak_type and lax.abs(lax.add(1j, 1j)).dtype == np.float32
    assert lax.real(lax.add(1j, 1j)).weak_type


def test_mismatched_dtypes_raise_the_lax_message():
    with pytest.raises(TypeError, match=r"lax.add requires arguments to have the same dtypes, "
                                        r"got int32, float32"):
        lax.add(np.array([1, 2], np.int32), 2.5)
    with pytest.raises(TypeError, match="got bfloat16, float32"):
        lax.add(np.ones(2, bf16), np.ones(2, np.float32))
    with pytest.raises(TypeError, match="got int32, float32"):
        lax.add(2, 3.0)  # two scalars keep their own default dtypes, as in JAX


def test_out_of_range_python_ints_raise():
    with pytest.raises(OverflowError, match="300 is out of bounds for the operand dtype int8"):
        lax.add(np.ones(2, np.int8), 300)
    with pytest.raises(OverflowError, match="uint8"):
        lax.sub(np.ones(2, np.uint8), -1)


def test_operands_broadcast_like_jax():
    # JAX's rule: 0-d operands broadcast, and size-1 dimensions of operands of one rank.
    out = lax.add(np.ones((2, 1), np.float32), np.arange(3, dtype=np.float32)[None])
    np.testing.assert_array_equal(out, np.ones((2, 1)) + np.arange(3))
    ops = elementwise_operands("mul", np.ones((4, 1, 3), np.float32), 2.0,
                               np.ones((1, 5, 1), np.float32), np.float32(3))
    assert [np.shape(a) for a in ops] == [(4, 5, 3)] * 4
    assert ops[1].dtype == np.float32 and ops[1].weak_type
    jaxpr = str(jax.make_jaxpr(lambda a, b: lax.sub(a, b))(np.ones((2, 1)), np.ones((1, 3))))
    assert "broadcast_in_dim" in jaxpr


def test_mismatched_shapes_raise_as_in_jax():
    # Messages checked against JAX 0.10.2.
    with pytest.raises(TypeError, match=r"^add got incompatible shapes for broadcasting: "
                                        r"\(2,\), \(3,\)\."):
        lax.add(np.ones(2, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"^atan2: arrays must have the same number of "
                                        r"dimensions, got \{1, 2\}"):
        lax.atan2(np.ones(3, np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"^and got incompatible shapes for broadcasting"):
        lax.bitwise_and(np.ones(3, np.int32), np.ones(4, np.int32))
    with pytest.raises(TypeError, match=r"^add: arrays must have the same number"):
        jax.jit(lax.add)(np.ones(3, np.float32), np.ones((1, 3), np.float32))


def test_unsupported_dtypes_name_the_operation():
    with pytest.raises(TypeError, match="add does not accept dtype bool"):
        lax.add(np.array([True]), np.array([False]))
    with pytest.raises(TypeError, match="abs does not accept dtype uint8"):
        lax.abs(np.array([3], np.uint8))
    with pytest.raises(TypeError, match="rem does not accept dtype complex64"):
        lax.rem(np.ones(1, np.complex64), np.ones(1, np.complex64))
    with pytest.raises(TypeError, match="real does not accept dtype float32"):
        lax.real(f32(1))
    with pytest.raises(TypeError, match="complex does not accept dtype bfloat16 at position 0"):
        lax.complex(np.ones(1, bf16), np.ones(1, bf16))
    with pytest.raises(TypeError, match="exp does not accept dtype int32"):
        lax.exp(np.array([1], np.int32))


# ---------------------------------------------------------------------------- constants

def test_full_and_full_like():
    out = lax.full((2,), 1.0)
    assert out.shape == (2,) and out.dtype == np.float32 and out.weak_type
    out = lax.full(3, 1)
    assert out.shape == (3,) and out.dtype == np.int32 and out.weak_type
    out = lax.full((2,), 1.0, np.int32)
    assert out.dtype == np.int32 and not out.weak_type
    assert not lax.full((2,), np.float32(1)).weak_type
    out = lax.full_like(np.ones(2, np.int8), 3)
    assert out.dtype == np.int8 and not out.weak_type and np.asarray(out).tolist() == [3, 3]
    assert lax.full_like(lax.add(1.0, 1.0), 3).weak_type
    assert not lax.full_like(lax.add(1.0, 1.0), 3, np.float32).weak_type
    assert lax.full_like(f32(1, 2), 3, shape=(3, 1)).shape == (3, 1)


# ------------------------------------------------------------------------ complex parts

def test_complex_parts_values_and_weak_types():
    assert_same(lax.complex(f32(INF), f32(2)), np.array([complex(INF, 2)], np.complex64))
    assert_same(lax.conj(np.float32(2)), np.complex64(2))
    assert lax.complex(2.0, 3.0).weak_type
    assert_same(lax.imag(np.array([1 + 2j], np.complex64)), f32(2))


def test_complex_parts_transposes_match_jax():
    assert host(jax.vjp(lax.conj, np.complex64(1 + 1j))[1](np.complex64(1 + 2j))) == (1 - 2j,)
    assert host(jax.vjp(lax.conj, np.float32(1))[1](np.complex64(1 + 2j))) == (1.0,)
    assert host(jax.vjp(lax.complex, np.float32(1), np.float32(2))[1](np.complex64(1 + 2j))) \
        == (1.0, -2.0)
    assert host(jax.vjp(lax.real, np.complex64(1 + 3j))[1](np.float32(2))) == (2 + 0j,)
    assert host(jax.vjp(lax.imag, np.complex64(1 + 3j))[1](np.float32(2))) == (-2j,)
    # Transposes are linear, not conjugate-linear: mul by c transposes to mul by c.
    pullback = jax.vjp(lambda v: lax.mul(v, np.complex64(1 + 1j)), np.complex64(1 + 3j))[1]
    assert host(pullback(np.complex64(2))) == (2 + 2j,)


# ----------------------------------------------------------------- math function edges

@pytest.mark.parametrize("name, expected", [
    ("exp", [1, 1, INF, 0, NAN]),
    ("expm1", [0, -0.0, INF, -1, NAN]),
    ("log", [-INF, -INF, INF, NAN, NAN]),
    ("log1p", [0, -0.0, INF, NAN, NAN]),
    ("sqrt", [0, -0.0, INF, NAN, NAN]),
    ("rsqrt", [INF, -INF, 0, NAN, NAN]),
    ("cbrt", [0, -0.0, INF, -INF, NAN]),
    ("tanh", [0, -0.0, 1, -1, NAN]),
    ("logistic", [0.5, 0.5, 1, 0, NAN]),
    ("sin", [0, -0.0, NAN, NAN, NAN]),
    ("atan", [0, -0.0, np.pi / 2, -np.pi / 2, NAN]),
    ("sinh", [0, -0.0, INF, -INF, NAN]),
    ("cosh", [1, 1, INF, INF, NAN]),
    ("asinh", [0, -0.0, INF, -INF, NAN]),
    ("acosh", [NAN, NAN, INF, NAN, NAN]),
    ("atanh", [0, -0.0, NAN, NAN, NAN]),
    ("exp2", [1, 1, INF, 0, NAN]),
])
def test_special_values_of_math_functions(name, expected):
    out = getattr(lax, name)(f32(0.0, -0.0, INF, -INF, NAN))
    assert_same(out, f32(*expected))


def test_is_finite_and_atan2_zeros():
    assert_same(lax.is_finite(f32(0, INF, -INF, NAN)), np.array([True, False, False, False]))
    assert_same(lax.atan2(f32(0.0, -0.0, 0.0, -0.0, INF), f32(0.0, 0.0, -0.0, -0.0, INF)),
                f32(0.0, -0.0, np.pi, -np.pi, np.pi / 4))


def test_complex_atan2_matches_jax():
    z = np.array([1 + 2j, -0.5 + 0.3j, 0.1j], np.complex64)
    w = np.array([0.5 - 1j, 2 + 0.1j, 1 + 0j], np.complex64)
    expected = [1.9081668 + 0.37908688j, -0.24313654 + 0.15412842j, 0.10033534j]
    np.testing.assert_allclose(np.asarray(lax.atan2(z, w)), expected, rtol=1e-6)


# --------------------------------------------------------------------- special functions

def _ulps(dtype):
    # Measured against mpmath, both jaxlite's float64 references (libm's lgamma, the digamma
    # series) and scipy's are off by up to about 8 ulps (relative to max(1, |value|)), so
    # they may differ by 16. A float32 result is one rounding of an accurate float64 value:
    # within an ulp of scipy's rounded value, and 4 leave a margin.
    return (4 if dtype == np.float32 else 16) * np.finfo(dtype).eps


def _assert_close_to(actual, expected, dtype):
    actual = np.asarray(actual, np.float64)
    scale = np.maximum(1.0, np.abs(expected))
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(actual[~finite], expected[~finite])
    assert np.all(np.abs(actual - expected)[finite] <= _ulps(dtype) * scale[finite])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, oracle", [
    ("erf", "erf"), ("erfc", "erfc"), ("lgamma", "gammaln"), ("digamma", "digamma")])
def test_special_functions_against_scipy(dtype, name, oracle):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-10, 10, 400), rng.uniform(0, 1e-3, 50),
                        rng.uniform(10, 1e4, 50)]).astype(dtype)
    # scipy's own digamma loses digits next to the poles; compare away from them.
    x = x[np.abs(x - np.round(x)) > 0.05] if name == "digamma" else x
    with jax.enable_x64(dtype == np.float64):
        actual = getattr(lax, name)(x)
        assert np.asarray(actual).dtype == dtype
    _assert_close_to(actual, getattr(scipy_special, oracle)(x.astype(np.float64)), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_inv_against_scipy(dtype):
    rng = np.random.default_rng(1)
    tail = 1 - 10.0 ** -rng.uniform(1, 7 if dtype == np.float32 else 15, 100)
    x = np.concatenate([rng.uniform(-1, 1, 400), tail, -tail]).astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        actual = lax.erf_inv(x)
    expected = scipy_special.erfinv(x.astype(np.float64))
    if dtype == np.float32:
        # XLA's kernel (JAX's values bit for bit, tests/random/test_bit_exact.py) forms
        # 1 - x^2 in float32, which costs up to 65 ulps next to +-1.
        finite = np.isfinite(expected)
        error = np.abs(np.asarray(actual, np.float64) - expected)[finite]
        assert np.all(error <= 66 * np.spacing(np.abs(expected[finite]).astype(np.float32)))
        return
    _assert_close_to(actual, expected, dtype)


def test_special_function_edges():
    assert_same(lax.erf_inv(f32(0, -0.0, 1, -1, 1.5, NAN)), f32(0, -0.0, INF, -INF, NAN, NAN))
    assert_same(lax.lgamma(f32(0, -1, INF, -INF, NAN, -1e30)),
                f32(INF, INF, INF, INF, NAN, INF))
    assert_same(lax.digamma(f32(0, -0.0, -1, INF, -INF, NAN)),
                f32(NAN, NAN, NAN, INF, NAN, NAN))
    assert_same(lax.erf(f32(INF, -INF, -0.0)), f32(1, -1, -0.0))
    assert_same(lax.erfc(f32(INF, -INF)), f32(0, 2))


def test_digamma_derivative_is_trigamma():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-8, 8, 200), rng.uniform(0.01, 60, 100)])
    x = x[np.abs(x - np.round(x)) > 0.05]
    with jax.enable_x64(True):
        slope = np.asarray(jax.vmap(jax.grad(lax.digamma))(x))
    expected = scipy_special.polygamma(1, x)
    # Composed of about 40 lax operations in float64: allow 64 ulps.
    np.testing.assert_allclose(slope, expected, rtol=64 * np.finfo(np.float64).eps)


def test_special_function_derivatives():
    assert float(jax.grad(lax.lgamma)(3.0)) == pytest.approx(scipy_special.digamma(3.0))
    assert float(jax.grad(lax.erf_inv)(0.5)) == pytest.approx(
        np.sqrt(np.pi) / 2 * np.exp(scipy_special.erfinv(0.5) ** 2), rel=1e-6)
    assert float(jax.grad(lax.erf)(0.3)) == pytest.approx(
        2 / np.sqrt(np.pi) * np.exp(-0.09), rel=1e-6)
