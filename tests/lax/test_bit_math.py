"""clz, mulhi, reduce_precision and the total-order comparisons against values recorded
from JAX 0.10.2 (/tmp/jaxvenv/bin/python, the same calls on the same inputs), plus their
errors and derivatives. Values over whole ranges are checked against independent
references by the records in records_bit_math.py."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

NAN, INF = np.nan, np.inf
PROBES = np.array([1e-41, 1e-39, 1.17e-38, 1e-6, 6e-5, 6.1e-5, 65504., 65519., 65520., 1e5,
                   NAN, -INF, 1.0009765625, 1.00048828125, 1.00146484375, -2.5e-8, 3e-8],
                  np.float32)
# JAX 0.10.2: lax.reduce_precision(PROBES, e, m) for each (e, m).
REDUCED = {
    (5, 10): [0, 0, 0, 0, 0, 0, 65504, 65504, INF, INF, NAN, -INF, 1.0009766, 1.0, 1.0019531,
              -0.0, 0.0],
    (8, 23): [9.9996658e-42, 1.0000002e-39, 1.17e-38, 1e-06, 5.9999998e-05, 6.0999999e-05,
              65504, 65519, 65520, 1e5, NAN, -INF, 1.0009766, 1.0004883, 1.0014648, -2.5e-08,
              2.9999999e-08],
    (8, 7): [0, 1.0101905e-39, 1.1663108e-38, 9.9837780e-07, 6.0081482e-05, 6.1035156e-05,
             65536, 65536, 65536, 99840, NAN, -INF, 1, 1, 1, -2.5029294e-08, 3.0035153e-08],
    (2, 1): [0, 0, 0, 0, 0, 0, INF, INF, INF, INF, NAN, -INF, 1, 1, 1, -0.0, 0],
}


@pytest.mark.parametrize("bits", sorted(REDUCED))
@pytest.mark.parametrize("compiled", [False, True])
def test_reduce_precision_matches_jax(bits, compiled):
    fun = (lambda x: lax.reduce_precision(x, *bits))
    out = np.asarray((jax.jit(fun) if compiled else fun)(PROBES))
    expected = np.array(REDUCED[bits], np.float32)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))


def test_reduce_precision_dtypes_errors_and_derivative():
    assert float(lax.reduce_precision(jnp.float16(3.3), 5, 2)) == 3.5
    with jax.enable_x64(True):
        assert float(lax.reduce_precision(np.float64(1.1), 11, 3)) == 1.125
    with pytest.raises(TypeError, match="reduce_precision does not accept dtype int32"):
        lax.reduce_precision(1, 5, 2)
    with pytest.raises(ValueError, match="exponent_bits must be positive; got 0"):
        lax.reduce_precision(1.0, 0, 2)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative; got -1"):
        lax.reduce_precision(1.0, 5, -1)
    with pytest.raises(TypeError):
        lax.reduce_precision(1.0, 5.5, 2)
    # As in JAX, the derivative is the rounding applied to the tangent (a linear map).
    assert float(jax.grad(lambda x: lax.reduce_precision(x, 5, 2))(1.1)) == 1.0
    _, tangent = jax.jvp(lambda x: lax.reduce_precision(x, 5, 2), (1.1,), (1.1,))
    assert float(tangent) == 1.0
    batched = jax.vmap(lambda x: lax.reduce_precision(x, 5, 2))(jnp.array([1.1, 3.3]))
    np.testing.assert_array_equal(batched, [1.0, 3.5])


def test_clz_and_mulhi_match_jax():
    np.testing.assert_array_equal(
        lax.clz(jnp.array([0, 1, 2, 3, -1, 255, 256, 2**30], jnp.int32)),
        [32, 31, 30, 30, 0, 24, 23, 1])
    np.testing.assert_array_equal(lax.clz(jnp.array([0, 1, 128, 255], jnp.uint8)), [8, 7, 0, 0])
    np.testing.assert_array_equal(lax.clz(jnp.array([0, 1, -128, 127], jnp.int8)), [8, 7, 0, 1])
    a = jnp.array([-7, 3, 2**31 - 1, -2**31, 123456789, -1], jnp.int32)
    b = jnp.array([5, -9, 2**31 - 1, -2**31, 987654321, -1], jnp.int32)
    expected = [-1, -1, 1073741823, 1073741824, 28389652, 0]
    np.testing.assert_array_equal(lax.mulhi(a, b), expected)
    np.testing.assert_array_equal(jax.jit(lax.mulhi)(a, b), expected)
    np.testing.assert_array_equal(lax.mulhi(a.astype(jnp.uint32), b.astype(jnp.uint32)),
                                  [4, 2, 1073741823, 1073741824, 28389652, 4294967294])
    assert int(lax.mulhi(jnp.int8(-100), jnp.int8(100))) == -40
    assert int(lax.mulhi(jnp.uint16(60000), jnp.uint16(60000))) == 54931


def test_mulhi_int64():
    with jax.enable_x64(True):
        a = np.array([-7, 2**63 - 1, -2**63, 1234567890123456789], np.int64)
        b = np.array([5, 2**63 - 1, -2**63, -987654321987654321], np.int64)
        expected = [(int(x) * int(y)) >> 64 for x, y in zip(a, b)]
        np.testing.assert_array_equal(lax.mulhi(a, b), expected)
        np.testing.assert_array_equal(jax.jit(lax.mulhi)(a, b), expected)


@pytest.mark.parametrize("call, message", [
    (lambda: lax.clz(1.0), "clz does not accept dtype float32"),
    (lambda: lax.clz(True), "clz does not accept dtype bool"),
    (lambda: lax.mulhi(1.0, 2.0), "mulhi does not accept dtype float32"),
    (lambda: lax.mulhi(jnp.int32(1), jnp.uint32(1)),
     "lax.mulhi requires arguments to have the same dtypes, got int32, uint32"),
])
def test_bit_math_type_errors(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_total_order_comparisons_match_jax():
    x = jnp.array([-0.0, 0.0, NAN, -NAN, 1.0, -INF, 2.0])
    y = jnp.array([0.0, -0.0, NAN, NAN, INF, -NAN, 2.0])
    # JAX 0.10.2: p.bind(x, y) and p.bind(y, x).
    expected = {
        lax.lt_to_p: ([1, 0, 0, 1, 1, 0, 0], [0, 1, 0, 0, 0, 1, 0]),
        lax.le_to_p: ([1, 0, 1, 1, 1, 0, 1], [0, 1, 1, 0, 0, 1, 1]),
        lax.eq_to_p: ([0, 0, 1, 0, 0, 0, 1], [0, 0, 1, 0, 0, 0, 1]),
    }
    for primitive, (forward, backward) in expected.items():
        np.testing.assert_array_equal(primitive.bind(x, y), np.array(forward, bool))
        np.testing.assert_array_equal(jax.jit(primitive.bind)(y, x), np.array(backward, bool))
    with pytest.raises(TypeError, match="eq_to does not accept dtype complex64"):
        lax.eq_to_p.bind(jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.complex64))
