"""Primitives whose values are their operands: copy, stage, device_put,
optimization_barrier and dce_sink.

Mirrors `jax.lax.optimization_barrier`, `stage` and `dce_sink` and the primitives
`copy_p` and `device_put_p`. They exist for what they tell a compiler, not for what they
compute: `optimization_barrier` keeps XLA from moving work across it (our compiler has
nothing that would, so it lowers to its operands), `dce_sink` marks a value as used, `device_put` names a transfer (with one
device there is none to do), `copy` a fresh buffer. All are linear; their transposes are
the same primitive on the cotangents, and they batch elementwise.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import Tracer
from jaxlite.interpreters.ad import Zero, instantiate
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax.convert import _convert_element_type
from jaxlite.lax.joining import _linear_jvp
from jaxlite.tree_util import tree_flatten, tree_unflatten
from jaxlite.xla.ir import HloInstruction

__all__ = ["optimization_barrier", "stage", "dce_sink", "copy_p", "stage_p", "device_put_p",
           "optimization_barrier_p", "dce_sink_p"]


def _declare_identity(name: str, multiple_results: bool) -> Primitive:
    """An identity primitive: same avals, numpy copies, linear, batched in place."""
    primitive = Primitive(name, multiple_results=multiple_results)

    def abstract_eval(*avals: ShapedArray, **params: Any) -> Any:
        return list(avals) if multiple_results else avals[0]

    def reference(*operands: np.ndarray, **params: Any) -> Any:
        copies = [np.array(o, copy=True) for o in operands]
        return copies if multiple_results else copies[0]

    def transpose(ct: Any, *operands: Any, **params: Any) -> list[Any]:
        cts = [instantiate(c) for c in (ct if multiple_results else [ct])]
        out = primitive.bind(*cts, **params)
        return list(out) if multiple_results else [out]

    def batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any],
              **params: Any) -> tuple[Any, Any]:
        out = primitive.bind(*args, **params)
        return (out, list(dims)) if multiple_results else (out, dims[0])

    def lower(ctx: LoweringContext, *operands: HloInstruction, **params: Any) -> Any:
        return list(operands) if multiple_results else operands[0]

    primitive.abstract_eval = abstract_eval
    primitive.reference = reference
    primitive.transpose = transpose
    primitive.batch = batch
    primitive.lower = lower
    _linear_jvp(primitive)
    return primitive


copy_p = _declare_identity("copy", multiple_results=False)
stage_p = _declare_identity("stage", multiple_results=False)
# Parameters as JAX's: one entry per operand of devices, sources and copy semantics.
device_put_p = _declare_identity("device_put", multiple_results=True)
optimization_barrier_p = _declare_identity("optimization_barrier", multiple_results=True)


def optimization_barrier(operand: Any, /) -> Any:
    """The pytree `operand` unchanged, with a barrier that keeps the compiler from moving
    work into or out of the values it holds (mirrors `jax.lax.optimization_barrier`).

    Differences from JAX: our compiler has no `opt-barrier` instruction and nothing in its
    passes that the barrier would restrain (no rematerialization), so it lowers to its
    operands."""
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


def stage(x: Any, /) -> Any:
    """`x` as a value of the current trace: an `Array` eagerly (mirrors `jax.lax.stage`)."""
    if isinstance(x, Tracer):
        return x
    if dtypes.is_python_scalar(x):  # a literal under a trace, as in JAX's jaxprs
        return _convert_element_type(x, dtypes.dtype(x), weak_type=True)
    return stage_p.bind(x)


# ------------------------------------------------------------------------------ dce_sink

dce_sink_p = Primitive("dce_sink", multiple_results=True)
dce_sink_p.abstract_eval = lambda operand, *, prevent_mlir_dce: []
dce_sink_p.reference = lambda operand, *, prevent_mlir_dce: []
dce_sink_p.is_linear = True
dce_sink_p.jvp = lambda primals, tangents, **params: (
    dce_sink_p.bind(*primals, **params), [])
dce_sink_p.transpose = lambda cts, operand, **params: [Zero(operand.aval)]
dce_sink_p.batch = lambda axis_size, args, dims, **params: (dce_sink_p.bind(*args, **params),
                                                            [])
dce_sink_p.lower = lambda ctx, operand, **params: []


def dce_sink(val: Any, *, prevent_mlir_dce: bool = False) -> None:
    """Mark every leaf of `val` as used, so that dead-code elimination keeps the work that
    computes it (mirrors `jax.lax.dce_sink`). Returns None."""
    for leaf in tree_flatten(val)[0]:
        dce_sink_p.bind(leaf, prevent_mlir_dce=bool(prevent_mlir_dce))

