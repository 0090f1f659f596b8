"""Eager mode on the GPU, on the numpy stand-in for CuPy (fake_cupy): Arrays put on the
gpu device hold device values; eager primitives with an `xp` rule (`device_rules`) read
and write device memory with no host round trip (fake_cupy records every transfer);
the others run their reference on host copies, one transfer each way; results stay on
the device, `np.asarray` copies back once; the numbers are the cpu's."""
from __future__ import annotations


import fake_cupy
import numpy as np
import pytest
from gpu_testing import assert_close, require_gpu, take_transfers
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.runtime.device_values import DeviceValue

lax = jax.lax


def test_on_a_real_gpu_eager_results_are_cupy_arrays():
    """Where CuPy sees a GPU (skipped elsewhere): a chain on the registry's gpu device
    keeps CuPy arrays and gives the cpu's numbers. (First in the module: the fixture
    below points CuPy's name at the fake.)"""
    cupy = require_gpu()
    [device] = jax.devices("gpu")
    x = _random((64, 32), np.float32, 7)
    fn = lambda v: jnp.sum(jnp.maximum(v @ v.T * 0.5, 0.0), axis=0) + v.astype(jnp.int32)[:, 0]
    got = fn(jax.device_put(x, device))
    assert type(got._value) is DeviceValue and isinstance(got._value.array, cupy.ndarray)
    assert_close(np.asarray(got), np.asarray(fn(jnp.asarray(x))), "a chain on the GPU")


def _on_device(array, device):
    value = array._value
    return (type(value) is DeviceValue and value.device is device
            and type(value.array) is fake_cupy.ndarray and array.devices() == {device})


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50 if np.dtype(dtype).kind == "i" else 0, 50, shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def test_a_chain_of_eager_operations_stays_on_the_device(gpu):
    take_transfers()  # (those of earlier tests)
    x = jax.device_put(_random((6, 5), np.float32), gpu)
    w = jax.device_put(_random((5, 3), np.float32, 1), gpu)
    assert take_transfers() == [("to_device", 30), ("to_device", 15)]
    h = jnp.maximum(x @ w + 1.0, 0.0) * 2  # dot, elementwise with scalars
    total = jnp.sum(jnp.exp(-h), axis=0) / h.shape[0]  # elementwise, a reduction
    t = h.T.reshape(-1)[::2]  # layout: transpose, reshape, slice
    pick = jnp.where(h > 1, h, -h)  # comparison, select
    for result in (h, total, t, pick):
        assert _on_device(result, gpu), result._value
    # only the Python scalars went over, one element each
    assert all(kind == "to_device" and size == 1 for kind, size in take_transfers())
    got = np.asarray(total)
    assert take_transfers() == [("to_host", 3)]
    xs, ws = np.asarray(x), np.asarray(w)
    hs = np.maximum(xs @ ws + 1, 0) * 2
    np.testing.assert_allclose(got, np.exp(-hs).sum(0) / 6, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(t), hs.T.reshape(-1)[::2])


def test_primitives_without_a_device_rule_go_through_the_host_once(gpu):
    x = jax.device_put(_random((4, 7), np.float32, 2), gpu)
    take_transfers()
    y = jnp.sort(jnp.tanh(x), axis=-1)  # tanh: its own reference; sort: no rule
    assert _on_device(y, gpu)
    # tanh: x over (once), the result back; sort: the same for tanh's result
    assert take_transfers() == [("to_host", 28), ("to_device", 28)] * 2
    np.testing.assert_allclose(np.asarray(y), np.sort(np.tanh(np.asarray(x)), -1), rtol=1e-6)


def test_results_report_the_device_and_move_back_to_the_host(gpu):
    x = jax.device_put(jnp.arange(6.0).reshape(2, 3), gpu)
    y = x * 3
    assert y.device == gpu and y.committed and y.platform == "gpu"
    assert repr(y) == "Array([[ 0.,  3.,  6.],\n       [ 9., 12., 15.]], dtype=float32)"
    assert float(y[1, 2]) == 15.0 and y.tolist()[1] == [9.0, 12.0, 15.0]
    # (fake_cupy's device memory is numpy's: its address is the device array's)
    assert y.unsafe_buffer_pointer() == y._value.array.ctypes.data
    host = jax.device_put(y, jax.devices("cpu")[0])
    assert type(host._value) is np.ndarray and host.devices() == set(jax.devices("cpu"))
    np.testing.assert_array_equal(jax.device_get(y), np.asarray(host))


