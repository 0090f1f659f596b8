"""The generated tiled GEMM (`gemm_kernels`) for small dots: the rule that picks it, the
kernel in the numpy kernel interpreter against numpy, dots of every dimension-number
shape end to end against the cpu backend (the plan runs them as kernels), big dots still
with `xp`, and the kernel through nvcc."""
from __future__ import annotations

import numpy as np
import pytest
from gpu_testing import assert_close, compile_kernels, gpu_backend, needs_nvcc

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends.gpu.fusion_kernels import BuildOptions
from jaxlite.backends.gpu.gemm_kernels import build_tiled_gemm, use_tiled_gemm
from jaxlite.backends.gpu.kernel_interpreter import run_kernel
from jaxlite.config import config, enable_x64


@pytest.fixture(scope="module")
def backend():
    return gpu_backend()


def _random(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_the_rule_takes_small_products_only():
    assert use_tiled_gemm(8, 8, 8) and use_tiled_gemm(64, 64, 64)
    assert not use_tiled_gemm(65, 64, 64) and not use_tiled_gemm(1, 1, 300)
    assert not use_tiled_gemm(0, 4, 4)


# (3, 17, 3, 20): two tiles down m and three matrices, six tiles on two blocks; its 20
# terms cross a tile's edge as 21 does (more terms only cost interpreter time)
@pytest.mark.parametrize("batch,m,n,k", [(1, 1, 1, 1), (2, 5, 19, 21), (1, 16, 16, 32),
                                         (3, 17, 3, 20)])
def test_the_kernel_in_the_interpreter(batch, m, n, k):
    # (two blocks for more tiles than that: the grid-stride loop goes round)
    kernels = build_tiled_gemm("gemm", batch, m, n, k, ("float32", "float32"), "float32",
                               "float32", BuildOptions(max_blocks=2))
    a, b = _random((batch, m, k), seed=1), _random((batch, k, n), seed=2)
    c = np.full(batch * m * n, np.nan, np.float32)
    run_kernel(kernels.kernels[0], {"in0": a.reshape(-1), "in1": b.reshape(-1), "out0": c})
    np.testing.assert_allclose(c.reshape(batch, m, n), a @ b, rtol=2e-5, atol=2e-5)


def _check(backend, fn, *args):
    got = jax.jit(fn, backend=backend)(*args)
    with config.override("jax_platforms", ""):
        want = jax.jit(fn, backend="cpu")(*args)
    assert_close(np.asarray(got), np.asarray(want), str(fn))
    return jax.jit(fn, backend=backend).lower(*args).compile().runtime_executable() \
        .text("kernels")


@pytest.mark.parametrize("dtype", [np.float32, jnp.bfloat16])
def test_small_dots_run_as_the_tiled_kernel(backend, dtype):
    x, w = _random((6, 9), dtype, 3), _random((9, 5), dtype, 4)
    plan = _check(backend, jnp.matmul, x, w)
    if dtype == np.float32:
        assert "kernel    %dot" in plan, plan
    elif backend == "gpu-interpreter":  # (CuPy stores no bfloat16: a host dot there)
        # the product of a bfloat16 dot and its rounding epilogue, inside an output fusion
        assert "xp+kernel %convert_fusion" in plan, plan
        source = jax.jit(jnp.matmul, backend=backend).lower(x, w).compile() \
            .runtime_executable().text("cuda")
        assert "_gemm(" in source
    batched = lambda a, b: jnp.einsum("bik,bjk->bij", a, b)  # contracting minor on both
    plan = _check(backend, batched, _random((3, 4, 7), dtype, 5), _random((3, 6, 7), dtype, 6))
    assert "host" not in plan, plan


def test_float64_and_a_transposed_contraction(backend):
    with enable_x64(True):
        a, b = _random((7, 3), np.float64, 7), _random((7, 4), np.float64, 8)
        plan = _check(backend, lambda a, b: a.T @ b, a, b)
    assert "kernel    %dot" in plan, plan


def test_big_dots_stay_with_the_array_module(backend):
    x, w = _random((70, 66), seed=9), _random((66, 65), seed=10)
    plan = _check(backend, jnp.matmul, x, w)
    assert "xp        %dot" in plan, plan


@needs_nvcc
def test_the_kernel_compiles_with_nvcc(tmp_path):
    kernels = [build_tiled_gemm(f"gemm_{dtype}", 2, 20, 30, 40, (dtype, dtype), acc, dtype,
                                BuildOptions()).kernels[0]
               for dtype, acc in (("float32", "float32"), ("float64", "float64"),
                                  ("bfloat16", "float32"))]
    errors = compile_kernels(kernels, tmp_path)
    assert errors == {k.name: "" for k in kernels}, errors
