"""Shape arithmetic of `jax.lax`: broadcasting of shapes, and the output shapes of
convolutions and window reductions, computed in Python without tracing anything.

Mirrors `jax.lax.broadcast_shapes`, `broadcast_to_rank`, `broadcast_like`, `dtype`,
`shape_as_value`, `empty`, `conv_shape_tuple`, `conv_general_shape_tuple`,
`conv_transpose_shape_tuple`, `conv_general_permutations` and `reduce_window_shape_tuple`.
The convolution helpers work on shapes in the canonical order (batch, feature, spatial...)
that `conv_general_permutations` gives for a triple of dimension-number strings.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.core.shape_poly import canonical_dim
from jaxlite.lax._control_flow_util import type_str
from jaxlite.lax.arithmetic import full
from jaxlite.lax.broadcast import broadcast, broadcast_in_dim, reshape
from jaxlite.lax.convolution import _transpose_padding, padtype_to_pads

__all__ = ["broadcast_shapes", "broadcast_to_rank", "broadcast_like", "dtype",
           "shape_as_value", "empty", "conv_shape_tuple", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "conv_general_permutations",
           "reduce_window_shape_tuple"]


# ------------------------------------------------------------------------ broadcasting

def broadcast_shapes(*shapes: Sequence[int]) -> Sequence[int]:
    """The shape numpy broadcasting gives `shapes` (mirrors `jax.lax.broadcast_shapes`).

    Raises ValueError "Incompatible shapes for broadcasting: shapes=[...]" when two sizes
    of one dimension differ and neither is 1, as JAX does.
    """
    if not shapes:
        raise ValueError("broadcast_shapes: at least one shape is needed (JAX fails with an "
                         "AssertionError here).")
    for shape in shapes:
        if any(d < 0 for d in shape):  # len() first: a bare int fails like JAX's
            raise TypeError("Only non-negative indices are allowed when broadcasting static "
                            f"shapes, but got shape {tuple(shape)}.")
    longest = max(shapes, key=len)
    rank = len(longest)
    if all(tuple(longest[rank - len(s):]) == tuple(s) for s in shapes):
        return longest  # only new leading dimensions: JAX hands the longest shape back
    padded = [(1,) * (rank - len(s)) + tuple(canonical_dim(d) for d in s) for s in shapes]
    result = []
    for sizes in zip(*padded):
        wide = {d for d in sizes if d != 1}
        if len(wide) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        result.append(wide.pop() if wide else 1)
    return tuple(result)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """`x` with leading dimensions of size 1 added up to rank `rank`
    (mirrors `jax.lax.broadcast_to_rank`)."""
    # A higher rank leaves `x` as it is, as in JAX.
    return broadcast(x, (1,) * max(0, rank - np.ndim(x)))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """`arr` broadcast numpy-style to the shape of `like_arr`
    (mirrors `jax.lax.broadcast_like`)."""
    shape = tuple(get_aval(like_arr).shape)
    arr_shape = tuple(np.shape(arr))
    lead = len(shape) - len(arr_shape)
    fits = lead >= 0 and all(a in (1, s) for a, s in zip(arr_shape, shape[lead:]))
    if not fits:
        aval = get_aval(arr)
        raise ValueError(f"Incompatible types for broadcasting: input type={type_str(aval)} "
                         f"and requested type={type_str(aval.update(shape=shape))}")
    # The operand's size-1 dimensions that grow are dropped, then broadcast back in.
    kept = [i for i, a in enumerate(arr_shape) if a == shape[lead + i]]
    if len(kept) != len(arr_shape):
        arr = reshape(arr, tuple(arr_shape[i] for i in kept))
    return broadcast_in_dim(arr, shape, tuple(lead + i for i in kept))


def dtype(x: Any) -> np.dtype:
    """The canonical dtype of a value or dtype-like (mirrors `jax.lax.dtype`): Python
    scalars give the default types (float32, int32 without x64)."""
    return dtypes.dtype(x)


def shape_as_value(shape: Sequence[int]) -> Any:
    """A shape as a 1-D integer array (mirrors `jax.lax.shape_as_value`)."""
    dt = dtypes.canonicalize_dtype(np.int64)
    if len(shape) == 0:
        return full((0,), np.array(0, dt))
    return np.asarray(shape, dtype=dt)


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of `shape` and `dtype` whose contents are unspecified
    (mirrors `jax.lax.empty`); it holds zeros, as JAX's does on the CPU."""
    return full(tuple(shape), 0, dtypes.canonicalize_dtype(dtype))