def test_host_arrays_join_device_ones_on_the_device(gpu):
    x = jax.device_put(_random((3, 4), np.float32, 3), gpu)
    local = jnp.ones((3, 4), np.float32) * 2  # uncommitted, in host memory
    take_transfers()
    y = x + local
    assert _on_device(y, gpu) and take_transfers() == [("to_device", 12)]
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x) + 2)


def test_argmax_takes_the_first_nan_as_numpy_and_xla(gpu):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 5.0, -1.0]], np.float32)
    got = jnp.argmax(jax.device_put(x, gpu), axis=1)
    assert _on_device(got, gpu)
    np.testing.assert_array_equal(np.asarray(got), [1, 1])
    # (JAX 0.10.2 gives [1 1] and [0 0 0 0])
    np.testing.assert_array_equal(np.asarray(jnp.argmin(jax.device_put(x, gpu), axis=0)),
                                  [0, 0, 0, 0])


def test_bfloat16_stays_correct_through_the_host(gpu):
    x = jax.device_put(_random((5,), jnp.bfloat16, 4), gpu)
    y = x * 2 + 1  # CuPy stores no bfloat16: the reference runs on host copies
    assert y.dtype == jnp.bfloat16 and y.devices() == {gpu}
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x) * 2 + 1)


def test_jit_and_grad_take_device_arrays(gpu):
    x = jax.device_put(_random((4, 3), np.float32, 5), gpu)
    f = lambda v: jnp.sum(jnp.sin(v) ** 2)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), f(np.asarray(x)), rtol=1e-6)
    # (jit compiles for the default backend, the gpu where one starts; here the cpu)
    jitted = jax.jit(f, device=gpu)
    np.testing.assert_allclose(np.asarray(jitted(x)), f(np.asarray(x)), rtol=1e-6)
    take_transfers()
    y = jitted(x * 2)  # device memory in, device memory out
    assert _on_device(y, gpu) and _on_device(y.block_until_ready(), gpu)
    moved = take_transfers()
    assert all(kind == "to_device" and size == 1 for kind, size in moved), moved
    np.testing.assert_allclose(np.asarray(y), f(2 * np.asarray(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x)),
                               np.sin(2 * np.asarray(x)), rtol=1e-5, atol=1e-6)


def test_jit_of_an_eager_slice_reads_aligned_memory(gpu):
    # x[1:] is a view 4 bytes into x's memory; the jitted loop kernel reads its operand
    # with 16-byte vector loads (a GPU's misaligned-address fault, the interpreter's
    # KernelError), so the call takes an aligned copy
    x = jax.device_put(np.arange(9, dtype=np.float32), gpu)
    y = x[1:]
    assert _on_device(y, gpu) and y._value.array.ctypes.data % 16
    got = jax.jit(lambda v: jnp.exp(v) * 2, device=gpu)(y)
    assert _on_device(got, gpu)
    np.testing.assert_allclose(np.asarray(got), np.exp(np.arange(1, 9)) * 2, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(x), np.arange(9))


def test_a_donated_device_array_is_given_up(gpu):
    x = jax.device_put(_random((3, 3), np.float32, 6), gpu)
    keep = np.asarray(x)
    y = jax.jit(lambda v: v * 2 + 1, device=gpu, donate_argnums=0)(x)
    assert x.is_deleted() and _on_device(y, gpu)
    np.testing.assert_array_equal(np.asarray(y), keep * 2 + 1)


def test_the_interpreter_backends_arrays_stay_in_host_memory():
    [device] = jax.devices("gpu-interpreter")
    x = jax.device_put(np.arange(4.0, dtype=np.float32), device)
    y = jnp.exp(x) + 1
    assert type(y._value) is np.ndarray and y.devices() == {device}
    np.testing.assert_allclose(np.asarray(y), np.exp(np.arange(4.0)) + 1, rtol=1e-6)


