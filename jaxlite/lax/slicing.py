"""Static slicing, padding and concatenation: slice, pad, concatenate.

Mirrors `jax.lax.slice`, `pad` and `concatenate` (XLA's Slice, Pad and Concatenate) and the
wrappers `slice_in_dim`, `index_in_dim`. Slice and pad are each other's transposes: slicing's
cotangent is padded back with zeros, and padding's is sliced (with the interior padding as
the stride). Pad is linear in the operand and the padding value together.
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.core.shape_poly import canonical_dim
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import batch_at_front, move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import check_same_dtypes
from jaxlite.lax.broadcast import broadcast_in_dim, reduce_sum
from jaxlite.lax.convert import _convert_element_type
from jaxlite.lax.selection import select_n
from jaxlite.lax.shape_ops import squeeze
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["slice", "slice_in_dim", "index_in_dim", "pad", "concatenate",
           "slice_p", "pad_p", "concatenate_p"]

Padding = tuple[tuple[int, int, int], ...]


def _zero_scalar(x: Any) -> np.ndarray:
    return np.zeros((), get_aval(x).dtype)


# -------------------------------------------------------------------------------- slice

slice_p = Primitive("slice")


def _slice_abstract_eval(operand: ShapedArray, *, start_indices: tuple[int, ...],
                         limit_indices: tuple[int, ...],
                         strides: tuple[int, ...] | None) -> ShapedArray:
    shape = operand.shape
    for name, values in (("start_indices", start_indices), ("limit_indices", limit_indices),
                         ("strides", strides)):
        if values is not None and len(values) != len(shape):
            raise TypeError(f"slice {name} must have length equal to the number of dimensions "
                            f"of the operand, got {name} {values} for operand shape {shape}.")
    if any(s < 0 for s in start_indices):
        raise TypeError(f"slice start_indices must be nonnegative, got {start_indices}.")
    # JAX words these in terms of the slice sizes, limit_indices - start_indices.
    sizes = tuple(lim - s for s, lim in zip(start_indices, limit_indices))
    if any(lim > size for lim, size in zip(limit_indices, shape)):
        raise TypeError(f"slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {sizes} for operand shape {shape} (limit_indices "
                        f"{limit_indices} must not exceed the operand shape).")
    if any(size < 0 for size in sizes):
        raise TypeError(f"slice slice_sizes must be greater than or equal to zero, got "
                        f"slice_sizes of {sizes} (limit_indices {limit_indices} must be "
                        f"greater than or equal to start_indices {start_indices}).")
    steps = strides if strides is not None else (1,) * len(shape)
    if any(st <= 0 for st in steps):
        raise TypeError(f"slice strides must be positive, got {strides}.")
    out = tuple((lim - s + st - 1) // st
                for s, lim, st in zip(start_indices, limit_indices, steps))
    return ShapedArray(out, operand.dtype, operand.weak_type)


def _slice_reference(operand: np.ndarray, *, start_indices: tuple[int, ...],
                     limit_indices: tuple[int, ...],
                     strides: tuple[int, ...] | None) -> np.ndarray:
    steps = strides if strides is not None else (1,) * len(start_indices)
    index = tuple(builtins.slice(s, lim, st)
                  for s, lim, st in zip(start_indices, limit_indices, steps))
    return np.asarray(operand)[index]


def _slice_transpose(ct: Any, operand: Any, *, start_indices: tuple[int, ...],
                     limit_indices: tuple[int, ...],
                     strides: tuple[int, ...] | None) -> list[Any]:
    shape = operand.aval.shape
    steps = strides if strides is not None else (1,) * len(shape)
    config = []
    for size, start, out, step in zip(shape, start_indices, get_aval(ct).shape, steps):
        # The cotangent's last element sits at start + (out - 1) * step; zeros fill the rest.
        end = start + (out - 1) * step + 1 if out else start
        config.append((start, size - end, step - 1))
    return [pad_p.bind(ct, _zero_scalar(ct), padding_config=tuple(config))]


def _slice_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                 start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                 strides: tuple[int, ...] | None) -> tuple[Any, int]:
    (operand,), (dim,) = args, dims
    starts, limits = list(start_indices), list(limit_indices)
    starts.insert(dim, 0)
    limits.insert(dim, axis_size)
    steps = None
    if strides is not None:
        steps = list(strides)
        steps.insert(dim, 1)
        steps = tuple(steps)
    out = slice_p.bind(operand, start_indices=tuple(starts), limit_indices=tuple(limits),
                       strides=steps)
    return out, dim


def _slice_lower(ctx: LoweringContext, operand: HloInstruction, *,
                 start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                 strides: tuple[int, ...] | None) -> HloInstruction:
    steps = strides if strides is not None else (1,) * len(start_indices)
    return hlo.result(ctx, Opcode.SLICE, (operand,), starts=tuple(start_indices),
                      limits=tuple(limit_indices), strides=tuple(steps))


slice_p.abstract_eval = _slice_abstract_eval
slice_p.reference = _slice_reference
slice_p.transpose = _slice_transpose
slice_p.batch = _slice_batch
slice_p.lower = _slice_lower
ad.deflinear(slice_p)


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:  # noqa: A001 (JAX's name)
    """The elements from `start_indices` up to `limit_indices` in steps of `strides`.

    Mirrors `jax.lax.slice`: indices are nonnegative and within the operand's shape.
    """
    starts = tuple(canonical_dim(i) for i in start_indices)
    limits = tuple(canonical_dim(i) for i in limit_indices)
    steps = None if strides is None else tuple(int(s) for s in strides)
    return slice_p.bind(operand, start_indices=starts, limit_indices=limits, strides=steps)


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """`operand[start_index:limit_index:stride]` along `axis` (`jax.lax.slice_in_dim`).

    `None` bounds mean the whole axis and negative ones count from its end; the slice is
    not clipped to the axis, so bounds outside it raise as `lax.slice` does.
    """
    shape = tuple(np.shape(operand))
    axis = int(axis) + len(shape) if axis < 0 else int(axis)
    size = shape[axis]
    start = 0 if start_index is None else canonical_dim(start_index)
    limit = size if limit_index is None else canonical_dim(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits = [0] * len(shape), list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The entry `index` along `axis`, kept as a size-1 axis or squeezed away.

    Mirrors `jax.lax.index_in_dim`; negative indices count from the end.
    """
    shape = tuple(np.shape(operand))
    axis = int(axis) + len(shape) if axis < 0 else int(axis)
    size = shape[axis]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    index = index + size if index < 0 else index
    result = slice_in_dim(operand, index, index + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


# ---------------------------------------------------------------------------------- pad

pad_p = Primitive("pad")


def _padded_size(size: int, low: int, high: int, interior: int) -> int:
    # (no comparison without interior padding: a symbolic size need not be decidably >= 1)
    return low + high + size + (max(size - 1, 0) * interior if interior else 0)


def _pad_abstract_eval(operand: ShapedArray, padding_value: ShapedArray, *,
                       padding_config: Padding) -> ShapedArray:
    if padding_value.shape != ():
        raise TypeError(f"pad: padding_value must be a scalar, got shape "
                        f"{padding_value.shape}.")
    if operand.dtype != padding_value.dtype:
        raise TypeError(f"pad operand and padding_value must be same dtype: got "
                        f"{np.dtype(operand.dtype).name} and "
                        f"{np.dtype(padding_value.dtype).name}.")
    if len(padding_config) != operand.ndim:
        raise ValueError(f"length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape "
                         f"{operand.shape}")
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(f"interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    shape = tuple(_padded_size(size, *config)
                  for size, config in zip(operand.shape, padding_config))
    if any(s < 0 for s in shape):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{shape}, for padding_config {padding_config} and operand shape "
                         f"{operand.shape}")
    weak = operand.weak_type and padding_value.weak_type
    return ShapedArray(shape, operand.dtype, weak)


