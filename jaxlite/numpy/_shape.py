"""Shape manipulation: reshape, transpose, squeeze, broadcasting, joining and splitting.

Mirrors `jax.numpy`'s shape functions (`jax._src.numpy.lax_numpy`). Every function is a
composition of the `lax` movement primitives (reshape, transpose, broadcast_in_dim, squeeze,
rev, concatenate, slice); shapes are static, so all checks happen in Python with numpy's
error messages.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.numpy._placement import accepts_placement
from jaxlite.core import dtypes
from jaxlite.core.trace import Tracer
from jaxlite.errors import ConcretizationTypeError
from jaxlite.numpy._promotion import (broadcast_shapes as _broadcast_shapes, broadcast_to_shape,
                                      canonicalize_axes, canonicalize_axis, check_arraylike,
                                      concrete_int, convert, ensure_array, is_jax_array,
                                      promote_dtypes, user_dtype)

__all__ = [
    "shape", "ndim", "size", "reshape", "ravel", "transpose", "permute_dims",
    "matrix_transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
    "broadcast_arrays", "broadcast_shapes", "concatenate", "stack", "hstack", "vstack",
    "split", "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr",
    "flipud", "repeat",
]


def known_value(x: Any) -> np.ndarray | None:
    """`x` as a host array when its value is known while tracing (numpy data, eager arrays,
    tracers of constants), else None."""
    if isinstance(x, Tracer):
        return x.concrete_value()
    return np.asarray(x)


def shape(a: Any) -> tuple[int, ...]:
    """The shape of an array or array-like (mirrors `jax.numpy.shape`)."""
    return tuple(a.shape) if is_jax_array(a) else tuple(np.shape(a))


def ndim(a: Any) -> int:
    """The number of dimensions of an array or array-like (mirrors `jax.numpy.ndim`)."""
    return len(shape(a))


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements, or the length of `axis` (mirrors `jax.numpy.size`)."""
    dims = shape(a)
    if axis is None:
        return math.prod(dims)
    return dims[canonicalize_axis(axis, len(dims))]


# ------------------------------------------------------------------------ reshape

