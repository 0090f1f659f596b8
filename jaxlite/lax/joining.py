"""Splitting, stacking and tiling: the primitives split, stack, unstack and tile.

Mirrors `jax.lax.split`, `stack`, `unstack` and `tile`. All four are linear and move
elements without arithmetic, so their transposes are each other: the cotangents of a split
are concatenated, those of a stack unstacked (and the other way round), and a tile's
cotangent is summed over its repetitions. They lower to the slices, reshapes,
broadcasts and concatenations they stand for.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.ad import Zero, instantiate, tangent_aval
from jaxlite.interpreters.batching import batch_at_front
from jaxlite.lax._composed import lower_by_expansion
from jaxlite.lax._declare import check_same_dtypes
from jaxlite.lax.broadcast import broadcast_in_dim, reduce_sum, reshape
from jaxlite.lax.shape_ops import _canonical_axis, expand_dims
from jaxlite.lax.slicing import concatenate_p, slice_in_dim

__all__ = ["split", "stack", "unstack", "tile", "split_p", "stack_p", "unstack_p", "tile_p"]


def _linear_jvp(primitive: Primitive) -> Any:
    """jvp of a linear primitive with one or several results: the primitive on tangents."""
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = primitive.bind(*primals, **params)
        outs = out if primitive.multiple_results else [out]
        if all(isinstance(t, Zero) for t in tangents):
            zeros = [Zero(tangent_aval(get_aval(o))) for o in outs]
        else:
            zeros = primitive.bind(*map(instantiate, tangents), **params)
            zeros = zeros if primitive.multiple_results else [zeros]
        return out, zeros if primitive.multiple_results else zeros[0]
    primitive.is_linear = True
    primitive.jvp = rule


def _moved(axis: int, dim: int) -> int:
    """Where operand axis `axis` sits once a batch axis is at `dim`."""
    return axis + 1 if axis >= dim else axis


# --------------------------------------------------------------------------------- split

split_p = Primitive("split", multiple_results=True)


def _split_abstract_eval(operand: ShapedArray, *, sizes: tuple[int, ...],
                         axis: int) -> list[ShapedArray]:
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if operand.ndim == 0 or sum(sizes) != operand.shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(operand.shape)}")
    shape = list(operand.shape)
    return [operand.update(shape=tuple(shape[:axis] + [s] + shape[axis + 1:]))
            for s in sizes]


def _split_reference(operand: np.ndarray, *, sizes: tuple[int, ...],
                     axis: int) -> list[np.ndarray]:
    return np.split(operand, np.cumsum(sizes)[:-1], axis=axis) if sizes else []


def _split_expansion(operand: Any, *, sizes: tuple[int, ...], axis: int) -> list[Any]:
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    return [slice_in_dim(operand, int(lo), int(hi), 1, axis)
            for lo, hi in zip(starts[:-1], starts[1:])]


def _split_transpose(cts: Sequence[Any], operand: Any, *, sizes: tuple[int, ...],
                     axis: int) -> list[Any]:
    return [concatenate_p.bind(*map(instantiate, cts), dimension=axis)]


def _split_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                 sizes: tuple[int, ...], axis: int) -> tuple[list[Any], list[int]]:
    (operand,), (dim,) = args, dims
    outs = split_p.bind(operand, sizes=sizes, axis=_moved(axis, dim))
    return outs, [dim] * len(outs)


split_p.abstract_eval = _split_abstract_eval
split_p.reference = _split_reference
split_p.transpose = _split_transpose
split_p.batch = _split_batch
split_p.lower = lower_by_expansion(split_p, _split_expansion)
_linear_jvp(split_p)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """Split `operand` along `axis` into pieces of `sizes` (mirrors `jax.lax.split`);
    the sizes must add up to the axis' length."""
    axis = _canonical_axis(axis, np.ndim(operand))
    return split_p.bind(operand, sizes=tuple(int(s) for s in sizes), axis=axis)


# --------------------------------------------------------------------------------- stack

stack_p = Primitive("stack")


def _stack_abstract_eval(*operands: ShapedArray, axis: int) -> ShapedArray:
    shapes = [o.shape for o in operands]
    if any(s != shapes[0] for s in shapes[1:]):
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(s) for s in shapes)}.")
    check_same_dtypes("stack", operands)
    shape = list(shapes[0])
    shape.insert(axis, len(operands))
    return ShapedArray(tuple(shape), operands[0].dtype, all(o.weak_type for o in operands))


def _stack_reference(*operands: np.ndarray, axis: int) -> np.ndarray:
    return np.stack(operands, axis=axis)


def _stack_expansion(*operands: Any, axis: int) -> Any:
    return concatenate_p.bind(*(expand_dims(o, (axis,)) for o in operands), dimension=axis)


def _stack_transpose(ct: Any, *operands: Any, axis: int) -> list[Any]:
    return list(unstack_p.bind(ct, axis=axis))


def _stack_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                 axis: int) -> tuple[Any, int]:
    return stack_p.bind(*batch_at_front(args, dims, axis_size), axis=axis + 1), 0