def _pad_reference(operand: np.ndarray, padding_value: np.ndarray, *,
                   padding_config: Padding) -> np.ndarray:
    # Pad with the nonnegative parts of the edges first, then crop the negative ones: a
    # negative edge removes elements (padding included) from the interior-padded array.
    operand = np.asarray(operand)
    grown = [_padded_size(size, max(low, 0), max(high, 0), interior)
             for size, (low, high, interior) in zip(operand.shape, padding_config)]
    out = np.full(grown, padding_value, dtype=operand.dtype)
    place = tuple(builtins.slice(max(low, 0), max(low, 0) + max(size - 1, 0) * (interior + 1)
                                 + min(size, 1), interior + 1)
                  for size, (low, _, interior) in zip(operand.shape, padding_config))
    out[place] = operand
    crop = tuple(builtins.slice(max(-low, 0), total - max(-high, 0))
                 for total, (low, high, _) in zip(grown, padding_config))
    return out[crop]


def _pad_transpose(ct: Any, operand: Any, padding_value: Any, *,
                   padding_config: Padding) -> list[Any]:
    cts: list[Any] = [None, None]
    if is_undefined(operand):
        # Undo the edges (cropped elements get a zero cotangent), then skip the interior.
        unpadded = pad_p.bind(ct, _zero_scalar(ct), padding_config=tuple(
            (-low, -high, 0) for low, high, _ in padding_config))
        shape = get_aval(operand).shape
        cts[0] = slice(unpadded, (0,) * len(shape), get_aval(unpadded).shape,
                       tuple(interior + 1 for _, _, interior in padding_config))
    if is_undefined(padding_value):
        # Each output element that came from the padding value passes its cotangent to it.
        shape = get_aval(operand).shape
        from_operand = pad_p.bind(broadcast_in_dim(np.bool_(True), shape, ()),
                                  np.bool_(False), padding_config=padding_config)
        from_padding = select_n(from_operand, ct, ad.zeros_like_aval(get_aval(ct)))
        cts[1] = reduce_sum(from_padding, tuple(range(len(shape))))
    return cts


