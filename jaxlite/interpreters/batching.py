"""Vectorizing map: the batching interpreter (mirrors `jax.interpreters.batching`).

A `BatchTracer` holds a value with one extra axis, the batch axis, at position `batch_dim`
(or `None` when the value is the same for every batch member). A primitive's `batch` rule
receives the unwrapped values with their batch dims and returns the output with its batch
dim; it runs with the parent as current trace, so nested `vmap`s stack axes naturally.
"""
from __future__ import annotations

import contextvars
from typing import Any, Callable, Sequence

from jaxlite.core.array_ops import array_op
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.trace import Trace, Tracer, current_trace, new_transformation, set_current_trace
from jaxlite.errors import ConcretizationTypeError
from jaxlite.interpreters.staging import trace_to_jaxpr

not_mapped = None


class BatchTracer(Tracer):
    __slots__ = ("value", "batch_dim")

    def __init__(self, trace: "BatchTrace", value: Any, batch_dim: int | None) -> None:
        super().__init__(trace)
        self.value = value
        self.batch_dim = batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.value)
        if self.batch_dim is None:
            return aval
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)


class BatchTrace(Trace):
    """Interprets primitives on batched values through their `batch` rules.

    A trace made with `stands_for=other` also opens `other`'s tracers: it runs a rule that
    `other` deferred (a custom_jvp rule, called later by an enclosing jvp) and that may close
    over values `other` maps, as JAX's batching of custom rules does.
    """

    def __init__(self, parent: Trace, axis_size: int, axis_name: Any = None,
                 stands_for: "BatchTrace | None" = None) -> None:
        super().__init__(parent, stands_for)
        self.axis_size = axis_size
        self.axis_name = axis_name

    def concretization_error(self, tracer: Tracer, context: str) -> Exception:
        return ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: "
            f"{tracer.aval.str_short()} used in {context}. The value is mapped by vmap: it "
            "differs across the mapped axis, so it has no single Python value. For control "
            "flow on mapped values use lax.cond, lax.select or jnp.where.")

    def unpack(self, value: Any) -> tuple[Any, int | None]:
        if self.is_own(value):
            return value.value, value.batch_dim
        return value, not_mapped

    def process_primitive(self, primitive: Any, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        pairs = [self.unpack(a) for a in args]
        values = [v for v, _ in pairs]
        dims = [d for _, d in pairs]
        with set_current_trace(self.parent):
            if all(d is None for d in dims):
                return primitive.bind(*values, **params)
            token = _rule_trace.set(self)
            try:
                out, out_dim = primitive.batch(self.axis_size, values, dims, **params)
            finally:
                _rule_trace.reset(token)
        if primitive.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


# The batch trace whose rule is running: a rule that defers work to a later call (the
# custom_jvp rule) records it, so that the later call can open that trace's tracers.
_rule_trace: contextvars.ContextVar[BatchTrace | None] = contextvars.ContextVar(
    "jaxlite_batch_rule_trace", default=None)


def rule_trace() -> BatchTrace | None:
    """The batch trace whose `batch` rule is running now (None outside batch rules)."""
    return _rule_trace.get()


# ------------------------------------------------------------------ rule helpers for lax

def move_batch_axis(x: Any, dim: int | None, axis_size: int, dst: int) -> Any:
    """`x` with its batch axis at `dst`; an unbatched `x` is broadcast along a new axis."""
    if dim is None:
        return array_op("broadcast_axis")(x, axis_size, dst)
    if dim == dst:
        return x
    return array_op("moveaxis")(x, dim, dst)


def batch_at_front(args: Sequence[Any], dims: Sequence[int | None],
                   axis_size: int) -> list[Any]:
    """Every argument with its batch axis first (unbatched ones broadcast)."""
    return [move_batch_axis(x, d, axis_size, 0) for x, d in zip(args, dims)]


def batch_elementwise(primitive: Any) -> Callable[..., Any]:
    """Batch rule for primitives whose operands all have the same shape."""
    def rule(axis_size: int, args: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[Any, Any]:
        batched = [d for d in dims if d is not None]
        if len(set(batched)) == 1 and len(batched) == len(dims):
            out = primitive.bind(*args, **params)
            out_dim = batched[0]
        else:
            out = primitive.bind(*batch_at_front(args, dims, axis_size), **params)
            out_dim = 0
        if primitive.multiple_results:
            return out, [out_dim] * len(out)
        return out, out_dim
    return rule


def vmap_flat(fun: Callable[..., Sequence[Any]], axis_size: int, args: Sequence[Any],
              in_dims: Sequence[int | None],
              out_dims: Sequence[int | None] | int | Callable[[], Sequence[int | None]],
              axis_name: Any = None, stands_for: BatchTrace | None = None) -> list[Any]:
    """Map `fun` over axis `in_dims[i]` of each argument, stacking outputs at `out_dims`.

    An int `out_dims` puts every output's batch axis there; a callable is asked after `fun`
    has run (when the output structure is known). `stands_for` is the batch trace whose
    deferred rule `fun` is (see `BatchTrace`).
    """
    trace = BatchTrace(current_trace(), axis_size, axis_name, stands_for)
    with new_transformation(trace):
        ins = [BatchTracer(trace, x, d) if d is not None else x for x, d in zip(args, in_dims)]
        outs = fun(*ins)
        pairs = [trace.unpack(o) for o in outs]
    if callable(out_dims):
        out_dims = out_dims()
    if isinstance(out_dims, int):
        out_dims = [out_dims] * len(pairs)
    results = []
    for (value, dim), out_dim in zip(pairs, out_dims):
        if out_dim is None:
            if dim is not None:
                raise ValueError(
                    "vmap has mapped output but out_axes is None: an output marked "
                    "out_axes=None must not depend on the mapped inputs.")
            results.append(value)
        else:
            results.append(move_batch_axis(value, dim, axis_size, out_dim))
    return results


def batch_jaxpr(closed: ClosedJaxpr, axis_size: int, args: Sequence[Any],
                dims: Sequence[int | None]) -> ClosedJaxpr:
    """A jaxpr mapping `closed` over axis `dims[i]` of each argument like `args`.

    Every output of the new jaxpr carries its batch axis first.
    """
    in_avals = [get_aval(a) for a in args]

    def fun(*batched_args: Any) -> list[Any]:
        body = lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs)  # noqa: E731
        return vmap_flat(body, axis_size, batched_args, dims, 0)
    return trace_to_jaxpr(fun, in_avals)
