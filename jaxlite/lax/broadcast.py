"""Broadcasting and its adjoint, summation; transposition and reshaping.

`broadcast_in_dim` and `reduce_sum` are each other's transposes, so they are declared
together; `transpose` and `reshape` are the movements every transformation needs.
Mirrors `jax.lax.broadcast_in_dim`, `reduce_sum`, `transpose` and `reshape` (XLA's
BroadcastInDim, Reduce with add, Transpose and Reshape).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.core.shape_poly import canonical_dim, shape_size
from jaxlite.core.sharding_rules import requested_sharding
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

# ----------------------------------------------------------------------- broadcast_in_dim

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def check_shape(name: str, shape: tuple[int, ...], what: str = "shape") -> None:
    if any(d < 0 for d in shape):
        raise TypeError(f"{name} {what} must have every element be nonnegative, got {shape}.")


def _check_broadcast_dimensions(operand: ShapedArray, shape: tuple[int, ...],
                                dims: tuple[int, ...]) -> None:
    """JAX's checks (and messages) of broadcast_in_dim's parameters, in JAX's order."""
    check_shape("broadcast_in_dim", shape)
    if len(dims) != operand.ndim:
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to "
                        f"operand ndim; got broadcast_dimensions {dims} for operand ndim "
                        f"{operand.ndim}.")
    if len(shape) < operand.ndim:
        raise TypeError("broadcast_in_dim target broadcast shape must have equal or higher "
                        f"rank to the operand shape; got operand ndim {operand.ndim} and "
                        f"target broadcast ndim {len(shape)}.")
    if not set(dims) <= set(range(len(shape))):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {dims} for operand ndim {operand.ndim} and shape "
                        f"{shape}.")
    if any(size not in (1, shape[d]) for size, d in zip(operand.shape, dims)):
        raise TypeError("broadcast_in_dim operand dimension sizes must either be 1, or be "
                        "equal to their corresponding dimensions in the target broadcast "
                        f"shape; got operand of shape {operand.shape}, target broadcast shape "
                        f"{shape}, broadcast_dimensions {dims} ")
    if len(set(dims)) != len(dims):
        raise TypeError("broadcast_in_dim broadcast_dimensions must not contain duplicates, "
                        f"got broadcast_dimensions {dims}")


def _broadcast_in_dim_abstract_eval(operand: ShapedArray, *, shape: tuple[int, ...],
                                    broadcast_dimensions: tuple[int, ...]) -> ShapedArray:
    _check_broadcast_dimensions(operand, shape, broadcast_dimensions)
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):
        # The wrapper transposes first; XLA's broadcast keeps the operand's order.
        raise TypeError(f"broadcast_in_dim primitive: broadcast_dimensions "
                        f"{broadcast_dimensions} must be increasing.")
    return ShapedArray(tuple(shape), operand.dtype, operand.weak_type)


def _broadcast_in_dim_reference(operand: np.ndarray, *, shape: tuple[int, ...],
                                broadcast_dimensions: tuple[int, ...]) -> np.ndarray:
    expanded = [1] * len(shape)
    for size, dim in zip(np.shape(operand), broadcast_dimensions):
        expanded[dim] = size
    return np.broadcast_to(np.reshape(operand, expanded), shape)


def _broadcast_in_dim_transpose(ct: Any, operand: Any, *, shape: tuple[int, ...],
                                broadcast_dimensions: tuple[int, ...]) -> list[Any]:
    aval = operand.aval
    summed_new = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    summed_ones = tuple(d for size, d in zip(aval.shape, broadcast_dimensions)
                        if size == 1 and shape[d] != 1)
    out = reduce_sum(ct, summed_new + summed_ones) if summed_new or summed_ones else ct
    return [reshape(out, aval.shape)]


def _broadcast_in_dim_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                            shape: tuple[int, ...],
                            broadcast_dimensions: tuple[int, ...]) -> tuple[Any, int]:
    (operand,), (dim,) = args, dims
    new_shape = (axis_size,) + tuple(shape)
    operand = moveaxis(operand, dim, 0) if dim != 0 else operand
    new_dims = (0,) + tuple(d + 1 for d in broadcast_dimensions)
    return broadcast_in_dim(operand, new_shape, new_dims), 0


