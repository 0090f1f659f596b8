"""Vectorizing map: the batching interpreter (mirrors `jax.interpreters.batching`).

A `BatchTracer` holds a value with one extra axis, the batch axis, at position `batch_dim`
(or `None` when the value is the same for every batch member). A primitive's `batch` rule
receives the unwrapped values with their batch dims and returns the output with its batch
dim; it runs with the parent as current trace, so nested `vmap`s stack axes naturally.
"""
from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from jaxlite.core.array_ops import array_op
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from jaxlite.core.trace import Trace, Tracer, current_trace, new_transformation, set_current_trace
from jaxlite.errors import ConcretizationTypeError
from jaxlite.interpreters.rule_tables import RuleTable
from jaxlite.interpreters.named_axes import extend_axis_env
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
            if all(d is None for d in dims) and not self.names_own_axis(primitive, params):
                return primitive.bind(*values, **params)
            token = _rule_trace.set(self)
            try:
                out, out_dim = primitive.batch(self.axis_size, values, dims, **params)
            finally:
                _rule_trace.reset(token)
        if primitive.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)

    def names_own_axis(self, primitive: Any, params: dict[str, Any]) -> bool:
        """Whether the primitive (a collective, or a call whose body holds one) acts on this
        trace's named axis: then its rule runs even when no argument is mapped (`axis_index`,
        or `psum` of a value the same for every member)."""
        if self.axis_name is None:
            return False
        return _mentions_axis(primitive, params, self.axis_name)


# The batch trace whose rule is running: a rule that defers work to a later call (the
# custom_jvp rule) records it, so that the later call can open that trace's tracers.
_rule_trace: contextvars.ContextVar[BatchTrace | None] = contextvars.ContextVar(
    "jaxlite_batch_rule_trace", default=None)


def rule_trace() -> BatchTrace | None:
    """The batch trace whose `batch` rule is running now (None outside batch rules)."""
    return _rule_trace.get()


# ------------------------------------------------------------------ named axes

# Collective primitive -> function of its params giving the axis names it acts on; filled
# by jaxlite.lax.parallel. A batch trace runs such a primitive's rule when its own name is
# among them, and the rule reads that name from `rule_trace().axis_name`.
collective_axes: dict[Any, Callable[[dict[str, Any]], tuple]] = {}


def _mentions_axis(primitive: Any, params: dict[str, Any], name: Any) -> bool:
    names_of = collective_axes.get(primitive)
    if names_of is not None:
        return name in names_of(params)
    return any(_jaxpr_mentions_axis(j, name) for j in _inner_jaxprs(params.values()))


def _inner_jaxprs(values: Any) -> Any:
    for value in values:
        if isinstance(value, ClosedJaxpr):
            yield value.jaxpr
        elif isinstance(value, Jaxpr):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from _inner_jaxprs(value)


def _jaxpr_mentions_axis(jaxpr: Jaxpr, name: Any) -> bool:
    return any(_mentions_axis(eqn.primitive, eqn.params, name) for eqn in jaxpr.eqns)


class SpecMatchError(ValueError):
    """An output mapped by vmap whose out_axes entry is None (vmap words the message)."""

    def __init__(self, leaf_index: int, src: int) -> None:
        super().__init__(f"output {leaf_index} is batched on axis {src} but out_axes is None")
        self.leaf_index = leaf_index
        self.src = src


# vmap_flat's default axis name: inside a batch rule, the name of the trace whose rule it
# is (a rule that maps a body again, as cond and scan do, maps the same named axis).
INHERIT = object()


