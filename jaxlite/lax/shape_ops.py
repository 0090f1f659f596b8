"""Shape operations: squeeze, rev and iota, with the wrappers expand_dims and collapse.

Mirrors `jax.lax.squeeze`, `rev`, `iota`, `broadcasted_iota`, `expand_dims` and `collapse`
(XLA's Reshape, Reverse and Iota). As in JAX 0.10.2, `expand_dims` is not a primitive but a
`broadcast_in_dim`, and `collapse` a `reshape`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.core.shape_poly import canonical_dim
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import INEXACT, INTEGER, check_dtype_kind
from jaxlite.lax.broadcast import broadcast_in_dim, reshape
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["squeeze", "expand_dims", "rev", "iota", "broadcasted_iota", "collapse",
           "squeeze_p", "rev_p", "iota_p"]


def _is_python_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex))


def _canonical_axis(axis: int, ndim: int) -> int:
    """`axis` counted from the front; raises numpy's error when it does not exist."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _batch_axes(dim: int, axes: Sequence[int]) -> tuple[int, ...]:
    """The operand axes `axes` (counted without the batch axis) in the batched value."""
    return tuple(a + 1 if a >= dim else a for a in axes)


# ------------------------------------------------------------------------------ squeeze

squeeze_p = Primitive("squeeze")


def _squeeze_abstract_eval(operand: ShapedArray, *,
                           dimensions: tuple[int, ...]) -> ShapedArray:
    if any(not 0 <= d < operand.ndim for d in dimensions) or \
            list(dimensions) != sorted(set(dimensions)):
        raise ValueError(f"squeeze dimensions must be distinct, increasing dimensions of the "
                         f"operand of shape {operand.shape}, got {dimensions}.")
    if any(operand.shape[d] != 1 for d in dimensions):
        raise ValueError(f"cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={operand.shape} and dimensions={dimensions}")
    shape = tuple(s for d, s in enumerate(operand.shape) if d not in dimensions)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _squeeze_reference(operand: np.ndarray, *, dimensions: tuple[int, ...]) -> np.ndarray:
    return np.squeeze(operand, axis=dimensions)


def _squeeze_transpose(ct: Any, operand: Any, *, dimensions: tuple[int, ...]) -> list[Any]:
    return [reshape(ct, operand.aval.shape)]


def _squeeze_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                   dimensions: tuple[int, ...]) -> tuple[Any, int]:
    (operand,), (dim,) = args, dims
    out_dim = dim - sum(1 for d in dimensions if d < dim)
    return squeeze_p.bind(operand, dimensions=_batch_axes(dim, dimensions)), out_dim


def _squeeze_lower(ctx: LoweringContext, operand: HloInstruction, *,
                   dimensions: tuple[int, ...]) -> HloInstruction:
    return hlo.reshape(ctx, operand, ctx.avals_out[0].shape)


