"""Gather and scatter-add, the linear pair of indexed reads and writes, and the machinery
every scatter shares.

Mirrors `jax.lax.gather` and `jax.lax.scatter_add` (XLA's Gather and Scatter with an add
combiner). Each is the other's transpose: a gather's cotangent is scatter-added back into
zeros, a scatter-add's cotangent is gathered at the updated windows. Batching adds the
mapped axis to the dimension numbers: as a window dimension when only the operand is mapped,
as an index dimension when only the indices are, and as a pair of batching dimensions
(`operand_batching_dims`) when both are. The other scatters (scatter.py) reuse the shape
rule, batching rule and lowering built here.

Lowering: CLIP and PROMISE_IN_BOUNDS gathers are one HLO gather (which clamps); a
FILL_OR_DROP gather also computes which windows are inside and selects the fill value for
the others. FILL_OR_DROP and PROMISE_IN_BOUNDS scatters are one HLO scatter (which skips
windows that do not fit); a CLIP scatter clamps its indices first.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.core.shape_poly import is_symbolic_dim
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import NUMERIC, check_dtype_kind
from jaxlite.lax._gather_scatter_util import (GatherDimensionNumbers, GatherScatterMode,
                                              ScatterDimensionNumbers, check_mode,
                                              check_scatter, default_fill_value,
                                              gather_dnums_of_scatter, gather_numpy,
                                              gather_shape, scatter_dnums_of_gather,
                                              scatter_numpy, scatter_slice_sizes, shifted)
from jaxlite.lax.arithmetic import full
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
           "gather", "scatter_add", "gather_p", "scatter_add_p"]

_CLIP, _FILL = GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP
_PROMISE = GatherScatterMode.PROMISE_IN_BOUNDS


def _tangent_fill(mode: GatherScatterMode) -> Any:
    return 0 if mode is _FILL else None


# -------------------------------------------------------------------- index lowering

def _bounds_dtype(dtype: np.dtype) -> np.dtype:
    """A signed type wide enough to compare indices of `dtype` with operand bounds."""
    dtype = np.dtype(dtype)
    if dtype.itemsize == 8 or dtype == np.uint32:
        return np.dtype(np.int64)
    return np.dtype(np.int32)


def _index_vectors(ctx: LoweringContext, indices: HloInstruction,
                   upper: Sequence[int]) -> tuple[HloInstruction, HloInstruction,
                                                   HloInstruction]:
    """The indices widened to a signed type, with zeros and per-component upper bounds
    broadcast to their shape."""
    dtype = _bounds_dtype(indices.shape.dtype)
    indices = hlo.convert(ctx, indices, dtype)
    dims, last = indices.shape.dims, indices.shape.rank - 1
    vector = _bounds_vector(ctx, upper, dtype)
    return indices, hlo.full_like(ctx, indices, 0), hlo.broadcast(ctx, vector, dims, (last,))


def _bounds_vector(ctx: LoweringContext, upper: Sequence[Any], dtype: np.dtype
                   ) -> HloInstruction:
    """The bounds as one constant vector, or, when some are symbolic sizes (shape
    polymorphism), the concatenation of their scalars."""
    if not any(is_symbolic_dim(u) for u in upper):
        literal = np.asarray(upper, dtype)
        return hlo.emit(ctx, Opcode.CONSTANT, Shape(dtype, (len(upper),)), literal=literal)
    pieces = [hlo.reshape(ctx, hlo.constant(ctx, u, dtype), (1,)) for u in upper]
    return hlo.emit(ctx, Opcode.CONCATENATE, Shape(dtype, (len(upper),)), pieces,
                    dimensions=(0,))


def _windows_inside(ctx: LoweringContext, indices: HloInstruction,
                    upper: Sequence[int]) -> HloInstruction:
    """pred[index batch dims]: whether every start is in [0, upper] for its component."""
    batch = indices.shape.dims[:-1]
    if not upper:
        return hlo.constant(ctx, True, np.bool_, batch)
    indices, zeros, bounds = _index_vectors(ctx, indices, upper)
    inside = hlo.logical(ctx, Opcode.AND, hlo.compare(ctx, indices, zeros, "GE"),
                         hlo.compare(ctx, indices, bounds, "LE"))
    reducer = ctx.scalar_computation(Opcode.AND, np.bool_)
    return hlo.reduce(ctx, [inside], [indices.shape.rank - 1], reducer, [True])


def _clamped_indices(ctx: LoweringContext, indices: HloInstruction,
                     upper: Sequence[int]) -> HloInstruction:
    if not upper:
        return indices
    indices, zeros, bounds = _index_vectors(ctx, indices, upper)
    return hlo.clamp(ctx, zeros, indices, bounds)


# ----------------------------------------------------------------------------- gather

gather_p = Primitive("gather")


def _gather_abstract_eval(operand: ShapedArray, indices: ShapedArray, *,
                          dimension_numbers: GatherDimensionNumbers,
                          slice_sizes: tuple[int, ...], indices_are_sorted: bool,
                          unique_indices: bool, mode: GatherScatterMode,
                          fill_value: Any) -> ShapedArray:
    check_mode("gather", mode)
    shape = gather_shape(operand, indices, dimension_numbers, slice_sizes)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_reference(operand: np.ndarray, indices: np.ndarray, *,
                      dimension_numbers: GatherDimensionNumbers,
                      slice_sizes: tuple[int, ...], indices_are_sorted: bool,
                      unique_indices: bool, mode: GatherScatterMode,
                      fill_value: Any) -> np.ndarray:
    return gather_numpy(operand, indices, dimension_numbers, slice_sizes, mode, fill_value)


def _gather_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                mode: GatherScatterMode, fill_value: Any, **params: Any) -> tuple[Any, Any]:
    out = gather_p.bind(*primals, mode=mode, fill_value=fill_value, **params)
    if isinstance(tangents[0], ad.Zero):
        return out, ad.Zero(ad.tangent_aval(get_aval(out)))
    return out, gather_p.bind(tangents[0], primals[1], mode=mode,
                              fill_value=_tangent_fill(mode), **params)


def _gather_transpose(ct: Any, operand: Any, indices: Any, *,
                      dimension_numbers: GatherDimensionNumbers,
                      slice_sizes: tuple[int, ...], indices_are_sorted: bool,
                      unique_indices: bool, mode: GatherScatterMode,
                      fill_value: Any) -> list[Any]:
    if is_undefined(indices):
        raise TypeError("gather is not linear in its indices; it cannot be transposed with "
                        "respect to them.")
    aval = get_aval(operand)
    # Clamped reads (CLIP, and PROMISE_IN_BOUNDS as executed) send their cotangent to the
    # clamped position; filled ones send none.
    scatter_mode = _CLIP if mode is _PROMISE else mode
    zeros = full(aval.shape, 0, aval.dtype)
    out = scatter_add_p.bind(zeros, indices, ct,
                             dimension_numbers=scatter_dnums_of_gather(dimension_numbers),
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=scatter_mode)
    return [out, None]


def _gather_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                  dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                  **params: Any) -> tuple[Any, int]:
    (operand, indices), (operand_dim, index_dim) = args, dims
    d = dimension_numbers
    if index_dim is None:
        # The mapped axis becomes the first window dimension, and output dimension 0.
        operand = move_batch_axis(operand, operand_dim, axis_size, 0)
        dnums = GatherDimensionNumbers(
            (0,) + shifted(d.offset_dims), shifted(d.collapsed_slice_dims),
            shifted(d.start_index_map), shifted(d.operand_batching_dims),
            d.start_indices_batching_dims)
        sizes = (axis_size,) + tuple(slice_sizes)
    elif operand_dim is None:
        # The mapped axis is the first index batch dimension, and output dimension 0.
        indices = move_batch_axis(indices, index_dim, axis_size, 0)
        dnums = d._replace(offset_dims=shifted(d.offset_dims),
                           start_indices_batching_dims=shifted(d.start_indices_batching_dims))
        sizes = tuple(slice_sizes)
    else:
        operand = move_batch_axis(operand, operand_dim, axis_size, 0)
        indices = move_batch_axis(indices, index_dim, axis_size, 0)
        dnums = GatherDimensionNumbers(
            shifted(d.offset_dims), shifted(d.collapsed_slice_dims),
            shifted(d.start_index_map), (0,) + shifted(d.operand_batching_dims),
            (0,) + shifted(d.start_indices_batching_dims))
        # A batching dimension's slice is one element, or none when the batch is empty.
        sizes = (min(axis_size, 1),) + tuple(slice_sizes)
    return gather_p.bind(operand, indices, dimension_numbers=dnums, slice_sizes=sizes,
                         **params), 0


def _gather_lower(ctx: LoweringContext, operand: HloInstruction, indices: HloInstruction, *,
                  dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                  indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode,
                  fill_value: Any) -> HloInstruction:
    d = dimension_numbers
    out_shape = ctx.shape(ctx.avals_out[0])
    attrs = dict(offset_dims=tuple(d.offset_dims),
                 collapsed_slice_dims=tuple(d.collapsed_slice_dims),
                 start_index_map=tuple(d.start_index_map),
                 operand_batching_dims=tuple(d.operand_batching_dims),
                 start_indices_batching_dims=tuple(d.start_indices_batching_dims),
                 index_vector_dim=indices.shape.rank - 1, slice_sizes=tuple(slice_sizes),
                 indices_are_sorted=bool(indices_are_sorted))
    gathered = hlo.emit(ctx, Opcode.GATHER, out_shape, (operand, indices), **attrs)
    if mode is not _FILL:
        return gathered
    upper = [operand.shape.dims[k] - slice_sizes[k] for k in d.start_index_map]
    inside = _windows_inside(ctx, indices, upper)
    batch_positions = [p for p in range(out_shape.rank) if p not in d.offset_dims]
    inside = hlo.broadcast(ctx, inside, out_shape.dims, batch_positions)
    fill = hlo.constant(ctx, np.asarray(fill_value).astype(out_shape.dtype), out_shape.dtype,
                        out_shape.dims)
    return hlo.select(ctx, inside, gathered, fill)


gather_p.abstract_eval = _gather_abstract_eval
gather_p.reference = _gather_reference
gather_p.jvp = _gather_jvp
gather_p.transpose = _gather_transpose
gather_p.batch = _gather_batch
gather_p.lower = _gather_lower


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value: Any = None) -> Any:
    """Slices of `operand` starting at `start_indices` (mirrors `jax.lax.gather`).

    The last dimension of `start_indices` is the index vector; `dimension_numbers` says
    which operand dimension each of its entries starts, which slice dimensions are dropped
    and where the slice dimensions go in the output. `mode` (default PROMISE_IN_BOUNDS)
    says what happens to slices that do not fit: CLIP moves them inside, FILL_OR_DROP
    ("fill") returns `fill_value` for them (default: NaN for inexact dtypes, the least
    signed / greatest unsigned integer, True).

    Differences from JAX: mode ONE_HOT is not supported. Under PROMISE_IN_BOUNDS an
    out-of-bounds read is clamped (as XLA executes it) and its cotangent goes to the clamped
    position; JAX leaves that gradient unspecified.
    """
    parsed = GatherScatterMode.from_any(_PROMISE if mode is None else mode)
    check_mode("lax.gather", parsed)
    if parsed is _FILL:
        if fill_value is None:
            fill_value = default_fill_value(get_aval(operand).dtype)
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=dimension_numbers,
                         slice_sizes=tuple(int(s) for s in slice_sizes),
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=parsed,
                         fill_value=fill_value)


# ------------------------------------------------------------- shared scatter rules

def scatter_abstract_eval(name: str) -> Callable[..., ShapedArray]:
    """The shape rule of a scatter: the operand's aval, after checking the operands."""
    def rule(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *,
             dimension_numbers: ScatterDimensionNumbers, mode: GatherScatterMode,
             **params: Any) -> ShapedArray:
        check_mode(name, mode)
        check_scatter(name, operand, indices, updates, dimension_numbers)
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)
    rule.__name__ = f"_{name}_abstract_eval"
    return rule