def _inherited_name(axis_size: int, stands_for: BatchTrace | None) -> Any:
    if stands_for is not None:
        return stands_for.axis_name
    trace = _rule_trace.get()
    if trace is not None and trace.axis_size == axis_size:
        return trace.axis_name
    return None


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
              axis_name: Any = INHERIT, stands_for: BatchTrace | None = None,
              sum_match: bool = False) -> list[Any]:
    """Map `fun` over axis `in_dims[i]` of each argument, stacking outputs at `out_dims`.

    An int `out_dims` puts every output's batch axis there; a callable is asked after `fun`
    has run (when the output structure is known). `stands_for` is the batch trace whose
    deferred rule `fun` is (see `BatchTrace`). A named axis is bound for collectives while
    `fun` runs; by default a call made inside a batch rule maps that rule's named axis. A
    mapped output whose out_dims entry is None raises `SpecMatchError`, or is summed over
    the mapped axis with `sum_match`.
    """
    if axis_name is INHERIT:
        axis_name = _inherited_name(axis_size, stands_for)
    trace = BatchTrace(current_trace(), axis_size, axis_name, stands_for)
    frames = [] if axis_name is None else [(axis_name, axis_size)]
    with new_transformation(trace), extend_axis_env(frames):
        ins = [BatchTracer(trace, x, d) if d is not None else x for x, d in zip(args, in_dims)]
        outs = fun(*ins)
        pairs = [trace.unpack(o) for o in outs]
    if callable(out_dims):
        out_dims = out_dims()
    if isinstance(out_dims, int):
        out_dims = [out_dims] * len(pairs)
    results = []
    for index, ((value, dim), out_dim) in enumerate(zip(pairs, out_dims)):
        if out_dim is None:
            if dim is not None and not sum_match:
                raise SpecMatchError(index, dim)
            results.append(value if dim is None else array_op("reduce_sum")(value, (dim,)))
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


# -------------------------------------------- JAX's extension API (jax.interpreters.batching)
#
# JAX has three tables of batching rules with three calling conventions; all are views of
# the primitives' `batch` slot (jaxlite's convention: `batch(axis_size, values, dims,
# **params) -> (out, out_dims)`):
#   primitive_batchers:        rule(values, dims, **params)
#   axis_primitive_batchers:   rule(axis_size, axis_name, trace_type, values, dims, **params)
#   fancy_primitive_batchers:  rule(axis_data, values, dims, **params)

@dataclass(frozen=True)
class AxisData:
    """The mapped axis a batching rule runs for (mirrors JAX's `batching.AxisData`)."""

    name: Any
    size: int
    spmd_name: Any = None
    explicit_mesh_axis: Any = None


def _current_axis_data(axis_size: int) -> AxisData:
    trace = rule_trace()
    return AxisData(trace.axis_name if trace is not None else None, axis_size)


def _mapped_size(values: Sequence[Any], dims: Sequence[int | None]) -> int:
    return next(get_aval(v).shape[d] for v, d in zip(values, dims) if d is not None)


def _normalized(prim: Any, out: Any, out_dims: Any) -> tuple[Any, Any]:
    """A rule's result with non-negative batch dims (JAX's rules may count from the end)."""
    def fix(value: Any, dim: Any) -> Any:
        return dim if dim is None or dim >= 0 else dim + get_aval(value).ndim
    if prim.multiple_results:
        out = list(out)
        if out_dims is None or isinstance(out_dims, int):
            out_dims = [out_dims] * len(out)
        return out, [fix(o, d) for o, d in zip(out, out_dims)]
    return out, fix(out, out_dims)


def _unmapped(prim: Any, values: Sequence[Any], params: dict[str, Any]) -> tuple[Any, Any]:
    out = prim.bind(*values, **params)
    return (out, [None] * len(out)) if prim.multiple_results else (out, None)


