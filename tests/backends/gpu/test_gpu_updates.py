"""Gathers, dynamic slices, dynamic-update-slices and scatters on the gpu backend: run end
to end (on "gpu-interpreter" without a GPU) against the cpu backend, their kernels
compiled with nvcc, and where the program updates arrays in place (`ownership`)."""
from __future__ import annotations

import numpy as np
import pytest
from gpu_testing import assert_close, compile_kernels, gpu_backend, needs_hipcc, needs_nvcc

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends import registry
from jaxlite.backends.gpu.ownership import loop_owned
from jaxlite.config import config
from jaxlite.xla.opcodes import Opcode

f32, bf16, i32 = jnp.float32, jnp.bfloat16, jnp.int32


@pytest.fixture(scope="module")
def backend():
    return gpu_backend()


def _random(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _executable(backend, fn, *args, **jit_options):
    return jax.jit(fn, backend=backend, **jit_options).lower(*args).compile() \
        .runtime_executable()


def check(backend, fn, *args):
    got = jax.jit(fn, backend=backend)(*args)
    with config.override("jax_platforms", ""):
        want = jax.jit(fn, backend="cpu")(*args)
    for k, (g, w) in enumerate(zip(jax.tree.leaves(got), jax.tree.leaves(want))):
        assert_close(np.asarray(g), np.asarray(w), f"leaf {k}")
    return _executable(backend, fn, *args).text("kernels")


INDICES = np.array([3, 0, 3, 7, -2, 3, 1], np.int32)  # repeated, and out of range


# name: (function, arguments, the plan line expected)
PROGRAMS = {
    "gather_rows": (lambda x, i: jnp.take(x, i, axis=0, mode="clip"),
                    (_random((8, 5)), INDICES), "kernel    %gather"),
    "dynamic_slice": (lambda x, i: jax.lax.dynamic_slice(x, (i, i), (3, 2)),
                      (_random((6, 5)), np.int32(4)), "kernel    %dynamic_slice_fusion"),
    # duplicate indices meet at one element: atomicAdd
    "scatter_add": (lambda x, i, u: x.at[i].add(u),
                    (_random((8, 5)), INDICES, _random((7, 5), seed=1)), "scatter"),
    "scatter_add_bf16": (lambda x, i, u: x.at[i].add(u),
                         (_random((8, 4), bf16), INDICES, _random((7, 4), bf16, seed=1)),
                         "scatter"),
    "scatter_add_int": (lambda x, i, u: x.at[i].add(u),
                        (np.arange(16, dtype=np.int32).reshape(8, 2), INDICES,
                         np.arange(14, dtype=np.int32).reshape(7, 2)), "scatter"),
    # combiners without an atomic instruction: compare-and-swap loops
    "scatter_max": (lambda x, i, u: x.at[i].max(u),
                    (_random((8, 5)), INDICES, _random((7, 5), seed=1)), "scatter"),
    "scatter_max_bf16": (lambda x, i, u: x.at[i].max(u),
                         (_random((8, 4), bf16), INDICES, _random((7, 4), bf16, seed=1)),
                         "scatter"),
    "scatter_min": (lambda x, i, u: x.at[i].min(u),
                               (_random((8, 3)), INDICES, _random((7, 3), seed=2)),
                               "scatter"),
    "scatter_mul": (lambda x, i, u: x.at[i].multiply(u),
                    (_random((8, 5)), INDICES, _random((7, 5), seed=1)), "scatter"),
    "scatter_set_unique": (lambda x, i, u: x.at[i].set(u * 2),
                           (_random((8, 5)), np.array([6, 0, 3], np.int32),
                            _random((3, 5), seed=1)), "scatter"),
    # 1- and 2-byte elements: compare-and-swap through the 32-bit word holding them
    "scatter_add_f16": (lambda x, i, u: x.at[i].add(u),
                        (_random((8, 3), jnp.float16), INDICES,
                         _random((7, 3), jnp.float16, seed=1)), "scatter"),
    "scatter_add_int8": (lambda x, i, u: x.at[i].add(u),
                         (np.arange(24, dtype=np.int8).reshape(8, 3), INDICES,
                          np.arange(100, 121, dtype=np.int8).reshape(7, 3)), "scatter"),
    "scatter_max_uint8": (lambda x, i, u: x.at[i].max(u),
                          (np.arange(0, 240, 10, dtype=np.uint8).reshape(8, 3), INDICES,
                           np.arange(21, dtype=np.uint8).reshape(7, 3) * 12), "scatter"),
    "scatter_2d_points": (lambda x, i, j, u: x.at[i, j].add(u),
                          (_random((5, 6)), np.array([0, 4, 4, 2], np.int32),
                           np.array([5, 1, 1, 9], np.int32), _random(4, seed=3)),
                          "scatter"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_the_cpu_backend_and_runs_as_kernels(backend, name):
    fn, args, line = PROGRAMS[name]
    plan = check(backend, fn, *args)
    assert line in plan and "host" not in plan, plan


def _compile_every_kernel(backend, folder, dialect):
    kernels = []
    for name, (fn, args, _) in sorted(PROGRAMS.items()):
        for fk in _executable(backend, fn, *args).program.kernels:
            kernels += [k.__class__(**{**k.__dict__, "name": f"{name}_{k.name}"})
                        for k in fk.kernels]
    errors = compile_kernels(kernels, folder, dialect)
    assert len(errors) == len(kernels) > len(PROGRAMS)
    assert not any(errors.values()), {k: v for k, v in errors.items() if v}


@needs_nvcc
def test_every_kernel_compiles_with_nvcc(backend, tmp_path):
    _compile_every_kernel(backend, tmp_path, "cuda")


@needs_hipcc
def test_every_kernel_compiles_as_hip(backend, tmp_path):
    # (HIP has no 16-bit atomicAdd, and before ROCm 6 no 16-bit atomicCAS)
    _compile_every_kernel(backend, tmp_path, "hip")


def test_the_scatters_combiners_pick_atomics_or_compare_and_swap(backend):
    def notes(name):
        fn, args, _ = PROGRAMS[name]
        return [k.notes[0] for fk in _executable(backend, fn, *args).program.kernels
                for k in fk.kernels if "scatter" in k.notes[0]]
    assert notes("scatter_add") == ["update in place: scatter (atomicAdd)"]
    assert notes("scatter_max") == ["update in place: scatter (compare-and-swap)"]
    assert "atomicCAS(" in _executable(backend, *PROGRAMS["scatter_mul"][:1],
                                       *PROGRAMS["scatter_mul"][1]).text("cuda")


def test_a_scatter_of_two_operands_runs_on_the_host(backend):
    def fn(x, y, i, u, v):
        return jax.lax.scatter_add(x, i, u, jax.lax.ScatterDimensionNumbers(
            (1,), (0,), (0,))), jax.lax.scatter_add(y, i, v, jax.lax.ScatterDimensionNumbers(
                (1,), (0,), (0,)))
    x, i, u = _random((6, 3)), np.array([[1], [4]], np.int32), _random((2, 3), seed=1)
    check(backend, fn, x, x * 2, i, u, u)


def _client(backend):
    return registry.get_backend(backend) if backend == "gpu" else \
        registry.default_registry().client(backend)


def _memory(buffer):
    """The device array of a buffer, as numpy (the interpreter's memory, or a copy)."""
    array = buffer.device_array()
    return array if isinstance(array, np.ndarray) else None


def test_a_fresh_value_is_updated_in_place_and_a_caller_value_after_a_copy(backend):
    x, u = _random((6, 8)), _random((2, 3), seed=1)
    fresh = check(backend, lambda x, u, i: jax.lax.dynamic_update_slice(
        jnp.exp(x), u, (i, 1)), x, u, np.int32(3))
    line = next(s for s in fresh.splitlines() if "%dynamic-update-slice" in s)
    assert line.startswith("kernel") and "after a copy" not in line, fresh
    caller = check(backend, lambda x, u, i: jax.lax.dynamic_update_slice(x, u, (i, 1)),
                   x, u, np.int32(3))
    assert "after a copy of its operand" in caller, caller


def test_a_donated_argument_is_updated_in_place(backend):
    fn = lambda x, u, i: jax.lax.dynamic_update_slice(x, u, (i, 1))
    x, u = _random((6, 8)), np.full((2, 3), 7, np.float32)
    executable = _executable(backend, fn, x, u, np.int32(2), donate_argnums=0)
    assert "after a copy" not in executable.text("kernels")
    client = _client(backend)
    buffers = [client.buffer_from_numpy(v) for v in (x, u, np.int32(2))]
    memory = _memory(buffers[0])
    [out] = executable.execute(buffers)
    want = x.copy()
    want[2:4, 1:4] = 7.0
    np.testing.assert_array_equal(out.to_numpy(), want)
    assert buffers[0].is_deleted()
    if memory is not None:  # (the interpreter's memory is numpy: the write is visible)
        assert np.shares_memory(_memory(out), memory)


def test_a_donated_argument_takes_a_loop_fusions_result(backend):
    fn = lambda v: jnp.tanh(v) * 2 + v
    x = _random((4, 16))
    client = _client(backend)
    for donate, shared in ((0, True), (None, False)):
        executable = _executable(backend, fn, x, donate_argnums=donate)
        buffer = client.buffer_from_numpy(x)
        memory = _memory(buffer)
        [out] = executable.execute([buffer])
        assert_close(out.to_numpy(), np.tanh(x) * 2 + x, "donated tanh")
        if memory is not None:
            assert np.shares_memory(_memory(out), memory) == shared


def test_an_array_donated_and_passed_again_is_not_overwritten(backend):
    fn = lambda a, b: (jnp.exp(a), b + 1)
    x = _random((3, 5))
    executable = _executable(backend, fn, x, x, donate_argnums=0)
    buffer = _client(backend).buffer_from_numpy(x)
    outs = executable.execute([buffer, buffer])
    assert_close(outs[0].to_numpy(), np.exp(x), "exp")
    assert_close(outs[1].to_numpy(), x + 1, "b + 1")


def test_a_scans_stacked_outputs_are_updated_in_place_by_the_loop(backend):
    def fn(xs):
        def body(carry, x):
            carry = jnp.tanh(carry + x)
            return carry, carry * 2
        return jax.lax.scan(body, jnp.zeros(4, f32), xs)
    xs = _random((5, 4))
    plan = check(backend, fn, xs)
    assert "after a copy" not in plan, plan
    module = _executable(backend, fn, xs).hlo_module(optimized=True)
    loops = [i for c in module.computations for i in c.instructions
             if i.opcode is Opcode.WHILE]
    assert loops and any(loop_owned(loop) for loop in loops)


def test_donating_a_result_that_views_an_argument_leaves_the_argument(backend):
    x = _random((3, 5))
    client = _client(backend)
    buffer = client.buffer_from_numpy(x)
    [view] = _executable(backend, lambda v: v.reshape(5, 3), x).execute([buffer])
    assert not view.owns_memory
    exp = _executable(backend, jnp.exp, view.to_numpy(), donate_argnums=0)
    [out] = exp.execute([view])
    assert_close(out.to_numpy(), np.exp(x.reshape(5, 3)), "exp")
    np.testing.assert_array_equal(buffer.to_numpy(), x)
