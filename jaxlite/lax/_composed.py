"""Rules of primitives that are compositions of other `lax` functions.

JAX declares many primitives (`split`, `tile`, `clz`, `reduce_precision`, ...) whose XLA
lowering is an expansion into other operations (its `mlir.lower_fun`). Here such a
primitive keeps its own name in jaxprs, its numpy reference and its shape rule, and takes
the rules that follow from the expansion from this module: lowering (the expansion traced
and called from the module), jvp (the expansion differentiated) and batching (the expansion
mapped), so that each rule is written once, as a lax function.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jaxlite.core.avals import get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import Zero, jvp_flat, tangent_aval
from jaxlite.interpreters.batching import vmap_flat
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.lax import _lowering_util as hlo
from jaxlite.xla.ir import HloInstruction

Expansion = Callable[..., Any]


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def lower_by_expansion(primitive: Primitive, expansion: Expansion) -> Callable[..., Any]:
    """A lowering rule that lowers `expansion(*operands, **params)` in place of the primitive.

    The expansion is traced on the equation's abstract operands and called as a computation
    of the module (the call inliner then puts its instructions in line).
    """
    def rule(ctx: LoweringContext, *operands: HloInstruction,
             **params: Any) -> list[HloInstruction] | HloInstruction:
        closed = trace_to_jaxpr(lambda *xs: _as_list(expansion(*xs, **params)),
                                ctx.avals_in)
        outs = hlo.call_jaxpr(ctx, closed, operands, hlo.computation_name(primitive.name))
        return outs if primitive.multiple_results else outs[0]
    return rule


def jvp_by_expansion(primitive: Primitive, expansion: Expansion) -> Callable[..., Any]:
    """A jvp rule: the primitive on the primals, the expansion's jvp for the tangents.

    The expansion's primal outputs are computed as well, and dropped: the rule exists for
    primitives whose expansion is cheap next to their derivative (bit manipulations, casts).
    """
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = primitive.bind(*primals, **params)
        outs = _as_list(out) if primitive.multiple_results else [out]
        if all(isinstance(t, Zero) for t in tangents):
            zeros = [Zero(tangent_aval(get_aval(o))) for o in outs]
            return out, zeros if primitive.multiple_results else zeros[0]
        _, out_tangents = jvp_flat(lambda *xs: _as_list(expansion(*xs, **params)),
                                   primals, tangents)
        return out, out_tangents if primitive.multiple_results else out_tangents[0]
    return rule


def batch_by_expansion(primitive: Primitive, expansion: Expansion) -> Callable[..., Any]:
    """A batching rule that maps the expansion (the primitive itself is not kept)."""
    def rule(axis_size: int, args: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[Any, Any]:
        outs = vmap_flat(lambda *xs: _as_list(expansion(*xs, **params)), axis_size, args,
                         dims, 0)
        if primitive.multiple_results:
            return outs, [0] * len(outs)
        return outs[0], 0
    return rule


def declare_expansion_rules(primitive: Primitive, expansion: Expansion, *,
                            jvp: bool = True, batch: bool = True, lower: bool = True) -> None:
    """Give `primitive` the rules (jvp, batch, lower) that follow from its expansion."""
    if jvp:
        primitive.jvp = jvp_by_expansion(primitive, expansion)
    if batch:
        primitive.batch = batch_by_expansion(primitive, expansion)
    if lower:
        primitive.lower = lower_by_expansion(primitive, expansion)
