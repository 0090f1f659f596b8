"""Calling compiled code on the cpu backend: donated arguments (results written into their
memory, the donated Array deleted), the call plans of `jit` (same results, dtypes and weak
types as the general path, through every change of signature, flag or backend), both ways
of filling the invoke frame, and scans whose stacked outputs are updated in place.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from cpu_testing import cpu_client, module
from jaxlite.backends.base import CompileOptions
from jaxlite.backends.cpu import runtime
from jaxlite.backends.cpu.codegen.control_flow import while_plans
from jaxlite.config import config
from jaxlite.xla.opcodes import Opcode


@pytest.fixture(autouse=True)
def both_backends():
    # Some tests compare with, or switch to, the interpreter: allowed whatever
    # JAXLITE_PLATFORMS says.
    with config.override("jax_platforms", "interpreter,cpu"):
        yield


def _address(x):
    # A temporary view: holding one would (rightly) stop the call from reusing the memory.
    return np.asarray(x).__array_interface__["data"][0]


def _gelu(x):
    return 0.5 * x * (1.0 + jnp.tanh(0.7978846 * (x + 0.044715 * x * x * x)))


def _gelu_np(x):
    return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978846) * (x + np.float32(0.044715) * x ** 3)))


# ------------------------------------------------------------------------ donation

def test_a_donated_argument_holds_the_result_and_is_deleted():
    f = jax.jit(_gelu, donate_argnums=0, backend="cpu")
    data = np.linspace(-3, 3, 1000, dtype=np.float32)
    x = jnp.asarray(data)
    where = _address(x)
    y = f(x)
    assert _address(y) == where                # written in place
    np.testing.assert_allclose(np.asarray(y), _gelu_np(data), rtol=2e-6, atol=1e-6)
    assert x.is_deleted() and not y.is_deleted()
    assert x.shape == (1000,) and x.dtype == np.float32    # still known, as in JAX
    for use in (lambda: np.asarray(x), lambda: x + 1, lambda: f(x), lambda: repr(x),
                lambda: x[0], lambda: x.block_until_ready(), lambda: jax.jit(jnp.sin)(x)):
        with pytest.raises(RuntimeError, match=r"has been deleted with shape=float32\[1000\]"):
            use()
    for _ in range(3):                         # fed back, as a training loop does
        previous = np.asarray(y).copy()
        y = f(y)
        np.testing.assert_allclose(np.asarray(y), _gelu_np(previous), rtol=2e-6, atol=1e-6)


def test_donated_memory_that_something_else_holds_is_copied_first():
    f = jax.jit(lambda x, y: (x * 2.0, y + x), donate_argnums=0, backend="cpu")
    data = np.arange(6, dtype=np.float32)
    x = jnp.asarray(data)
    held = np.asarray(x)                       # a numpy user of x's memory
    a, b = f(x, jnp.ones(6, jnp.float32))
    np.testing.assert_array_equal(held, data)  # untouched
    np.testing.assert_array_equal(np.asarray(a), data * 2)
    np.testing.assert_array_equal(np.asarray(b), data + 1)
    assert x.is_deleted()
    z = jnp.asarray(data)
    with pytest.raises(jax.errors.JaxRuntimeError, match="previously donated"):
        f(z, z)                                # the same Array donated and read: JAX refuses
    assert not z.is_deleted()
    view_base = jnp.asarray(np.arange(12, dtype=np.float32))
    view = jnp.reshape(view_base, (2, 6))[0]   # eager ops may share memory
    a, _ = f(view, jnp.ones(6, jnp.float32))
    np.testing.assert_array_equal(np.asarray(view_base), np.arange(12, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(a), np.arange(6, dtype=np.float32) * 2)


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_an_unusable_donation_warns_and_keeps_the_array(backend):
    f = jax.jit(lambda x: jnp.sum(x), donate_argnums=0, backend=backend)
    x = jnp.arange(4.0)
    with pytest.warns(UserWarning, match=r"donated buffers were not usable: f32\[4\]"):
        total = f(x)
    assert float(total) == 6.0 and not x.is_deleted()
    g = jax.jit(lambda x: x * 3.0, donate_argnums=0, backend=backend)
    y = jnp.arange(4.0)
    np.testing.assert_array_equal(np.asarray(g(y)), [0.0, 3.0, 6.0, 9.0])
    assert y.is_deleted()


def test_donated_pytree_leaves_and_memory_analysis():
    def step(params, g):
        return [p - 0.5 * d for p, d in zip(params, g)]
    f = jax.jit(step, donate_argnums=0, backend="cpu")
    params = [jnp.asarray(np.full((3, 4), 2.0, np.float32)), jnp.asarray(np.ones(5, np.float32))]
    grads = [jnp.ones((3, 4), jnp.float32), jnp.ones(5, jnp.float32)]
    assert f.lower(params, grads).compile().memory_analysis().alias_size_in_bytes == 68
    where = [_address(p) for p in params]
    new = f(params, grads)
    assert [_address(p) for p in new] == where
    assert all(p.is_deleted() for p in params) and not any(g.is_deleted() for g in grads)
    np.testing.assert_array_equal(np.asarray(new[0]), np.full((3, 4), 1.5, np.float32))


def test_delete_by_hand():
    x = jnp.ones(3)
    x.delete()
    x.delete()                                 # twice is fine
    assert x.is_deleted() and x.ndim == 1 and x.size == 3
    with pytest.raises(RuntimeError, match="deleted"):
        str(x)


# ----------------------------------------------------------------------- call plans

def test_call_plans_follow_signatures_flags_and_backends():
    f = jax.jit(lambda x, y: x * y + 1, backend="cpu")
    a = jnp.asarray(np.arange(3, dtype=np.float32))
    weak = jnp.asarray(2.0)                    # weakly typed: the result keeps a's dtype
    for _ in range(2):                         # the second round runs from the plans
        r = f(a, weak)
        assert r.dtype == np.float32 and not r.weak_type
        np.testing.assert_array_equal(np.asarray(r), [1, 3, 5])
        s = f(weak, weak)
        assert s.dtype == np.float32 and s.weak_type and float(s) == 5.0
        i = f(jnp.arange(3), jnp.arange(3))
        assert i.dtype == np.int32 and i.tolist() == [1, 2, 5]
        m = f(a, np.float32(2))                 # not all Arrays: the general path
        np.testing.assert_array_equal(np.asarray(m), [1, 3, 5])
    with config.override("jax_enable_x64", True):
        d = f(jnp.arange(3.0), jnp.arange(3.0))
        assert d.dtype == np.float64 and d.tolist() == [1, 2, 5]
    with config.override("jax_disable_jit", True):
        assert f(a, weak).tolist() == [1, 3, 5]
    g = jax.jit(lambda x: x + 1)
    g(a)
    with config.override("jax_platforms", "interpreter"):
        assert g(a).tolist() == [1, 2, 3]
        assert g.lower(a).compile().runtime_executable().client.platform == "interpreter"
    with config.override("jax_platforms", "cpu"):
        assert g(a).tolist() == [1, 2, 3]
        assert g.lower(a).compile().runtime_executable().client.platform == "cpu"
    g.clear_cache()
    assert g(a).tolist() == [1, 2, 3]


def test_call_plans_under_transformations_and_with_pytrees():
    f = jax.jit(lambda x: jnp.sin(x) * 2.0, backend="cpu")
    x = jnp.asarray(0.5)
    f(x)
    f(x)
    assert np.isclose(float(jax.grad(f)(x)), 2 * np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(jnp.arange(3.0))),
                               2 * np.sin(np.arange(3.0)), rtol=1e-6)
    h = jax.jit(lambda t: {"s": t[0] + t[1], "p": (t[0] * t[1],)}, backend="cpu")
    for _ in range(2):
        out = h((jnp.ones(2), jnp.full(2, 3.0)))
        assert out["s"].tolist() == [4.0, 4.0] and out["p"][0].tolist() == [3.0, 3.0]


@pytest.mark.parametrize("by_object", [True, False])
def test_both_ways_of_filling_the_invoke_frame(monkeypatch, by_object):
    if by_object and not runtime.ARRAY_DATA_OFFSET:
        pytest.skip("this interpreter's array objects keep their data pointer elsewhere")
    if not by_object:
        monkeypatch.setattr(runtime, "ARRAY_DATA_OFFSET", 0)
    f = jax.jit(lambda x, y: (x + y, x * y, jnp.reshape(x * y, (2, 2))))
    x = np.arange(4, dtype=np.float32)
    y = np.full(4, 3.0, np.float32)
    executable = cpu_client().compile(f.lower(x, y).compiler_ir().as_hlo_module(),
                                      CompileOptions())
    assert executable._by_object is by_object
    s, p, r = executable.execute_arrays([x, y])
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(p, x * y)
    np.testing.assert_array_equal(r, (x * y).reshape(2, 2))
    s, p, r = [b.to_numpy() for b in executable.execute(
        [cpu_client().buffer_from_numpy(a) for a in (y, x)])]
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(r, (x * y).reshape(2, 2))
    strided = np.arange(8, dtype=np.float32)[::2]     # copied to a dense array first
    np.testing.assert_array_equal(executable.execute_arrays([strided, y])[0], strided + y)
    with pytest.raises(ValueError, match=r"argument 1 \(.*\) expects f32\[4\]"):
        executable.execute_arrays([x, np.ones(3, np.float32)])


def test_concurrent_calls_of_one_executable_get_frames_of_their_own():
    f = jax.jit(lambda x: jnp.sum(jnp.tanh(x) * x, axis=1), backend="cpu")
    x = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
    expected = np.sum(np.tanh(x) * x, axis=1)
    executable = f.lower(x).compile().runtime_executable()
    with executable._lock:                     # as if another thread were running it
        np.testing.assert_allclose(np.asarray(f(x)), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(f(x)), expected, rtol=1e-5)


# ------------------------------------------------------------------- scans in place

def test_a_scan_writes_its_stacked_outputs_in_place():
    def loss(w, xs, h0):
        def cell(h, x):
            h = jnp.tanh(x @ w + h)
            return h, h
        _, hs = lax.scan(cell, h0, xs)
        return jnp.mean(hs * hs)
    rng = np.random.default_rng(1)
    w = rng.standard_normal((8, 8)).astype(np.float32) * 0.3
    xs = rng.standard_normal((50, 4, 8)).astype(np.float32)
    h0 = np.zeros((4, 8), np.float32)
    f = jax.jit(jax.value_and_grad(loss), backend="cpu")
    optimized = f.lower(w, xs, h0).compile().runtime_executable().hlo_module()
    loops = [i for i in optimized.entry.instructions if i.opcode is Opcode.WHILE]
    updates = 0
    for loop in loops:
        _, body, flat = while_plans(loop)
        assert flat
        for inst in body.comp.instructions:
            if inst.opcode is Opcode.DYNAMIC_UPDATE_SLICE:
                updates += 1
                assert inst.name in body.assignment.in_place   # no copy of the whole stack
    assert updates >= 1
    value, grad = f(w, xs, h0)
    hs, h = [], h0
    for x in xs:
        h = np.tanh(x @ w + h)
        hs.append(h)
    assert np.isclose(float(value), np.mean(np.square(hs)), rtol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        interpreted = jax.jit(jax.value_and_grad(loss), backend="interpreter")(w, xs, h0)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(interpreted[1]), rtol=2e-4,
                               atol=1e-6)


# ------------------------------------------------------------------- numpy scalars

def test_execute_arrays_takes_numpy_scalars_as_zero_dimensional_arrays():
    # `jl_invoke` reads the data pointer out of the array object: a numpy scalar (it has a
    # shape and a dtype too) once crashed the process; a 0-d argument that needed a
    # contiguous copy became 1-d.
    m = module("""
      %a = f32[2] parameter(0)
      %c = f32[] parameter(1)
      %p = pred[] parameter(2)
      %b = f32[2] broadcast(%c), dimensions={}
      %s = f32[2] add(%a, %b)
      %z = f32[2] constant({0, 0})
      ROOT %r = f32[2] select(%p, %s, %z)
    """)
    executable = cpu_client().compile(m, CompileOptions())
    a = np.float32([1, 2])
    for c, p in [(np.float32(3), np.bool_(True)), (np.float32(3), np.bool_(False)),
                 (np.array(-1, np.float32), True)]:
        (result,) = executable.execute_arrays([a, c, np.bool_(p)])
        np.testing.assert_array_equal(result, np.where(p, a + c, 0).astype(np.float32))
    with pytest.raises(ValueError, match="expects f32"):
        executable.execute_arrays([a, np.float64(3), np.bool_(True)])