def _broadcast_in_dim_lower(ctx: LoweringContext, operand: HloInstruction, *,
                            shape: tuple[int, ...],
                            broadcast_dimensions: tuple[int, ...]) -> HloInstruction:
    return hlo.broadcast_in_dim(ctx, operand, shape, broadcast_dimensions)


broadcast_in_dim_p.abstract_eval = _broadcast_in_dim_abstract_eval
broadcast_in_dim_p.reference = _broadcast_in_dim_reference
broadcast_in_dim_p.transpose = _broadcast_in_dim_transpose
broadcast_in_dim_p.batch = _broadcast_in_dim_batch
broadcast_in_dim_p.lower = _broadcast_in_dim_lower
ad.deflinear(broadcast_in_dim_p)


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                     *, out_sharding: Any = None) -> Any:
    """Broadcast `operand` to `shape`, its dimension i becoming `broadcast_dimensions[i]`.

    Mirrors `jax.lax.broadcast_in_dim`. `out_sharding` places the result; with one device
    every placement is that device's.
    """
    shape = tuple(canonical_dim(d) for d in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if np.shape(operand) == shape and broadcast_dimensions == tuple(range(len(shape))) \
            and not isinstance(operand, (int, float, complex, bool)):
        return operand
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):
        # Out of order (JAX allows it): check as JAX does, then transpose the operand's
        # dimensions into the order of their places in the result.
        _check_broadcast_dimensions(get_aval(operand), shape, broadcast_dimensions)
        order = tuple(int(i) for i in np.argsort(broadcast_dimensions))
        operand = transpose(operand, order)
        broadcast_dimensions = tuple(broadcast_dimensions[i] for i in order)
    return broadcast_in_dim_p.bind(operand, shape=shape,
                                   broadcast_dimensions=broadcast_dimensions)