squeeze_p.abstract_eval = _squeeze_abstract_eval
squeeze_p.reference = _squeeze_reference
squeeze_p.transpose = _squeeze_transpose
squeeze_p.batch = _squeeze_batch
squeeze_p.lower = _squeeze_lower
ad.deflinear(squeeze_p)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Remove the size-1 `dimensions` of `array` (mirrors `jax.lax.squeeze`).

    Negative dimensions count from the end.
    """
    ndim = np.ndim(array)
    dims = tuple(_canonical_axis(d, ndim) for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"dimensions are not unique: {dims}")
    if not dims and not _is_python_scalar(array):
        return array
    return squeeze_p.bind(array, dimensions=tuple(sorted(dims)))


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Insert dimensions of size 1 at `dimensions` of the result (`jax.lax.expand_dims`).

    Negative dimensions count from the end of the result. Built on `broadcast_in_dim`, as in
    JAX.
    """
    ndim_out = np.ndim(array) + len(dimensions)
    dims = [_canonical_axis(d, ndim_out) for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {list(dimensions)}")
    if not dims and not _is_python_scalar(array):
        return array
    kept = [d for d in range(ndim_out) if d not in dims]
    shape = [1] * ndim_out
    for d, size in zip(kept, np.shape(array)):
        shape[d] = size
    return broadcast_in_dim(array, shape, kept)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge dimensions `start_dimension` up to (excluding) `stop_dimension` into one.

    Mirrors `jax.lax.collapse`: the dimensions are `shape[start_dimension:stop_dimension]`
    with Python's slicing rules (negative bounds count from the end, bounds past the end
    stop there, a missing stop means the last dimension), and an empty range inserts a
    dimension of size 1.
    """
    shape = tuple(np.shape(operand))
    ndim = len(shape)
    start, stop, _ = slice(int(start_dimension),
                           None if stop_dimension is None else int(stop_dimension)).indices(ndim)
    if start > stop:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                         f"[{start_dimension}:{stop_dimension}]")
    size = int(np.prod(shape[start:stop], dtype=np.int64))
    return reshape(operand, shape[:start] + (size,) + shape[stop:])


# ---------------------------------------------------------------------------------- rev

rev_p = Primitive("rev")


def _rev_abstract_eval(operand: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    if any(d < 0 for d in dimensions):
        raise TypeError(f"rev dimensions must be nonnegative, got {dimensions}.")
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if any(d >= operand.ndim for d in dimensions):
        raise TypeError(f"rev dimensions must all be less than operand ndim, got dimensions "
                        f"{dimensions} for operand ndim {operand.ndim}.")
    return operand


def _rev_reference(operand: np.ndarray, *, dimensions: tuple[int, ...]) -> np.ndarray:
    return np.flip(operand, dimensions)


def _rev_transpose(ct: Any, operand: Any, *, dimensions: tuple[int, ...]) -> list[Any]:
    return [rev_p.bind(ct, dimensions=dimensions)]


def _rev_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
               dimensions: tuple[int, ...]) -> tuple[Any, int]:
    (operand,), (dim,) = args, dims
    return rev_p.bind(operand, dimensions=_batch_axes(dim, dimensions)), dim


def _rev_lower(ctx: LoweringContext, operand: HloInstruction, *,
               dimensions: tuple[int, ...]) -> HloInstruction:
    if not dimensions:
        return operand
    return hlo.result(ctx, Opcode.REVERSE, (operand,), dimensions=tuple(dimensions))


rev_p.abstract_eval = _rev_abstract_eval
rev_p.reference = _rev_reference
rev_p.transpose = _rev_transpose
rev_p.batch = _rev_batch
rev_p.lower = _rev_lower
ad.deflinear(rev_p)


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverse `operand` along each of `dimensions` (mirrors `jax.lax.rev`).

    As in JAX, dimensions must be given as nonnegative indices.
    """
    return rev_p.bind(operand, dimensions=tuple(int(d) for d in dimensions))


# --------------------------------------------------------------------------------- iota

iota_p = Primitive("iota")


def _iota_abstract_eval(*, dtype: np.dtype, shape: tuple[int, ...],
                        dimension: int) -> ShapedArray:
    check_dtype_kind("iota", dtype, (*INTEGER, *INEXACT))
    if any(s < 0 for s in shape):
        raise TypeError(f"iota shape must have every element be nonnegative, got {shape}.")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got "
                         f"dimension={dimension} for shape={shape}")
    return ShapedArray(tuple(shape), np.dtype(dtype), False)


def _iota_reference(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int) -> np.ndarray:
    # Counting in int64 (or float64) and converting once gives XLA's numbers: integers wrap
    # around, floats are the counts rounded to nearest even.
    dtype = np.dtype(dtype)
    count_type = np.int64 if dtypes.is_integer(dtype) else np.float64
    counts = np.arange(shape[dimension], dtype=count_type).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(counts.reshape(expanded), shape)


def _iota_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                dtype: np.dtype, shape: tuple[int, ...], dimension: int) -> tuple[Any, None]:
    # Without operands the output cannot vary along a batch axis: it stays unbatched.
    return iota_p.bind(dtype=dtype, shape=shape, dimension=dimension), None


def _iota_lower(ctx: LoweringContext, *, dtype: np.dtype, shape: tuple[int, ...],
                dimension: int) -> HloInstruction:
    return hlo.result(ctx, Opcode.IOTA, iota_dimension=dimension)


iota_p.abstract_eval = _iota_abstract_eval
iota_p.reference = _iota_reference
iota_p.batch = _iota_batch
iota_p.lower = _iota_lower
# Without operands there is no tangent to push through; the rule states the zero derivative
# for completeness (transformations bind iota directly since all of its inputs are known).
ad.defjvp_zero(iota_p)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int, *,
                     out_sharding: Any = None) -> Any:
    """An array of `shape` counting 0, 1, ... along `dimension` (`jax.lax.broadcasted_iota`).

    As in JAX, `dimension` must be nonnegative; with one device `out_sharding` places
    nothing.
    """
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "broadcasted_iota")
    shape = tuple(canonical_dim(s) for s in shape)
    return iota_p.bind(dtype=dtype, shape=shape, dimension=int(dimension))


def iota(dtype: Any, size: int) -> Any:
    """The vector 0, 1, ..., size - 1 of `dtype` (mirrors `jax.lax.iota`)."""
    return broadcasted_iota(dtype, (canonical_dim(size),), 0)
