"""Compile-latency measures of the cpu backend keep the program's values: math functions
called rather than inlined in large modules (`module.outline_heavy_math`) give the same bits
as the inlined code.
"""
from __future__ import annotations

import numpy as np

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.backends.cpu.codegen import module as codegen_module

X = np.linspace(-40.0, 40.0, 1000, dtype=np.float32)


def _chain(x):
    for _ in range(12):
        x = jnp.cos(jnp.sin(x) * 3.0) + x * 0.5
    return x


def _run_chain(budget: int, monkeypatch) -> tuple[np.ndarray, str]:
    monkeypatch.setattr(codegen_module, "_INLINE_BUDGET", budget)
    compiled = jaxlite.jit(_chain).lower(X).compile()
    return np.asarray(compiled(X)), compiled.as_text("llvm")


def test_outlined_math_gives_the_inlined_bits(monkeypatch):
    outlined, text = _run_chain(0, monkeypatch)
    inlined, inlined_text = _run_chain(10**9, monkeypatch)
    assert "@jl_sin_f32x16(<16 x float> %a0) noinline" in text
    assert "@jl_sin_f32x16(<16 x float> %a0) alwaysinline" in inlined_text
    assert "noinline" not in inlined_text
    np.testing.assert_array_equal(outlined.view(np.uint32), inlined.view(np.uint32))
    # and the values are the math library's (float64 numpy through the first round; the
    # later rounds amplify rounding differences chaotically)
    once = np.asarray(jaxlite.jit(lambda x: jnp.cos(jnp.sin(x) * 3.0) + x * 0.5)(X))
    wide = X.astype(np.float64)
    np.testing.assert_allclose(once, np.cos(np.sin(wide) * 3.0) + wide * 0.5,
                               rtol=2e-6, atol=2e-6)


def test_small_programs_keep_math_inlined():
    text = jaxlite.jit(lambda x: jnp.tanh(jnp.sin(x))).lower(X).compile().as_text("llvm")
    assert "noinline" not in text and "alwaysinline" in text


def test_outlining_counts_call_sites():
    definitions = ("define internal float @jl_f(float %a0) alwaysinline nounwind {\n"
                   + "  ; body\n" * 10 + "}\n"
                   "define internal float @jl_g(float %a0) alwaysinline nounwind {\n}\n")
    few = ["call float @jl_f(float %x)\n" * 7]
    many = ["call float @jl_f(float %x)\n" * 8]
    assert codegen_module.outline_heavy_math(definitions, few) == definitions
    budget = codegen_module._INLINE_BUDGET
    try:
        codegen_module._INLINE_BUDGET = 50
        out = codegen_module.outline_heavy_math(definitions, many)
    finally:
        codegen_module._INLINE_BUDGET = budget
    assert "@jl_f(float %a0) noinline" in out and "@jl_g(float %a0) alwaysinline" in out
    assert out.count("define ") == 2
