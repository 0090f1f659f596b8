"""The window primitives of max-pooling derivatives: select_and_gather_add,
select_and_scatter_add and select_and_scatter.

Mirrors JAX's `select_and_gather_add_p`, `select_and_scatter_add_p` and
`select_and_scatter_p` (XLA's SelectAndScatter). In each window a `select` keeps the
current element (`select(current, candidate)` true) or moves to the candidate; `ge`
selects the first maximum in row-major window order, `le` the first minimum.

- select_and_gather_add(tangents, operand): per window, the tangent of the selected
  operand element, starting from (identity, 0) and skipping padding and base-dilation holes,
  as JAX's variadic reduce-window does. It is what the derivative of `reduce_window_max`
  and `reduce_window_min` is made of (as in JAX), linear in the tangents.
- select_and_scatter_add(source, operand): its transpose; each window's source value is
  added at the selected operand element. As JAX does on the CPU, padding is made of identity
  elements that can be selected (what lands there is dropped).
- select_and_scatter(operand, source, init): the general form with traced select and
  scatter functions; padding takes part in no selection (XLA's rule).

The first two lower through their expansion into slices, selects and pads; the third to
XLA's select-and-scatter instruction.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.ad import Zero
from jaxlite.interpreters.batching import batch_at_front
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax._composed import lower_by_expansion
from jaxlite.lax._reducer_util import apply_to_numpy, identity_of
from jaxlite.lax.arithmetic import add
from jaxlite.lax.bitwise import bitwise_and, bitwise_not
from jaxlite.lax.broadcast import broadcast_in_dim
from jaxlite.lax.comparisons import eq, ge_p, le_p
from jaxlite.lax._window_util import element_slices, out_shape, pad_config
from jaxlite.lax.selection import select_n
from jaxlite.lax.slicing import pad_p, slice
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["select_and_gather_add_p", "select_and_scatter_add_p", "select_and_scatter_p"]


def _kind(select_prim: Primitive) -> str:
    if select_prim is ge_p:
        return "max"
    if select_prim is le_p:
        return "min"
    raise TypeError(f"select_prim must be lax.ge_p or lax.le_p, got {select_prim}.")


def _ones(window_dimensions: Sequence[int]) -> tuple[int, ...]:
    return (1,) * len(window_dimensions)


def _window(window_dimensions: tuple, window_strides: tuple, padding: tuple,
            base_dilation: tuple | None = None, window_dilation: tuple | None = None) -> dict:
    ones = _ones(window_dimensions)
    return dict(window_dimensions=window_dimensions, window_strides=window_strides,
                padding=padding, base_dilation=base_dilation or ones,
                window_dilation=window_dilation or ones)


# -------------------------------------------------------------------- select_and_gather_add

select_and_gather_add_p = Primitive("select_and_gather_add")


def _gather_abstract_eval(tangents: ShapedArray, operand: ShapedArray, *, select_prim: Any,
                          **window: Any) -> ShapedArray:
    _kind(select_prim)
    if tangents.shape != operand.shape:
        raise TypeError("select_and_gather_add tangents and operand shapes must match, got "
                        f"{tangents.shape} and {operand.shape}.")
    return ShapedArray(out_shape(operand.shape, window), tangents.dtype)


def _gather_fold(tangents: Any, operand: Any, select_prim: Any, window: dict,
                 ops: Any) -> Any:
    """The selection fold, over `ops` (numpy's or lax's): the value and tangent of the
    selected element of every window, padding and holes skipped."""
    shape = out_shape(ops.shape(operand), window)
    dtype = ops.dtype(operand)
    value = ops.full(shape, identity_of(_kind(select_prim), dtype))
    chosen = ops.full(shape, np.zeros((), ops.dtype(tangents)))
    if 0 in shape:
        return chosen
    config = pad_config(window)
    x = ops.pad(operand, identity_of(_kind(select_prim), dtype), config)
    t = ops.pad(tangents, np.zeros((), ops.dtype(tangents)), config)
    real = ops.pad(ops.full(ops.shape(operand), np.bool_(True)), np.bool_(False), config)
    for starts, limits, strides in element_slices(shape, window):
        candidate = ops.slice(x, starts, limits, strides)
        take = ops.and_not(ops.slice(real, starts, limits, strides),
                           ops.compare(select_prim, value, candidate))
        value = ops.where(take, candidate, value)
        chosen = ops.where(take, ops.slice(t, starts, limits, strides), chosen)
    return chosen


class _NumpyOps:
    shape = staticmethod(np.shape)
    dtype = staticmethod(lambda x: np.asarray(x).dtype)
    full = staticmethod(lambda shape, v: np.full(shape, v, np.asarray(v).dtype))
    pad = staticmethod(lambda x, v, config: pad_p.reference(np.asarray(x), np.asarray(v),
                                                            padding_config=config))
    slice = staticmethod(lambda x, lo, hi, st: x[tuple(np.s_[a:b:c]
                                                       for a, b, c in zip(lo, hi, st))])
    and_not = staticmethod(lambda a, b: a & ~b)
    compare = staticmethod(lambda p, a, b: (np.greater_equal if p is ge_p else np.less_equal)(
        a, b))
    where = staticmethod(np.where)


class _LaxOps:
    shape = staticmethod(lambda x: get_aval(x).shape)
    dtype = staticmethod(lambda x: np.dtype(get_aval(x).dtype))
    full = staticmethod(lambda shape, v: broadcast_in_dim(v, tuple(shape), ()))
    pad = staticmethod(lambda x, v, config: pad_p.bind(x, v, padding_config=config))
    slice = staticmethod(slice)
    and_not = staticmethod(lambda a, b: bitwise_and(a, bitwise_not(b)))
    compare = staticmethod(lambda p, a, b: p.bind(a, b))
    where = staticmethod(lambda p, x, y: select_n(p, y, x))


def _gather_reference(tangents: np.ndarray, operand: np.ndarray, *, select_prim: Any,
                      **window: Any) -> np.ndarray:
    return np.asarray(_gather_fold(tangents, operand, select_prim, window, _NumpyOps))


def _gather_expansion(tangents: Any, operand: Any, *, select_prim: Any, **window: Any) -> Any:
    return _gather_fold(tangents, operand, select_prim, window, _LaxOps)


def _gather_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
    out = select_and_gather_add_p.bind(*primals, **params)
    if isinstance(tangents[0], Zero):
        return out, Zero(ad.tangent_aval(get_aval(out)))
    return out, select_and_gather_add_p.bind(ad.instantiate(tangents[0]), primals[1],
                                             **params)


def _gather_transpose(ct: Any, tangents: Any, operand: Any, *, select_prim: Any,
                      window_dimensions: tuple, window_strides: tuple, padding: tuple,
                      base_dilation: tuple, window_dilation: tuple) -> list[Any]:
    if not is_undefined(tangents) or is_undefined(operand):
        raise NotImplementedError("select_and_gather_add is linear in its tangents only.")
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError("VJP not implemented for select_and_gather (MaxPool) with "
                                  f"window dilation, got window_dilation={window_dilation}.")
    dilated = any(d != 1 for d in base_dilation)
    if dilated:  # the holes become identity elements, never selected over real ones
        operand = pad_p.bind(operand, identity_of(_kind(select_prim), get_aval(operand).dtype),
                             padding_config=tuple((0, 0, d - 1) for d in base_dilation))
    result = select_and_scatter_add_p.bind(
        ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding)
    if dilated:
        shape = get_aval(result).shape
        result = slice(result, (0,) * len(shape), shape, base_dilation)
    return [result, None]


def _with_batch_window(params: dict) -> dict:
    wide = dict(params)
    for key in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        if key in wide:
            wide[key] = (1,) + tuple(wide[key])
    wide["padding"] = ((0, 0),) + tuple(wide["padding"])
    return wide


def _batch_front(primitive: Primitive) -> Any:
    def rule(axis_size: int, args: Sequence[Any], dims: Sequence[Any],
             **params: Any) -> tuple[Any, int]:
        return primitive.bind(*batch_at_front(args, dims, axis_size),
                              **_with_batch_window(params)), 0
    return rule


select_and_gather_add_p.abstract_eval = _gather_abstract_eval
select_and_gather_add_p.reference = _gather_reference
select_and_gather_add_p.jvp = _gather_jvp
select_and_gather_add_p.transpose = _gather_transpose
select_and_gather_add_p.batch = _batch_front(select_and_gather_add_p)
select_and_gather_add_p.lower = lower_by_expansion(select_and_gather_add_p, _gather_expansion)
select_and_gather_add_p.is_linear = True


# ------------------------------------------------------------------- select_and_scatter_add

select_and_scatter_add_p = Primitive("select_and_scatter_add")


def _scatter_add_abstract_eval(source: ShapedArray, operand: ShapedArray, *, select_prim: Any,
                               window_dimensions: tuple, window_strides: tuple,
                               padding: tuple) -> ShapedArray:
    _kind(select_prim)
    window = _window(window_dimensions, window_strides, padding)
    expected = out_shape(operand.shape, window)
    if source.shape != expected:
        raise TypeError(f"select_and_scatter_add: source of shape {source.shape} must have "
                        f"one element per window position {expected}.")
    return ShapedArray(operand.shape, source.dtype)


def _scatter_add_fold(source: Any, operand: Any, select_prim: Any, window: dict,
                      ops: Any) -> Any:
    """Per window element, the source values of the windows that select it (a list over
    the window's elements, each shaped like the source), and the padded operand."""
    shape = ops.shape(source)
    config = pad_config(window)
    x = ops.pad(operand, identity_of(_kind(select_prim), ops.dtype(operand)), config)
    slices = element_slices(shape, window)
    value, index = None, None
    for k, (starts, limits, strides) in enumerate(slices):
        candidate = ops.slice(x, starts, limits, strides)
        if value is None:
            value, index = candidate, ops.full(shape, np.int32(0))
            continue
        take = ops.not_(ops.compare(select_prim, value, candidate))
        value = ops.where(take, candidate, value)
        index = ops.where(take, ops.full(shape, np.int32(k)), index)
    return index, slices, x


def _scatter_add_reference(source: np.ndarray, operand: np.ndarray, *, select_prim: Any,
                           **window: Any) -> np.ndarray:
    window = _window(**window)
    out = np.zeros(np.shape(pad_p.reference(operand, np.zeros((), operand.dtype),
                                            padding_config=pad_config(window))), source.dtype)
    if source.size:
        index, slices, _ = _scatter_add_fold(source, operand, select_prim, window,
                                             _ScatterNumpyOps)
        for k, (starts, limits, strides) in enumerate(slices):
            view = out[tuple(np.s_[a:b:c] for a, b, c in zip(starts, limits, strides))]
            view += np.where(index == k, source, np.zeros((), source.dtype))
    return _unpad(out, window["padding"], operand.shape)


def _unpad(x: np.ndarray, padding: Sequence[tuple[int, int]], shape: Sequence[int]) -> Any:
    return x[tuple(np.s_[lo:lo + n] for (lo, _), n in zip(padding, shape))]


def _scatter_add_expansion(source: Any, operand: Any, *, select_prim: Any,
                           **window: Any) -> Any:
    window = _window(**window)
    dtype = get_aval(source).dtype
    source_shape, operand_shape = get_aval(source).shape, get_aval(operand).shape
    padded_shape = [n + lo + hi for n, (lo, hi) in zip(operand_shape, window["padding"])]
    total = broadcast_in_dim(np.zeros((), dtype), tuple(padded_shape), ())
    if 0 not in source_shape:
        index, slices, _ = _scatter_add_fold(source, operand, select_prim, window,
                                             _ScatterLaxOps)
        zero = broadcast_in_dim(np.zeros((), dtype), source_shape, ())
        for k, (starts, _, strides) in enumerate(slices):
            picked = select_n(eq(index, broadcast_in_dim(np.int32(k), source_shape, ())),
                              zero, source)
            # The transpose of the strided slice: the values spread back out with pads.
            config = tuple((lo, size - (lo + (o - 1) * st) - 1, st - 1) for lo, st, o, size
                           in zip(starts, strides, source_shape, padded_shape))
            total = add(total, pad_p.bind(picked, np.zeros((), dtype), padding_config=config))
    starts = [lo for lo, _ in window["padding"]]
    return slice(total, starts, [s + n for s, n in zip(starts, operand_shape)])


class _ScatterNumpyOps(_NumpyOps):
    not_ = staticmethod(np.logical_not)


class _ScatterLaxOps(_LaxOps):
    not_ = staticmethod(bitwise_not)


def _scatter_add_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
    out = select_and_scatter_add_p.bind(*primals, **params)
    if isinstance(tangents[0], Zero):
        return out, Zero(ad.tangent_aval(get_aval(out)))
    return out, select_and_scatter_add_p.bind(ad.instantiate(tangents[0]), primals[1],
                                              **params)


def _scatter_add_transpose(ct: Any, source: Any, operand: Any, *, select_prim: Any,
                           window_dimensions: tuple, window_strides: tuple,
                           padding: tuple) -> list[Any]:
    if not is_undefined(source) or is_undefined(operand):
        raise NotImplementedError("select_and_scatter_add is linear in its source only.")
    ones = _ones(window_dimensions)
    return [select_and_gather_add_p.bind(
        ad.instantiate(ct), operand, select_prim=select_prim,
        window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
        base_dilation=ones, window_dilation=ones), None]


select_and_scatter_add_p.abstract_eval = _scatter_add_abstract_eval
select_and_scatter_add_p.reference = _scatter_add_reference
select_and_scatter_add_p.jvp = _scatter_add_jvp
select_and_scatter_add_p.transpose = _scatter_add_transpose
select_and_scatter_add_p.batch = _batch_front(select_and_scatter_add_p)
select_and_scatter_add_p.lower = lower_by_expansion(select_and_scatter_add_p,
                                                    _scatter_add_expansion)
select_and_scatter_add_p.is_linear = True


# ----------------------------------------------------------------------- select_and_scatter

select_and_scatter_p = Primitive("select_and_scatter")


def _closed(jaxpr: Jaxpr, consts: Sequence[Any]) -> ClosedJaxpr:
    return ClosedJaxpr(jaxpr, list(consts))


def _sas_abstract_eval(operand: ShapedArray, source: ShapedArray, init: ShapedArray, *,
                       select_jaxpr: Jaxpr, select_consts: tuple, scatter_jaxpr: Jaxpr,
                       scatter_consts: tuple, window_dimensions: tuple,
                       window_strides: tuple, padding: tuple) -> ShapedArray:
    if len(window_dimensions) != len(window_strides):
        raise TypeError("select_and_scatter got inconsistent window_strides and "
                        f"window_dimensions: got window_strides {window_strides} and "
                        f"window_dimensions {window_dimensions}.")
    if not operand.dtype == source.dtype == init.dtype or init.shape != ():
        raise TypeError("select_and_scatter: operand, source and a scalar initial value must "
                        f"share one dtype, got {operand.str_short()}, {source.str_short()}, "
                        f"{init.str_short()}.")
    expected = out_shape(operand.shape, _window(window_dimensions, window_strides, padding))
    if source.shape != expected:
        raise TypeError(f"select_and_scatter: source of shape {source.shape} must have one "
                        f"element per window position {expected}.")
    return operand.update(weak_type=False)


def _sas_reference(operand: np.ndarray, source: np.ndarray, init: np.ndarray, *,
                   select_jaxpr: Jaxpr, select_consts: tuple, scatter_jaxpr: Jaxpr,
                   scatter_consts: tuple, **params: Any) -> np.ndarray:
    window = _window(**params)
    out = np.full(operand.shape, init, operand.dtype).reshape(-1)
    if not source.size:
        return out.reshape(operand.shape)
    config = pad_config(window)
    # Flat operand positions, -1 on padding: padding takes part in no selection.
    places = pad_p.reference(np.arange(operand.size).reshape(operand.shape), np.array(-1),
                             padding_config=config)
    values = pad_p.reference(operand, np.zeros((), operand.dtype), padding_config=config)
    select = _closed(select_jaxpr, select_consts)
    chosen = np.full(source.shape, -1)
    value = np.zeros(source.shape, operand.dtype)
    for starts, limits, strides in element_slices(source.shape, window):
        index = tuple(np.s_[a:b:c] for a, b, c in zip(starts, limits, strides))
        place, candidate = places[index], values[index]
        keep = apply_to_numpy(select, value, candidate)[0].astype(bool)
        take = (place >= 0) & ((chosen < 0) | ~keep)
        chosen, value = np.where(take, place, chosen), np.where(take, candidate, value)
    _scatter_in_order(out, chosen.reshape(-1), source.reshape(-1),
                      _closed(scatter_jaxpr, scatter_consts))
    return out.reshape(operand.shape)


def _scatter_in_order(out: np.ndarray, places: np.ndarray, values: np.ndarray,
                      scatter: ClosedJaxpr) -> None:
    """out[p] = scatter(out[p], v) for the windows in row-major order: in rounds, the k-th
    window of every place at once, so that each place sees its windows in order."""
    valid = places >= 0
    places, values = places[valid], values[valid]
    order = np.argsort(places, kind="stable")
    places, values = places[order], values[order]
    first = np.searchsorted(places, places)  # where each place's run begins
    rank = np.arange(len(places)) - first
    for k in range(int(rank.max()) + 1 if len(rank) else 0):
        now = rank == k
        out[places[now]] = apply_to_numpy(scatter, out[places[now]], values[now])[0]


def _is_add(jaxpr: Jaxpr) -> bool:
    return (len(jaxpr.eqns) == 1 and jaxpr.eqns[0].primitive.name == "add"
            and list(jaxpr.eqns[0].invars) == list(jaxpr.invars)
            and list(jaxpr.outvars) == list(jaxpr.eqns[0].outvars))


def _sas_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
    out = select_and_scatter_p.bind(*primals, **params)
    _, source_t, init_t = tangents
    if isinstance(source_t, Zero) and isinstance(init_t, Zero):
        return out, Zero(ad.tangent_aval(get_aval(out)))
    if not _is_add(params["scatter_jaxpr"]):
        raise NotImplementedError("the derivative of select_and_scatter is defined here for "
                                  "an additive scatter only.")
    return out, select_and_scatter_p.bind(primals[0], ad.instantiate(source_t),
                                          ad.instantiate(init_t), **params)


def _sas_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any],
               **params: Any) -> tuple[Any, int]:
    if dims[2] is not None:
        raise NotImplementedError("select_and_scatter under vmap with a batched initial "
                                  "value is not supported.")
    operand, source = batch_at_front(args[:2], dims[:2], axis_size)
    return select_and_scatter_p.bind(operand, source, args[2],
                                     **_with_batch_window(params)), 0