# ------------------------------------------------------- the cpu's numbers, broadly

UNARY = [jnp.negative, jnp.abs, jnp.floor, jnp.ceil, jnp.exp, jnp.sqrt, jnp.sin, jnp.cos,
         jnp.isfinite, lambda v: v.astype(jnp.int32), lambda v: v.astype(jnp.bool_),
         lambda v: jnp.sum(v, axis=0), lambda v: jnp.max(v, axis=-1),
         lambda v: jnp.min(v), lambda v: jnp.prod(v, axis=-1), jnp.transpose,
         lambda v: v.reshape(-1), lambda v: jnp.flip(v, 0), lambda v: v[1:, ::2],
         lambda v: jnp.concatenate([v, v], axis=-1), lambda v: jnp.expand_dims(v, 1)[:, 0],
         lambda v: jnp.broadcast_to(v, (2,) + v.shape), lambda v: v @ v.T,
         lambda v: jnp.argmax(v, axis=0), lambda v: jnp.argmin(v, axis=-1),
         lambda v: jax.lax.stop_gradient(v) * 2,
         lambda v: jnp.einsum("ij,ij->i", v, v)]
BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum, jnp.equal,
          jnp.less, jnp.greater_equal, lambda a, b: jnp.where(a > b, a, b)]
DTYPES = [np.float32, np.int32, np.uint8, np.int16, np.float16]


def _same_as_cpu(device, fn, *args):
    """`fn` on Arrays put on the gpu `device` gives, on the device, the numbers of `fn` on
    host Arrays (uncommitted: the cpu's eager path)."""
    want = np.asarray(fn(*[jnp.asarray(a) for a in args]))
    placed = [jax.device_put(a, device) for a in args]
    take_transfers()
    got = fn(*placed)
    if args[0].dtype in (np.float32, np.float16, np.int32, np.uint8, np.int16):
        # every primitive of these has an `xp` rule: nothing came back to the host
        assert all(kind == "to_device" for kind, _ in take_transfers()), fn
    # (a result that depends on no operand, as isfinite of integers, is uncommitted)
    assert got.devices() == {device} or not got.committed
    assert_close(np.asarray(got), want, f"{fn} on {[a.dtype for a in args]}")


@pytest.mark.parametrize("k", range(len(UNARY)))
@pytest.mark.parametrize("dtype", DTYPES + [np.complex64])
def test_unary_primitives_give_the_cpus_numbers(gpu, k, dtype):
    fn = UNARY[k]
    x = _random((3, 4), dtype, k)
    if fn is jnp.sqrt:
        x = np.abs(x)
    try:
        fn(jnp.asarray(x))
    except TypeError:
        pytest.skip(f"jnp refuses {np.dtype(dtype).name} here (as JAX does)")
    _same_as_cpu(gpu, fn, x)


@settings(max_examples=25, deadline=None)
@given(k=st.integers(0, len(BINARY) - 1), dtype=st.sampled_from(DTYPES),
       shape=st.lists(st.integers(1, 4), min_size=0, max_size=3), seed=st.integers(0, 99))
def test_binary_primitives_give_the_cpus_numbers(gpu, k, dtype, shape, seed):
    a, b = _random(tuple(shape), dtype, seed), _random(tuple(shape), dtype, seed + 1)
    _same_as_cpu(gpu, BINARY[k], a, b)



def test_uncommitted_operands_stay_on_the_host_when_the_cpu_is_the_default(gpu):
    """Uncommitted Arrays belong on the default device (the cpu here): used beside a GPU
    operand they are sent over for the operation but keep living in host memory, in eager
    mode and as jit arguments."""
    on_gpu = jax.device_put(np.arange(4, dtype=np.float32), gpu)
    host = jnp.asarray(np.ones(4, np.float32))
    total = on_gpu + host
    assert _on_device(total, gpu)
    assert type(host._value) is np.ndarray and not host.committed
    both = jax.jit(lambda a, b: a * b)(on_gpu, host)
    assert _on_device(both, gpu) and type(host._value) is np.ndarray
    np.testing.assert_array_equal(np.asarray(both), np.arange(4, dtype=np.float32))
