"""Slices at run-time positions: dynamic_slice and dynamic_update_slice.

Mirrors `jax.lax.dynamic_slice` and `dynamic_update_slice` (XLA's DynamicSlice and
DynamicUpdateSlice) and the wrappers `dynamic_slice_in_dim`, `dynamic_index_in_dim`,
`dynamic_update_slice_in_dim`, `dynamic_update_index_in_dim`, plus `index_take`. The start
indices are scalars, one per dimension; as in XLA they are clamped so that the slice fits,
and the wrappers first wrap negative indices around (`allow_negative_indices`), as JAX does.

The two are each other's transposes: a slice's cotangent is written into zeros, an update's
is sliced back out. Under vmap with unmapped start indices the mapped axis is one more
sliced dimension; with mapped start indices the slice becomes a clamping gather (and the
update a clamping scatter), as in JAX.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import check_same_dtypes
from jaxlite.lax._gather_scatter_util import (GatherDimensionNumbers, GatherScatterMode,
                                              ScatterDimensionNumbers)
from jaxlite.lax.arithmetic import add, full
from jaxlite.lax.broadcast import broadcast_in_dim, reshape
from jaxlite.lax.comparisons import lt
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.dimension_value import size_in_dtype
from jaxlite.lax.gather_scatter import gather, gather_p
from jaxlite.lax.scatter import scatter_p
from jaxlite.lax.selection import select
from jaxlite.lax.shape_ops import expand_dims, squeeze
from jaxlite.lax.slicing import concatenate, slice_in_dim
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "index_take", "dynamic_slice_p",
           "dynamic_update_slice_p"]


def _check_starts(name: str, operand: ShapedArray, starts: Sequence[ShapedArray]) -> None:
    if len(starts) != operand.ndim:
        raise TypeError(f"{name}: got {len(starts)} start indices for an operand of shape "
                        f"{operand.shape}; pass one scalar start index per dimension.")
    for i, start in enumerate(starts):
        if not dtypes.is_integer(start.dtype):
            raise TypeError(f"index arguments to {name} must be integers of the same type, "
                            f"got: {np.dtype(start.dtype).name}")
        if start.shape != ():
            raise TypeError(f"{name}: start index {i} must be an integer scalar, got "
                            f"{start.str_short()}.")


def _clamped(starts: Sequence[Any], shape: Sequence[int],
             sizes: Sequence[int]) -> tuple[slice, ...]:
    """The slice whose starts are clamped into [0, dim - size], as XLA clamps them."""
    index = []
    for start, dim, size in zip(starts, shape, sizes):
        first = min(max(int(start), 0), dim - size)
        index.append(slice(first, first + size))
    return tuple(index)


def _index_dtype(dtypes_: Sequence[Any]) -> np.dtype:
    """One integer type for several start indices: int64 if any is 64-bit, else int32."""
    wide = any(np.dtype(d).itemsize == 8 or np.dtype(d) == np.uint32 for d in dtypes_)
    return dtypes.canonicalize_dtype(np.int64 if wide else np.int32)


def _same_index_type(ctx: LoweringContext,
                     starts: Sequence[HloInstruction]) -> list[HloInstruction]:
    kinds = {s.shape.dtype for s in starts}
    if len(kinds) <= 1:
        return list(starts)
    dtype = _index_dtype(list(kinds))
    return [hlo.convert(ctx, s, dtype) for s in starts]


def _stacked_starts(starts: Sequence[Any], dims: Sequence[int | None],
                    axis_size: int) -> Any:
    """The start indices as one `[axis_size, n]` array (index vectors of a gather)."""
    kinds = {np.dtype(get_aval(s).dtype) for s in starts}
    dtype = kinds.pop() if len(kinds) == 1 else _index_dtype(list(kinds))
    columns = []
    for start, dim in zip(starts, dims):
        start = convert_element_type(start, dtype)
        if dim is None:
            columns.append(broadcast_in_dim(start, (axis_size, 1), ()))
        else:
            columns.append(reshape(start, (axis_size, 1)))
    return concatenate(columns, 1)


# ---------------------------------------------------------------------- dynamic_slice

dynamic_slice_p = Primitive("dynamic_slice")


def _dynamic_slice_abstract_eval(operand: ShapedArray, *starts: ShapedArray,
                                 slice_sizes: tuple[int, ...]) -> ShapedArray:
    _check_starts("dynamic_slice", operand, starts)
    if len(slice_sizes) != operand.ndim or any(
            not 0 <= s <= d for s, d in zip(slice_sizes, operand.shape)):
        raise TypeError(f"slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {slice_sizes} for operand shape {operand.shape} "
                        "(dynamic_slice: one size in [0, dim] per dimension).")
    return ShapedArray(tuple(slice_sizes), operand.dtype, operand.weak_type)


def _dynamic_slice_reference(operand: np.ndarray, *starts: np.ndarray,
                             slice_sizes: tuple[int, ...]) -> np.ndarray:
    operand = np.asarray(operand)
    return operand[_clamped(starts, operand.shape, slice_sizes)]


def _dynamic_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                       slice_sizes: tuple[int, ...]) -> tuple[Any, Any]:
    out = dynamic_slice_p.bind(*primals, slice_sizes=slice_sizes)
    if isinstance(tangents[0], ad.Zero):
        return out, ad.Zero(ad.tangent_aval(get_aval(out)))
    return out, dynamic_slice_p.bind(tangents[0], *primals[1:], slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct: Any, operand: Any, *starts: Any,
                             slice_sizes: tuple[int, ...]) -> list[Any]:
    if any(is_undefined(s) for s in starts):
        raise TypeError("dynamic_slice is not linear in its start indices; it cannot be "
                        "transposed with respect to them.")
    aval = get_aval(operand)
    zeros = full(aval.shape, 0, aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


def _dynamic_slice_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                         slice_sizes: tuple[int, ...]) -> tuple[Any, int]:
    (operand, *starts), (operand_dim, *start_dims) = args, dims
    if all(d is None for d in start_dims):
        zero = np.zeros((), _index_dtype([get_aval(s).dtype for s in starts]))
        starts.insert(operand_dim, zero)
        sizes = list(slice_sizes)
        sizes.insert(operand_dim, axis_size)
        return dynamic_slice_p.bind(operand, *starts, slice_sizes=tuple(sizes)), operand_dim
    # Mapped starts: a gather of one window per batch member, clamped as dynamic_slice is.
    rank = len(slice_sizes)
    dnums = GatherDimensionNumbers(tuple(range(rank)), (), tuple(range(rank)))
    indices = _stacked_starts(starts, start_dims, axis_size)
    return gather_p.batch(axis_size, [operand, indices], [operand_dim, 0],
                          dimension_numbers=dnums, slice_sizes=tuple(slice_sizes),
                          indices_are_sorted=True, unique_indices=True,
                          mode=GatherScatterMode.CLIP, fill_value=None)


def _dynamic_slice_lower(ctx: LoweringContext, operand: HloInstruction,
                         *starts: HloInstruction,
                         slice_sizes: tuple[int, ...]) -> HloInstruction:
    return hlo.result(ctx, Opcode.DYNAMIC_SLICE, (operand, *_same_index_type(ctx, starts)),
                      sizes=tuple(slice_sizes))


dynamic_slice_p.abstract_eval = _dynamic_slice_abstract_eval
dynamic_slice_p.reference = _dynamic_slice_reference
dynamic_slice_p.jvp = _dynamic_slice_jvp
dynamic_slice_p.transpose = _dynamic_slice_transpose
dynamic_slice_p.batch = _dynamic_slice_batch
dynamic_slice_p.lower = _dynamic_slice_lower


# --------------------------------------------------------------- dynamic_update_slice

dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dynamic_update_slice_abstract_eval(operand: ShapedArray, update: ShapedArray,
                                        *starts: ShapedArray) -> ShapedArray:
    _check_starts("dynamic_update_slice", operand, starts)
    check_same_dtypes("dynamic_update_slice", (operand, update))
    if update.ndim != operand.ndim or any(u > d for u, d in zip(update.shape, operand.shape)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand "
                        f"shape, got update shape {update.shape} for operand shape "
                        f"{operand.shape} (it must have the operand's rank and fit inside).")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _dynamic_update_slice_reference(operand: np.ndarray, update: np.ndarray,
                                    *starts: np.ndarray) -> np.ndarray:
    out = np.array(operand, copy=True)
    out[_clamped(starts, out.shape, np.shape(update))] = update
    return out


def _dynamic_update_slice_jvp(primals: Sequence[Any],
                              tangents: Sequence[Any]) -> tuple[Any, Any]:
    out = dynamic_update_slice_p.bind(*primals)
    t_operand, t_update = tangents[:2]
    if isinstance(t_operand, ad.Zero) and isinstance(t_update, ad.Zero):
        return out, ad.Zero(ad.tangent_aval(get_aval(out)))
    return out, dynamic_update_slice_p.bind(ad.instantiate(t_operand),
                                            ad.instantiate(t_update), *primals[2:])


def _dynamic_update_slice_transpose(ct: Any, operand: Any, update: Any,
                                    *starts: Any) -> list[Any]:
    if any(is_undefined(s) for s in starts):
        raise TypeError("dynamic_update_slice is not linear in its start indices; it cannot "
                        "be transposed with respect to them.")
    update_aval = get_aval(update)
    ct_operand = ct_update = None
    if is_undefined(operand):
        zeros = full(update_aval.shape, 0, update_aval.dtype)
        ct_operand = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if is_undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *starts, slice_sizes=tuple(update_aval.shape))
    return [ct_operand, ct_update] + [None] * len(starts)


def _dynamic_update_slice_batch(axis_size: int, args: Sequence[Any],
                                dims: Sequence[int | None]) -> tuple[Any, int]:
    (operand, update, *starts), (operand_dim, update_dim, *start_dims) = args, dims
    operand = move_batch_axis(operand, operand_dim, axis_size, 0)
    update = move_batch_axis(update, update_dim, axis_size, 0)
    if all(d is None for d in start_dims):
        zero = np.zeros((), _index_dtype([get_aval(s).dtype for s in starts]))
        return dynamic_update_slice_p.bind(operand, update, zero, *starts), 0
    # Mapped starts: a scatter of one window per batch member, clamped as here.
    rank = len(starts)
    dnums = ScatterDimensionNumbers(tuple(range(rank)), (), tuple(range(rank)))
    indices = _stacked_starts(starts, start_dims, axis_size)
    return scatter_p.batch(axis_size, [operand, indices, update], [0, 0, 0],
                           dimension_numbers=dnums, indices_are_sorted=True,
                           unique_indices=True, mode=GatherScatterMode.CLIP,
                           update_jaxpr=None)


def _dynamic_update_slice_lower(ctx: LoweringContext, operand: HloInstruction,
                                update: HloInstruction,
                                *starts: HloInstruction) -> HloInstruction:
    return hlo.result(ctx, Opcode.DYNAMIC_UPDATE_SLICE,
                      (operand, update, *_same_index_type(ctx, starts)))


dynamic_update_slice_p.abstract_eval = _dynamic_update_slice_abstract_eval
dynamic_update_slice_p.reference = _dynamic_update_slice_reference
dynamic_update_slice_p.jvp = _dynamic_update_slice_jvp
dynamic_update_slice_p.transpose = _dynamic_update_slice_transpose
dynamic_update_slice_p.batch = _dynamic_update_slice_batch
dynamic_update_slice_p.lower = _dynamic_update_slice_lower
dynamic_update_slice_p.is_linear = True


# --------------------------------------------------------------------------- wrappers

def _start_list(name: str, start_indices: Any, ndim: int) -> list[Any]:
    if isinstance(start_indices, np.ndarray):
        start_indices = list(start_indices)
    if hasattr(start_indices, "shape") and not isinstance(start_indices, (list, tuple)):
        if np.ndim(start_indices) != 1:
            raise TypeError(f"{name}: start_indices must be a sequence of scalars or a 1-d "
                            f"array, got an array of shape {np.shape(start_indices)}.")
        count = np.shape(start_indices)[0]
        starts = [reshape(slice_in_dim(start_indices, i, i + 1), ()) for i in range(count)]
    else:
        starts = list(start_indices)
    if len(starts) != ndim:
        raise ValueError(f"Length of slice indices must match number of operand dimensions "
                         f"({len(starts)} vs {ndim}) in {name}.")
    return starts


def _checked_start(name: str, i: int, start: Any) -> None:
    if isinstance(start, (bool, np.bool_)) or not (
            isinstance(start, (int, np.integer)) or dtypes.is_integer(get_aval(start).dtype)):
        raise TypeError(f"index arguments to {name} must be integers of the same type, "
                        f"got: {np.dtype(get_aval(start).dtype).name} (start index {i} "
                        f"is {start!r}).")
    if np.ndim(start) != 0:
        raise TypeError(f"start_indices arguments to {name} must be scalars, got start "
                        f"index {i} of shape {np.shape(start)}.")


def _wrapped_typed_start(start: Any, size: int, wrap: bool) -> Any:
    """A typed start with a negative value moved up by `size`, computed in the start's own
    dtype as JAX does: an int8 start of -5 on a dimension of 300 adds int8(300) = 44 and
    becomes 39. numpy scalars use numpy's arithmetic (an out-of-range size raises
    OverflowError there, as in JAX); unsigned starts are never negative."""
    if not wrap or dtypes.is_unsigned(get_aval(start).dtype):
        return start
    if isinstance(start, np.integer):
        return start + size if start < 0 else start
    dtype = get_aval(start).dtype
    return select(lt(start, np.zeros((), dtype)), add(start, size_in_dtype(size, dtype)),
                  start)


def _fits(values: Sequence[int], dtype: Any) -> bool:
    info = np.iinfo(dtype)
    return all(info.min <= v <= info.max for v in values)


def _normalized_starts(name: str, shape: Sequence[int], starts: Sequence[Any],
                       allow_negative_indices: bool | Sequence[bool]) -> list[Any]:
    """Each start as an integer scalar of one index dtype, negative ones wrapped around
    where allowed (mirrors JAX's start-index normalisation).

    Typed starts (arrays and numpy scalars) must share one dtype, as in JAX, and wrap in
    that dtype; the primitive then clamps them into [0, dim - size] without overflow on
    every backend. Python ints are wrapped on the host; mixed with typed starts they are
    first clipped to [0, dim], which the clamp makes exact, so that they fit the typed
    starts' dtype."""
    allow = ([bool(allow_negative_indices)] * len(starts)
             if isinstance(allow_negative_indices, (bool, np.bool_))
             else [bool(a) for a in allow_negative_indices])
    for i, start in enumerate(starts):
        _checked_start(name, i, start)
    typed = list(dict.fromkeys(np.dtype(dtypes.canonicalize_dtype(get_aval(s).dtype))
                               for s in starts
                               if not isinstance(s, int) or isinstance(s, np.integer)))
    if len(typed) > 1:
        names = ", ".join(d.name for d in typed)
        raise TypeError(f"index arguments to {name} must be integers of the same type, "
                        f"got: {names}")
    out: list[Any] = []
    for start, size, wrap in zip(starts, shape, allow):
        if isinstance(start, int) and not isinstance(start, np.integer):
            value = int(start) + size if wrap and int(start) < 0 else int(start)
            out.append(value if typed else np.asarray(value).astype(_index_dtype([])))
        else:
            out.append(_wrapped_typed_start(start, size, wrap))
    if not typed:
        return out
    dtype = typed.pop()
    plain = [min(max(v, 0), d) for v, d in zip(out, shape) if isinstance(v, int)]
    if not _fits(plain, dtype):
        dtype = _index_dtype([dtype])
    return [np.asarray(min(max(v, 0), d)).astype(dtype) if isinstance(v, int)
            else convert_element_type(v, dtype) for v, d in zip(out, shape)]


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """The `slice_sizes` block of `operand` starting at `start_indices` (mirrors
    `jax.lax.dynamic_slice`).

    `start_indices` (a sequence of scalars or a 1-d array, one per dimension) may be traced.
    Negative starts count from the end when `allow_negative_indices`; then each start is
    clamped into [0, dim - size], so that the block always fits.
    """
    shape = np.shape(operand)
    starts = _start_list("dynamic_slice", start_indices, len(shape))
    starts = _normalized_starts("dynamic_slice", shape, starts, allow_negative_indices)
    return dynamic_slice_p.bind(operand, *starts,
                                slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """`operand` with the block at `start_indices` replaced by `update` (mirrors
    `jax.lax.dynamic_update_slice`).

    Starts are wrapped (when negative and allowed) and clamped as in `dynamic_slice`;
    `update` must have the operand's dtype and rank.
    """
    shape = np.shape(operand)
    starts = _start_list("dynamic_update_slice", start_indices, len(shape))
    starts = _normalized_starts("dynamic_update_slice", shape, starts,
                                allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)


def _axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= int(axis) < max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of rank {ndim}")
    return int(axis) % ndim if ndim else 0


def _zero_starts(start_index: Any, ndim: int) -> list[Any]:
    """Zero starts for the other dimensions, in the dtype of `start_index` as in JAX."""
    if isinstance(start_index, int) and not isinstance(start_index, np.integer):
        return [0] * ndim
    return [np.zeros((), get_aval(start_index).dtype)] * ndim


def _as_traced_index(index: Any) -> Any:
    """A numpy integer scalar as a 0-d array: JAX's jitted wrappers see a traced value,
    so its negative values wrap in its dtype instead of raising numpy's OverflowError."""
    return np.asarray(index) if isinstance(index, np.integer) else index


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """`slice_size` elements from `start_index` along `axis` (mirrors
    `jax.lax.dynamic_slice_in_dim`); other dimensions are kept whole."""
    shape = np.shape(operand)
    axis = _axis(axis, len(shape), "dynamic_slice_in_dim")
    starts = _zero_starts(start_index, len(shape))
    sizes = list(shape)
    starts[axis], sizes[axis] = start_index, int(slice_size)
    allow = [False] * len(shape)
    allow[axis] = bool(allow_negative_indices)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    """The entry `index` along `axis`, kept as a size-1 axis or squeezed away (mirrors
    `jax.lax.dynamic_index_in_dim`)."""
    axis = _axis(axis, np.ndim(operand), "dynamic_index_in_dim")
    result = dynamic_slice_in_dim(operand, _as_traced_index(index), 1, axis,
                                  allow_negative_indices=allow_negative_indices)
    return result if keepdims else squeeze(result, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """`operand` with `update` written from `start_index` along `axis` (mirrors
    `jax.lax.dynamic_update_slice_in_dim`)."""
    ndim = np.ndim(operand)
    axis = _axis(axis, ndim, "dynamic_update_slice_in_dim")
    starts = _zero_starts(start_index, ndim)
    starts[axis] = start_index
    allow = [False] * ndim
    allow[axis] = bool(allow_negative_indices)
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """`operand` with entry `index` along `axis` replaced by `update`, which may lack that
    axis (mirrors `jax.lax.dynamic_update_index_in_dim`)."""
    ndim = np.ndim(operand)
    axis = _axis(axis, ndim, "dynamic_update_index_in_dim")
    if np.ndim(update) == ndim - 1:
        update = expand_dims(update, (axis,))
    elif np.ndim(update) != ndim:
        raise TypeError(f"dynamic_update_index_in_dim: the update of shape {np.shape(update)} "
                        f"must have the rank of the operand ({ndim}) or one less.")
    return dynamic_update_slice_in_dim(operand, update, _as_traced_index(index), axis,
                                       allow_negative_indices=allow_negative_indices)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """Elements of `src` at the 1-d index arrays `idxs`, one per axis of `axes` (mirrors
    `jax.lax.index_take`): result[i, ...] = src[..., idxs[0][i] at axes[0], ...]."""
    axes = tuple(int(a) for a in axes)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: got {len(idxs)} index arrays for axes {axes}; pass one "
                         "per axis.")
    dtype = _index_dtype([get_aval(i).dtype for i in idxs])
    columns = [expand_dims(convert_element_type(i, dtype), (1,)) for i in idxs]
    indices = concatenate(columns, 1)
    shape = np.shape(src)
    sizes = tuple(1 if d in axes else s for d, s in enumerate(shape))
    dnums = GatherDimensionNumbers(tuple(range(1, len(shape) - len(axes) + 1)),
                                   tuple(sorted(axes)), axes)
    return gather(src, indices, dnums, sizes)
