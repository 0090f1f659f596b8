"""Integer and complex dots and convolutions on the gpu backend's device: integer products
summed with wrap-around (64-bit unsigned sums cut to the result type, as JAX wraps in
the result type), small integer dots as the tiled GEMM kernel, complex ones through
`xp.matmul` (cuBLAS), convolutions as im2col (complex inputs gathered part by part) and
one matmul; every one against the cpu backend, none on the host, the new kernels through
nvcc."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from gpu_testing import compile_kernels, gpu_backend, needs_nvcc

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends.gpu.convolution import ConvolutionPlan
from jaxlite.backends.gpu.fusion_kernels import BuildOptions
from jaxlite.backends.gpu.gemm_kernels import build_tiled_gemm
from jaxlite.backends.gpu.kernel_interpreter import run_kernel
from jaxlite.config import config, enable_x64

lax = jax.lax


@pytest.fixture(scope="module")
def backend():
    return gpu_backend()


def _integers(shape, dtype, seed, low=-100, high=100):
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


def _complex(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _plan(backend, fn, *args):
    return jax.jit(fn, backend=backend).lower(*args).compile().runtime_executable() \
        .text("kernels")


def check_exact(backend, fn, *args, mixed=False):
    """`fn` on the gpu backend gives the cpu backend's integers bit for bit (complex
    numbers to rounding); no step runs on the host (`mixed`: no dot or convolution, as the
    conversion of a real operand to complex still does). Returns the kernel plan."""
    got = np.asarray(jax.jit(fn, backend=backend)(*args))
    with config.override("jax_platforms", ""):
        want = np.asarray(jax.jit(fn, backend="cpu")(*args))
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "c":
        tolerance = 1e-5 if want.dtype == np.complex64 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    else:
        np.testing.assert_array_equal(got, want)
    plan = _plan(backend, fn, *args)
    on_host = [line for line in plan.splitlines() if line.startswith("host")]
    if mixed:
        on_host = [line for line in on_host if "= dot" in line or "= convolution" in line]
    assert not on_host, plan
    return plan


SMALL, LARGE = (5, 7, 3), (70, 66, 65)  # (m, k, n): the tiled kernel; `xp.matmul`


@pytest.mark.parametrize("m,k,n", [SMALL, LARGE])
@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int16, np.uint32])
def test_integer_dots_match_the_cpu(backend, m, k, n, dtype):
    a, b = _integers((m, k), dtype, 1, 0, 100), _integers((k, n), dtype, 2, 0, 100)
    plan = check_exact(backend, jnp.matmul, a, b)
    assert ("kernel    %dot" in plan) == ((m, k, n) == SMALL), plan


@pytest.mark.parametrize("m,k,n", [SMALL, LARGE])
def test_integer_dots_wrap_around_in_the_result_type(backend, m, k, n):
    big = np.int32(2**30 + 12345)
    a, b = np.full((m, k), big, np.int32), _integers((k, n), np.int32, 3)
    a[0, 0] = -big  # negative products too
    check_exact(backend, jnp.matmul, a, b)
    # int8 operands summed into int32 (preferred_element_type), and into int8 (wraps)
    x, y = _integers((m, k), np.int8, 4, -128, 128), _integers((k, n), np.int8, 5, -128, 128)
    check_exact(backend, lambda x, y: lax.dot(x, y, preferred_element_type=jnp.int32), x, y)
    check_exact(backend, lax.dot, x, y)


def test_int64_and_batched_integer_dots(backend):
    with enable_x64(True):
        a = _integers((3, 4, 9), np.int64, 6, -2**40, 2**40)
        b = _integers((3, 9, 2), np.int64, 7, -2**40, 2**40)
        check_exact(backend, jnp.matmul, a, b)  # the products overflow 64 bits
        u = _integers((9, 5), np.uint64, 8, 0, 2**62)
        check_exact(backend, lambda u: u.T @ u, u)
    # A batched contraction as the tiled kernel: 18 columns and 20 terms each cross a
    # 16-wide tile's edge, so the ragged tiles are covered as by larger sizes (the
    # interpreter runs every thread of every tile: 3x70x80 took 20 s there)
    check_exact(backend, lambda a, b: jnp.einsum("bik,bjk->bij", a, b),
                _integers((2, 3, 20), np.int32, 9), _integers((2, 18, 20), np.int32, 10))


@pytest.mark.parametrize("m,k,n", [SMALL, LARGE])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_dots_run_with_the_array_module(backend, m, k, n, dtype):
    with enable_x64(dtype == np.complex128):
        a, b = _complex((m, k), dtype, 11), _complex((k, n), dtype, 12)
        plan = check_exact(backend, jnp.matmul, a, b)
        assert "xp        %dot" in plan, plan
        # a complex by a real operand, and a batched contraction over two dimensions
        check_exact(backend, lambda a, r: a @ r, a, np.real(b).copy(), mixed=True)
        check_exact(backend, lambda x, y: jnp.einsum("bij,bij->b", x, y),
                    _complex((2, 3, 4), dtype, 13), _complex((2, 3, 4), dtype, 14))


def _nhwc(x, w, **kw):
    return lax.conv_general_dilated(x, w, window_strides=(1, 2), padding="SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8])
def test_integer_convolutions_match_the_cpu(backend, dtype):
    x, w = _integers((2, 5, 6, 3), dtype, 15, 0, 60), _integers((3, 3, 3, 4), dtype, 16, 0, 60)
    plan = check_exact(backend, _nhwc, x, w)
    assert "xp+kernel %convolution" in plan, plan
    check_exact(backend, lambda x, w: _nhwc(x, w, preferred_element_type=jnp.int32,
                                            feature_group_count=1, rhs_dilation=(2, 1)), x, w)


def test_integer_convolutions_wrap_around(backend):
    x = np.full((1, 4, 4, 2), 2**20 + 7, np.int32)
    w = _integers((3, 3, 2, 3), np.int32, 17, -2**12, 2**12)
    check_exact(backend, _nhwc, x, w)
    check_exact(backend, lambda x, w: lax.conv(x, w, (1, 1), "VALID"),
                _integers((2, 4, 5, 5), np.int8, 18, -128, 128),
                _integers((3, 4, 3, 3), np.int8, 19, -128, 128))  # NCHW


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_convolutions_match_the_cpu(backend, dtype):
    with enable_x64(dtype == np.complex128):
        x, w = _complex((2, 5, 6, 4), dtype, 20), _complex((3, 3, 2, 4), dtype, 21)
        plan = check_exact(backend, lambda x, w: _nhwc(x, w, feature_group_count=2), x, w)
        assert "xp+kernel %convolution" in plan, plan
        check_exact(backend, lambda x, w: lax.conv(x, w, (1, 1), "VALID"),
                    _complex((1, 2, 5, 4), dtype, 22), _complex((3, 2, 2, 3), dtype, 23))


# ------------------------------------------------------------ the kernels themselves

def test_the_integer_tiled_gemm_wraps_in_the_interpreter():
    kernels = build_tiled_gemm("gemm_int", 2, 5, 3, 19, ("int8", "int8"), "uint64", "int32",
                               BuildOptions(max_blocks=2))
    a = _integers((2, 5, 19), np.int8, 24, -128, 128)
    b = _integers((2, 19, 3), np.int8, 25, -128, 128)
    c = np.zeros(2 * 5 * 3, np.int32)
    run_kernel(kernels.kernels[0], {"in0": a.reshape(-1), "in1": b.reshape(-1), "out0": c})
    np.testing.assert_array_equal(c.reshape(2, 5, 3), a.astype(np.int32) @ b.astype(np.int32))


def _convolution_kernels(backend, fn, *args):
    module = jax.jit(fn, backend=backend).lower(*args).compile().runtime_executable() \
        .hlo_module(optimized=True)
    found = [inst for comp in module.computations for inst in comp.instructions
             if inst.opcode.text == "convolution"]
    kernels = [ConvolutionPlan(inst, BuildOptions()).kernels.kernels[0] for inst in found]
    return [replace(k, name=f"{k.name}_{k.params[0].dtype}") for k in kernels]


@needs_nvcc
def test_the_new_kernels_compile_with_nvcc(backend, tmp_path):
    kernels = [build_tiled_gemm(f"gemm_{t}", 2, 5, 3, 19, (t, t), "uint64", out,
                                BuildOptions()).kernels[0]
               for t, out in (("int8", "int32"), ("int32", "int32"), ("uint8", "uint32"),
                              ("int64", "int64"))]
    x, w = _integers((2, 5, 6, 3), np.int8, 26), _integers((3, 3, 3, 4), np.int8, 27)
    kernels += _convolution_kernels(backend, _nhwc, x, w)
    z, v = _complex((2, 5, 6, 4), np.complex64, 28), _complex((3, 3, 4, 4), np.complex64, 29)
    kernels += _convolution_kernels(backend, _nhwc, z, v)
    assert len(kernels) == 6 and len({k.name for k in kernels}) == 6
    errors = compile_kernels(kernels, tmp_path)
    assert not any(errors.values()), errors
