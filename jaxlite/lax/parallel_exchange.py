"""Collectives that move data between the members of a named axis: `axis_index`,
`all_gather`, `psum_scatter` (the primitive `reduce_scatter`), `all_to_all` and
`ragged_all_to_all` (mirrors those of `jax.lax`; see `_parallel_util` for how a map resolves
them).

Conventions shared with JAX and XLA: the members of a collective over several names are
numbered with the first name major; a gathered (or received) axis lists the members in that
order; `all_gather` and `psum_scatter` are each other's transposes, and `all_to_all`'s
transpose exchanges its split and concat axes.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.sharding_rules import checked_axes, varying_axes
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.named_axes import axis_size as bound_axis_size, check_axis_names
from jaxlite.lax._parallel_util import (axis_names, canonical_groups, declare_collective,
                                        group_size, other_names, own_axis, resolves_here,
                                        sizes_around_own, within_own_axis)
from jaxlite.lax.arithmetic import mul
from jaxlite.lax.comparisons import eq
from jaxlite.lax.broadcast import (broadcast_in_dim, moveaxis, reduce_sum, reshape,
                                   transpose)
from jaxlite.lax.dynamic_slicing import dynamic_slice_in_dim
from jaxlite.lax.selection import select_n
from jaxlite.lax.shape_ops import expand_dims, iota, squeeze
from jaxlite.tree_util import tree_map

__all__ = ["axis_index", "all_gather", "psum_scatter", "all_to_all", "ragged_all_to_all",
           "axis_index_p", "all_gather_p", "reduce_scatter_p", "all_to_all_p",
           "ragged_all_to_all_p"]


def canonicalize_axis(axis: Any, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _fold(x: Any, axis: int) -> Any:
    """Merge axes `axis` and `axis + 1` of `x` (the first one major)."""
    shape = list(np.shape(x))
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return reshape(x, shape)


def _split(x: Any, axis: int, parts: Sequence[int]) -> Any:
    """Split axis `axis` of `x` into axes of sizes `parts` (the first one major)."""
    shape = list(np.shape(x))
    shape[axis:axis + 1] = list(parts)
    return reshape(x, shape)


def _per_member_shape(x: Any, dim: int | None) -> tuple[int, ...]:
    shape = np.shape(x)
    return shape if dim is None else shape[:dim] + shape[dim + 1:]


# ------------------------------------------------------------------------ axis_index

axis_index_p = declare_collective("axis_index", lambda p: (p["axis_name"],), "axis_index")


def _axis_index_abstract_eval(*, axis_name: Any) -> ShapedArray:
    check_axis_names((axis_name,), "axis_index")
    return ShapedArray((), np.dtype(np.int32), False)


def _axis_index_batch(size: int, args: Sequence[Any], dims: Sequence[Any], *,
                      axis_name: Any) -> tuple[Any, Any]:
    if own_axis() is not None and own_axis() == axis_name:
        return iota(np.int32, size), 0
    return axis_index_p.bind(axis_name=axis_name), None


axis_index_p.abstract_eval = _axis_index_abstract_eval
axis_index_p.batch = _axis_index_batch
ad.defjvp_zero(axis_index_p)


def axis_index(axis_name: Any) -> Any:
    """This member's index along the named axis (mirrors `jax.lax.axis_index`); over several
    names, the index of the combined axis, the first name major."""
    if not isinstance(axis_name, (tuple, list)):
        return axis_index_p.bind(axis_name=axis_name)
    index: Any = np.int32(0)
    stride = 1
    for name in reversed(axis_name):
        index = axis_index_p.bind(axis_name=name) * stride + index
        stride *= bound_axis_size(name)
    return index


def make_varying(x: Any, names: Sequence[Any]) -> Any:
    """`x` made to vary over the tracked manual axes `names` (inside a shard_map body
    with check_vma): the same values, held by each device of the axis as its own (a
    select between `x` and itself on a per-device predicate), as JAX's types say after
    `pcast(..., to="varying")` or `all_gather`."""
    for name in [n for n in names if n in checked_axes() and n not in varying_axes(x)]:
        index = axis_index_p.bind(axis_name=name)
        mine = broadcast_in_dim(eq(index, index), np.shape(x), ())
        x = select_n(mine, x, x)
    return x


# ------------------------------------------------------------------------ all_gather

all_gather_p = declare_collective("all_gather", lambda p: p["axis_name"], "all_gather")


def _all_gather_abstract_eval(x: ShapedArray, *, all_gather_dimension: int, axis_name: tuple,
                              axis_index_groups: Any, axis_size: int,
                              tiled: bool) -> ShapedArray:
    check_axis_names(axis_name, "all_gather")
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_gather_transpose(ct: Any, x: Any, *, all_gather_dimension: int, **params: Any
                          ) -> list[Any]:
    return [reduce_scatter_p.bind(ct, scatter_dimension=all_gather_dimension, **params)]


def _all_gather_batch(size: int, args: Sequence[Any], dims: Sequence[Any], *,
                      all_gather_dimension: int, axis_name: tuple, axis_index_groups: Any,
                      axis_size: int, tiled: bool) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups,
                  axis_size=axis_size, tiled=tiled)
    gather_dim = all_gather_dimension
    if not resolves_here(axis_name, axis_index_groups):
        if d is not None:
            if d <= gather_dim:
                gather_dim += 1
            elif not tiled:
                d += 1
        return all_gather_p.bind(x, all_gather_dimension=gather_dim, **params), d
    if len(axis_name) > 1:
        return within_own_axis(
            lambda v: _gather_by_parts(v, axis_name, gather_dim, tiled), x, d, size)
    if d is None:
        shape = list(np.shape(x))
        shape.insert(gather_dim, size)
        kept = [i for i in range(len(shape)) if i != gather_dim]
        y = broadcast_in_dim(x, shape, kept)
    else:
        y = moveaxis(x, d, gather_dim)
    return (_fold(y, gather_dim) if tiled else y), None


def _gather_by_parts(v: Any, names: tuple, gather_dim: int, tiled: bool) -> Any:
    """all_gather over several names: over the rule's own axis, then over the others, with
    the gathered members reordered so that the first name is major."""
    before, after = sizes_around_own(names)
    g = all_gather(all_gather(v, own_axis()), other_names(names))
    g = _split(g, 0, (before, after))              # (before, after, own, ...)
    g = _fold(_fold(transpose(g, (0, 2, 1) + tuple(range(3, np.ndim(g)))), 0), 0)
    g = moveaxis(g, 0, gather_dim)
    return _fold(g, gather_dim) if tiled else g


all_gather_p.abstract_eval = _all_gather_abstract_eval
all_gather_p.transpose = _all_gather_transpose
all_gather_p.batch = _all_gather_batch
ad.deflinear(all_gather_p)

_ALL_GATHER_TO = "{'reduced', 'varying', 'invarying'}"


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False, to: str = "varying") -> Any:
    """Every member's `x`, stacked along `axis` (or concatenated, with `tiled`), the same on
    every member (mirrors `jax.lax.all_gather`). `to="invarying"` gives the same values
    (inside shard_map with check_vma, `to="varying"` makes the result vary over the
    gathered axes, as JAX's types say); `to="reduced"` is not implemented."""
    if to not in ("varying", "invarying", "reduced"):
        raise ValueError("Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` "
                         f"values are: {_ALL_GATHER_TO}")
    if to == "reduced":
        raise NotImplementedError("all_gather(..., to='reduced') needs shard_map's reduced "
                                  "types, which jaxlite does not track.")
    names = axis_names(axis_name)
    if not names:
        return x
    groups = canonical_groups(axis_index_groups)
    size = group_size(names, groups)

    def gather(leaf: Any) -> Any:
        ndim = np.ndim(leaf)
        return all_gather_p.bind(
            leaf, all_gather_dimension=canonicalize_axis(axis, ndim if tiled else ndim + 1),
            axis_name=names, axis_index_groups=groups, axis_size=size, tiled=bool(tiled))
    gathered = tree_map(gather, x)
    if to == "varying":  # (JAX's types: each device's copy is its own)
        return tree_map(lambda leaf: make_varying(leaf, names), gathered)
    return gathered


# ---------------------------------------------------------- psum_scatter (reduce_scatter)

reduce_scatter_p = declare_collective("reduce_scatter", lambda p: p["axis_name"],
                                      "reduce_scatter")


def _scattered_shape(shape: Sequence[int], dim: int, size: int, tiled: bool) -> tuple:
    """The shape of each member's part; JAX's ValueErrors for a dimension that does not
    split evenly over the members."""
    shape = list(shape)
    if tiled:
        if shape[dim] % size:
            raise ValueError(f"tiled reduce_scatter operand scatter dimension size "
                             f"{shape[dim]} must be divisible by shard_count {size}")
        shape[dim] //= size
    else:
        if shape[dim] != size:
            raise ValueError(f"reduce_scatter operand scatter dimension size {shape[dim]} "
                             f"must match shard count {size}")
        del shape[dim]
    return tuple(shape)


def _reduce_scatter_abstract_eval(x: ShapedArray, *, scatter_dimension: int, axis_name: tuple,
                                  axis_index_groups: Any, axis_size: int,
                                  tiled: bool) -> ShapedArray:
    check_axis_names(axis_name, "reduce_scatter")
    shape = _scattered_shape(x.shape, scatter_dimension, axis_size, tiled)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _reduce_scatter_transpose(ct: Any, x: Any, *, scatter_dimension: int, **params: Any
                              ) -> list[Any]:
    return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, **params)]


