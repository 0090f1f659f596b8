"""`lax.reduce` with any reducer: the `reduce` primitive (XLA's variadic Reduce).

Mirrors `jax.lax.reduce`. Operands and initial values are pytrees of one structure; the
reducer takes two such pytrees of scalars. When there is one operand, the reducer is
`lax.add`, `mul`, `max`, `min`, `bitwise_and`, `bitwise_or` or `bitwise_xor` and the
initial value is known to be its identity, the dedicated reduction is used (as JAX does);
otherwise the reducer is traced into a jaxpr of scalars that the `reduce` equation
carries.

Evaluation order follows XLA on the CPU, which JAX's numbers come from: each output folds
the reduced elements in row-major order into the initial value, `acc = f(acc, x)`, which
matters for reducers that are not associative. The derivative follows JAX: the reduction is
rewritten as a balanced tree of reducer applications (pairs of halves, an odd half padded
with the initial value) and that tree is differentiated, so under `jvp` the primal is the
tree's, as in JAX. Tangents of the initial values are not supported (JAX neither).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import Zero, jvp_flat
from jaxlite.interpreters.batching import batch_at_front
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._reducer_util import (apply_elementwise, apply_to_numpy, flat_operands,
                                       find_monoid, reduction_jaxpr)
from jaxlite.lax.arithmetic import add, mul
from jaxlite.lax.bitwise import bitwise_and, bitwise_or, bitwise_xor
from jaxlite.lax.broadcast import broadcast_in_dim, reduce_sum, reshape, transpose
from jaxlite.lax.convert import _convert_element_type
from jaxlite.lax.math_functions import max as lax_max
from jaxlite.lax.math_functions import min as lax_min
from jaxlite.lax.reductions import (reduce_and, reduce_max, reduce_min, reduce_or,
                                    reduce_prod, reduce_xor)
from jaxlite.lax.shape_ops import squeeze
from jaxlite.lax.slicing import pad, slice_in_dim
from jaxlite.tree_util import tree_unflatten
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["reduce", "reduce_p"]

reduce_p = Primitive("reduce", multiple_results=True)


def _split(values: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    n = len(values) // 2
    return list(values[:n]), list(values[n:])


def _reduce_abstract_eval(*avals: ShapedArray, computation: Callable, jaxpr: ClosedJaxpr,
                          dimensions: tuple[int, ...]) -> list[ShapedArray]:
    operands, inits = _split(avals)
    if any(a.shape != () for a in inits):
        raise ValueError(f"reduce found non-scalar initial value: {[a.shape for a in inits]}")
    if [o.dtype for o in operands] != [i.dtype for i in inits]:
        raise TypeError("reduce operand dtypes should match corresponding initial value "
                        f"dtypes, got operands={[o.str_short() for o in operands]} and "
                        f"initial_values={[i.str_short() for i in inits]}")
    if len({o.shape for o in operands}) > 1:
        raise TypeError(f"reduce operands must have one shape, got "
                        f"{[o.shape for o in operands]}.")
    ndim = operands[0].ndim if operands else 0
    if any(not 0 <= d < ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ValueError(f"reduce: dimensions {dimensions} are not distinct dimensions of "
                         f"operands of rank {ndim}.")
    return [ShapedArray(tuple(np.delete(o.shape, dimensions)), o.dtype,
                        o.weak_type and i.weak_type) for o, i in zip(operands, inits)]


def _reduce_reference(*args: np.ndarray, computation: Callable, jaxpr: ClosedJaxpr,
                      dimensions: tuple[int, ...]) -> list[np.ndarray]:
    operands, inits = _split([np.asarray(a) for a in args])
    kept = [d for d in range(operands[0].ndim) if d not in dimensions]
    reduced = sorted(dimensions)
    shape = tuple(operands[0].shape[d] for d in kept)
    moved = [np.transpose(x, kept + reduced).reshape(shape + (-1,)) if x.size else
             np.zeros(shape + (int(np.prod([x.shape[d] for d in reduced])),), x.dtype)
             for x in operands]
    acc = [np.broadcast_to(i, shape).copy() for i in inits]
    for k in range(moved[0].shape[-1]):  # row-major over the reduced dimensions, as XLA
        acc = apply_to_numpy(jaxpr, *acc, *(m[..., k] for m in moved))
    return [np.asarray(a, i.dtype) for a, i in zip(acc, inits)]


def _tree_reduce(jaxpr: ClosedJaxpr, inits: Sequence[Any], operands: Sequence[Any],
                 dimensions: tuple[int, ...]) -> list[Any]:
    """The reduction as a balanced tree of reducer applications (what is differentiated)."""
    shape = get_aval(operands[0]).shape
    kept = [d for d in range(len(shape)) if d not in dimensions]
    n = int(np.prod([shape[d] for d in dimensions], dtype=np.int64))
    rest = tuple(shape[d] for d in kept)
    xs = [reshape(transpose(x, tuple(dimensions) + tuple(kept)), (n,) + rest)
          for x in operands]
    if n == 0:
        return [broadcast_in_dim(i, rest, ()) for i in inits]
    while n > 1:
        first, second = (n + 1) // 2, n // 2
        lows = [slice_in_dim(x, 0, first, 1, 0) for x in xs]
        highs = [slice_in_dim(x, first, n, 1, 0) for x in xs]
        if second != first:
            config = [(0, 1, 0)] + [(0, 0, 0)] * len(rest)
            highs = [pad(h, i, config) for h, i in zip(highs, inits)]
        xs, n = apply_elementwise(jaxpr, *lows, *highs), first
    return [squeeze(x, (0,)) for x in xs]


def _reduce_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, computation: Callable,
                jaxpr: ClosedJaxpr, dimensions: tuple[int, ...]) -> tuple[list, list]:
    operands, inits = _split(primals)
    operand_tangents, init_tangents = _split(tangents)
    if not all(isinstance(t, Zero) for t in init_tangents):
        raise NotImplementedError("Gradient of general lax.reduce with non-zero tangents for "
                                  "initial values to reduction not implemented")
    return jvp_flat(lambda *xs: _tree_reduce(jaxpr, inits, xs, dimensions), operands,
                    operand_tangents)


def _reduce_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                  computation: Callable, jaxpr: ClosedJaxpr,
                  dimensions: tuple[int, ...]) -> tuple[list, list]:
    operands, inits = _split(args)
    operand_dims, init_dims = _split(dims)
    if any(d is not None for d in init_dims):
        raise NotImplementedError("lax.reduce under vmap with batched initial values is not "
                                  "supported (JAX neither).")
    operands = batch_at_front(operands, operand_dims, axis_size)
    outs = reduce_p.bind(*operands, *inits, computation=computation, jaxpr=jaxpr,
                         dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * len(outs)


def _reduce_lower(ctx: LoweringContext, *args: HloInstruction, computation: Callable,
                  jaxpr: ClosedJaxpr, dimensions: tuple[int, ...]) -> list[HloInstruction]:
    body = ctx.lower_jaxpr_as_computation(jaxpr, "reducer")
    return hlo.emit_results(ctx, Opcode.REDUCE, [ctx.shape(a) for a in ctx.avals_out], args,
                            {"dimensions": tuple(sorted(dimensions))}, (body,))


reduce_p.abstract_eval = _reduce_abstract_eval
reduce_p.reference = _reduce_reference
reduce_p.jvp = _reduce_jvp
reduce_p.batch = _reduce_batch
reduce_p.lower = _reduce_lower


# The reducers JAX recognizes, with their reductions; the bitwise ones only for booleans and
# integers.
_MONOIDS = [(add, "add", reduce_sum), (mul, "mul", reduce_prod),
            (lax_max, "max", reduce_max), (lax_min, "min", reduce_min),
            (bitwise_and, "and", reduce_and), (bitwise_or, "or", reduce_or),
            (bitwise_xor, "xor", reduce_xor)]


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int], out_sharding: Any = None) -> Any:
    """Reduce `operands` over `dimensions` with `computation`, starting from `init_values`
    (mirrors `jax.lax.reduce`).

    `operands` and `init_values` are pytrees of one structure (arrays of one shape, and
    scalars); `computation(a, b)` combines two such pytrees of scalars. It should be
    associative with the initial values as identities; otherwise the result is XLA's
    row-major fold.
    """
    leaves, inits, tree = flat_operands("reduce", operands, init_values)
    if len(leaves) != len(inits):
        raise ValueError("Must have same total number of operands as init_values: "
                         f" {len(leaves)} vs. {len(inits)}")
    dimensions = tuple(int(d) for d in dimensions)
    reduction = find_monoid(_MONOIDS, computation, inits)
    if reduction is not None:
        weak = dtypes.is_weakly_typed(leaves[0]) and dtypes.is_weakly_typed(inits[0])
        out = reduction(leaves[0], dimensions)
        return _convert_element_type(out, get_aval(out).dtype, weak_type=weak)
    jaxpr, out_tree = reduction_jaxpr(computation, [get_aval(i) for i in inits], tree)
    outs = reduce_p.bind(*leaves, *inits, computation=computation, jaxpr=jaxpr,
                         dimensions=dimensions)
    return tree_unflatten(out_tree, outs)
