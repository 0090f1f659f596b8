"""Division by a constant or a broadcast as multiplication by the reciprocal (XLA's
numerics, so that jitted code gives JAX's numbers).

XLA's algebraic simplifier rewrites `x / c` for a constant `c` into `x * (1 / c)`, and
`x / broadcast(b)` into `x * broadcast(1 / b)`, for float16, float32 and float64 (bfloat16
and narrower floats are computed in float32, where the quotient rounds to the same value).
The product is 1 ulp off the correctly rounded quotient in about a third of the elements,
and JAX users see exactly those bits: `x / 3.0`, `jnp.mean(x, axis=0)`, a softmax's
normalisation. This pass makes the same rewrite, after simplification (so that constants
are folded first) and apart from it (the simplifier's contract is exactness).

Contract: `divide_by_reciprocals(module)` replaces every float16/32/64 `divide` whose divisor
is a constant, or a broadcast that adds elements (XLA turns one that does not into a reshape
first), by the multiplication by the reciprocal; the reciprocal of a constant is a constant
(computed in its dtype: 1/0 is inf), that of a broadcast is the broadcast of `1 / b`. The
new instructions are constant-folded and the divisor instructions left unused removed. Everything else keeps its bits. It returns the
same module object when there is no such division.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.constant_folding import fold_constants
from jaxlite.xla.passes.dce import eliminate_dead_code
from jaxlite.xla.passes.rewriting import RewriteContext, rewrite_module
from jaxlite.xla.shape import Shape

__all__ = ["divide_by_reciprocals"]

_O = Opcode
_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _reciprocal_of_constant(divisor: HloInstruction, ctx: RewriteContext) -> HloInstruction:
    literal = np.asarray(divisor.attr("literal"))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        inverse = np.divide(np.ones((), literal.dtype), literal).astype(literal.dtype)
    return ctx.new(_O.CONSTANT, [], {"literal": inverse}, shape=divisor.shape)


def _reciprocal_of_broadcast(divisor: HloInstruction,
                             ctx: RewriteContext) -> HloInstruction | None:
    base = divisor.operands[0]
    if int(np.prod(base.shape.dims, dtype=np.int64)) == \
            int(np.prod(divisor.shape.dims, dtype=np.int64)):
        return None
    if base.opcode is _O.CONSTANT:
        inverse = _reciprocal_of_constant(base, ctx)
    else:
        dtype = base.shape.dtype
        one = ctx.new(_O.CONSTANT, [], {"literal": np.ones((), dtype)}, shape=Shape(dtype, ()))
        ones = ctx.new(_O.BROADCAST, [one], {"dimensions": ()}, shape=base.shape)
        inverse = ctx.new(_O.DIVIDE, [ones, base], shape=base.shape)
    return ctx.new(_O.BROADCAST, [inverse], dict(divisor.attrs), shape=divisor.shape)


def _rewrite(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    if inst.opcode is not _O.DIVIDE or inst.shape.is_tuple or inst.shape.dtype not in _DTYPES:
        return None
    divisor = inst.operands[1]
    if divisor.opcode is _O.CONSTANT:
        reciprocal = _reciprocal_of_constant(divisor, ctx)
    elif divisor.opcode is _O.BROADCAST:
        reciprocal = _reciprocal_of_broadcast(divisor, ctx)
    else:
        return None
    if reciprocal is None:
        return None
    return ctx.new(_O.MULTIPLY, [inst.operands[0], reciprocal], shape=inst.shape,
                   name=inst.name)


def divide_by_reciprocals(module: HloModule) -> HloModule:
    """`module` with divisions by constants and broadcasts as multiplications by the
    reciprocal, as XLA computes them (see the module doc)."""
    rewritten = rewrite_module(module, _rewrite)
    if rewritten is module:
        return module
    # What the simplification before this pass would have done to the new instructions.
    return eliminate_dead_code(fold_constants(rewritten))
