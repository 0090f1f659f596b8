"""Compiled code computes with subnormal floats flushed to zero, as XLA's CPU runtime does.

The expected values are JAX 0.10.2's under jit on the CPU (recorded by hand from
/tmp/jaxvenv): a subnormal operand reads as zero (DAZ) and a subnormal result becomes zero
(FTZ), while moves, bitcasts and sign operations keep the bits. The mode is set only for the
compiled call: numpy in the calling thread keeps IEEE gradual underflow, and so does eager
jaxlite (numpy's arithmetic, see docs/numpy_differences.md).
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.backends.cpu import runtime
from jaxlite.config import config

pytestmark = pytest.mark.skipif(
    not runtime.FLUSHES_SUBNORMALS,
    reason="the runtime flushes subnormals on x86-64 and AArch64 hosts only")

TINY = np.float32(1e-39)  # subnormal in float32 (the smallest normal is 1.18e-38)


def bits(x):
    x = np.asarray(x)
    return x.ravel().view(f"u{x.dtype.itemsize}").tolist()


def test_subnormal_operands_and_results_are_flushed():
    x = np.array([TINY, 1e-42, 3e-20, -2e-39], np.float32)
    ones = np.ones(4, np.float32)
    assert bits(jax.jit(lambda a, b: a * b)(x, ones)) == bits(np.float32([0, 0, 3e-20, -0.0]))
    assert bits(jax.jit(lambda a, b: a + b)(x, 0 * ones)) == bits(np.float32([0, 0, 3e-20, 0]))
    assert bits(jax.jit(jnp.exp)(np.float32([-88.0, -100.0]))) == bits(np.float32([0, 0]))
    assert jax.jit(lambda a: a > 0)(x).tolist() == [False, False, True, False]
    assert float(jax.jit(jnp.sum)(np.float32([TINY, TINY]))) == 0.0
    # Results at the bottom of the normal range are kept.
    half = jax.jit(lambda a, b: a * b)(np.full(2, 3e-38, np.float32), np.full(2, 0.5, np.float32))
    assert bits(half) == bits(np.full(2, 1.5e-38, np.float32))


def test_moves_and_bitcasts_keep_subnormal_bits():
    x = np.array([TINY, -TINY, 1e-45], np.float32)
    assert bits(jax.jit(lambda a: a.reshape(3, 1))(x)) == bits(x)
    assert bits(jax.jit(jnp.abs)(x)) == bits(np.abs(x))
    assert bits(jax.jit(jnp.negative)(x)) == bits(-x)
    assert jax.jit(lambda a: lax.bitcast_convert_type(a, jnp.int32))(x).tolist() == \
        x.view(np.int32).tolist()


def test_sign_of_a_subnormal_is_a_signed_zero():
    x = np.array([TINY, -TINY, 0.0, -0.0, 2e-38, -3.0, np.inf, np.nan], np.float32)
    got = np.asarray(jax.jit(jnp.sign)(x))
    assert bits(got[:7]) == bits(np.float32([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 1.0]))
    assert np.isnan(got[7])


def test_nextafter_steps_subnormals_exactly():
    x = np.array([TINY, -TINY, 1e-45, 0.0], np.float32)
    y = np.array([1.0, 2e-38, -1.0, -1.0], np.float32)
    assert bits(jax.jit(lax.nextafter)(x, y)) == bits(np.nextafter(x, y))


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16])
def test_nextafter_under_jit_steps_narrow_formats(dtype):
    x = np.array([0, -0.0, 1, -1, 2, np.inf, -np.inf, 1e-30, 0, 1, -0.0], dtype)
    y = np.array([1, 1, 0, 2, -3, 0, 0, 1e-30, -0.0, 2, 0], dtype)
    assert bits(jax.jit(lax.nextafter)(x, y)) == bits(lax.nextafter(x, y))
    assert bits(lax.nextafter(np.array([1.0], dtype), np.array([2.0], dtype)))[0] == \
        bits(np.array([1.0], dtype))[0] + 1


def test_frexp_of_a_subnormal_gives_jax_numbers():
    x = np.array([TINY, -TINY, 1e-45, 0.0, 1.0, 3e-38], np.float32)
    mantissa, exponent = jax.jit(jnp.frexp)(x)
    assert bits(mantissa) == bits(np.float32([0.5, -0.5, 0.5, 0.0, 0.5, 0.63802946]))
    assert exponent.tolist() == [-149, -149, -149, 0, 1, -124]


def test_tanh_near_the_smallest_normal_is_x():
    # (XLA returns a subnormal x itself; here it reads as zero, as in every other operation)
    x = np.array([1.1754944e-38, -2e-38, TINY, -TINY], np.float32)
    assert bits(jax.jit(jnp.tanh)(x)) == bits(np.float32([*x[:2], 0.0, -0.0]))


def test_the_callers_numpy_keeps_gradual_underflow():
    jax.jit(lambda a, b: a * b)(np.float32([TINY]), np.float32([1.0]))
    assert np.float32(TINY) * np.float32(1.0) == TINY
    seen = []
    worker = threading.Thread(target=lambda: seen.append(
        (jax.jit(lambda a: a * 1.5)(np.float32([TINY]))[0], np.float32(TINY) * np.float32(1.5))))
    worker.start()
    worker.join()
    assert seen == [(0.0, np.float32(1.5e-39))]


def test_worker_threads_of_a_parallel_kernel_flush_too():
    n = 1 << 22
    x = np.full(n, TINY, np.float32)
    x[::2] = 1.0
    scaled = jax.jit(lambda a: a * np.float32(3.0) + np.float32(0.0))
    with config.override("jaxlite_cpu_threads", 2):
        assert "jl_parallel_for" in scaled.lower(x).compile().as_text("llvm")
        out = np.asarray(scaled(x))
    assert (out[::2] == 3.0).all()
    assert (out[1::2] == 0.0).all()  # the second half ran on a thread the kernel started


def test_eager_mode_keeps_ieee_values():
    got = jnp.multiply(np.float32([TINY]), np.float32([1.0]))
    assert bits(got) == bits(np.float32([TINY]))
