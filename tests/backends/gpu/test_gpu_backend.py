"""The gpu backend end to end: `jit(f, backend=...)` on the GPU where one starts, else on
"gpu-interpreter" (the same compiler, kernels run by the numpy kernel interpreter), each
result compared with the cpu backend's at the dtype's tolerance. Shapes are small: the
interpreter runs every thread in Python."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from gpu_testing import HIPCC, NVCC, assert_close, compile_kernels, gpu_backend, needs_nvcc

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends import gpu, registry
from jaxlite.config import config

f32, bf16 = jnp.float32, jnp.bfloat16


@pytest.fixture(scope="module")
def backend():
    return gpu_backend()


def _random(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _on_cpu(fn, *args):
    with config.override("jax_platforms", ""):
        return jax.jit(fn, backend="cpu")(*args)


def check(backend, fn, *args):
    """`fn` jitted for `backend` against the cpu backend, leaf by leaf; the results."""
    got = jax.jit(fn, backend=backend)(*args)
    want = _on_cpu(fn, *args)
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for k, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        assert_close(np.asarray(g), np.asarray(w), f"{getattr(fn, '__name__', fn)} leaf {k}")
    return got


def _executable(backend, fn, *args):
    return jax.jit(fn, backend=backend).lower(*args).compile().runtime_executable()


def _layernorm(x, scale, bias):
    mean = jnp.mean(x, -1, keepdims=True)
    centred = x - mean
    return centred / jnp.sqrt(jnp.mean(centred * centred, -1, keepdims=True) + 1e-5) * \
        scale + bias


def _mlp(params, x):
    (w1, b1), (w2, b2) = params
    return jnp.tanh(x @ w1 + b1) @ w2 + b2


def _mlp_loss(params, x, y):
    return jnp.mean((_mlp(params, x) - y) ** 2)


def _mlp_params():
    return [(_random((6, 16), seed=1) * 0.5, _random((16,), seed=2)),
            (_random((16, 3), seed=3) * 0.5, _random((3,), seed=4))]


def test_the_device_is_named_as_jax_names_it(backend):
    device = jax.devices(backend)[0]
    assert repr(device) == "CudaDevice(id=0)" and str(device) == "cuda:0"
    assert device.platform == backend and device.id == 0


def test_elementwise(backend):
    fn = lambda x, y: jnp.where(x > 0, jnp.exp(-x) * y, jnp.sin(y) + 1).astype(bf16)
    check(backend, fn, _random((8, 33)), _random((8, 33), seed=1))
    assert "kernel    %" in _executable(backend, fn, _random((8, 33)),
                                        _random((8, 33))).text("kernels")


def test_elementwise_bfloat16_and_integers(backend):
    check(backend, lambda x: jax.nn.gelu(x) * 2, _random((6, 20), bf16))
    check(backend, lambda n: jnp.where(n % 3 == 0, n // 2, -n) + 7,
          np.arange(-30, 30, dtype=np.int32).reshape(6, 10))


def test_random_normal_and_bit_counts_have_no_host_step(backend):
    # (erf-inv, which normal samples go through, and popcnt: composed in kernel IR)
    fn = lambda x, n: (jax.random.normal(jax.random.key(3), (4, 6)) * x,
                       jax.lax.population_count(n), jax.lax.erf_inv(jnp.tanh(x)))
    x = _random((4, 6), seed=9)
    n = np.arange(-12, 12, dtype=np.int32).reshape(4, 6) * 977
    check(backend, fn, x, n)
    plan = _executable(backend, fn, x, n).text("kernels")
    assert "host" not in plan, plan


def test_argmax_and_argmin_run_on_the_device_with_nan_and_ties(backend):
    x = _random((5, 300), seed=11)
    x[1, 7], x[2, :] = np.nan, 0.5  # (NaN wins; a tie takes the first index)
    fn = lambda v: (jnp.argmax(v, -1), jnp.argmin(v, 0), jnp.argmax(v),
                    jnp.argmax(v.astype(jnp.int32), -1))
    check(backend, fn, x)
    plan = _executable(backend, fn, x).text("kernels")
    assert "host" not in plan, plan


def _windows(x, image):
    pool = lambda v, op, init, pad: jax.lax.reduce_window(v, init, op, (1, 3, 3, 1),
                                                          (1, 2, 2, 1), pad)
    return (jnp.cumsum(x, 1), jax.lax.cummax(x, 0), jnp.cumprod(x[:, :5], 1),
            pool(image, jax.lax.max, -jnp.inf, "SAME"), pool(image, jax.lax.add, 0.0, "VALID"),
            jax.lax.reduce_window(x, 0.0, jax.lax.add, (2, 2), (1, 1), ((1, 0), (0, 2)),
                                  base_dilation=(2, 1), window_dilation=(1, 2)),
            jax.grad(lambda v: pool(v, jax.lax.max, -jnp.inf, "VALID").sum())(image))


def test_reduce_windows_run_as_loop_kernels(backend, tmp_path):
    x, image = _random((6, 40), seed=12), _random((2, 7, 7, 3), seed=13)
    check(backend, _windows, x, image)
    executable = _executable(backend, _windows, x, image)
    plan = executable.text("kernels")
    assert "kernel    %reduce-window" in plan and "host" not in plan, plan
    kernels = [k for fk in executable.program.kernels for k in fk.kernels]
    for compiler, dialect in ((NVCC, "cuda"), (HIPCC, "hip")):
        if compiler is not None:  # (each compiler where it is installed)
            errors = compile_kernels(kernels, tmp_path, dialect)
            assert not any(errors.values()), errors


def test_softmax(backend):
    check(backend, lambda x: jax.nn.softmax(x, axis=-1), _random((8, 33)))


def test_layernorm(backend):
    check(backend, _layernorm, _random((6, 40)), _random((40,), seed=1),
          _random((40,), seed=2))


def test_mlp_forward_runs_its_dots_with_xp_and_epilogues_as_kernels(backend):
    params, x = _mlp_params(), _random((5, 6), seed=5)
    check(backend, _mlp, params, x)
    plan = _executable(backend, _mlp, params, x).text("kernels")
    assert "xp+kernel %" in plan and "host" not in plan, plan


def test_mlp_gradient(backend):
    params, x, y = _mlp_params(), _random((5, 6), seed=5), _random((5, 3), seed=6)
    check(backend, jax.value_and_grad(_mlp_loss), params, x, y)


def test_scan_loop_reads_its_predicate_on_the_host(backend):
    def cumulative(xs):
        def body(carry, x):
            carry = carry * 0.5 + jnp.sin(x)
            return carry, carry.sum()
        return jax.lax.scan(body, jnp.zeros(3, f32), xs)
    check(backend, cumulative, _random((6, 3)))
    plan = _executable(backend, cumulative, _random((6, 3))).text("kernels")
    assert "control   %" in plan and "while" in plan


def test_cond_with_a_sort_and_an_integer_dot(backend):
    def fn(x, flag, n):
        y = jax.lax.cond(flag, lambda v: jnp.sort(v, axis=-1), lambda v: -v, x)
        return y, n @ jnp.ones((4, 2), jnp.int32)
    x, n = _random((3, 5)), np.arange(12, dtype=np.int32).reshape(3, 4)
    check(backend, fn, x, True, n)
    check(backend, fn, x, False, n)
    plan = _executable(backend, fn, x, True, n).text("kernels")
    assert "kernel    %sort" in plan, plan
    # integer dots run on the device (wrap-around sums: test_gpu_integer_complex_products)
    assert "host" not in plan, plan


def test_buffers_and_execute(backend):
    client = registry.get_backend(backend) if backend == "gpu" else \
        registry.default_registry().client(backend)
    x = _random((4, 5))
    buffer = client.buffer_from_numpy(x)
    assert buffer.shape == (4, 5) and buffer.dtype == np.float32
    np.testing.assert_array_equal(buffer.to_numpy(), x)
    executable = _executable(backend, lambda v: v * 2 + 1, x)
    [out] = executable.execute([buffer])
    assert out.block_until_ready() is out and out.is_ready()
    np.testing.assert_allclose(out.to_numpy(), x * 2 + 1, rtol=1e-6)
    assert set(executable.text("cuda").split()) >= {"__global__", '"C"'}
    with pytest.raises(ValueError, match="has no stage 'llvm'"):
        executable.text("llvm")
    buffer.delete()
    with pytest.raises(RuntimeError, match="deleted buffer"):
        executable.execute([buffer])


def test_without_cupy_the_gpu_backend_records_why():
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    reg = registry.BackendRegistry(plugin_group="jaxlite.backends.none")
    assert reg.registered()[0] == gpu.PLATFORM
    with config.override("jax_platforms", ""):
        assert reg.get_backend().platform == "cpu"
    assert reg.errors()["gpu"].startswith("ImportError: cupy is not installed")
    with pytest.raises(RuntimeError, match="'gpu' failed to initialize: ImportError"):
        reg.get_backend("gpu")


@needs_nvcc
def test_an_executables_kernels_compile_with_nvcc(backend, tmp_path):
    params, x, y = _mlp_params(), _random((5, 6), seed=5), _random((5, 3), seed=6)
    executable = _executable(backend, jax.value_and_grad(_mlp_loss), params, x, y)
    kernels = [k for fk in executable.program.kernels for k in fk.kernels]
    errors = compile_kernels(kernels, tmp_path)
    assert len(errors) == len(kernels) >= 4
    assert not any(errors.values()), errors


@pytest.mark.parametrize("start", [(1, 2), (5, -3)])  # the second is clamped, as in XLA
def test_dynamic_update_slice_and_slice(backend, start):
    def fn(x, u, i, j):
        y = jax.lax.dynamic_update_slice(x, u, (i, j))
        return y, jax.lax.dynamic_slice(y, (j, i), (2, 3))
    args = (_random((4, 6)), _random((2, 3), seed=1), np.int32(start[0]), np.int32(start[1]))
    check(backend, fn, *args)
    plan = _executable(backend, fn, *args).text("kernels")
    # x is the caller's: the update kernel writes a copy of it
    assert "kernel    %dynamic-update-slice" in plan and "after a copy" in plan, plan


def test_donated_arguments_are_deleted_and_analyses_answer(backend):
    x = jnp.asarray(_random((4, 8)))
    f = jax.jit(lambda v: jnp.exp(v) + 1, backend=backend, donate_argnums=0)
    want = np.exp(np.asarray(x)) + 1
    assert_close(np.asarray(f(x)), want, "donated exp")
    assert x.is_deleted()
    executable = _executable(backend, lambda v: jnp.exp(v) + 1, _random((4, 8)))
    assert executable.cost_analysis()["transcendentals"] == 32
    memory = executable.memory_analysis()
    assert memory.argument_size_in_bytes == memory.output_size_in_bytes == 128
