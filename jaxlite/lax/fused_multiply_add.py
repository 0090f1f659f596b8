"""`fused_multiply_add(a, b, c)`: a * b + c rounded once, for float32 and float64.

Not a JAX function: XLA's CPU compiler lets LLVM fuse a multiply and the add that uses it
into one instruction, so JAX's results carry fused roundings wherever its compiled code had
such a pair (`jax.random.uniform` computes `floats * (maxval - minval) + minval` that way).
Code that must give JAX's values bit for bit states the fusion with this primitive, whatever
the backend: eagerly it is numpy's exact emulation (`jaxlite.xla.cpu_f32_kernels.fma`);
lowered, float32 computes in float64 (where the product is exact) and rounds the sum to odd
before rounding to float32, which rounds correctly; float64, which has no wider type in HLO,
is a custom-call to the same numpy emulation.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray
from jaxlite.interpreters.ad import Zero, add_tangents, tangent_aval
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import FLOATING, elementwise
from jaxlite.lax.arithmetic import mul
from jaxlite.xla.cpu_f32_kernels import fma as numpy_fma
from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["fused_multiply_add", "fused_multiply_add_p"]

CUSTOM_CALL_TARGET = "jaxlite_fma_f64"

fused_multiply_add_p = elementwise("fused_multiply_add", numpy_fma, kinds=(FLOATING,),
                                   num_args=3)


_elementwise_abstract_eval = fused_multiply_add_p.abstract_eval


def _abstract_eval(*avals: ShapedArray) -> ShapedArray:
    # Narrower floats are computed in float32 by XLA, which then rounds each operation.
    if np.dtype(avals[0].dtype) not in (np.float32, np.float64):
        raise TypeError(f"fused_multiply_add takes float32 or float64 operands, got "
                        f"{avals[0].str_short()}.")
    return _elementwise_abstract_eval(*avals)


def _jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    a, b, c = primals
    da, db, dc = tangents
    out = fused_multiply_add_p.bind(a, b, c)
    tangent: Any = Zero(tangent_aval(ShapedArray(np.shape(out), out.dtype)))
    if not isinstance(da, Zero):
        tangent = add_tangents(tangent, mul(da, b))
    if not isinstance(db, Zero):
        tangent = add_tangents(tangent, mul(a, db))
    return out, add_tangents(tangent, dc)


def _lower(ctx: LoweringContext, a: HloInstruction, b: HloInstruction,
           c: HloInstruction) -> HloInstruction:
    dtype = np.dtype(ctx.avals_in[0].dtype)
    if dtype == np.float64:
        return hlo.result(ctx, Opcode.CUSTOM_CALL, (a, b, c), target=CUSTOM_CALL_TARGET)
    wide = [hlo.convert(ctx, x, np.float64) for x in (a, b, c)]
    product = hlo.binary(ctx, Opcode.MULTIPLY, wide[0], wide[1])  # exact in float64
    total = hlo.binary(ctx, Opcode.ADD, product, wide[2])
    # The rounding error of the sum (Knuth's two-sum; any fusion with the exact product
    # computes the same values).
    back = hlo.binary(ctx, Opcode.SUBTRACT, total, product)
    error = hlo.binary(ctx, Opcode.ADD,
                       hlo.binary(ctx, Opcode.SUBTRACT, product,
                                  hlo.binary(ctx, Opcode.SUBTRACT, total, back)),
                       hlo.binary(ctx, Opcode.SUBTRACT, wide[2], back))
    return hlo.convert(ctx, _round_to_odd(ctx, total, error), dtype)


def _round_to_odd(ctx: LoweringContext, total: HloInstruction,
                  error: HloInstruction) -> HloInstruction:
    """`total` moved one ulp toward `total + error` when inexact with an even last bit."""
    dims = total.shape.dims
    bits = hlo.unary(ctx, Opcode.BITCAST_CONVERT, total, np.int64)
    zero_f, zero_i = hlo.constant(ctx, 0.0, np.float64, dims), hlo.constant(ctx, 0, np.int64, dims)
    one = hlo.constant(ctx, 1, np.int64, dims)
    even = hlo.compare(ctx, hlo.binary(ctx, Opcode.AND, bits, one), zero_i, "EQ")
    inexact = hlo.logical(ctx, Opcode.AND, hlo.compare(ctx, error, zero_f, "NE"), even,
                          hlo.unary(ctx, Opcode.IS_FINITE, total, np.bool_))
    same_sign = hlo.compare(ctx, hlo.compare(ctx, error, zero_f, "GT"),
                            hlo.compare(ctx, total, zero_f, "GT"), "EQ")
    step = hlo.select(ctx, same_sign, one, hlo.constant(ctx, -1, np.int64, dims))
    moved = hlo.select(ctx, inexact, hlo.binary(ctx, Opcode.ADD, bits, step), bits)
    return hlo.unary(ctx, Opcode.BITCAST_CONVERT, moved, np.float64)


def _custom_call(inst: HloInstruction, a: np.ndarray, b: np.ndarray,
                 c: np.ndarray) -> np.ndarray:
    """The `jaxlite_fma_f64` custom-call target: the exact float64 fused multiply-add."""
    return numpy_fma(a, b, c)


fused_multiply_add_p.abstract_eval = _abstract_eval
fused_multiply_add_p.jvp = _jvp
fused_multiply_add_p.lower = _lower
CUSTOM_CALL_TARGETS[CUSTOM_CALL_TARGET] = _custom_call


def fused_multiply_add(a: Any, b: Any, c: Any) -> Any:
    """a * b + c with a single rounding (float32 or float64 operands of one shape)."""
    return fused_multiply_add_p.bind(a, b, c)