def scatter_reference(combine: Callable[[np.ndarray, np.ndarray], np.ndarray]
                      ) -> Callable[..., np.ndarray]:
    """The eager rule of a scatter that folds each update in with `combine(old, update)`."""
    def rule(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray, *,
             dimension_numbers: ScatterDimensionNumbers, mode: GatherScatterMode,
             **params: Any) -> np.ndarray:
        return scatter_numpy(operand, indices, updates, dimension_numbers, mode, combine)
    return rule


def scatter_batch(primitive: Primitive) -> Callable[..., tuple[Any, int]]:
    """The batching rule of a scatter: the mapped axis becomes a window dimension (indices
    not mapped) or a pair of batching dimensions (indices mapped)."""
    def rule(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
             dimension_numbers: ScatterDimensionNumbers, **params: Any) -> tuple[Any, int]:
        (operand, indices, updates), (operand_dim, index_dim, update_dim) = args, dims
        d = dimension_numbers
        operand = move_batch_axis(operand, operand_dim, axis_size, 0)
        updates = move_batch_axis(updates, update_dim, axis_size, 0)
        if index_dim is None:
            dnums = ScatterDimensionNumbers(
                (0,) + shifted(d.update_window_dims), shifted(d.inserted_window_dims),
                shifted(d.scatter_dims_to_operand_dims), shifted(d.operand_batching_dims),
                d.scatter_indices_batching_dims)
        else:
            indices = move_batch_axis(indices, index_dim, axis_size, 0)
            dnums = ScatterDimensionNumbers(
                shifted(d.update_window_dims), shifted(d.inserted_window_dims),
                shifted(d.scatter_dims_to_operand_dims),
                (0,) + shifted(d.operand_batching_dims),
                (0,) + shifted(d.scatter_indices_batching_dims))
        return primitive.bind(operand, indices, updates, dimension_numbers=dnums,
                              **params), 0
    return rule


