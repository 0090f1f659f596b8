"""Compile-latency measures of the cpu backend keep the program's values: math functions
called rather than inlined in large modules (`module.outline_heavy_math`) give the same bits
as the inlined code.
"""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.backends.cpu.client import OBJECT_CACHE
from jaxlite.backends.cpu.codegen import module as codegen_module
from jaxlite.backends.cpu.codegen.kernel import MAX_LANES
from jaxlite.backends.cpu.codegen.llvm_text import NO_UNROLL, loop_metadata
from jaxlite.config import config

X = np.linspace(-40.0, 40.0, 1000, dtype=np.float32)
# A math library function defined as called, not inlined (the entry function is noinline
# for its own reasons).
_OUTLINED_MATH = re.compile(r"define internal [^@]*@jl_\w+_f(32|64)x?\d*\([^)]*\) noinline")


def _chain(x):
    for _ in range(12):
        x = jnp.cos(jnp.sin(x) * 3.0) + x * 0.5
    return x


def _compiled(f, *args):
    """`f` compiled afresh: no executable or object code cached in memory or on disk."""
    jaxlite.clear_caches()
    OBJECT_CACHE.clear()
    with config.override("jax_compilation_cache_dir", ""):
        return jaxlite.jit(f).lower(*args).compile()


def _run_chain(budget: int, monkeypatch) -> tuple[np.ndarray, str]:
    monkeypatch.setattr(codegen_module, "_INLINE_BUDGET", budget)
    compiled = _compiled(_chain, X)
    return np.asarray(compiled(X)), compiled.as_text("llvm")


def test_outlined_math_gives_the_inlined_bits(monkeypatch):
    outlined, text = _run_chain(0, monkeypatch)
    inlined, inlined_text = _run_chain(10**9, monkeypatch)
    lanes = MAX_LANES  # the host's float32 vectors
    assert f"@jl_sin_f32x{lanes}(<{lanes} x float> %a0) noinline" in text
    assert f"@jl_sin_f32x{lanes}(<{lanes} x float> %a0) alwaysinline" in inlined_text
    assert not _OUTLINED_MATH.search(inlined_text)
    np.testing.assert_array_equal(outlined.view(np.uint32), inlined.view(np.uint32))
    # and the values are the math library's (float64 numpy through the first round; the
    # later rounds amplify rounding differences chaotically)
    once = np.asarray(jaxlite.jit(lambda x: jnp.cos(jnp.sin(x) * 3.0) + x * 0.5)(X))
    wide = X.astype(np.float64)
    np.testing.assert_allclose(once, np.cos(np.sin(wide) * 3.0) + wide * 0.5,
                               rtol=2e-6, atol=2e-6)


def test_small_programs_keep_math_inlined():
    text = jaxlite.jit(lambda x: jnp.tanh(jnp.sin(x))).lower(X).compile().as_text("llvm")
    assert not _OUTLINED_MATH.search(text) and "alwaysinline" in text


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


def _layer_norm_grad(x, g):
    def loss(x, g):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        y = (x - mean) * jaxlite.lax.rsqrt(var + 1e-5) * g
        return jnp.sum(jnp.tanh(y) * x)
    return jaxlite.grad(loss, argnums=(0, 1))(x, g)