def _resolve_shape(old_shape: tuple[int, ...], new_shape: Any) -> tuple[int, ...]:
    """`new_shape` with a -1 entry replaced by the size that keeps the element count."""
    if not isinstance(new_shape, (list, tuple, np.ndarray)):
        new_shape = (new_shape,)
    new = tuple(concrete_int(d, "reshape: a shape entry") for d in new_shape)
    old_size = math.prod(old_shape)
    unknown = [i for i, d in enumerate(new) if d == -1]
    if len(unknown) > 1:
        raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {new}")
    if any(d < -1 for d in new):
        raise TypeError(f"reshape new_sizes must all be positive, got {new}. (Sizes must be "
                        "nonnegative, with at most one -1 for a size to infer.)")
    if unknown:
        known = math.prod(d for d in new if d != -1)
        if known == 0:  # JAX's exception (its size arithmetic divides by the 0)
            raise ZeroDivisionError(
                f"integer modulo by zero: reshape of an array of shape {old_shape} into "
                f"{new} cannot infer the -1 entry when another entry is 0")
        if old_size % known:
            raise TypeError(
                f"cannot reshape array of shape {old_shape} (size {old_size}) into shape "
                f"{new} because the product of specified axis sizes ({known}) does not "
                f"evenly divide {old_size}")
        new = tuple(old_size // known if d == -1 else d for d in new)
    if math.prod(new) != old_size:
        raise TypeError(f"cannot reshape array of shape {old_shape} (size {old_size}) into "
                        f"shape {new} (size {math.prod(new)})")
    return new


@accepts_placement("out_sharding")
def reshape(a: Any, shape: Any, order: str = "C", *, copy: bool | None = None) -> Any:
    """Give `a` a new shape with the same elements (mirrors `jax.numpy.reshape`).

    One entry of `shape` may be -1. `order` is 'C' (row-major) or 'F' (column-major);
    'A' reads as 'C', since jaxlite arrays are always row-major.
    """
    check_arraylike("reshape", a)
    a = ensure_array(a)
    new = _resolve_shape(a.shape, shape)
    if order in ("C", "A"):
        return lax.reshape(a, new)
    if order == "F":
        # Column-major order is row-major order of the reversed axes.
        reversed_axes = tuple(range(a.ndim))[::-1]
        flat = lax.reshape(lax.transpose(a, reversed_axes), new[::-1])
        return lax.transpose(flat, tuple(range(len(new)))[::-1])
    raise ValueError(f"reshape: unexpected order={order!r}; expected 'C', 'F' or 'A'.")


@accepts_placement("out_sharding")
def ravel(a: Any, order: str = "C") -> Any:
    """`a` as a 1-d array (mirrors `jax.numpy.ravel`)."""
    check_arraylike("ravel", a)
    return reshape(a, (-1,), order=order)


# ------------------------------------------------------------------------ axes

def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """Permute the axes of `a`; reverse them when `axes` is None (`jax.numpy.transpose`)."""
    check_arraylike("transpose", a)
    a = ensure_array(a)
    if axes is None:
        perm = tuple(range(a.ndim))[::-1]
    else:
        perm = tuple(canonicalize_axis(ax, a.ndim) for ax in axes)
        if sorted(perm) != list(range(a.ndim)):
            raise ValueError(f"axes {tuple(axes)} don't match array of dimension {a.ndim}: "
                             "they must be a permutation of its axes.")
    return lax.transpose(a, perm)


def permute_dims(a: Any, axes: Sequence[int]) -> Any:
    """Array API name of `transpose` with explicit axes (mirrors `jax.numpy.permute_dims`)."""
    return transpose(a, axes)


def matrix_transpose(x: Any) -> Any:
    """Swap the last two axes (mirrors `jax.numpy.matrix_transpose`)."""
    check_arraylike("matrix_transpose", x)
    x = ensure_array(x)
    if x.ndim < 2:
        raise ValueError("x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={x.ndim}")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return lax.transpose(x, perm)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Exchange two axes (mirrors `jax.numpy.swapaxes`)."""
    check_arraylike("swapaxes", a)
    a = ensure_array(a)
    i, j = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """Move axes to new positions, keeping the others in order (`jax.numpy.moveaxis`)."""
    check_arraylike("moveaxis", a)
    a = ensure_array(a)
    src = canonicalize_axes(source, a.ndim)
    dst = canonicalize_axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("Inconsistent number of elements: "
                         f"{len(src)} vs {len(dst)} (source vs destination)")
    rest = [d for d in range(a.ndim) if d not in src]
    perm: list[int] = []
    placed = dict(zip(dst, src))
    for position in range(a.ndim):
        perm.append(placed[position] if position in placed else rest.pop(0))
    return lax.transpose(a, perm)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Any:
    """Insert size-1 axes at the positions `axis` of the result (`jax.numpy.expand_dims`)."""
    check_arraylike("expand_dims", a)
    a = ensure_array(a)
    axes = axis if isinstance(axis, (list, tuple)) else (axis,)
    out_ndim = a.ndim + len(axes)
    dims = canonicalize_axes(tuple(axes), out_ndim)
    return lax.expand_dims(a, dims)


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Remove size-1 axes: all of them, or those in `axis` (`jax.numpy.squeeze`)."""
    check_arraylike("squeeze", a)
    a = ensure_array(a)
    if axis is None:
        dims = tuple(d for d, n in enumerate(a.shape) if n == 1)
    else:
        dims = canonicalize_axes(axis, a.ndim)
        if any(a.shape[d] != 1 for d in dims):
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             f"to one, got shape={a.shape} and dimensions={dims}")
    return lax.squeeze(a, dims)


# ------------------------------------------------------------------------ broadcasting