def scatter_lowering(combiner: Callable[..., HloComputation]) -> Callable[..., Any]:
    """The lowering of a scatter whose `to_apply` is `combiner(ctx, dtype, **params)`."""
    def rule(ctx: LoweringContext, operand: HloInstruction, indices: HloInstruction,
             updates: HloInstruction, *, dimension_numbers: ScatterDimensionNumbers,
             indices_are_sorted: bool, unique_indices: bool, mode: GatherScatterMode,
             **params: Any) -> HloInstruction:
        d = dimension_numbers
        if mode is _CLIP:
            sizes = scatter_slice_sizes(operand.shape.dims, updates.shape.dims, d)
            upper = [operand.shape.dims[k] - sizes[k] for k in d.scatter_dims_to_operand_dims]
            indices = _clamped_indices(ctx, indices, upper)
        attrs = dict(update_window_dims=tuple(d.update_window_dims),
                     inserted_window_dims=tuple(d.inserted_window_dims),
                     scatter_dims_to_operand_dims=tuple(d.scatter_dims_to_operand_dims),
                     input_batching_dims=tuple(d.operand_batching_dims),
                     scatter_indices_batching_dims=tuple(d.scatter_indices_batching_dims),
                     index_vector_dim=indices.shape.rank - 1,
                     indices_are_sorted=bool(indices_are_sorted),
                     unique_indices=bool(unique_indices))
        computation = combiner(ctx, operand.shape.dtype, **params)
        return ctx.builder.add(Opcode.SCATTER, operand.shape, (operand, indices, updates),
                               attrs, (computation,))
    return rule