def _pad_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
               padding_config: Padding) -> tuple[Any, int]:
    (operand, padding_value), (dim, value_dim) = args, dims
    if value_dim is None:
        config = list(padding_config)
        config.insert(dim, (0, 0, 0))
        return pad_p.bind(operand, padding_value, padding_config=tuple(config)), dim
    # One padding value per batch member: pad with anything, then put each member's value
    # wherever the output did not come from the operand.
    operand = move_batch_axis(operand, dim, axis_size, 0)
    config = ((0, 0, 0),) + tuple(padding_config)
    padded = pad_p.bind(operand, _zero_scalar(operand), padding_config=config)
    out_shape = get_aval(padded).shape
    from_operand = pad_p.bind(broadcast_in_dim(np.bool_(True), get_aval(operand).shape, ()),
                              np.bool_(False), padding_config=config)
    values = broadcast_in_dim(padding_value, out_shape, (0,))
    return select_n(from_operand, values, padded), 0


def _pad_lower(ctx: LoweringContext, operand: HloInstruction, padding_value: HloInstruction,
               *, padding_config: Padding) -> HloInstruction:
    return hlo.result(ctx, Opcode.PAD, (operand, padding_value),
                      padding=tuple(tuple(c) for c in padding_config))


pad_p.abstract_eval = _pad_abstract_eval
pad_p.reference = _pad_reference
pad_p.transpose = _pad_transpose
pad_p.batch = _pad_batch
pad_p.lower = _pad_lower
ad.deflinear(pad_p)


def _padding_value_like(operand: Any, padding_value: Any) -> Any:
    """A Python scalar padding value as a weak scalar of the operand's dtype, when its kind
    promotes to that dtype (the rule of `elementwise_operands`, without its broadcasting)."""
    if not dtypes.is_python_scalar(padding_value) or isinstance(padding_value, bool):
        return padding_value
    dtype = get_aval(operand).dtype
    try:
        fits = dtypes.result_type(dtype, type(padding_value)) == dtype
    except (TypeError, ValueError):
        fits = False
    if not fits:
        return padding_value
    if isinstance(padding_value, int) and dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        if not info.min <= padding_value <= info.max:
            raise OverflowError(f"lax.pad: Python int {padding_value} is out of bounds for "
                                f"the operand dtype {np.dtype(dtype).name}.")
    return _convert_element_type(padding_value, dtype, weak_type=True)