def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape that arrays of `shapes` broadcast to (mirrors `jax.numpy.broadcast_shapes`)."""
    return _broadcast_shapes("broadcast_shapes", *shapes)


@accepts_placement("out_sharding")
def broadcast_to(array: Any, shape: Any) -> Any:
    """Broadcast `array` to `shape` by numpy's rules (mirrors `jax.numpy.broadcast_to`)."""
    check_arraylike("broadcast_to", array)
    array = ensure_array(array)
    target = tuple(concrete_int(d, "broadcast_to: a shape entry")
                   for d in (shape if isinstance(shape, (list, tuple)) else (shape,)))
    lead = len(target) - array.ndim
    if lead < 0 or any(n != 1 and n != t for n, t in zip(array.shape, target[lead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {array.shape} and requested "
                         f"shape {target}")
    return broadcast_to_shape(array, target)


def broadcast_arrays(*args: Any) -> list[Any]:
    """Broadcast all arguments to their common shape (`jax.numpy.broadcast_arrays`)."""
    check_arraylike("broadcast_arrays", *args)
    arrays = [ensure_array(a) for a in args]
    common = _broadcast_shapes("broadcast_arrays", *(x.shape for x in arrays))
    return [broadcast_to_shape(x, common) for x in arrays]


# ------------------------------------------------------------------------ joining

def _as_sequence(fun_name: str, arrays: Any) -> list[Any]:
    if is_jax_array(arrays) or isinstance(arrays, np.ndarray):
        if np.ndim(arrays) == 0:
            raise ValueError(f"{fun_name}: expected a sequence of arrays, got a 0-d array.")
        return [arrays[i] for i in range(np.shape(arrays)[0])]
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{fun_name} expects a sequence of arrays, got {type(arrays)}.")
    check_arraylike(fun_name, *arrays)
    return list(arrays)


def _promote_for_join(fun_name: str, arrays: list[Any], dtype: Any) -> list[Any]:
    if dtype is None:
        return promote_dtypes(*arrays) if len(arrays) > 1 else [ensure_array(arrays[0])]
    target = user_dtype(dtype, fun_name)
    return [convert(x, target) for x in arrays]


def concatenate(arrays: Any, axis: int | None = 0, dtype: Any = None) -> Any:
    """Join arrays along an existing axis (mirrors `jax.numpy.concatenate`).

    With `axis=None` the arrays are flattened first. Dtypes are promoted as in JAX.
    """
    arrays = _as_sequence("concatenate", arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        arrays, axis = [ravel(x) for x in arrays], 0
    arrays = _promote_for_join("concatenate", arrays, dtype)
    if any(x.ndim == 0 for x in arrays):
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    # Mismatched shapes raise JAX's TypeError and message (those of lax.concatenate).
    ndims = {x.ndim for x in arrays}
    if len(ndims) != 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: "
                        f"got {', '.join(str(x.shape) for x in arrays)}.")
    axis = canonicalize_axis(axis, arrays[0].ndim)
    for x in arrays[1:]:
        if any(n != m for d, (n, m) in enumerate(zip(x.shape, arrays[0].shape)) if d != axis):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions "
                            "other than the one being concatenated: concatenating along "
                            f"dimension {axis} for shapes "
                            f"{', '.join(str(y.shape) for y in arrays)}.")
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, axis)