stack_p.abstract_eval = _stack_abstract_eval
stack_p.reference = _stack_reference
stack_p.transpose = _stack_transpose
stack_p.batch = _stack_batch
stack_p.lower = lower_by_expansion(stack_p, _stack_expansion)
_linear_jvp(stack_p)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays of one shape along a new axis `axis` (mirrors `jax.lax.stack`)."""
    operands = list(operands)
    if not operands:
        raise ValueError("lax.stack requires at least one array to stack (JAX fails with an "
                         "IndexError here).")
    axis = _canonical_axis(axis, np.ndim(operands[0]) + 1)
    return stack_p.bind(*operands, axis=axis)


# ------------------------------------------------------------------------------- unstack

unstack_p = Primitive("unstack", multiple_results=True)


def _unstack_abstract_eval(operand: ShapedArray, *, axis: int) -> list[ShapedArray]:
    shape = operand.shape[:axis] + operand.shape[axis + 1:]
    return [operand.update(shape=shape) for _ in range(operand.shape[axis])]


def _unstack_reference(operand: np.ndarray, *, axis: int) -> list[np.ndarray]:
    return [np.take(operand, i, axis=axis) for i in range(operand.shape[axis])]


def _unstack_expansion(operand: Any, *, axis: int) -> list[Any]:
    shape = get_aval(operand).shape
    rest = shape[:axis] + shape[axis + 1:]
    return [reshape(slice_in_dim(operand, i, i + 1, 1, axis), rest)
            for i in range(shape[axis])]


def _unstack_transpose(cts: Sequence[Any], operand: Any, *, axis: int) -> list[Any]:
    if not cts:
        return [ad.zeros_like_aval(operand.aval)]
    return [stack_p.bind(*map(instantiate, cts), axis=axis)]


def _unstack_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                   axis: int) -> tuple[list[Any], list[int]]:
    (operand,), (dim,) = args, dims
    outs = unstack_p.bind(operand, axis=_moved(axis, dim))
    return outs, [dim if dim < _moved(axis, dim) else dim - 1] * len(outs)


unstack_p.abstract_eval = _unstack_abstract_eval
unstack_p.reference = _unstack_reference
unstack_p.transpose = _unstack_transpose
unstack_p.batch = _unstack_batch
unstack_p.lower = lower_by_expansion(unstack_p, _unstack_expansion)
_linear_jvp(unstack_p)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of `x` along `axis`, without that axis (mirrors `jax.lax.unstack`)."""
    axis = _canonical_axis(axis, np.ndim(x))
    return tuple(unstack_p.bind(x, axis=axis))


# ---------------------------------------------------------------------------------- tile

tile_p = Primitive("tile")


def _tile_abstract_eval(operand: ShapedArray, *, reps: tuple[int, ...]) -> ShapedArray:
    if len(reps) != operand.ndim:
        raise TypeError("reps length must be equal to the ndim of x, got "
                        f"len(reps)={len(reps)} and x.ndim={operand.ndim}.")
    if any(r < 0 for r in reps):
        raise TypeError(f"tile: reps must be nonnegative, got {reps} (JAX fails while "
                        "lowering here).")
    return operand.update(shape=tuple(n * r for n, r in zip(operand.shape, reps)))


def _tile_reference(operand: np.ndarray, *, reps: tuple[int, ...]) -> np.ndarray:
    return np.tile(operand, reps) if reps else np.array(operand)


def _interleaved(shape: Sequence[int], reps: Sequence[int]) -> tuple[int, ...]:
    """(r0, n0, r1, n1, ...): the tiled shape with each repetition count split out."""
    return tuple(v for pair in zip(reps, shape) for v in pair)


def _tile_expansion(operand: Any, *, reps: tuple[int, ...]) -> Any:
    shape = get_aval(operand).shape
    wide = broadcast_in_dim(operand, _interleaved(shape, reps),
                            tuple(2 * i + 1 for i in range(len(shape))))
    return reshape(wide, tuple(n * r for n, r in zip(shape, reps)))


def _tile_transpose(ct: Any, operand: Any, *, reps: tuple[int, ...]) -> list[Any]:
    shape = operand.aval.shape
    split_out = reshape(ct, _interleaved(shape, reps))
    return [reduce_sum(split_out, tuple(2 * i for i in range(len(shape))))]


def _tile_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                reps: tuple[int, ...]) -> tuple[Any, int]:
    (operand,), (dim,) = args, dims
    return tile_p.bind(operand, reps=reps[:dim] + (1,) + reps[dim:]), dim


tile_p.abstract_eval = _tile_abstract_eval
tile_p.reference = _tile_reference
tile_p.transpose = _tile_transpose
tile_p.batch = _tile_batch
tile_p.lower = lower_by_expansion(tile_p, _tile_expansion)
_linear_jvp(tile_p)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """`operand` repeated `reps[i]` times along each dimension i (mirrors `jax.lax.tile`)."""
    return tile_p.bind(operand, reps=tuple(int(r) for r in reps))

