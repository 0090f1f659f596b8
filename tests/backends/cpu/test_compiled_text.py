"""`jit(f).lower(x).compile().as_text(stage)` on the cpu backend: the optimized HLO by default,
the generated LLVM IR with "llvm" and the host assembly with "asm"."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.backends.cpu import llvm_target
from jaxlite.backends.cpu.codegen.kernel import MAX_LANES


def _compiled():
    x = np.linspace(-3.0, 3.0, 1000, dtype=np.float32)
    return jaxlite.jit(lambda v: jnp.tanh(v) * 2.0, backend="cpu").lower(x).compile(), x


def test_default_is_optimized_hlo():
    compiled, _ = _compiled()
    text = compiled.as_text()
    assert text.startswith("HloModule ")
    assert "fusion(" in text  # after the pass pipeline: tanh and multiply fused
    assert compiled.as_text("optimized_hlo") == text


def test_llvm_ir_is_the_code_that_runs():
    compiled, x = _compiled()
    ir = compiled.as_text("llvm")
    assert "define void @jl_main(" in ir
    # The math library's tanh, vectorized at the loop kernels' width, not a libm call.
    assert f"@jl_tanh_f32x{MAX_LANES}(" in ir
    assert "@tanhf" not in ir
    # The text is valid LLVM IR that compiles and computes the same values.
    module = llvm_target.compile_ir(ir)
    out = np.empty_like(x)
    params = (ctypes.c_void_p * 1)(x.ctypes.data)
    outs = (ctypes.c_void_p * 1)(out.ctypes.data)
    entry = module.function("jl_main", None, *([ctypes.c_void_p] * 5),
                            ctypes.c_int64)
    entry(params, outs, None, None, None, 1)
    np.testing.assert_array_equal(out, np.asarray(compiled(x)))
    # tanh within its 4 ulp, the doubling exact
    np.testing.assert_allclose(out, np.tanh(x.astype(np.float64)) * 2.0,
                               rtol=4 * np.finfo(np.float32).eps, atol=0)


def test_asm_is_host_assembly():
    compiled, _ = _compiled()
    asm = compiled.as_text("asm")
    assert "jl_main:" in asm
    assert "ret" in asm
    register = "%zmm" if llvm_target.has_avx512() else "%ymm"
    assert register in asm  # the kernel's loop is vectorized


def test_unknown_stage_names_the_available_ones():
    compiled, _ = _compiled()
    with pytest.raises(ValueError, match="'llvm'.*'asm'|'asm'.*'llvm'"):
        compiled.as_text("ptx")