def _reduce_scatter_batch(size: int, args: Sequence[Any], dims: Sequence[Any], *,
                          scatter_dimension: int, axis_name: tuple, axis_index_groups: Any,
                          axis_size: int, tiled: bool) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups,
                  axis_size=axis_size, tiled=tiled)
    dim = scatter_dimension
    if not resolves_here(axis_name, axis_index_groups):
        if d is not None:
            if d <= dim:
                dim += 1
            elif not tiled:
                d -= 1  # the scattered dimension, before the batch axis, goes away
        return reduce_scatter_p.bind(x, scatter_dimension=dim, **params), d
    _scattered_shape(_per_member_shape(x, d), dim, axis_size, tiled)
    if len(axis_name) > 1:
        return within_own_axis(lambda v: _scatter_by_parts(v, axis_name, dim, tiled),
                               x, d, size)
    y = mul(x, size) if d is None else reduce_sum(x, (d,))
    if tiled:
        y = _split(y, dim, (size, np.shape(y)[dim] // size))
    return y, dim


def _scatter_by_parts(v: Any, names: tuple, dim: int, tiled: bool) -> Any:
    """psum_scatter over several names: over the rule's own axis (its part of the member
    index), then over the others."""
    before, after = sizes_around_own(names)
    own_size = bound_axis_size(own_axis())
    chunk = np.shape(v)[dim] // (before * own_size * after)
    v = _split(v, dim, (before, own_size, after * chunk))
    v = psum_scatter(v, own_axis(), scatter_dimension=dim + 1)
    v = _fold(v, dim)
    return psum_scatter(v, other_names(names), scatter_dimension=dim, tiled=tiled)


reduce_scatter_p.abstract_eval = _reduce_scatter_abstract_eval
reduce_scatter_p.transpose = _reduce_scatter_transpose
reduce_scatter_p.batch = _reduce_scatter_batch
ad.deflinear(reduce_scatter_p)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """`psum(x, axis_name)` of which each member keeps its own slice along
    `scatter_dimension` (mirrors `jax.lax.psum_scatter`)."""
    names = axis_names(axis_name)
    if not names:
        return x
    groups = canonical_groups(axis_index_groups)
    size = group_size(names, groups)

    def scatter(leaf: Any) -> Any:
        dim = canonicalize_axis(scatter_dimension, np.ndim(leaf))
        _scattered_shape(np.shape(leaf), dim, size, tiled)
        return reduce_scatter_p.bind(leaf, scatter_dimension=dim, axis_name=names,
                                     axis_index_groups=groups, axis_size=size,
                                     tiled=bool(tiled))
    return tree_map(scatter, x)


# ------------------------------------------------------------------------ all_to_all

all_to_all_p = declare_collective("all_to_all", lambda p: p["axis_name"], "all_to_all")


def _all_to_all_abstract_eval(x: ShapedArray, *, axis_name: tuple, split_axis: int,
                              concat_axis: int, axis_index_groups: Any,
                              tiled: bool) -> ShapedArray:
    check_axis_names(axis_name, "all_to_all")
    size = group_size(axis_name, axis_index_groups)
    shape = list(x.shape)
    if shape[split_axis] % size:
        raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has to be "
                         f"divisible by the size of the named axis {axis_name} ({size})")
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return ShapedArray(tuple(shape), x.dtype, False)


def _all_to_all_transpose(ct: Any, x: Any, *, split_axis: int, concat_axis: int,
                          **params: Any) -> list[Any]:
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, **params)]


