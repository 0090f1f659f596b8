"""Ragged matrix products: `ragged_dot`, `ragged_dot_general` and
`RaggedDotDimensionNumbers`.

Mirrors `jax.lax.ragged_dot` and `jax.lax.ragged_dot_general`. One dimension of `lhs` (its
ragged dimension) is cut into consecutive groups of `group_sizes` elements; what happens to
group g depends on the kind of that dimension (JAX's three modes):

1. non-contracting: its rows are multiplied by the kernel `rhs[g]` (rhs has a group
   dimension); rows past the last group give zeros.
2. contracting: the product restricted to the group's part of the contraction is output
   g, in a new leading dimension; elements past the last group take part in none.
3. batch: a batched product (the groups only say which kernel slice each batch uses,
   which the batch index already does).

They are computed as dot_generals of `lhs` masked to each group (one per group, a static
count), summed in the accumulation type and rounded once, as JAX's CPU computes them.
Differences from JAX: `group_sizes` must be one-dimensional ([g]); `group_offset` is not
supported.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.arithmetic import add, mul, sub
from jaxlite.lax.bitwise import bitwise_and
from jaxlite.lax.broadcast import broadcast_in_dim, reshape
from jaxlite.lax.comparisons import ge, lt
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.cumulative import cumsum
from jaxlite.lax.dot import _dot_result_dtype, dot_general
from jaxlite.lax.joining import stack
from jaxlite.lax.shape_ops import broadcasted_iota
from jaxlite.lax.slicing import slice_in_dim

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


class RaggedDotDimensionNumbers:
    """The dot dimension numbers, the lhs ragged dimension and the rhs group dimension of a
    ragged product (mirrors `jax.lax.RaggedDotDimensionNumbers`)."""

    def __init__(self, dot_dimension_numbers: Any, lhs_ragged_dimensions: Sequence[int],
                 rhs_group_dimensions: Sequence[int]) -> None:
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def _fields(self) -> tuple:
        return (self.dot_dimension_numbers, self.lhs_ragged_dimensions,
                self.rhs_group_dimensions)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, RaggedDotDimensionNumbers) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (f"RaggedDotDimensionNumbers(dot_dimension_numbers="
                f"{self.dot_dimension_numbers}, lhs_ragged_dimensions="
                f"{self.lhs_ragged_dimensions}, rhs_group_dimensions="
                f"{self.rhs_group_dimensions})")


def _group_masks(group_sizes: Any, size: int) -> list[Any]:
    """For each group, a bool vector over the ragged dimension: its elements."""
    count = get_aval(group_sizes).shape[0]
    sizes = convert_element_type(group_sizes, np.int32)
    ends = cumsum(sizes, 0)
    starts = sub(ends, sizes)
    index = broadcasted_iota(np.int32, (size,), 0)
    masks = []
    for g in range(count):
        start = broadcast_in_dim(reshape(slice_in_dim(starts, g, g + 1, 1, 0), ()), (size,), ())
        end = broadcast_in_dim(reshape(slice_in_dim(ends, g, g + 1, 1, 0), ()), (size,), ())
        masks.append(bitwise_and(ge(index, start), lt(index, end)))
    return masks


def _masked(lhs: Any, mask: Any, dim: int) -> Any:
    shape = get_aval(lhs).shape
    return mul(lhs, convert_element_type(broadcast_in_dim(mask, shape, (dim,)),
                                         get_aval(lhs).dtype))


def _without(dims: Sequence[int], removed: int) -> tuple[int, ...]:
    return tuple(d - 1 if d > removed else d for d in dims)


def ragged_dot_general(lhs: Any, rhs: Any, group_sizes: Any,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
                       precision: Any = None, preferred_element_type: Any = None,
                       group_offset: Any = None, out_sharding: Any = None) -> Any:
    """A dot_general whose lhs ragged dimension is cut into groups (mirrors
    `jax.lax.ragged_dot_general`); see the module docstring for the three modes."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported.")
    numbers = ragged_dot_dimension_numbers
    if len(numbers.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = numbers.dot_dimension_numbers
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    ragged = numbers.lhs_ragged_dimensions[0]
    if not 0 <= ragged < len(lhs_shape):
        raise TypeError("ragged_dot_general requires lhs ragged dimension numbers to be "
                        "nonnegative and less than the number of axes of the lhs value, got "
                        f"{ragged} for lhs of rank {len(lhs_shape)}.")
    if np.ndim(group_sizes) != 1:
        raise NotImplementedError("ragged_dot_general: group_sizes must have shape [g] "
                                  f"here, got {tuple(np.shape(group_sizes))}.")
    groups = get_aval(group_sizes).shape[0]
    out_dtype = _dot_result_dtype(get_aval(lhs).dtype, get_aval(rhs).dtype,
                                  None if preferred_element_type is None else
                                  dtypes.canonicalize_dtype(preferred_element_type))
    accumulate = hlo.widen_low_precision(out_dtype)

    def product(a: Any, b: Any, dims: Any) -> Any:
        return dot_general(a, b, dims, precision=precision, preferred_element_type=accumulate)

    if ragged in lhs_batch:  # mode 3
        _expect_no_group_dims(numbers)
        out = product(lhs, rhs, numbers.dot_dimension_numbers)
    elif ragged in lhs_contract:  # mode 2: one output per group, in front
        _expect_no_group_dims(numbers)
        masks = _group_masks(group_sizes, lhs_shape[ragged])
        out = stack([product(_masked(lhs, m, ragged), rhs, numbers.dot_dimension_numbers)
                     for m in masks], 0)
    else:  # mode 1
        if len(numbers.rhs_group_dimensions) != 1:
            raise TypeError("ragged_dot_general requires exactly one rhs group dimension "
                            "when the lhs ragged dimension is a non-contracting one.")
        group_dim = numbers.rhs_group_dimensions[0]
        if rhs_shape[group_dim] != groups:
            raise TypeError(f"expected rhs group dimension size to be {groups}, got "
                            f"{rhs_shape[group_dim]}.")
        dims = ((lhs_contract, _without(rhs_contract, group_dim)),
                (lhs_batch, _without(rhs_batch, group_dim)))
        masks = _group_masks(group_sizes, lhs_shape[ragged])
        out = None
        for g, mask in enumerate(masks):
            kernel = reshape(slice_in_dim(rhs, g, g + 1, 1, group_dim),
                             rhs_shape[:group_dim] + rhs_shape[group_dim + 1:])
            term = product(_masked(lhs, mask, ragged), kernel, dims)
            out = term if out is None else add(out, term)
        if out is None:  # no groups: no row belongs to one
            out = broadcast_in_dim(np.zeros((), accumulate),
                                   _product_shape(lhs_shape, rhs_shape, numbers, group_dim), ())
    return convert_element_type(out, out_dtype)


def _product_shape(lhs_shape: tuple, rhs_shape: tuple, numbers: RaggedDotDimensionNumbers,
                   group_dim: int) -> tuple[int, ...]:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = numbers.dot_dimension_numbers
    lhs_free = [d for d in range(len(lhs_shape)) if d not in lhs_contract + lhs_batch]
    rhs_free = [d for d in range(len(rhs_shape))
                if d not in rhs_contract + rhs_batch and d != group_dim]
    return (tuple(lhs_shape[d] for d in lhs_batch) + tuple(lhs_shape[d] for d in lhs_free)
            + tuple(rhs_shape[d] for d in rhs_free))


def _expect_no_group_dims(numbers: RaggedDotDimensionNumbers) -> None:
    if numbers.rhs_group_dimensions:
        raise TypeError("ragged_dot_general requires zero group dimensions in the rhs when "
                        "the lhs ragged dimension is contracting or batch.")


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None,
               out_sharding: Any = None) -> Any:
    """Rows of `lhs` [m, k] in consecutive groups of `group_sizes` [g], each group multiplied
    by its kernel `rhs[g]` [k, n]; rows past the last group give zeros (mirrors
    `jax.lax.ragged_dot`)."""
    numbers = RaggedDotDimensionNumbers(((([1], [1])), ([], [])), [0], [0])
    return ragged_dot_general(lhs, rhs, group_sizes, numbers, precision,
                              preferred_element_type, group_offset, out_sharding)