def pad(operand: Any, padding_value: Any,
        padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad `operand` with the scalar `padding_value` (mirrors `jax.lax.pad`).

    `padding_config` has one `(low, high, interior)` triple per dimension: `low` and `high`
    elements are added at the ends (negative values remove elements instead), `interior`
    ones between every two neighbouring elements.

    Differences from JAX: a Python scalar padding value takes the operand's dtype.
    """
    config = tuple((int(lo), int(hi), int(interior)) for lo, hi, interior in padding_config)
    if np.ndim(padding_value) != 0:
        raise ValueError(f"padding_value must be a scalar; got np.shape(padding_value)="
                         f"{np.shape(padding_value)}")
    padding_value = _padding_value_like(operand, padding_value)
    return pad_p.bind(operand, padding_value, padding_config=config)


# -------------------------------------------------------------------------- concatenate

concatenate_p = Primitive("concatenate")


def _concatenate_abstract_eval(*operands: ShapedArray, dimension: int) -> ShapedArray:
    if not operands:
        raise TypeError("concatenate requires at least one operand.")
    shapes = [o.shape for o in operands]
    listed = ", ".join(str(s) for s in shapes)
    if len({len(s) for s in shapes}) != 1:
        raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{listed}.")
    if not 0 <= dimension < len(shapes[0]):
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                        f"shapes {listed}.")
    others = [s[:dimension] + s[dimension + 1:] for s in shapes]
    if any(o != others[0] for o in others[1:]):
        raise TypeError(f"Cannot concatenate arrays with shapes that differ in dimensions "
                        f"other than the one being concatenated: concatenating along "
                        f"dimension {dimension} for shapes {listed}.")
    check_same_dtypes("concatenate", operands)
    shape = list(shapes[0])
    shape[dimension] = sum(s[dimension] for s in shapes)
    return ShapedArray(tuple(shape), operands[0].dtype, all(o.weak_type for o in operands))


def _concatenate_reference(*operands: np.ndarray, dimension: int) -> np.ndarray:
    return np.concatenate(operands, axis=dimension)


def _concatenate_transpose(ct: Any, *operands: Any, dimension: int) -> list[Any]:
    cts: list[Any] = []
    offset = 0
    for operand in operands:
        size = get_aval(operand).shape[dimension]  # an UndefinedPrimal has an aval too
        cts.append(slice_in_dim(ct, offset, offset + size, 1, dimension)
                   if is_undefined(operand) else None)
        offset += size
    return cts


def _concatenate_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                       dimension: int) -> tuple[Any, int]:
    operands = batch_at_front(args, dims, axis_size)
    return concatenate_p.bind(*operands, dimension=dimension + 1), 0


def _concatenate_lower(ctx: LoweringContext, *operands: HloInstruction,
                       dimension: int) -> HloInstruction:
    return hlo.result(ctx, Opcode.CONCATENATE, operands, dimensions=(dimension,))


concatenate_p.abstract_eval = _concatenate_abstract_eval
concatenate_p.reference = _concatenate_reference
concatenate_p.transpose = _concatenate_transpose
concatenate_p.batch = _concatenate_batch
concatenate_p.lower = _concatenate_lower
ad.deflinear(concatenate_p)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join `operands` along `dimension` (mirrors `jax.lax.concatenate`).

    As in JAX, `dimension` must be nonnegative, the dtypes equal, and a single operand is
    returned as it is. An array passed as `operands` is read as the sequence of its rows.
    """
    if hasattr(operands, "shape"):
        operands = [index_in_dim(operands, i, 0, keepdims=False)
                    for i in range(np.shape(operands)[0])]
    operands = list(operands)
    if not operands:
        raise ValueError("concatenate requires a non-empty sequence of arrays")
    if len(operands) == 1 and not dtypes.is_python_scalar(operands[0]):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))