def linear_scatter_jvp(primitive: Primitive) -> Callable[..., tuple[Any, Any]]:
    """The jvp of a scatter linear in the operand and the updates together (add, sub)."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = primitive.bind(*primals, **params)
        t_operand, _, t_updates = tangents
        if isinstance(t_operand, ad.Zero) and isinstance(t_updates, ad.Zero):
            return out, ad.Zero(ad.tangent_aval(get_aval(out)))
        return out, primitive.bind(ad.instantiate(t_operand), primals[1],
                                   ad.instantiate(t_updates), **params)
    return jvp


def gather_updates(ct: Any, operand: Any, indices: Any, updates: Any,
                   dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                   unique_indices: bool, mode: GatherScatterMode) -> Any:
    """What the windows of a scatter read back from `ct`: the cotangent of its updates
    (zero for windows the scatter dropped)."""
    sizes = scatter_slice_sizes(get_aval(operand).shape, get_aval(updates).shape,
                                dimension_numbers)
    gather_mode = _FILL if mode is _PROMISE else mode
    return gather_p.bind(ct, indices, dimension_numbers=gather_dnums_of_scatter(
        dimension_numbers), slice_sizes=sizes, indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices, mode=gather_mode,
        fill_value=_tangent_fill(gather_mode))


def combiner_computation(ctx: LoweringContext, dtype: Any, key: str,
                         root: Callable[[Any, Any, Any], HloInstruction]) -> HloComputation:
    """A scalar combiner `(old, update) -> root(builder, old, update)` of `dtype`."""
    dtype = np.dtype(dtype)

    def build() -> HloComputation:
        builder = ctx.new_builder(f"{key}_{np.dtype(dtype).name}")
        scalar = Shape(dtype, ())
        old, new = builder.parameter(scalar, "old"), builder.parameter(scalar, "update")
        return builder.build(root(builder, old, new))
    return ctx.cached_computation(("scatter_combiner", key, dtype), build)


def reducer_combiner(opcode: Opcode, bool_opcode: Opcode) -> Callable[..., HloComputation]:
    """A combiner that is one reducer opcode (`bool_opcode` for pred operands)."""
    def combiner(ctx: LoweringContext, dtype: Any, **params: Any) -> HloComputation:
        chosen = bool_opcode if np.dtype(dtype) == np.bool_ else opcode
        return ctx.scalar_computation(chosen, dtype)
    return combiner


# ------------------------------------------------------------------------ scatter_add

scatter_add_p = Primitive("scatter-add")


def _scatter_add_combine(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    if old.dtype == np.bool_:
        return old | new
    return old + new


def _scatter_add_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                           dimension_numbers: ScatterDimensionNumbers,
                           indices_are_sorted: bool, unique_indices: bool,
                           mode: GatherScatterMode) -> list[Any]:
    if is_undefined(indices):
        raise TypeError("scatter_add is not linear in its indices; it cannot be transposed "
                        "with respect to them.")
    ct_updates = None
    if is_undefined(updates):
        ct_updates = gather_updates(ct, operand, indices, updates, dimension_numbers,
                                    indices_are_sorted, unique_indices, mode)
    return [ct if is_undefined(operand) else None, None, ct_updates]


scatter_add_p.abstract_eval = scatter_abstract_eval("scatter_add")
scatter_add_p.reference = scatter_reference(_scatter_add_combine)
scatter_add_p.jvp = linear_scatter_jvp(scatter_add_p)
scatter_add_p.transpose = _scatter_add_transpose
scatter_add_p.batch = scatter_batch(scatter_add_p)
scatter_add_p.lower = scatter_lowering(reducer_combiner(Opcode.ADD, Opcode.OR))
scatter_add_p.is_linear = True


def bind_scatter(primitive: Primitive, operand: Any, scatter_indices: Any, updates: Any,
                 dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                 unique_indices: bool, mode: str | GatherScatterMode | None,
                 **params: Any) -> Any:
    """Bind a scatter primitive after parsing `mode` (None means FILL_OR_DROP, as in JAX)."""
    parsed = GatherScatterMode.from_any(mode)
    check_mode(f"lax.{primitive.name.replace('-', '_')}", parsed)
    return primitive.bind(operand, scatter_indices, updates,
                          dimension_numbers=dimension_numbers,
                          indices_are_sorted=bool(indices_are_sorted),
                          unique_indices=bool(unique_indices), mode=parsed, **params)


def scatter_add(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode: str | GatherScatterMode | None = None) -> Any:
    """`operand` with `updates` added at the windows `scatter_indices` start (mirrors
    `jax.lax.scatter_add`).

    Updates to the same position all add up. `mode` (default FILL_OR_DROP) says what happens
    to windows that do not fit: they are dropped, or with CLIP moved inside. Booleans raise
    JAX's TypeError (JAX combines with `lax.add`, which takes no bool).
    """
    check_dtype_kind("add", np.dtype(get_aval(operand).dtype), NUMERIC, 0)
    return bind_scatter(scatter_add_p, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)

