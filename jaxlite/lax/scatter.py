"""The scatters besides scatter-add: scatter (set, and apply), scatter_sub, scatter_mul,
scatter_min, scatter_max.

Mirrors `jax.lax.scatter`, `scatter_sub`, `scatter_mul`, `scatter_min`, `scatter_max` and
`scatter_apply` (XLA's Scatter with the matching `to_apply` combiner). `scatter_apply` is the
scatter primitive carrying an `update_jaxpr` (old value, unused update) -> new value, as in
JAX, so that duplicate indices apply the function once per occurrence.

Derivatives follow JAX: a scatter with possibly repeated indices passes the tangent of the
update that was written last (found by scattering the update ids and reading them back);
scatter_mul is linear in its operand, and differentiable in its updates only with
`unique_indices=True`; scatter_min and scatter_max share the tangent equally among the
operand value and the updates that tie for the result. Shape checks, batching and lowering
come from gather_scatter.py.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import Tracer
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import vmap_flat
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import NUMERIC, check_dtype_kind
from jaxlite.lax._gather_scatter_util import (GatherScatterMode, ScatterDimensionNumbers,
                                              gather_dnums_of_scatter, scatter_slice_sizes)
from jaxlite.lax.arithmetic import add, div, full, mul, neg
from jaxlite.lax.broadcast import reshape
from jaxlite.lax.comparisons import eq
from jaxlite.lax.math_functions import extremum_reference
from jaxlite.lax.gather_scatter import (bind_scatter, combiner_computation, gather_p,
                                        gather_updates, linear_scatter_jvp, reducer_combiner,
                                        scatter_abstract_eval, scatter_add_p, scatter_batch,
                                        scatter_lowering, scatter_reference)
from jaxlite.lax.selection import select
from jaxlite.lax.shape_ops import iota
from jaxlite.xla.ir import HloComputation
from jaxlite.xla.opcodes import Opcode

__all__ = ["scatter", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
           "scatter_apply", "scatter_p", "scatter_sub_p", "scatter_mul_p", "scatter_min_p",
           "scatter_max_p"]

_FILL = GatherScatterMode.FILL_OR_DROP
_PROMISE = GatherScatterMode.PROMISE_IN_BOUNDS


def _zero_tangent(out: Any) -> ad.Zero:
    return ad.Zero(ad.tangent_aval(get_aval(out)))


def _zeros_like(x: Any) -> Any:
    aval = get_aval(x)
    return full(aval.shape, 0, aval.dtype)


def _masked(mask: Any, tangent: Any) -> Any:
    tangent = ad.instantiate(tangent)
    return select(mask, tangent, _zeros_like(tangent))


def _check_not_bool(name: str) -> Callable[..., ShapedArray]:
    shape_rule = scatter_abstract_eval(name)

    def rule(operand: ShapedArray, *avals: ShapedArray, **params: Any) -> ShapedArray:
        if operand.dtype == np.bool_:
            raise TypeError(f"{name} does not accept dtype bool.")
        return shape_rule(operand, *avals, **params)
    return rule


# ---------------------------------------------------------------------------- scatter

scatter_p = Primitive("scatter")


def _apply_update_jaxpr(update_jaxpr: ClosedJaxpr) -> Callable[[np.ndarray, np.ndarray], Any]:
    """The update jaxpr of scalars, mapped over vectors of old values and updates."""
    def combine(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        body = lambda a, b: eval_jaxpr(update_jaxpr.jaxpr, update_jaxpr.consts, a, b)  # noqa: E731
        out, = vmap_flat(body, len(old), [old, new], [0, 0], 0)
        return np.asarray(out)
    return combine


def _scatter_reference(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray, *,
                       update_jaxpr: ClosedJaxpr | None, **params: Any) -> np.ndarray:
    combine = (lambda old, new: new) if update_jaxpr is None \
        else _apply_update_jaxpr(update_jaxpr)
    return scatter_reference(combine)(operand, indices, updates, **params)


def _scatter_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                 update_jaxpr: ClosedJaxpr | None, **params: Any) -> tuple[Any, Any]:
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    out = scatter_p.bind(operand, indices, updates, update_jaxpr=None, **params)
    if isinstance(t_operand, ad.Zero) and isinstance(t_updates, ad.Zero):
        return out, _zero_tangent(out)
    if params["unique_indices"]:
        return out, scatter_p.bind(ad.instantiate(t_operand), indices,
                                   ad.instantiate(t_updates), update_jaxpr=None, **params)
    # Which update wrote each position last: scatter distinct ids (from 1) into zeros and
    # read them back. An update keeps its tangent where its id survived; the operand keeps
    # its tangent where no update wrote.
    update_shape = get_aval(updates).shape
    ids = add(reshape(iota(np.int32, int(np.prod(update_shape, dtype=np.int64))),
                      update_shape), np.int32(1))
    written = scatter_p.bind(full(get_aval(operand).shape, 0, np.int32), indices, ids,
                             update_jaxpr=None, **params)
    read_back = gather_updates(written, operand, indices, updates, params["dimension_numbers"],
                               params["indices_are_sorted"], False, params["mode"])
    operand_part = _masked(eq(written, np.int32(0)), ad.Zero(get_aval(out))
                           if isinstance(t_operand, ad.Zero) else t_operand)
    updates_part = _masked(eq(read_back, ids), t_updates)
    return out, scatter_add_p.bind(operand_part, indices, updates_part, **params)


def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                       update_jaxpr: ClosedJaxpr | None, **params: Any) -> list[Any]:
    if not params["unique_indices"] or update_jaxpr is not None:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    if is_undefined(indices):
        raise TypeError("scatter is not linear in its indices; it cannot be transposed with "
                        "respect to them.")
    cts: list[Any] = [None, None, None]
    if is_undefined(operand):
        # The positions the updates overwrote pass no cotangent to the operand.
        cts[0] = scatter_p.bind(ct, indices, _zeros_like(updates), update_jaxpr=None,
                                **params)
    if is_undefined(updates):
        cts[2] = gather_updates(ct, operand, indices, updates, params["dimension_numbers"],
                                params["indices_are_sorted"], True, params["mode"])
    return cts


def _scatter_combiner(ctx: LoweringContext, dtype: Any, *,
                      update_jaxpr: ClosedJaxpr | None) -> HloComputation:
    if update_jaxpr is not None:
        return ctx.lower_jaxpr_as_computation(update_jaxpr, "scatter_apply")
    return combiner_computation(ctx, dtype, "scatter_set", lambda b, old, new: new)


scatter_p.abstract_eval = scatter_abstract_eval("scatter")
scatter_p.reference = _scatter_reference
scatter_p.jvp = _scatter_jvp
scatter_p.transpose = _scatter_transpose
scatter_p.batch = scatter_batch(scatter_p)
scatter_p.lower = scatter_lowering(_scatter_combiner)


def scatter(operand: Any, scatter_indices: Any, updates: Any,
            dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
            unique_indices: bool = False,
            mode: str | GatherScatterMode | None = None) -> Any:
    """`operand` with the windows at `scatter_indices` replaced by `updates` (mirrors
    `jax.lax.scatter`).

    Where several updates write one position, the last one (in the updates' order) wins on
    jaxlite's backends; JAX leaves the order unspecified. `mode` (default FILL_OR_DROP)
    drops windows that do not fit, or with CLIP moves them inside.
    """
    return bind_scatter(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode, update_jaxpr=None)


def _update_jaxpr(func: Callable[[Any], Any], dtype: np.dtype) -> ClosedJaxpr:
    scalar = ShapedArray((), np.dtype(dtype), False)
    closed = trace_to_jaxpr(lambda x, _: [func(x)], [scalar, scalar])
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise TypeError("lax.scatter_apply: func must not close over values traced by jit, "
                        "grad or vmap; pass such values through the scattered array instead.")
    out = closed.out_avals[0]
    if out.shape != () or out.dtype != scalar.dtype:
        raise TypeError(f"lax.scatter_apply: func must map a {scalar.str_short()} scalar to a "
                        f"scalar of the same dtype, got {out.str_short()}.")
    return closed


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False,
                  mode: str | GatherScatterMode | None = None) -> Any:
    """`operand` with `func` applied at each scattered position, once per occurrence
    (mirrors `jax.lax.scatter_apply`).

    `update_shape` is the shape the updates of an equivalent scatter would have. As in JAX,
    the result is not differentiable (its jvp raises NotImplementedError).
    """
    aval = get_aval(operand)
    unused = full(tuple(int(s) for s in update_shape), 0, aval.dtype)
    return bind_scatter(scatter_p, operand, scatter_indices, unused, dimension_numbers,
                        indices_are_sorted, unique_indices, mode,
                        update_jaxpr=_update_jaxpr(func, aval.dtype))


# ------------------------------------------------------------------------ scatter_sub

scatter_sub_p = Primitive("scatter-sub")


def _scatter_sub_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                           dimension_numbers: ScatterDimensionNumbers,
                           indices_are_sorted: bool, unique_indices: bool,
                           mode: GatherScatterMode) -> list[Any]:
    if is_undefined(indices):
        raise TypeError("scatter_sub is not linear in its indices; it cannot be transposed "
                        "with respect to them.")
    ct_updates = None
    if is_undefined(updates):
        ct_updates = neg(gather_updates(ct, operand, indices, updates, dimension_numbers,
                                        indices_are_sorted, unique_indices, mode))
    return [ct if is_undefined(operand) else None, None, ct_updates]


scatter_sub_p.abstract_eval = _check_not_bool("scatter_sub")
scatter_sub_p.reference = scatter_reference(lambda old, new: old - new)
scatter_sub_p.jvp = linear_scatter_jvp(scatter_sub_p)
scatter_sub_p.transpose = _scatter_sub_transpose
scatter_sub_p.batch = scatter_batch(scatter_sub_p)
scatter_sub_p.lower = scatter_lowering(lambda ctx, dtype: combiner_computation(
    ctx, dtype, "scatter_sub", lambda b, old, new: b.add(Opcode.SUBTRACT, old.shape,
                                                          (old, new))))
scatter_sub_p.is_linear = True


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Any:
    """`operand` with `updates` subtracted at the scattered windows (mirrors
    `jax.lax.scatter_sub`); repeated positions subtract every update."""
    return bind_scatter(scatter_sub_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)


# ------------------------------------------------------------------------ scatter_mul

scatter_mul_p = Primitive("scatter-mul")


def _scatter_mul_combine(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    return old & new if old.dtype == np.bool_ else old * new


def _scatter_mul_jvp(primals: Sequence[Any], tangents: Sequence[Any],
                     **params: Any) -> tuple[Any, Any]:
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    out = scatter_mul_p.bind(*primals, **params)
    tangent: Any = _zero_tangent(out)
    if not isinstance(t_operand, ad.Zero):
        tangent = scatter_mul_p.bind(t_operand, indices, updates, **params)
    if not isinstance(t_updates, ad.Zero):
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`")
        # Each position is written at most once: out = x * y there, so dout = x * dy.
        x_at = gather_updates(operand, operand, indices, updates, params["dimension_numbers"],
                              params["indices_are_sorted"], True, params["mode"])
        from_updates = scatter_add_p.bind(_zeros_like(operand), indices, mul(x_at, t_updates),
                                          **params)
        tangent = ad.add_tangents(tangent, from_updates)
    return out, tangent


def _scatter_mul_transpose(ct: Any, operand: Any, indices: Any, updates: Any,
                           **params: Any) -> list[Any]:
    if is_undefined(updates) or is_undefined(indices):
        raise TypeError("scatter_mul is linear only in its operand; it cannot be transposed "
                        "with respect to the indices or the updates.")
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


scatter_mul_p.abstract_eval = scatter_abstract_eval("scatter_mul")
scatter_mul_p.reference = scatter_reference(_scatter_mul_combine)
scatter_mul_p.jvp = _scatter_mul_jvp
scatter_mul_p.transpose = _scatter_mul_transpose
scatter_mul_p.batch = scatter_batch(scatter_mul_p)
scatter_mul_p.lower = scatter_lowering(reducer_combiner(Opcode.MULTIPLY, Opcode.AND))


def scatter_mul(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Any:
    """`operand` multiplied by `updates` at the scattered windows (mirrors
    `jax.lax.scatter_mul`).

    As in JAX, the derivative with respect to `updates` needs `unique_indices=True`, and
    booleans raise JAX's TypeError (JAX combines with `lax.mul`, which takes no bool).
    """
    check_dtype_kind("mul", np.dtype(get_aval(operand).dtype), NUMERIC, 0)
    return bind_scatter(scatter_mul_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)


# --------------------------------------------------------------- scatter_min, scatter_max

def _extremum_jvp(primitive: Primitive) -> Callable[..., tuple[Any, Any]]:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        operand, indices, updates = primals
        t_operand, _, t_updates = tangents
        out = primitive.bind(*primals, **params)
        if isinstance(t_operand, ad.Zero) and isinstance(t_updates, ad.Zero):
            return out, _zero_tangent(out)
        d, mode = params["dimension_numbers"], params["mode"]
        # The result read back at each update (NaN, which equals nothing, where dropped).
        dropped = _FILL if mode is _PROMISE else mode
        sizes = scatter_slice_sizes(get_aval(operand).shape, get_aval(updates).shape, d)
        read_back = gather_p.bind(out, indices, dimension_numbers=gather_dnums_of_scatter(d),
                                  slice_sizes=sizes,
                                  indices_are_sorted=params["indices_are_sorted"],
                                  unique_indices=params["unique_indices"], mode=dropped,
                                  fill_value=np.nan if dropped is _FILL else None)
        operand_won, update_won = eq(operand, out), eq(updates, read_back)
        one = np.ones((), get_aval(out).dtype)
        counts = scatter_add_p.bind(select(operand_won, one, np.zeros_like(one)), indices,
                                    select(update_won, one, np.zeros_like(one)), **params)
        counts = select(eq(counts, np.zeros_like(one)), one, counts)
        t_operand = ad.Zero(get_aval(out)) if isinstance(t_operand, ad.Zero) else t_operand
        total = scatter_add_p.bind(_masked(operand_won, t_operand), indices,
                                   _masked(update_won, t_updates), **params)
        return out, div(total, counts)
    return jvp


def _extremum_primitive(name: str, larger: bool) -> Primitive:
    primitive = Primitive(name)
    def combine(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        if old.dtype == np.bool_:
            return (old | new) if larger else (old & new)
        # As XLA's combiner: complex numbers in lexicographic order, NaN asymmetrically.
        return extremum_reference(old, new, larger=larger)

    def combiner(ctx: LoweringContext, dtype: Any) -> HloComputation:
        return hlo.extremum_computation(ctx, dtype, larger)

    primitive.abstract_eval = scatter_abstract_eval(name.replace("-", "_"))
    primitive.reference = scatter_reference(combine)
    primitive.jvp = _extremum_jvp(primitive)
    primitive.batch = scatter_batch(primitive)
    primitive.lower = scatter_lowering(combiner)
    return primitive


scatter_min_p = _extremum_primitive("scatter-min", larger=False)
scatter_max_p = _extremum_primitive("scatter-max", larger=True)


def scatter_min(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Any:
    """`operand` with the minimum of it and `updates` at the scattered windows (mirrors
    `jax.lax.scatter_min`); ties share the derivative equally, as in JAX."""
    return bind_scatter(scatter_min_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)


def scatter_max(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Any:
    """`operand` with the maximum of it and `updates` at the scattered windows (mirrors
    `jax.lax.scatter_max`); ties share the derivative equally, as in JAX."""
    return bind_scatter(scatter_max_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)