def stack(arrays: Any, axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    """Join same-shaped arrays along a new axis (mirrors `jax.numpy.stack`)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    arrays = _as_sequence("stack", arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    arrays = [ensure_array(x) for x in arrays]
    if len({x.shape for x in arrays}) != 1:
        raise ValueError("All input arrays must have the same shape, got "
                         f"{', '.join(str(x.shape) for x in arrays)}.")
    axis = canonicalize_axis(axis, arrays[0].ndim + 1)
    return concatenate([lax.expand_dims(x, (axis,)) for x in arrays], axis, dtype=dtype)


def hstack(tup: Any, dtype: Any = None) -> Any:
    """Join arrays column-wise: along axis 1, or axis 0 for 1-d arrays (`jax.numpy.hstack`)."""
    arrays = [atleast_1d(x) for x in _as_sequence("hstack", tup)]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return concatenate(arrays, axis, dtype=dtype)


def vstack(tup: Any, dtype: Any = None) -> Any:
    """Join arrays row-wise, after making them at least 2-d (`jax.numpy.vstack`)."""
    arrays = [atleast_2d(x) for x in _as_sequence("vstack", tup)]
    return concatenate(arrays, 0, dtype=dtype)


def _atleast(ndim_min: int, arys: tuple, fun_name: str) -> Any:
    check_arraylike(fun_name, *arys)
    out = []
    for x in arys:
        x = ensure_array(x)
        if x.ndim < ndim_min:
            if ndim_min == 3 and x.ndim == 2:
                x = lax.expand_dims(x, (2,))
            elif ndim_min == 3 and x.ndim == 1:
                x = lax.expand_dims(x, (0, 2))
            else:
                x = lax.reshape(x, (1,) * (ndim_min - x.ndim) + x.shape)
        out.append(x)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    """Arrays with at least one dimension; a list for several inputs (`jnp.atleast_1d`)."""
    return _atleast(1, arys, "atleast_1d")


def atleast_2d(*arys: Any) -> Any:
    """Arrays with at least two dimensions, new axes in front (`jnp.atleast_2d`)."""
    return _atleast(2, arys, "atleast_2d")


def atleast_3d(*arys: Any) -> Any:
    """Arrays with at least three dimensions: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _atleast(3, arys, "atleast_3d")


# ------------------------------------------------------------------------ splitting

def _split(fun_name: str, ary: Any, indices_or_sections: Any, axis: int,
           strict: bool) -> list[Any]:
    check_arraylike(fun_name, ary)
    ary = ensure_array(ary)
    axis = canonicalize_axis(axis, ary.ndim)
    length = ary.shape[axis]
    if isinstance(indices_or_sections, (list, tuple, np.ndarray)) or \
            (is_jax_array(indices_or_sections) and np.ndim(indices_or_sections) == 1):
        cuts = [concrete_int(i, f"{fun_name}: a split index") for i in indices_or_sections]
        bounds = [0] + [min(max(c if c >= 0 else c + length, 0), length) for c in cuts]
        bounds.append(length)
        if any(stop < start for start, stop in zip(bounds[:-1], bounds[1:])):
            raise ValueError(f"{fun_name}: split indices must be nondecreasing, got "
                             f"{cuts} for an axis of length {length}.")
    else:
        sections = concrete_int(indices_or_sections, f"{fun_name}: the number of sections")
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and length % sections:
            raise ValueError("array split does not result in an equal division: "
                             f"{length} elements into {sections} sections along axis {axis}")
        small, extra = divmod(length, sections)
        sizes = [small + 1] * extra + [small] * (sections - extra)
        bounds = [0] + list(np.cumsum(sizes))
    return [lax.slice_in_dim(ary, int(start), int(stop), 1, axis)
            for start, stop in zip(bounds[:-1], bounds[1:])]


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections or at given indices (mirrors `jax.numpy.split`)."""
    return _split("split", ary, indices_or_sections, axis, strict=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Like `split`, allowing sections of unequal length (`jax.numpy.array_split`)."""
    return _split("array_split", ary, indices_or_sections, axis, strict=False)


# ------------------------------------------------------------------------ reversal, repeat

def flip(m: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Reverse the order of elements along `axis`, or all axes (`jax.numpy.flip`)."""
    check_arraylike("flip", m)
    m = ensure_array(m)
    dims = canonicalize_axes(axis, m.ndim)
    return lax.rev(m, dims) if dims else m


def fliplr(m: Any) -> Any:
    """Reverse along axis 1 (mirrors `jax.numpy.fliplr`)."""
    return flip(m, 1)


def flipud(m: Any) -> Any:
    """Reverse along axis 0 (mirrors `jax.numpy.flipud`)."""
    return flip(m, 0)


def _repeat_scalar(a: Any, repeats: Any, length: int | None) -> Any:
    """`repeat` of a 0-d `a`: a 1-d array of it, `repeats` (a single count) long."""
    if np.size(repeats) != 1:
        raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                         "scalar values of the parameter `repeats`.")
    if length is None:
        host = known_value(repeats)
        if host is None:
            raise ConcretizationTypeError(
                "jnp.repeat: the total number of repeats must be static under jit; pass "
                "concrete `repeats`, or give the result length as total_repeat_length.")
        length = int(np.reshape(host, ()))
    return broadcast_to(a, (length,))


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None, out_sharding: Any = None) -> Any:
    """Repeat each element `repeats` times along `axis` (mirrors `jax.numpy.repeat`).

    `repeats` is an integer or one count per element. The result's length must be static:
    under `jit`, traced counts need `total_repeat_length`, which also cuts the result or
    pads it by repeating the last element, as in JAX.
    """
    check_arraylike("repeat", a)
    if out_sharding is not None:
        raise NotImplementedError("repeat: out_sharding is not supported by jaxlite (it has "
                                  "one device); leave it None.")
    a = ensure_array(a)
    if axis is None:
        a, axis = ravel(a), 0
    length = None if total_repeat_length is None else concrete_int(
        total_repeat_length, "repeat: total_repeat_length")
    if a.ndim == 0:  # JAX ignores the axis of a 0-d input
        return _repeat_scalar(a, repeats, length)
    axis = canonicalize_axis(axis, a.ndim)
    if np.ndim(repeats) == 0 and not isinstance(repeats, Tracer):
        count = concrete_int(repeats, "repeat: repeats")
        if count < 0:
            raise ValueError(f"repeat: repeats must be nonnegative, got {count}.")
        if length is None or length == a.shape[axis] * count:
            return _repeat_uniform(a, count, axis)
    host = known_value(repeats)
    counts = _repeat_counts(repeats, a.shape[axis])
    if length is None:
        if host is None:
            raise ConcretizationTypeError(
                "jnp.repeat: the total number of repeats must be static under jit; pass "
                "concrete `repeats`, or give the result length as total_repeat_length.")
        if (host < 0).any():
            raise ValueError(f"repeat: repeats must be nonnegative, got {host}.")
        # One count stands for every element (possibly none) of the axis.
        length = int(np.broadcast_to(host, (a.shape[axis],)).sum())
    return _repeat_gather(a, counts, axis, length)


def _repeat_uniform(a: Any, count: int, axis: int) -> Any:
    """Every element `count` times: broadcast along a new axis, then merge the two."""
    expanded = lax.expand_dims(a, (axis + 1,))
    tiled_shape = a.shape[:axis + 1] + (count,) + a.shape[axis + 1:]
    tiled = lax.broadcast_in_dim(expanded, tiled_shape, tuple(range(a.ndim + 1)))
    return lax.reshape(tiled, a.shape[:axis] + (a.shape[axis] * count,) + a.shape[axis + 1:])


def _repeat_counts(repeats: Any, size: int) -> Any:
    counts = ensure_array(repeats)
    if not dtypes.is_integer(counts.dtype):
        raise TypeError(f"repeat: repeats must be integers, got dtype {counts.dtype}.")
    if counts.ndim > 1 or (counts.ndim == 1 and counts.shape[0] not in (1, size)):
        raise ValueError(f"repeat: repeats of shape {counts.shape} do not match an axis of "
                         f"length {size}; pass one count or one per element.")
    return broadcast_to_shape(lax.convert_element_type(counts, np.int32), (size,))


def _repeat_gather(a: Any, counts: Any, axis: int, length: int) -> Any:
    """Output j reads element #{i : cumsum(counts)[i] <= j}, clamped to the last element:
    ones scattered at the running totals, then summed up."""
    size = a.shape[axis]
    if size == 0 or length == 0:
        return lax.full_like(a, 0, shape=a.shape[:axis] + (length,) + a.shape[axis + 1:])
    ends = lax.cumsum(counts, 0)
    markers = lax.full((length,), 0, np.int32).at[ends].add(1, mode="drop")
    source = lax.min(lax.cumsum(markers, 0), np.asarray(size - 1, np.int32))
    return a[(slice(None),) * axis + (source,)]