def broadcast(operand: Any, sizes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """Add leading dimensions of the given sizes (mirrors `jax.lax.broadcast`); see
    `broadcast_in_dim` for `out_sharding`."""
    ndim = np.ndim(operand)
    shape = tuple(sizes) + tuple(np.shape(operand))
    return broadcast_in_dim(operand, shape, tuple(range(len(sizes), len(sizes) + ndim)))


# ---------------------------------------------------------------------------- transpose

transpose_p = Primitive("transpose")


def _transpose_abstract_eval(operand: ShapedArray, *,
                             permutation: tuple[int, ...]) -> ShapedArray:
    if sorted(permutation) != list(range(operand.ndim)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {operand.shape}.")
    return ShapedArray(tuple(operand.shape[p] for p in permutation), operand.dtype,
                       operand.weak_type)


def _transpose_reference(operand: np.ndarray, *, permutation: tuple[int, ...]) -> np.ndarray:
    return np.transpose(operand, permutation)


def _transpose_transpose(ct: Any, operand: Any, *, permutation: tuple[int, ...]) -> list[Any]:
    return [transpose(ct, tuple(np.argsort(permutation)))]


def _transpose_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                     permutation: tuple[int, ...]) -> tuple[Any, int]:
    (operand,), (dim,) = args, dims
    rest = [d for d in range(operand.ndim) if d != dim]  # operand axes without the batch axis
    perm = (dim,) + tuple(rest[p] for p in permutation)
    return transpose(operand, perm), 0


def _transpose_lower(ctx: LoweringContext, operand: HloInstruction, *,
                     permutation: tuple[int, ...]) -> HloInstruction:
    return hlo.transpose(ctx, operand, permutation)


transpose_p.abstract_eval = _transpose_abstract_eval
transpose_p.reference = _transpose_reference
transpose_p.transpose = _transpose_transpose
transpose_p.batch = _transpose_batch
transpose_p.lower = _transpose_lower
ad.deflinear(transpose_p)


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permute the dimensions of `operand` (mirrors `jax.lax.transpose`)."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(np.ndim(operand))):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """`x` with axis `src` moved to position `dst`."""
    ndim = np.ndim(x)
    src, dst = src % ndim, dst % ndim
    perm = [d for d in range(ndim) if d != src]
    perm.insert(dst, src)
    return transpose(x, perm)


# ---------------------------------------------------------------------------- reduce_sum

reduce_sum_p = Primitive("reduce_sum")


def _type_name(aval: ShapedArray) -> str:
    """`float32[2,3]`, as JAX's messages print types."""
    return f"{np.dtype(aval.dtype).name}[{','.join(str(d) for d in aval.shape)}]"


def check_reduction_axes(name: str, operand: ShapedArray, axes: tuple[int, ...]) -> None:
    """JAX's checks of a reduction's axes, with JAX's ValueErrors."""
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    if any(not 0 <= a < operand.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                         f"{_type_name(operand)}.")


def _reduce_sum_abstract_eval(operand: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
    check_reduction_axes("reduce_sum", operand, axes)
    if operand.dtype == np.bool_:
        raise TypeError("reduce_sum does not accept dtype bool; convert to an integer first.")
    shape = tuple(s for d, s in enumerate(operand.shape) if d not in axes)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _reduce_sum_reference(operand: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
    """The sum in a pairwise order, float16/bfloat16 accumulated in float32 and rounded once.

    numpy sums pairwise (blocks of 8 accumulators, halves above 128 elements) only along a
    contiguous last axis, and sequentially across the other axes; so the reduced axes are
    moved last and flattened into one contiguous row first. Error bound of a float sum of n
    terms: about log2(n) * eps * sum(|x|) (eps of float32 for the 16-bit types, then one
    rounding to the result type); integers wrap as in XLA.
    """
    x = np.asarray(operand)
    if all(x.shape[d] == 1 for d in axes):  # one term: XLA adds no 0 (sum of [-0.] is -0.)
        return x.reshape(tuple(n for d, n in enumerate(x.shape) if d not in axes))
    wide = np.dtype(hlo.widen_low_precision(x.dtype))
    if x.size == 0:
        return np.sum(x, axis=axes, dtype=wide).astype(x.dtype)
    # A reduced axis of stride 0 (an eager broadcast) repeats one slice: its sum is the
    # count times that slice's sum, rounded once, and nothing is materialized.
    repeated = [d for d in axes if x.strides[d] == 0 and x.shape[d] > 1]
    count = int(np.prod([x.shape[d] for d in repeated], dtype=np.int64))
    x = x[tuple(slice(0, 1) if d in repeated else slice(None) for d in range(x.ndim))]
    kept = tuple(d for d in range(x.ndim) if d not in axes)
    out_shape = tuple(x.shape[d] for d in kept)
    rows = np.ascontiguousarray(np.transpose(x, kept + tuple(axes)), dtype=wide)
    total = np.sum(rows.reshape(out_shape + (-1,)), axis=-1, dtype=wide)
    if count > 1:
        total = total * np.asarray(count).astype(wide)
    return np.asarray(total).astype(operand.dtype)


def _reduce_sum_transpose(ct: Any, operand: Any, *, axes: tuple[int, ...]) -> list[Any]:
    shape = operand.aval.shape
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    return [broadcast_in_dim(ct, shape, kept)]


def _reduce_sum_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                      axes: tuple[int, ...]) -> tuple[Any, int]:
    (operand,), (dim,) = args, dims
    operand_axes = [d for d in range(np.ndim(operand)) if d != dim]
    new_axes = tuple(operand_axes[a] for a in axes)
    out_dim = dim - sum(1 for a in new_axes if a < dim)
    return reduce_sum(operand, new_axes), out_dim


reduce_sum_p.abstract_eval = _reduce_sum_abstract_eval
reduce_sum_p.reference = _reduce_sum_reference
reduce_sum_p.transpose = _reduce_sum_transpose
reduce_sum_p.batch = _reduce_sum_batch
reduce_sum_p.lower = hlo.reduction_rule(Opcode.ADD, hlo.zero)
ad.deflinear(reduce_sum_p)


def reduce_sum(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """Sum `operand` over `axes` (mirrors `jax.lax.reduce_sum`); see `broadcast_in_dim` for
    `out_sharding`."""
    return reduce_sum_p.bind(operand, axes=canonicalize_axes("reduce_sum", operand, axes))


def canonicalize_axes(name: str, operand: Any, axes: Sequence[int]) -> tuple[int, ...]:
    """Axes as non-negative ints; negative ones count from the end, as in JAX."""
    ndim = np.ndim(operand)
    out = []
    for axis in axes:
        axis = int(axis)
        if not -ndim <= axis < ndim:
            raise ValueError(f"reduction axes {tuple(axes)} contains out-of-bounds indices for "
                             f"{_type_name(get_aval(operand))} ({name}).")
        out.append(axis % ndim)
    return tuple(out)


# ------------------------------------------------------------------------------- reshape

reshape_p = Primitive("reshape")


def _reshape_abstract_eval(operand: ShapedArray, *, new_sizes: tuple[int, ...],
                           dimensions: tuple[int, ...] | None) -> ShapedArray:
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if shape_size(new_sizes) != operand.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"for shape {operand.shape}.")
    if dimensions is not None and sorted(dimensions) != list(range(operand.ndim)):
        raise TypeError(f"reshape dimensions must be a permutation of the operand dimensions, "
                        f"got {dimensions} for shape {operand.shape}.")
    return ShapedArray(tuple(new_sizes), operand.dtype, operand.weak_type)


def _reshape_reference(operand: np.ndarray, *, new_sizes: tuple[int, ...],
                       dimensions: tuple[int, ...] | None) -> np.ndarray:
    if dimensions is not None:
        operand = np.transpose(operand, dimensions)
    return np.reshape(operand, new_sizes)


def _reshape_transpose(ct: Any, operand: Any, *, new_sizes: tuple[int, ...],
                       dimensions: tuple[int, ...] | None) -> list[Any]:
    shape = operand.aval.shape
    if dimensions is None:
        return [reshape(ct, shape)]
    permuted = tuple(shape[d] for d in dimensions)
    return [transpose(reshape(ct, permuted), tuple(np.argsort(dimensions)))]


def _reshape_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                   new_sizes: tuple[int, ...],
                   dimensions: tuple[int, ...] | None) -> tuple[Any, int]:
    (operand,), (dim,) = args, dims
    operand = moveaxis(operand, dim, 0)
    if dimensions is not None:
        operand = transpose(operand, (0,) + tuple(d + 1 for d in dimensions))
    return reshape(operand, (axis_size,) + tuple(new_sizes)), 0


def _reshape_lower(ctx: LoweringContext, operand: HloInstruction, *,
                   new_sizes: tuple[int, ...],
                   dimensions: tuple[int, ...] | None) -> HloInstruction:
    if dimensions is not None:
        operand = hlo.transpose(ctx, operand, dimensions)
    return hlo.reshape(ctx, operand, new_sizes)


reshape_p.abstract_eval = _reshape_abstract_eval
reshape_p.reference = _reshape_reference
reshape_p.transpose = _reshape_transpose
reshape_p.batch = _reshape_batch
reshape_p.lower = _reshape_lower
ad.deflinear(reshape_p)


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None,
            *, out_sharding: Any = None) -> Any:
    """Reshape `operand`, optionally transposing by `dimensions` first (`jax.lax.reshape`);
    see `broadcast_in_dim` for `out_sharding`."""
    new_sizes = tuple(canonical_dim(d) for d in new_sizes)
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    if dims == tuple(range(np.ndim(operand))):
        dims = None
    if dims is None and np.shape(operand) == new_sizes:
        return operand
    with requested_sharding(out_sharding):  # (the result's type on an Explicit mesh)
        return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims)


def broadcast_axis(x: Any, size: int, axis: int) -> Any:
    """`x` with a new axis of length `size` inserted at position `axis`."""
    shape = list(np.shape(x))
    ndim = len(shape)
    shape.insert(axis, size)
    dims = tuple(d if d < axis else d + 1 for d in range(ndim))
    return broadcast_in_dim(x, shape, dims)
