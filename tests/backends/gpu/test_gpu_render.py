"""Rendering kernel IR to CUDA C and HIP C: exact literals, one source for both dialects,
the header's helpers, and hand-written kernels compiled with nvcc (and hipcc where
present)."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from gpu_testing import compile_kernels, needs_hipcc, needs_nvcc
from test_gpu_kernel_interpreter import block_sum_kernel

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.render import literal, render
from jaxlite.backends.gpu.render_header import HEADER

c = ir.index_const
THREAD = ir.Builtin("thread")


def test_float_literals_are_exact():
    third = np.float32(1) / np.float32(3)
    assert literal(third, "float32") == "0x1.5555560000000p-2f"
    assert float.fromhex(literal(third, "float32")[:-1]) == float(third)
    assert literal(float("-inf"), "float32") == "(-JL_INF_F32)"
    assert literal(float("nan"), "float64") == "JL_NAN_F64"
    assert literal(-2**31, "int32") == "((int)-2147483648ll)"
    assert literal(7, "int32") == "7"
    assert literal(2**64 - 1, "uint64") == "((unsigned long long)18446744073709551615ull)"


def test_cuda_and_hip_sources_differ_only_in_the_dialect_switch():
    cuda = render(block_sum_kernel()).splitlines()
    hip = render(block_sum_kernel(), "hip").splitlines()
    assert [(a, b) for a, b in zip(cuda, hip) if a != b] == [("#define JL_HIP 0",
                                                             "#define JL_HIP 1")]


def test_kernel_source_reads_like_the_ir():
    source = render(block_sum_kernel())
    assert ('extern "C" __global__ void __launch_bounds__(128) block_sum('
            "const float* __restrict__ x, float* __restrict__ out, int n) {") in source
    assert "__shared__ float partials[4];" in source
    assert "float other16 = JL_SHFL_XOR(acc, 16);" in source
    assert "__syncthreads();" in source
    assert "atomicAdd(&out[0], " in source


def _typed_kernels() -> list[ir.Kernel]:
    """Kernels over the types and operations the renderer spells differently."""
    kernels = [block_sum_kernel(), block_sum_kernel(warp=64)]
    kernels[1] = ir.Kernel("block_sum64", *(getattr(kernels[1], f) for f in (
        "params", "body", "grid", "block", "warp_size", "shared")))
    for dtype, width in (("bfloat16", 8), ("float16", 4), ("float64", 2), ("int8", 16)):
        src, dst = ir.Buffer("src", dtype), ir.Buffer("dst", dtype)
        lanes = tuple(ir.Var(f"x{k}", dtype) for k in range(width))
        computing = "float32" if dtype in ("bfloat16", "float16") else dtype
        as_computing = [ir.Cast(x, computing) for x in lanes]
        if computing.startswith("float"):
            values = [ir.Unary("tanh", ir.Unary("exp", v)) for v in as_computing]
        else:
            values = [ir.Binary("max", ir.Unary("abs", v), ir.Binary("rem", v, v))
                      for v in as_computing]
        base = ir.Binary("mul", THREAD, c(width))
        body = (ir.VectorLoad(lanes, src, base),
                ir.VectorStore(dst, base, tuple(ir.Cast(v, dtype) for v in values)))
        kernels.append(ir.Kernel(f"vector_{dtype}", (src, dst), body, grid=1, block=32))
    return kernels


@needs_nvcc
def test_kernels_compile_with_nvcc(tmp_path):
    errors = compile_kernels(_typed_kernels(), tmp_path)
    assert len(errors) == 6 and not any(errors.values()), errors


@needs_nvcc
def test_compile_errors_are_reported_per_kernel(tmp_path):
    bad = ir.Kernel("bad", (ir.Buffer("out", "float32"),),
                    (ir.Store(ir.Buffer("out", "float32"), c(0), ir.Var("undeclared",
                                                                         "float32")),),
                    grid=1, block=32)
    errors = compile_kernels([block_sum_kernel(), bad], tmp_path)
    assert errors["block_sum"] == ""
    assert 'identifier "undeclared" is undefined' in errors["bad"]


@needs_hipcc
def test_kernels_compile_with_hipcc(tmp_path):
    errors = compile_kernels(_typed_kernels(), tmp_path, "hip")
    assert not any(errors.values()), errors


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_functions_take_the_type_suffix(dtype):
    x = ir.Var("x", dtype)
    out = ir.Buffer("out", dtype)
    kernel = ir.Kernel("k", (out, x), (ir.Store(out, c(0), ir.Unary("erf", x)),), 1, 32)
    suffix = "f" if dtype == "float32" else ""
    assert f"out[0] = erf{suffix}(x);" in render(kernel)


GXX = shutil.which("g++")
# the header's narrow compare-and-swap, run on the host: device qualifiers dropped and
# atomicCAS a plain (single-threaded) compare-and-swap
_NARROW_CAS_CHECK = r"""
#include <cstdio>
#define __device__
#define __forceinline__ inline
static unsigned int atomicCAS(unsigned int* p, unsigned int compare, unsigned int value) {
  unsigned int old = *p; if (old == compare) *p = value; return old;
}
%s
int main() {
  alignas(4) unsigned char bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  unsigned char got = jl_cas_narrow<unsigned char>(&bytes[6], 7, 70);  // matches: swapped
  unsigned char kept = jl_cas_narrow<unsigned char>(&bytes[1], 9, 90);  // differs: kept
  alignas(4) unsigned short halves[4] = {100, 200, 300, 400};
  unsigned short half = jl_cas_narrow<unsigned short>(&halves[3], 400, 4000);
  std::printf("%%d %%d %%d", got, kept, half);
  for (unsigned char b : bytes) std::printf(" %%d", b);
  for (unsigned short h : halves) std::printf(" %%d", h);
  return 0;
}
"""


@pytest.mark.skipif(GXX is None, reason="g++ is not installed: the header's narrow "
                    "compare-and-swap cannot be run on the host")
def test_narrow_compare_and_swap_changes_only_its_element(tmp_path):
    start = HEADER.index("template <typename T> __device__ __forceinline__ T jl_cas_narrow")
    helper = HEADER[start:HEADER.index("/* HLO's bitcast-convert")]
    source = tmp_path / "cas.cpp"
    source.write_text(_NARROW_CAS_CHECK % helper)
    subprocess.run([GXX, "-std=c++17", str(source), "-o", str(tmp_path / "cas")], check=True)
    done = subprocess.run([str(tmp_path / "cas")], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["7", "2", "400", "1", "2", "3", "4", "5", "6", "70", "8",
                                   "100", "200", "300", "4000"]


def test_one_and_two_byte_atomic_updates_swap_through_a_word():
    out = ir.Buffer("out", "int8")
    old = ir.Var("old", "int8")
    update = ir.AtomicUpdate(out, c(1), old, (), ir.Binary("max", old, ir.Const(3, "int8")))
    text = render(ir.Kernel("k", (out,), (update,), 1, 32))
    assert "jl_cas_narrow(jl_addr1, jl_want1" in text and "atomicCAS(jl_addr" not in text
