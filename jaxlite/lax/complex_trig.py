"""Complex sin, cos, sinh and cosh with JAX's values (mirrors `jax.lax.sin`, `cos`, `sinh`
and `cosh` on complex operands, which JAX lowers to other operations rather than to one
complex op).

With z = a + bi, sinh(b) = (expm1(b) - expm1(-b)) / 2 and cosh(b) = (expm1(b) + expm1(-b) +
2) / 2 (accurate near 0, unlike (e**b - e**-b) / 2):

    sin z = sin(a) cosh(b) + i cos(a) sinh(b),  real part +0 where a is a zero;
    cos z = cos(a) cosh(b) - i sin(a) sinh(b),  imaginary part +0 where a is a zero.

So sin(inf + 0j) is NaN + NaNj and sin(-0 + 1.5j) is +0 + 2.129j, where the C library's
csin (C99 Annex G) gives NaN + 0j and -0 + 2.129j. The eager references compute the formula
with numpy; the lowering emits it as HLO, so the evaluator and the cpu backend follow.

sinh and cosh: JAX computes exp(z + log 1/2) -+ exp(-z + log 1/2) with its complex exp
(jaxlite/xla/complex_special_values.py), which cancels badly for small |re z|. We keep
the C library's csinh / ccosh (numpy's values, accurate) where the operand and that value
are finite, with zero parts made +0 as in JAX's difference, and JAX's formula elsewhere,
which gives JAX's infinities, NaNs and signed zeros at every special input.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite.core import dtypes
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.xla.complex_special_values import complex_exp, join_parts
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["complex_sin", "complex_cos", "complex_sinh", "complex_cosh",
           "complex_trig_lowering", "complex_hyperbolic_lowering"]


def _hyperbolic_parts(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    up, down, two = np.expm1(b), np.expm1(-b), b.dtype.type(2)
    return (up - down) / two, (up + down + two) / two


def complex_sin(x: np.ndarray) -> np.ndarray:
    """JAX's complex sin (see the module docstring), with numpy."""
    a, b = x.real, x.imag
    with np.errstate(all="ignore"):
        sinh_b, cosh_b = _hyperbolic_parts(b)
        re = np.where(a == 0, a.dtype.type(0), np.sin(a) * cosh_b)
        return join_parts(re, np.cos(a) * sinh_b, x.dtype)


def complex_cos(x: np.ndarray) -> np.ndarray:
    """JAX's complex cos (see the module docstring), with numpy."""
    a, b = x.real, x.imag
    with np.errstate(all="ignore"):
        sinh_b, cosh_b = _hyperbolic_parts(b)
        im = np.where(a == 0, a.dtype.type(0), -np.sin(a) * sinh_b)
        return join_parts(np.cos(a) * cosh_b, im, x.dtype)


def _lower(ctx: LoweringContext, x: HloInstruction, sine: bool) -> HloInstruction:
    part = dtypes.real_dtype(x.shape.dtype)
    a, b = hlo.unary(ctx, Opcode.REAL, x, part), hlo.unary(ctx, Opcode.IMAG, x, part)
    two = hlo.full_like(ctx, a, 2)
    up = hlo.unary(ctx, Opcode.EXPM1, b)
    down = hlo.unary(ctx, Opcode.EXPM1, hlo.unary(ctx, Opcode.NEGATE, b))
    sinh_b = hlo.binary(ctx, Opcode.DIVIDE, hlo.binary(ctx, Opcode.SUBTRACT, up, down), two)
    cosh_b = hlo.binary(ctx, Opcode.DIVIDE, hlo.binary(
        ctx, Opcode.ADD, hlo.binary(ctx, Opcode.ADD, up, down), two), two)
    sin_a, cos_a = hlo.unary(ctx, Opcode.SIN, a), hlo.unary(ctx, Opcode.COS, a)
    a_zero = hlo.compare(ctx, a, hlo.full_like(ctx, a, 0), "EQ")
    zero = hlo.full_like(ctx, a, 0)
    if sine:
        re = hlo.select(ctx, a_zero, zero, hlo.binary(ctx, Opcode.MULTIPLY, sin_a, cosh_b))
        im = hlo.binary(ctx, Opcode.MULTIPLY, cos_a, sinh_b)
    else:
        re = hlo.binary(ctx, Opcode.MULTIPLY, cos_a, cosh_b)
        im = hlo.select(ctx, a_zero, zero, hlo.binary(
            ctx, Opcode.MULTIPLY, hlo.unary(ctx, Opcode.NEGATE, sin_a), sinh_b))
    return hlo.binary(ctx, Opcode.COMPLEX, re, im, x.shape.dtype)