# ------------------------------------------------------------------------ convolutions

def conv_general_permutations(dimension_numbers: Sequence[str]
                              ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """For specs such as ('NHWC', 'HWIO', 'NHWC'), the permutations that put each operand in
    the canonical order (batch or output feature, feature, spatial in the kernel's order)
    (mirrors `jax.lax.conv_general_permutations`)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (first, second) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(first) == spec.count(second) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{first}' and '{second}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    spatial = [set(spec) - set(pair) for spec, pair in zip(dimension_numbers, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {dimension_numbers}.")

    def permutation(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        others = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            others.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *others)
    return (permutation(lhs_spec, pairs[0]), permutation(rhs_spec, pairs[1]),
            permutation(out_spec, pairs[2]))


def _stride_dim(size: int, window: int, stride: int) -> int:
    return max(0, (int(size) - int(window)) // int(stride) + 1)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any,
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """The output shape of a convolution of operands in the canonical order
    (mirrors `jax.lax.conv_shape_tuple`); `pads` is (low, high) pairs or a padding name."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [int(s) + int(lo) + int(hi) for s, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]="
                         f"{tuple(lhs_shape[2:])}")
    spatial = tuple(_stride_dim(p, k, s) for p, k, s in zip(padded, rhs_shape[2:], strides))
    batch = int(lhs_shape[0])
    if batch_group_count > 1:
        if batch % batch_group_count:
            raise ValueError(f"conv_shape_tuple: the batch size {batch} must be a multiple of "
                             f"batch_group_count={batch_group_count}.")
        batch //= batch_group_count
    return (batch, int(rhs_shape[0]), *spatial)


def _canonical_shapes(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                      dimension_numbers: Sequence[str]) -> tuple[list, list, tuple]:
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    return ([int(lhs_shape[i]) for i in lhs_perm], [int(rhs_shape[i]) for i in rhs_perm],
            out_perm)


def _uncanonical(shape: Sequence[int], out_perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(shape[i]) for i in np.argsort(out_perm))


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """The output shape of `conv_general_dilated` for dimension-number strings
    (mirrors `jax.lax.conv_general_shape_tuple`)."""
    lhs, rhs, out_perm = _canonical_shapes(lhs_shape, rhs_shape, dimension_numbers)
    return _uncanonical(conv_shape_tuple(lhs, rhs, window_strides, padding), out_perm)


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """The output shape of `conv_transpose` for dimension-number strings
    (mirrors `jax.lax.conv_transpose_shape_tuple`)."""
    lhs, rhs, out_perm = _canonical_shapes(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = [_transpose_padding(k, s, padding) for k, s in zip(rhs[2:], window_strides)]
    totals = [int(np.sum(p)) for p in padding]
    spatial = [(i - 1) * s - k + 2 + p
               for i, k, s, p in zip(lhs[2:], rhs[2:], window_strides, totals)]
    return _uncanonical((lhs[0], rhs[0], *spatial), out_perm)


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Sequence[Any],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None
                              ) -> tuple[int, ...]:
    """The output shape of `reduce_window` with explicit (low, high) `padding`
    (mirrors `jax.lax.reduce_window_shape_tuple`)."""
    def dilated(sizes: Sequence[int], factors: Sequence[int] | None) -> list[int]:
        if factors is None:
            return [int(s) for s in sizes]
        return [0 if s == 0 else 1 + int(f) * (int(s) - 1) for s, f in zip(sizes, factors)]
    operand = dilated(operand_shape, base_dilation)
    window = dilated(window_dimensions, window_dilation)
    padded = [d + int(lo) + int(hi) for d, (lo, hi) in zip(operand, padding)]
    return tuple(_stride_dim(p, w, s) for p, w, s in zip(padded, window, window_strides))
