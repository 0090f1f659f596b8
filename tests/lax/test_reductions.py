"""Edge cases of reductions.py, cumulative.py and dot.py that the generic records miss.

NaN and signed zeros in max/min/argmax, derivatives at ties and zeros (expected values
taken from JAX 0.10.2), integer and low-precision accumulation in dot_general, mixed
dtypes, and the error messages for bad arguments.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax
import jaxlite.numpy as jnp

NAN, INF = np.nan, np.inf
F32 = np.float32


def _jvp(f, x, t):
    return np.asarray(jax.jvp(f, (x,), (t,))[1])


def _grad_of_sum(f, x):
    """Gradient of sum(f(x)), summing with lax so that no array operators are needed."""
    def total(v):
        out = f(v)
        return lax.reduce_sum(out, tuple(range(np.ndim(out))))
    return np.asarray(jax.grad(total)(x))


# ---------------------------------------------------------------------- max, min, NaN

def test_reduce_max_and_argmax_with_nan():
    x = np.array([1.0, NAN, 3.0, NAN], F32)
    assert np.isnan(lax.reduce_max(x, (0,)))
    assert np.isnan(lax.reduce_min(x, (0,)))
    assert int(lax.argmax(x, 0, np.int32)) == 1  # the first NaN wins
    assert int(lax.argmin(x, 0, np.int32)) == 1


def test_argmax_ties_take_first_index():
    x = np.array([[1, 3, 3], [2, 2, 0]], F32)
    np.testing.assert_array_equal(lax.argmax(x, 1, np.int32), [1, 0])
    np.testing.assert_array_equal(lax.argmin(x, 1, np.uint8), [0, 2])
    assert lax.argmin(x, 1, np.uint8).dtype == np.uint8
    # -0.0 and +0.0 are equal for argmax/argmin: the first one wins.
    assert int(lax.argmax(np.array([0.0, -0.0], F32), 0, np.int32)) == 0
    assert int(lax.argmin(np.array([0.0, -0.0], F32), 0, np.int32)) == 0


@pytest.mark.parametrize("values, largest_sign, smallest_sign", [
    ([0.0, -0.0], False, True), ([-0.0, 0.0], False, True),
    ([-0.0, -0.0], True, True), ([0.0, 0.0], False, False)])
def test_signed_zeros_in_max_and_min(values, largest_sign, smallest_sign):
    x = np.array(values, F32)
    assert np.signbit(lax.reduce_max(x, (0,))) == largest_sign
    assert np.signbit(lax.reduce_min(x, (0,))) == smallest_sign
    assert np.signbit(np.asarray(lax.cummax(x))[-1]) == largest_sign
    assert np.signbit(np.asarray(lax.cummin(x))[-1]) == smallest_sign


@pytest.mark.parametrize("dtype, lowest, highest", [
    (F32, -INF, INF), (np.int8, -128, 127), (np.uint8, 0, 255), (np.bool_, False, True),
    (ml_dtypes.bfloat16, -INF, INF), (np.complex64, -INF, INF)])
def test_empty_max_and_min_give_the_identity(dtype, lowest, highest):
    x = np.ones((2, 0), dtype)
    np.testing.assert_array_equal(lax.reduce_max(x, (1,)), np.full(2, lowest, dtype))
    np.testing.assert_array_equal(lax.reduce_min(x, (1,)), np.full(2, highest, dtype))


def test_empty_products_and_bitwise_reductions():
    np.testing.assert_array_equal(lax.reduce_prod(np.ones((2, 0), np.int8), (1,)), [1, 1])
    assert int(lax.reduce_and(np.ones((2, 0), np.uint8), (0, 1))) == 255
    assert int(lax.reduce_and(np.ones((0,), np.int32), (0,))) == -1
    assert bool(lax.reduce_and(np.ones((0,), bool), (0,)))
    assert int(lax.reduce_or(np.ones((2, 0), np.int8), (0, 1))) == 0
    assert not bool(lax.reduce_xor(np.ones((0,), bool), (0,)))


def test_bitwise_reductions_values():
    x = np.array([[3, 5], [6, 12]], np.int8)
    np.testing.assert_array_equal(lax.reduce_and(x, (0,)), [2, 4])
    np.testing.assert_array_equal(lax.reduce_or(x, (1,)), [7, 14])
    np.testing.assert_array_equal(lax.reduce_xor(x, (0, 1)), 3 ^ 5 ^ 6 ^ 12)
    assert bool(lax.reduce_xor(np.array([True, True, True]), (0,)))


def test_complex_max_is_lexicographic():
    x = np.array([1 + 2j, 2 + 0j, 2 - 1j, 1 + 5j], np.complex64)
    assert complex(lax.reduce_max(x, (0,))) == 2 + 0j
    assert complex(lax.reduce_min(x, (0,))) == 1 + 2j


def test_integer_products_and_sums_wrap():
    assert int(lax.reduce_prod(np.full(10, 3, np.int8), (0,))) == np.int8(-87)
    np.testing.assert_array_equal(lax.cumsum(np.full(3, 100, np.int8)), [100, -56, 44])


def test_weak_types():
    weak = lax.broadcast(1.0, (3,))
    assert lax.reduce_max(weak, (0,)).weak_type
    assert lax.reduce_prod(weak, (0,)).weak_type
    assert lax.cumsum(weak).weak_type
    assert not lax.argmax(weak, 0, np.int32).weak_type
    assert not lax.reduce_and(lax.broadcast(1, (3,)), (0,)).weak_type
    assert lax.dot(weak, weak).weak_type
    assert not lax.dot(weak, np.ones(3, F32)).weak_type


# ------------------------------------------------------------------ derivatives at ties

def test_reduce_max_jvp_averages_over_ties():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0], F32)
    t = np.array([1.0, 2.0, 4.0, 8.0, 16.0], F32)
    np.testing.assert_allclose(_jvp(lambda v: lax.reduce_max(v, (0,)), x, t), 22.0 / 3)
    grad = _grad_of_sum(lambda v: lax.reduce_max(v, (1,)),
                        np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], F32))
    np.testing.assert_allclose(grad, [[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)


def test_reduce_min_derivative_with_nan_and_ties():
    # As in JAX: a NaN extremum equals no element, so its derivative is 0/0.
    grad = _grad_of_sum(lambda v: lax.reduce_min(v, (1,)),
                        np.array([[1.0, 1.0, 2.0], [NAN, 0.0, 0.0]], F32))
    np.testing.assert_allclose(grad, [[0.5, 0.5, 0.0], [NAN, NAN, NAN]])


def test_cummax_jacobian_at_ties_matches_jax():
    ones = np.ones(5, F32)
    forward = np.asarray(jax.jacfwd(lax.cummax)(ones))
    np.testing.assert_array_equal(forward, [
        [1, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0], [0.25, 0.25, 0.5, 0, 0],
        [0.25, 0.25, 0.25, 0.25, 0], [0.125, 0.125, 0.125, 0.125, 0.5]])
    backward = np.asarray(jax.jacfwd(lambda v: lax.cummax(v, reverse=True))(ones))
    np.testing.assert_array_equal(backward, [
        [0.5, 0.125, 0.125, 0.125, 0.125], [0, 0.25, 0.25, 0.25, 0.25],
        [0, 0, 0.5, 0.25, 0.25], [0, 0, 0, 0.5, 0.5], [0, 0, 0, 0, 1]])
    mixed = np.asarray(jax.jacfwd(lax.cummax)(np.array([1, 3, 2, 3, 3, 0, 3], F32)))
    np.testing.assert_array_equal(mixed[3:], [
        [0, 0.5, 0, 0.5, 0, 0, 0], [0, 0.25, 0, 0.25, 0.5, 0, 0],
        [0, 0.25, 0, 0.25, 0.5, 0, 0], [0, 0.125, 0, 0.125, 0.25, 0, 0.5]])
    # Reverse mode gives the same matrix.
    np.testing.assert_array_equal(np.asarray(jax.jacrev(lax.cummax)(ones)), forward)


def test_cummin_jacobian_at_ties_matches_jax():
    jac = np.asarray(jax.jacfwd(lax.cummin)(np.array([2, 1, 1, 3, 1, 1], F32)))
    np.testing.assert_array_equal(jac, [
        [1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0.5, 0.5, 0, 0, 0],
        [0, 0.5, 0.5, 0, 0, 0], [0, 0.25, 0.25, 0, 0.5, 0], [0, 0.25, 0.25, 0, 0.25, 0.25]])


def test_cummax_derivative_after_nan_is_zero():
    jac = np.asarray(jax.jacfwd(lax.cummax)(np.array([0.0, -0.0, NAN, 1.0], F32)))
    np.testing.assert_array_equal(jac, [[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0, 0, 0, 0],
                                        [0, 0, 0, 0]])


# ------------------------------------------------------------------ products with zeros

@pytest.mark.parametrize("values, expected", [
    ([2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0]),
    ([2.0, 0.0, 3.0, 4.0], [0.0, 24.0, 0.0, 0.0]),
    ([2.0, 5.0, 3.0, 4.0], [60.0, 24.0, 40.0, 30.0]),
    ([0.0], [1.0]),
    ([2.0, INF, 3.0, 0.0], [NAN, 0.0, NAN, INF])])
def test_reduce_prod_gradient_with_zeros(values, expected):
    x = np.array(values, F32)
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda v: lax.reduce_prod(v, (0,)))(x)),
                                  expected)


def test_reduce_prod_gradient_over_several_axes():
    x = np.array([[2.0, 0.0], [3.0, 5.0]], F32)
    grad = jax.grad(lambda v: lax.reduce_prod(v, (1, 0)))(x)
    np.testing.assert_array_equal(np.asarray(grad), [[0.0, 30.0], [0.0, 0.0]])
    t = np.arange(4, dtype=F32).reshape(2, 2)
    # d prod = sum_i t_i prod_{j != i} x_j: only the zero's tangent (1.0) survives.
    assert _jvp(lambda v: lax.reduce_prod(v, (0, 1)), x, t) == 30.0


def test_cumprod_jacobian_with_zeros_matches_jax():
    jac = np.asarray(jax.jacrev(lax.cumprod)(np.array([2.0, 0.0, 3.0, 0.0, 1.0], F32)))
    np.testing.assert_array_equal(jac, [
        [1, 0, 0, 0, 0], [0, 2, 0, 0, 0], [0, 6, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
    rev = np.asarray(jax.jacrev(lambda v: lax.cumprod(v, reverse=True))(
        np.array([2.0, 0.0, 3.0, 4.0, 1.0], F32)))
    np.testing.assert_array_equal(rev, [
        [0, 24, 0, 0, 0], [0, 12, 0, 0, 0], [0, 0, 4, 3, 12], [0, 0, 0, 1, 4], [0, 0, 0, 0, 1]])


def test_cumlogsumexp_jacobian():
    x = np.log(np.array([1.0, 3.0, 4.0], F32))
    np.testing.assert_allclose(np.asarray(jax.jacfwd(lax.cumlogsumexp)(x)),
                               [[1, 0, 0], [0.25, 0.75, 0], [0.125, 0.375, 0.5]], rtol=1e-6)


def test_cumlogsumexp_with_infinities():
    x = np.array([-INF, -INF, 0.0, -INF, INF, 1.0], F32)
    np.testing.assert_array_equal(lax.cumlogsumexp(x), [-INF, -INF, 0.0, 0.0, INF, INF])


# --------------------------------------------------------------------------- dot_general

def test_dot_general_int8_accumulates_in_preferred_int32():
    x = np.full((3, 100), 100, np.int8)
    dims = (((1,), (0,)), ((), ()))
    wide = lax.dot_general(x, x.T, dims, preferred_element_type=np.int32)
    assert wide.dtype == np.int32
    np.testing.assert_array_equal(wide, np.full((3, 3), 1_000_000))
    narrow = lax.dot_general(x, x.T, dims)  # int8 result: the sum wraps modulo 256
    assert narrow.dtype == np.int8
    np.testing.assert_array_equal(narrow, np.full((3, 3), 64))
    assert int(lax.dot(x[0], x[0], preferred_element_type=np.int16)) == 1_000_000 % 2**16


def test_dot_low_precision_floats_accumulate_in_float32():
    ones = np.ones(4096, np.float16)  # a float16 running sum would stall at 2048
    assert float(lax.dot(ones, ones)) == 4096.0
    bf = np.ones(1000, ml_dtypes.bfloat16)
    out = lax.dot(bf, bf, preferred_element_type=np.float32)
    assert out.dtype == np.float32 and float(out) == 1000.0


def test_dot_bool_and_mixed_dtypes():
    t = np.ones((2, 3), bool)
    assert lax.dot(t, t.T).dtype == np.bool_
    assert not np.any(np.asarray(lax.dot(np.zeros((2, 3), bool), t.T)))
    np.testing.assert_array_equal(lax.dot(t, t.T, preferred_element_type=np.int32), 3)
    assert lax.dot(np.ones(3, np.int8), np.ones(3, F32)).dtype == np.float32
    assert lax.dot(np.ones(3, np.int32), np.ones(3, np.uint32)).dtype == np.int32
    assert lax.dot(np.ones(3, ml_dtypes.bfloat16), np.ones(3, np.float16)).dtype == \
        ml_dtypes.bfloat16
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    b = np.array([2 + 5j, -1 + 4j], np.complex64)
    assert complex(lax.dot(a, b)) == -7 + 22j
    real = lax.dot(a, b, preferred_element_type=F32)  # the real part of the contraction
    assert real.dtype == F32 and float(real) == -7.0


def test_dot_general_layout_and_transposes():
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((4, 2, 3, 5)).astype(F32)
    rhs = rng.standard_normal((5, 3, 4, 2)).astype(F32)
    dims = (((0, 2, 3), (2, 1, 0)), ((1,), (3,)))  # contracting dims listed out of order
    out = lax.dot_general(lhs, rhs, dims)
    expected = np.einsum("abcd,dcab->b", lhs, rhs)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    ct = rng.standard_normal(expected.shape).astype(F32)
    _, pullback = jax.vjp(lambda a, b: lax.dot_general(a, b, dims), lhs, rhs)
    lhs_ct, rhs_ct = pullback(ct)
    np.testing.assert_allclose(lhs_ct, np.einsum("b,dcab->abcd", ct, rhs), rtol=1e-5)
    np.testing.assert_allclose(rhs_ct, np.einsum("b,abcd->dcab", ct, lhs), rtol=1e-5)


def test_dot_general_output_order_is_batch_lhs_free_rhs_free():
    lhs = np.ones((7, 2, 3), F32)   # free 7, batch 2, contract 3
    rhs = np.ones((3, 5, 2), F32)   # contract 3, free 5, batch 2
    out = lax.dot_general(lhs, rhs, (((2,), (0,)), ((1,), (2,))))
    assert out.shape == (2, 7, 5)
    np.testing.assert_array_equal(out, 3.0)


@pytest.mark.parametrize("lhs_shape, rhs_shape, dims, message", [
    ((2, 3), (3, 4), (((1,), (1,)), ((), ())),
     "contracting dimensions to have the same shape, got (3,) and (4,)"),
    ((2, 3), (2, 3), (((1,), (1,)), ((0,), ())),
     "equal numbers of lhs_batch and rhs_batch dimensions"),
    ((2, 3), (3, 3), (((2,), (0,)), ((), ())),
     "lhs dimension numbers to be nonnegative and less than the number of axes"),
    ((2, 3), (3, 3), (((1,), (-1,)), ((), ())),
     "rhs dimension numbers to be nonnegative and less than the number of axes"),
    ((2, 3), (2, 3), (((1, 1), (1, 0)), ((), ())),
     "lhs contracting dimensions to be distinct"),
    ((2, 3), (2, 3), (((1,), (1,)), ((1,), (0,))),
     "lhs batch dimensions to be disjoint from contracting dimensions"),
    ((2, 3), (4, 3), (((1,), (1,)), ((0,), (0,))),
     "batch dimensions to have the same shape, got (2,) and (4,)"),
    ((2, 3), (3, 3), (((1,), (0, 1)), ((), ())),
     "equal numbers of lhs and rhs contracting dimensions"),
])
def test_dot_general_rejects_bad_dimension_numbers(lhs_shape, rhs_shape, dims, message):
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        lax.dot_general(np.ones(lhs_shape, F32), np.ones(rhs_shape, F32), dims)


def test_dot_and_batch_matmul_argument_errors():
    with pytest.raises(ValueError, match="dimension_numbers must be specified"):
        lax.dot(np.ones((2, 3, 4)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="dimension_numbers must be specified"):
        lax.dot(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="must have same ndim"):
        lax.batch_matmul(np.ones((2, 3, 4)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="at least 2D"):
        lax.batch_matmul(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="must not be narrower"):
        lax.dot(np.ones(3, np.int32), np.ones(3, np.int32), preferred_element_type=np.int8)
    assert lax.batch_matmul(np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape == (2, 3, 5)


def test_dot_precision_parameter_is_canonical():
    jaxpr = jax.make_jaxpr(lambda a, b: lax.dot(a, b, precision="highest"))(
        np.ones((2, 2), F32), np.ones((2, 2), F32))
    params = jaxpr.jaxpr.eqns[0].params
    assert params["precision"] == (lax.Precision.HIGHEST, lax.Precision.HIGHEST)
    assert params["dimension_numbers"] == (((1,), (0,)), ((), ()))


# -------------------------------------------------------------------- argument errors

def test_reduction_argument_errors():
    # Types and messages as in JAX 0.10.2.
    with pytest.raises(ValueError, match=r"^reduction axes \(2,\) contains out-of-bounds"):
        lax.reduce_max(np.ones((3, 2)), (2,))
    with pytest.raises(ValueError, match="^duplicate value in 'axes' of reduction"):
        lax.reduce_max(np.ones((3, 2)), (0, 0))
    with pytest.raises(TypeError, match="reduce_prod does not accept dtype bool"):
        lax.reduce_prod(np.ones(3, bool), (0,))
    with pytest.raises(TypeError, match="^logical reduction requires operand dtype bool or int, "
                                        "got float32"):
        lax.reduce_and(np.ones(3, F32), (0,))
    with pytest.raises(ValueError, match="non-empty reduced dimension"):
        lax.argmax(np.ones((0, 3), F32), 0, np.int32)
    with pytest.raises(TypeError, match="index_dtype must be an integer type"):
        lax.argmax(np.ones(3, F32), 0, F32)
    with pytest.raises(TypeError, match="argmax does not accept dtype complex64"):
        lax.argmax(np.ones(3, np.complex64), 0, np.int32)
    with pytest.raises(ValueError, match="Invalid axis 2"):
        lax.argmin(np.ones((3, 2)), 2, np.int32)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cumsum(np.ones(3), 1)
    with pytest.raises(TypeError, match="cumsum does not accept dtype bool"):
        lax.cumsum(np.ones(3, bool))
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(np.ones(3, np.int32))


def test_negative_axes_count_from_the_end():
    x = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_array_equal(lax.reduce_max(x, (-1,)), [2, 5])
    np.testing.assert_array_equal(lax.argmax(x, -1, np.int32), [2, 2])
    np.testing.assert_array_equal(lax.cumsum(x, -1), np.cumsum(x, axis=1))


@pytest.mark.parametrize("mode", ["eager", "jit", "interpreter"])
def test_one_term_reductions_return_the_term_as_jax(mode):
    # JAX 0.10.2 (XLA drops the identity start of a one-term reduce): sum of [-0.] is -0.,
    # also over a size-1 axis of a matrix and for a 0-d value; prod of [0 + inf j] is
    # 0 + inf j (1 * (0 + inf j) would be nan + inf j). Fuzzer finding; jaxlite gave +0. and
    # nan + inf j.
    run = {"eager": lambda f: f, "jit": jax.jit,
           "interpreter": lambda f: jax.jit(f, backend="interpreter")}[mode]
    for x in (np.array([-0.0], np.float32), np.float32(-0.0), np.full((2, 1), -0.0, np.float32)):
        out = np.asarray(run(lambda v: jnp.sum(v, axis=-1 if np.ndim(v) == 2 else None))(x))
        assert np.all(out == 0) and np.all(np.signbit(out))
    z = np.array([complex(0, np.inf)], np.complex64)
    out = np.asarray(run(jnp.prod)(z))
    assert out.real == 0 and not np.signbit(out.real) and np.isposinf(out.imag)