def _sas_lower(ctx: LoweringContext, operand: HloInstruction, source: HloInstruction,
               init: HloInstruction, *, select_jaxpr: Jaxpr, select_consts: tuple,
               scatter_jaxpr: Jaxpr, scatter_consts: tuple, window_dimensions: tuple,
               window_strides: tuple, padding: tuple) -> HloInstruction:
    select = ctx.lower_jaxpr_as_computation(_closed(select_jaxpr, select_consts), "select")
    scatter = ctx.lower_jaxpr_as_computation(_closed(scatter_jaxpr, scatter_consts),
                                             "scatter")
    window = {"size": tuple(window_dimensions), "stride": tuple(window_strides),
              "pad": tuple(tuple(p) for p in padding)}
    return ctx.builder.add(Opcode.SELECT_AND_SCATTER, operand.shape, (operand, source, init),
                           {"window": window}, (select, scatter))


select_and_scatter_p.abstract_eval = _sas_abstract_eval
select_and_scatter_p.reference = _sas_reference
select_and_scatter_p.jvp = _sas_jvp
select_and_scatter_p.batch = _sas_batch
select_and_scatter_p.lower = _sas_lower


def _select_and_scatter(operand: Any, select: Any, window_dimensions: Sequence[int],
                        window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                        source: Any, init_value: Any, scatter: Any) -> Any:
    """XLA's SelectAndScatter with Python `select` and `scatter` functions of two scalars
    (mirrors JAX's private `lax._select_and_scatter`)."""
    aval = get_aval(init_value)
    scalar = ShapedArray((), aval.dtype, aval.weak_type)
    select_closed = trace_to_jaxpr(lambda a, b: [select(a, b)], [scalar, scalar])
    scatter_closed = trace_to_jaxpr(lambda a, b: [scatter(a, b)], [scalar, scalar])
    return select_and_scatter_p.bind(
        operand, source, init_value, select_jaxpr=select_closed.jaxpr,
        select_consts=tuple(select_closed.consts), scatter_jaxpr=scatter_closed.jaxpr,
        scatter_consts=tuple(scatter_closed.consts),
        window_dimensions=tuple(int(w) for w in window_dimensions),
        window_strides=tuple(int(s) for s in window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding))