def _from_plain(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    def batch(axis_size: int, values: Sequence[Any], dims: Sequence[Any], **params: Any):
        return _normalized(prim, *rule(list(values), list(dims), **params))
    return batch


def _to_plain(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    def batcher(values: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
        if all(d is None for d in dims):
            return _unmapped(prim, values, params)
        return rule(_mapped_size(values, dims), values, dims, **params)
    return batcher


def _from_axis(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    def batch(axis_size: int, values: Sequence[Any], dims: Sequence[Any], **params: Any):
        axis = _current_axis_data(axis_size)
        return _normalized(prim, *rule(axis.size, axis.name, None, list(values), list(dims),
                                       **params))
    return batch


def _to_axis(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    def batcher(axis_size: int, axis_name: Any, trace_type: Any, values: Sequence[Any],
                dims: Sequence[Any], **params: Any) -> tuple:
        if all(d is None for d in dims):
            return _unmapped(prim, values, params)
        return rule(axis_size, values, dims, **params)
    return batcher


def _from_fancy(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    def batch(axis_size: int, values: Sequence[Any], dims: Sequence[Any], **params: Any):
        return _normalized(prim, *rule(_current_axis_data(axis_size), list(values),
                                       list(dims), **params))
    return batch


def _to_fancy(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    def batcher(axis_data: Any, values: Sequence[Any], dims: Sequence[Any],
                **params: Any) -> tuple:
        if all(d is None for d in dims):
            return _unmapped(prim, values, params)
        return rule(axis_data.size, values, dims, **params)
    return batcher


primitive_batchers = RuleTable("batch", _from_plain, _to_plain)
axis_primitive_batchers = RuleTable("batch", _from_axis, _to_axis)
fancy_primitive_batchers = RuleTable("batch", _from_fancy, _to_fancy)


def broadcast(x: Any, sz: int, axis: int, mesh_axis: Any = None) -> Any:
    """`x` with a new axis of size `sz` at `axis` (mirrors `batching.broadcast`)."""
    return array_op("broadcast_axis")(x, sz, axis)


def bdim_at_front(x: Any, bdim: int | None, size: int, mesh_axis: Any = None) -> Any:
    """`x` with its batch axis first, broadcast when unmapped (`batching.bdim_at_front`)."""
    return move_batch_axis(x, bdim, size, 0)


def defvectorized(prim: Any) -> None:
    """Batch an elementwise primitive by applying it to the batched operands
    (mirrors `batching.defvectorized`)."""
    prim.batch = batch_elementwise(prim)


def defbroadcasting(prim: Any) -> None:
    """Batch a primitive that broadcasts its operands like numpy (size-1 and scalar
    operands), by lining batch axes up in front (mirrors `batching.defbroadcasting`)."""
    def batch(axis_size: int, values: Sequence[Any], dims: Sequence[Any], **params: Any):
        mapped = [(get_aval(v).shape, d) for v, d in zip(values, dims) if d is not None]
        shape, dim = mapped[0]
        if all(get_aval(v).shape == shape and d == dim
               for v, d in zip(values, dims) if get_aval(v).ndim):
            out = prim.bind(*values, **params)
        else:
            ndim = max(get_aval(v).ndim + (d is None) for v, d in zip(values, dims))
            out = prim.bind(*[_front_with_rank(v, d, ndim) for v, d in zip(values, dims)],
                            **params)
            dim = 0
        return (out, [dim] * len(out)) if prim.multiple_results else (out, dim)
    prim.batch = batch


def _front_with_rank(x: Any, dim: int | None, ndim: int) -> Any:
    """A broadcasting operand with its batch axis (size 1 when unmapped) in front and
    size-1 axes after its own, up to rank `ndim`; scalars stay scalars."""
    rank = get_aval(x).ndim
    if rank == 0:
        return x
    x = move_batch_axis(x, dim, 1, 0)
    for axis in range(get_aval(x).ndim, ndim):
        x = array_op("broadcast_axis")(x, 1, axis)
    return x


def defreducer(prim: Any) -> None:
    """Batch a reduction with an `axes` parameter by shifting the axes past the batch
    axis (mirrors `batching.defreducer`)."""
    def batch(axis_size: int, values: Sequence[Any], dims: Sequence[Any], *,
              axes: Sequence[int], **params: Any) -> tuple[Any, Any]:
        (operand,), (bdim,) = values, dims
        new_axes = tuple(a if a < bdim else a + 1 for a in axes)
        kept = [a for a in range(get_aval(operand).ndim) if a not in new_axes]
        if "input_shape" in params:
            params = dict(params, input_shape=get_aval(operand).shape)
        return prim.bind(operand, axes=new_axes, **params), kept.index(bdim)
    prim.batch = batch


def register_vmappable(data_type: type, spec_type: type, axis_size_type: type,
                       to_elt: Callable[..., Any], from_elt: Callable[..., Any],
                       make_iota: Callable[..., Any] | None) -> None:
    """Not supported (mirrors `batching.register_vmappable`): jaxlite's vmap maps arrays
    and pytrees of arrays only; register the type as a pytree instead."""
    raise NotImplementedError(
        f"batching.register_vmappable({data_type.__name__}, ...): jaxlite's vmap maps arrays "
        "and pytrees of arrays only; register the type as a pytree node instead.")


def unregister_vmappable(data_type: type) -> None:
    """Not supported: see `register_vmappable` (mirrors `batching.unregister_vmappable`)."""
    raise NotImplementedError(
        f"batching.unregister_vmappable({data_type.__name__}): jaxlite has no vmappable "
        "types (register_vmappable is not supported).")