def _all_to_all_batch(size: int, args: Sequence[Any], dims: Sequence[Any], *,
                      axis_name: tuple, split_axis: int, concat_axis: int,
                      axis_index_groups: Any, tiled: bool) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled)
    if not resolves_here(axis_name, axis_index_groups):
        if d is not None:
            split_axis += d <= split_axis
            concat_axis += d <= concat_axis
        return all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                 **params), d
    if len(axis_name) > 1:
        return within_own_axis(
            lambda v: _all_to_all_by_gather(v, axis_name, split_axis, concat_axis), x, d, size)
    x = move_batch_axis(x, d, size, 0)                 # [source member, ...]
    shape = np.shape(x)[1:]
    x = _split(x, 1 + split_axis, (size, shape[split_axis] // size))
    # Axes now: the source member, then the member's axes with the split one in two parts:
    # the destination member and the chunk. The destination becomes the batch axis and the
    # source member joins the concat axis, as its major part.
    labels = ["source"] + list(range(split_axis)) + ["destination"] + \
        list(range(split_axis, len(shape)))
    order = ["destination"]
    for axis in range(len(shape)):
        order += ["source", axis] if axis == concat_axis else [axis]
    y = transpose(x, [labels.index(label) for label in order])
    return _fold(y, 1 + concat_axis), 0


def _all_to_all_by_gather(v: Any, names: tuple, split_axis: int, concat_axis: int) -> Any:
    """all_to_all over several names: gather every member's value, keep this member's
    chunk of the split axis from each, and lay the members along the concat axis."""
    size = group_size(names)
    chunk = np.shape(v)[split_axis] // size
    g = all_gather(v, names)
    g = dynamic_slice_in_dim(g, axis_index(names) * chunk, chunk, 1 + split_axis)
    return _fold(moveaxis(g, 0, concat_axis), concat_axis)


all_to_all_p.abstract_eval = _all_to_all_abstract_eval
all_to_all_p.transpose = _all_to_all_transpose
all_to_all_p.batch = _all_to_all_batch
ad.deflinear(all_to_all_p)


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Send chunk j of `split_axis` to member j, and lay the chunks received from every
    member along `concat_axis` (mirrors `jax.lax.all_to_all`). Without `tiled`, the split
    axis has the axis's size and disappears, and the members form a new axis at
    `concat_axis`."""
    groups = canonical_groups(axis_index_groups)
    names = axis_names(axis_name)

    def exchange(leaf: Any) -> Any:
        size = group_size(names, groups)
        ndim = np.ndim(leaf)
        split, concat = canonicalize_axis(split_axis, ndim), canonicalize_axis(concat_axis, ndim)
        length = np.shape(leaf)[split]
        if tiled and length % size:
            raise ValueError(f"The size of all_to_all split_axis ({length}) has to be "
                             f"divisible by the size of the named axis {axis_name} ({size})")
        if not tiled and length != size:
            raise ValueError("all_to_all requires the size of the mapped axis axis_name to "
                             "equal x.shape[split_axis], but they are "
                             f"{size} and {length} respectively.")
        if not tiled and split < concat:
            concat += 1  # concat_axis counts the axes after split_axis has gone
            leaf = expand_dims(leaf, (concat,))
        elif not tiled and concat < split:
            leaf = expand_dims(leaf, (concat,))
            split += 1
        out = all_to_all_p.bind(leaf, axis_name=names, split_axis=split, concat_axis=concat,
                                axis_index_groups=groups, tiled=bool(tiled))
        return squeeze(out, (split,)) if not tiled and split != concat else out
    return tree_map(exchange, x)


# ----------------------------------------------------------------- ragged_all_to_all

ragged_all_to_all_p = declare_collective("ragged_all_to_all", lambda p: p["axis_name"],
                                         "ragged_all_to_all")
_RAGGED_INDEX_ARGS = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")


def _ragged_all_to_all_abstract_eval(operand: ShapedArray, output: ShapedArray,
                                     *index_avals: ShapedArray, axis_name: tuple,
                                     axis_index_groups: Any) -> ShapedArray:
    for name, aval in zip(_RAGGED_INDEX_ARGS, index_avals):
        if not dtypes.issubdtype(aval.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {name} must be integer type.")
        if aval.ndim != 1 or aval.shape[0] < 1:
            raise ValueError(f"ragged_all_to_all {name} must be rank 1 with positive "
                             f"dimension size, but got shape {aval.shape}")
    check_axis_names(axis_name, "ragged_all_to_all")
    return ShapedArray(output.shape, output.dtype, False)


def _ragged_all_to_all_batch(size: int, args: Sequence[Any], dims: Sequence[Any],
                             **params: Any) -> tuple[Any, Any]:
    raise NotImplementedError(
        "ragged_all_to_all under vmap is not implemented (JAX 0.10.2 does not batch it over "
        "its own axis either: 'Please open a feature request!').")


def _ragged_all_to_all_jvp(primals: Sequence[Any], tangents: Sequence[Any],
                           **params: Any) -> tuple[Any, Any]:
    out = ragged_all_to_all_p.bind(*primals, **params)
    operand_dot, output_dot = tangents[:2]
    if isinstance(operand_dot, ad.Zero) and isinstance(output_dot, ad.Zero):
        return out, ad.Zero(ad.tangent_aval(get_aval(out)))
    tangent = ragged_all_to_all_p.bind(ad.instantiate(operand_dot), ad.instantiate(output_dot),
                                       *primals[2:], **params)
    return out, tangent


ragged_all_to_all_p.abstract_eval = _ragged_all_to_all_abstract_eval
ragged_all_to_all_p.batch = _ragged_all_to_all_batch
ragged_all_to_all_p.jvp = _ragged_all_to_all_jvp


def ragged_all_to_all(operand: Any, output: Any, input_offsets: Any, send_sizes: Any,
                      output_offsets: Any, recv_sizes: Any, *, axis_name: Any,
                      axis_index_groups: Any = None) -> Any:
    """The ragged all-to-all of JAX (mirrors `jax.lax.ragged_all_to_all`): declared with
    its shape rule and jvp; resolving it over a vmapped axis is not implemented."""
    return ragged_all_to_all_p.bind(
        operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
        axis_name=axis_names(axis_name), axis_index_groups=canonical_groups(axis_index_groups))