def test_size_optimized_kernels_compute_the_same_values(monkeypatch):
    """Kernels marked `optsize` (not unrolled) agree with the unrolled ones and the
    interpreter within float32 rounding (where LLVM fuses multiply-adds may differ)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    g = rng.standard_normal(64).astype(np.float32)
    results, texts = [], []
    for limit in (20, 10**9):
        monkeypatch.setattr(codegen_module, "_OPTSIZE_LINES", limit)
        compiled = _compiled(_layer_norm_grad, x, g)
        results.append([np.asarray(r) for r in compiled(x, g)])
        texts.append(compiled.as_text("llvm"))
    assert "optsize" in texts[0] and "optsize" not in texts[1]
    for small, plain in zip(*results):
        np.testing.assert_allclose(small, plain, rtol=1e-5, atol=1e-5)
    reference = jaxlite.jit(_layer_norm_grad, backend="interpreter")(x, g)
    for small, expected in zip(results[0], reference):
        np.testing.assert_allclose(small, np.asarray(expected), rtol=1e-5, atol=1e-5)


_STARTS_BACKEND = """
import sys
import numpy as np
import jaxlite, jaxlite.numpy as jnp
assert "jaxlite.backends.cpu.client" not in sys.modules, "started at import"
{make}
print("jaxlite.backends.cpu.client" in sys.modules)
"""


def test_the_first_array_from_host_data_starts_the_backend():
    """As JAX creates its client with the first array: the backend's start-up is not part
    of the first jit call (device_put and jnp.asarray of numpy data start it)."""
    for make in ("jaxlite.device_put(np.ones(3, np.float32))",
                 "jnp.asarray(np.arange(4))"):
        done = subprocess.run([sys.executable, "-c", _STARTS_BACKEND.format(make=make)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["True"], make


def test_float_dot_loops_are_not_unrolled_and_keep_their_values():
    # A product whose batch dimensions are three separate runs of the transposed operand's
    # memory (the GEMM takes two) runs as a loop kernel over the contracted dimension: one
    # chain of multiply-adds, which LLVM is asked not to unroll.
    rng = np.random.default_rng(0)
    p = rng.random((2, 4, 3, 16, 16), dtype=np.float32)
    h = rng.standard_normal((2, 16, 96), dtype=np.float32)
    heads = lambda h: h.reshape(2, 16, 3, 4, 8).transpose(0, 3, 2, 1, 4)  # noqa: E731
    compiled = _compiled(lambda p, h: p @ heads(h), p, h)
    text = compiled.as_text("llvm")
    assert NO_UNROLL in text
    assert all(definition in text for definition in loop_metadata([NO_UNROLL]))
    assert "llvm.loop.unroll.disable" in text
    expected = p.astype(np.float64) @ heads(h).astype(np.float64)
    # 16 products summed: the rounding bound of a float32 sum of that length
    bound = 16 * np.finfo(np.float32).eps * (np.abs(p) @ np.abs(heads(h)))
    assert np.all(np.abs(np.asarray(compiled(p, h)) - expected) <= bound)
    # integer products keep LLVM's unrolling (their adds are not one long-latency chain)
    a = rng.integers(-5, 5, (2, 4, 3, 16, 16)).astype(np.int32)
    b = rng.integers(-5, 5, (2, 16, 96)).astype(np.int32)
    ints = _compiled(lambda a, b: a @ heads(b), a, b)
    assert NO_UNROLL not in ints.as_text("llvm")
    np.testing.assert_array_equal(np.asarray(ints(a, b)), a @ heads(b))


def test_loops_calling_the_math_library_are_not_unrolled():
    # A cross-entropy: a short loop over 10 classes with a log inside, and an elementwise
    # tanh. LLVM is asked not to unroll them; the values stay the math library's.
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((64, 10)).astype(np.float32)
    loss = lambda z: jnp.sum(z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True)),  # noqa: E731
                             axis=-1)
    compiled = _compiled(loss, logits)
    assert NO_UNROLL in compiled.as_text("llvm")
    wide = logits.astype(np.float64)
    expected = np.sum(wide - np.log(np.sum(np.exp(wide), axis=-1, keepdims=True)), axis=-1)
    np.testing.assert_allclose(np.asarray(compiled(logits)), expected, rtol=1e-5, atol=1e-5)
    # a loop without math calls keeps LLVM's unrolling
    plain = _compiled(lambda z: jnp.sum(z * 2.0 + 1.0, axis=-1), logits)
    assert NO_UNROLL not in plain.as_text("llvm")