def complex_trig_lowering(real_rule: Callable[..., Any], sine: bool) -> Callable[..., Any]:
    """A lowering rule: JAX's formula for complex operands, `real_rule` otherwise."""
    def rule(ctx: LoweringContext, x: HloInstruction) -> HloInstruction:
        if dtypes.is_complex(x.shape.dtype):
            return _lower(ctx, x, sine)
        return real_rule(ctx, x)
    return rule


_LOG_HALF = float(np.log(0.5))


def _hyperbolic(x: np.ndarray, accurate: np.ndarray, plus: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        up = complex_exp(x + x.real.dtype.type(_LOG_HALF))
        down = complex_exp(-x + x.real.dtype.type(_LOG_HALF))
        formula = up + down if plus else up - down
        finite = (np.isfinite(x.real) & np.isfinite(x.imag) & np.isfinite(accurate.real)
                  & np.isfinite(accurate.imag))
        zero = x.real.dtype.type(0)
        unsigned = join_parts(np.where(accurate.real == 0, zero, accurate.real),
                              np.where(accurate.imag == 0, zero, accurate.imag), x.dtype)
        return np.where(finite, unsigned, formula).astype(x.dtype)


def complex_sinh(x: np.ndarray) -> np.ndarray:
    """JAX's complex sinh at special inputs, numpy's elsewhere (see the module docstring)."""
    with np.errstate(all="ignore"):
        return _hyperbolic(x, np.sinh(x), plus=False)


def complex_cosh(x: np.ndarray) -> np.ndarray:
    """JAX's complex cosh at special inputs, numpy's elsewhere (see the module docstring)."""
    with np.errstate(all="ignore"):
        return _hyperbolic(x, np.cosh(x), plus=True)


def _lower_hyperbolic(ctx: LoweringContext, x: HloInstruction, opcode: Opcode,
                      plus: bool) -> HloInstruction:
    part = dtypes.real_dtype(x.shape.dtype)
    shift = hlo.full_like(ctx, x, complex(_LOG_HALF, 0.0))
    up = hlo.unary(ctx, Opcode.EXP, hlo.binary(ctx, Opcode.ADD, x, shift))
    down = hlo.unary(ctx, Opcode.EXP, hlo.binary(
        ctx, Opcode.ADD, hlo.unary(ctx, Opcode.NEGATE, x), shift))
    formula = hlo.binary(ctx, Opcode.ADD if plus else Opcode.SUBTRACT, up, down)
    accurate = hlo.unary(ctx, opcode, x)
    parts = [hlo.unary(ctx, which, value, part) for value in (x, accurate)
             for which in (Opcode.REAL, Opcode.IMAG)]
    finite = hlo.logical(ctx, Opcode.AND, *[hlo.unary(ctx, Opcode.IS_FINITE, p, np.bool_)
                                            for p in parts])
    zero = hlo.full_like(ctx, parts[2], 0)
    unsigned = [hlo.select(ctx, hlo.compare(ctx, p, zero, "EQ"), zero, p) for p in parts[2:]]
    return hlo.select(ctx, finite, hlo.binary(ctx, Opcode.COMPLEX, *unsigned, x.shape.dtype),
                      formula)


def complex_hyperbolic_lowering(real_rule: Callable[..., Any], opcode: Opcode,
                                plus: bool) -> Callable[..., Any]:
    """A lowering rule for sinh (plus=False) or cosh: the composite above for complex
    operands, `real_rule` otherwise."""
    def rule(ctx: LoweringContext, x: HloInstruction) -> HloInstruction:
        if dtypes.is_complex(x.shape.dtype):
            return _lower_hyperbolic(ctx, x, opcode, plus)
        return real_rule(ctx, x)
    return rule
