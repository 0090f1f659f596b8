"""Shape rules of the data-movement opcodes (mirrors those cases of xla::ShapeInference).

broadcast, reshape, transpose, reverse, slice, dynamic-slice, dynamic-update-slice,
concatenate, pad, iota, bitcast-convert, copy, gather and scatter. Attribute names follow
ir.py's docstring; gather and scatter read XLA's dimension-number names (`offset_dims`,
`collapsed_slice_dims`, `start_index_map`, `index_vector_dim`, `slice_sizes`,
`operand_batching_dims`, `start_indices_batching_dims`; `update_window_dims`,
`inserted_window_dims`, `scatter_dims_to_operand_dims`, `input_batching_dims`,
`scatter_indices_batching_dims`).
"""
from __future__ import annotations

import numpy as np

from jaxlite.core import dtypes
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference_base import RuleContext, check_combiner, describe, tuple_or_single


def _same_dtype(ctx: RuleContext, shapes: list[Shape], what: str) -> None:
    if len({s.dtype for s in shapes}) > 1:
        ctx.fail(f"{what} must share one element type, got {describe(shapes)}")


def broadcast_rule(ctx: RuleContext) -> Shape:
    operand, out = ctx.array(0), ctx.declared_array()
    dims = ctx.ints("dimensions")
    if len(dims) != operand.rank:
        ctx.fail(f"dimensions {dims} must map each of the {operand.rank} operand dimensions "
                 f"of {operand} to an output dimension")
    ctx.check_dims(dims, out.rank, "dimensions")
    for i, d in enumerate(dims):
        if operand.dims[i] != out.dims[d]:
            ctx.fail(f"operand dimension {i} of {operand} has size {operand.dims[i]} but maps "
                     f"to output dimension {d} of size {out.dims[d]} in {out} (sizes must be "
                     "equal; reshape size-1 dimensions away first)")
    return Shape(operand.dtype, out.dims)


def reshape_rule(ctx: RuleContext) -> Shape:
    operand, out = ctx.array(0), ctx.declared_array()
    if out.size != operand.size:
        ctx.fail(f"cannot reshape {operand} ({operand.size} elements) to {out} "
                 f"({out.size} elements)")
    return Shape(operand.dtype, out.dims)


def transpose_rule(ctx: RuleContext) -> Shape:
    operand = ctx.array(0)
    perm = ctx.ints("dimensions")
    if sorted(perm) != list(range(operand.rank)):
        ctx.fail(f"dimensions {perm} must be a permutation of the {operand.rank} dimensions "
                 f"of {operand}")
    return Shape(operand.dtype, tuple(operand.dims[p] for p in perm))


def reverse_rule(ctx: RuleContext) -> Shape:
    operand = ctx.array(0)
    ctx.check_dims(ctx.ints("dimensions"), operand.rank, "dimensions")
    return Shape(operand.dtype, operand.dims)


def slice_rule(ctx: RuleContext) -> Shape:
    operand = ctx.array(0)
    starts, limits = ctx.ints("starts"), ctx.ints("limits")
    strides = ctx.ints("strides", (1,) * operand.rank)
    if not len(starts) == len(limits) == len(strides) == operand.rank:
        ctx.fail(f"starts {starts}, limits {limits} and strides {strides} need one entry per "
                 f"dimension of {operand}")
    out = []
    for d, (s, lim, st, size) in enumerate(zip(starts, limits, strides, operand.dims)):
        if not 0 <= s <= lim <= size or st < 1:
            ctx.fail(f"dimension {d}: need 0 <= start {s} <= limit {lim} <= size {size} and "
                     f"stride {st} >= 1 (operand {operand})")
        out.append((lim - s + st - 1) // st)
    return Shape(operand.dtype, tuple(out))


def _check_start_indices(ctx: RuleContext, first: int, rank: int) -> None:
    indices = ctx.operands[first:]
    if len(indices) != rank:
        ctx.fail(f"needs {rank} scalar start indices (one per dimension), got {len(indices)}")
    for i, s in enumerate(indices):
        if s.is_tuple or s.rank != 0 or not dtypes.is_integer(s.dtype):
            ctx.fail(f"start index {i} must be an integer scalar, got {s}")
    if len({s.dtype for s in indices}) > 1:
        ctx.fail(f"start indices must share one type, got {describe(list(indices))}")


def dynamic_slice_rule(ctx: RuleContext) -> Shape:
    ctx.count(1)
    operand = ctx.array(0)
    _check_start_indices(ctx, 1, operand.rank)
    sizes = ctx.ints("sizes")
    if len(sizes) != operand.rank or any(not 0 <= s <= d for s, d in zip(sizes, operand.dims)):
        ctx.fail(f"sizes {sizes} must give one size in [0, dim] per dimension of {operand}")
    return Shape(operand.dtype, sizes)


def dynamic_update_slice_rule(ctx: RuleContext) -> Shape:
    ctx.count(2)
    operand, update = ctx.array(0), ctx.array(1, "the update")
    _same_dtype(ctx, [operand, update], "operand and update")
    if update.rank != operand.rank or any(u > d for u, d in zip(update.dims, operand.dims)):
        ctx.fail(f"the update {update} must have the operand's rank and fit inside {operand}")
    _check_start_indices(ctx, 2, operand.rank)
    return Shape(operand.dtype, operand.dims)


def concatenate_rule(ctx: RuleContext) -> Shape:
    ctx.count(1)
    shapes = ctx.arrays()
    dims = ctx.ints("dimensions")
    if len(dims) != 1:
        ctx.fail(f"dimensions must name exactly one dimension, got {dims}")
    dim, rank = dims[0], shapes[0].rank
    _same_dtype(ctx, shapes, "operands")
    if not 0 <= dim < rank or any(s.rank != rank for s in shapes):
        ctx.fail(f"dimension {dim} must be in [0, {rank}) and the operands of one rank, got "
                 f"{describe(shapes)}")
    rest = {s.dims[:dim] + s.dims[dim + 1:] for s in shapes}
    if len(rest) > 1:
        ctx.fail(f"operands may differ only in dimension {dim}, got {describe(shapes)}")
    out = list(shapes[0].dims)
    out[dim] = sum(s.dims[dim] for s in shapes)
    return Shape(shapes[0].dtype, tuple(out))


def pad_rule(ctx: RuleContext) -> Shape:
    operand, value = ctx.array(0), ctx.array(1, "the padding value")
    _same_dtype(ctx, [operand, value], "operand and padding value")
    if value.rank != 0:
        ctx.fail(f"the padding value must be a scalar, got {value}")
    config = tuple(tuple(int(v) for v in c) for c in ctx.attr("padding"))
    if len(config) != operand.rank or any(len(c) != 3 for c in config):
        ctx.fail(f"padding {config} needs one (low, high, interior) triple per dimension of "
                 f"{operand}")
    out = []
    for d, (size, (low, high, interior)) in enumerate(zip(operand.dims, config)):
        total = low + high + size + max(size - 1, 0) * interior
        if interior < 0 or total < 0:
            ctx.fail(f"dimension {d}: interior padding {interior} must be >= 0 and the padded "
                     f"size {total} >= 0 (operand {operand})")
        out.append(total)
    return Shape(operand.dtype, tuple(out))


def iota_rule(ctx: RuleContext) -> Shape:
    out = ctx.declared_array()
    dim = ctx.attr("iota_dimension")
    if out.is_tuple or not 0 <= int(dim) < out.rank:
        ctx.fail(f"iota_dimension {dim} must be a dimension of the array {out}")
    return out


def bitcast_convert_rule(ctx: RuleContext) -> Shape:
    operand, out = ctx.array(0), ctx.declared_array()
    old, new = dtypes.itemsize_bits(operand.dtype), dtypes.itemsize_bits(out.dtype)
    if old == new:
        expected = operand.dims
    elif new < old:
        expected = operand.dims + (old // new,)
    else:
        if not operand.dims or operand.dims[-1] * old != new:
            ctx.fail(f"converting {operand} to {out.dtype} ({new} bits) needs a last "
                     f"dimension of {new // old} elements to merge")
        expected = operand.dims[:-1]
    if out.dims != expected:
        ctx.fail(f"bitcast of {operand} to {np.dtype(out.dtype).name} gives dimensions "
                 f"{expected}, but {out} was declared")
    return out


def bitcast_rule(ctx: RuleContext) -> Shape:
    operand, out = ctx.array(0), ctx.declared_array()
    if operand.nbytes != out.nbytes:
        ctx.fail(f"bitcast of {operand} ({operand.nbytes} bytes) to {out} ({out.nbytes} "
                 "bytes) must keep the number of bytes")
    return out


def copy_rule(ctx: RuleContext) -> Shape:
    return ctx.operands[0]


# -------------------------------------------------------------------------- gather, scatter

def _index_batch_dims(indices: Shape, index_vector_dim: int) -> list[int]:
    return [d for d in range(indices.rank) if d != index_vector_dim]


def _index_vector_size(ctx: RuleContext, indices: Shape, index_vector_dim: int) -> int:
    if not 0 <= index_vector_dim <= indices.rank:
        ctx.fail(f"index_vector_dim {index_vector_dim} must be in [0, {indices.rank}] for "
                 f"the indices {indices}")
    if not dtypes.is_integer(indices.dtype):
        ctx.fail(f"the indices must be integers, got {indices}")
    return 1 if index_vector_dim == indices.rank else indices.dims[index_vector_dim]


def gather_rule(ctx: RuleContext) -> Shape:
    operand, indices = ctx.array(0), ctx.array(1, "the start indices")
    offset_dims = ctx.ints("offset_dims")
    collapsed = ctx.ints("collapsed_slice_dims", ())
    start_map = ctx.ints("start_index_map")
    batching = ctx.ints("operand_batching_dims", ())
    index_batching = ctx.ints("start_indices_batching_dims", ())
    ivd = int(ctx.attr("index_vector_dim"))
    sizes = ctx.ints("slice_sizes")
    vector = _index_vector_size(ctx, indices, ivd)
    if len(start_map) != vector:
        ctx.fail(f"start_index_map {start_map} must have one entry per index vector element "
                 f"({vector}, from {indices} at index_vector_dim {ivd})")
    if len(sizes) != operand.rank or any(not 0 <= s <= d for s, d in zip(sizes, operand.dims)):
        ctx.fail(f"slice_sizes {sizes} must give one size in [0, dim] per dimension of "
                 f"{operand}")
    ctx.check_dims(start_map, operand.rank, "start_index_map")
    ctx.check_dims(collapsed + batching, operand.rank, "collapsed_slice_dims + "
                   "operand_batching_dims")
    if any(sizes[d] > 1 for d in collapsed + batching):
        ctx.fail(f"collapsed and batching dimensions {collapsed + batching} must have slice "
                 f"size <= 1, got slice_sizes {sizes}")
    if len(index_batching) != len(batching) or ivd in index_batching:
        ctx.fail(f"start_indices_batching_dims {index_batching} must pair with "
                 f"operand_batching_dims {batching} and exclude index_vector_dim {ivd}")
    ctx.check_dims(index_batching, indices.rank, "start_indices_batching_dims")
    for o, i in zip(batching, index_batching):
        if operand.dims[o] != indices.dims[i]:
            ctx.fail(f"operand batching dimension {o} of {operand} and indices batching "
                     f"dimension {i} of {indices} differ in size")
    window = [sizes[d] for d in range(operand.rank) if d not in collapsed + batching]
    batch = [indices.dims[d] for d in _index_batch_dims(indices, ivd)]
    rank = len(window) + len(batch)
    if len(offset_dims) != len(window) or list(offset_dims) != sorted(offset_dims):
        ctx.fail(f"offset_dims {offset_dims} must list, in increasing order, one output "
                 f"dimension per uncollapsed slice dimension ({len(window)})")
    ctx.check_dims(offset_dims, rank, "offset_dims")
    out, w, b = [], iter(window), iter(batch)
    for d in range(rank):
        out.append(next(w) if d in offset_dims else next(b))
    return Shape(operand.dtype, tuple(out))


def scatter_rule(ctx: RuleContext) -> Shape:
    n = len(ctx.operands)
    if n < 3 or n % 2 == 0:
        ctx.fail(f"expects N operands, the indices and N updates (an odd count >= 3), got {n}")
    count = (n - 1) // 2
    shapes = ctx.arrays()
    operands, indices, updates = shapes[:count], shapes[count], shapes[count + 1:]
    if len({s.dims for s in operands}) > 1 or len({s.dims for s in updates}) > 1:
        ctx.fail(f"the operands must share dimensions and so must the updates, got "
                 f"{describe(shapes)}")
    for o, u in zip(operands, updates):
        if o.dtype != u.dtype:
            ctx.fail(f"update {u} must have the element type of its operand {o}")
    operand, update = operands[0], updates[0]
    window_dims = ctx.ints("update_window_dims")
    inserted = ctx.ints("inserted_window_dims", ())
    to_operand = ctx.ints("scatter_dims_to_operand_dims")
    batching = ctx.ints("input_batching_dims", ())
    index_batching = ctx.ints("scatter_indices_batching_dims", ())
    ivd = int(ctx.attr("index_vector_dim"))
    vector = _index_vector_size(ctx, indices, ivd)
    if len(to_operand) != vector:
        ctx.fail(f"scatter_dims_to_operand_dims {to_operand} must have one entry per index "
                 f"vector element ({vector})")
    ctx.check_dims(to_operand, operand.rank, "scatter_dims_to_operand_dims")
    ctx.check_dims(inserted + batching, operand.rank, "inserted_window_dims + "
                   "input_batching_dims")
    ctx.check_dims(window_dims, update.rank, "update_window_dims")
    if len(window_dims) + len(inserted) + len(batching) != operand.rank:
        ctx.fail(f"update_window_dims {window_dims}, inserted_window_dims {inserted} and "
                 f"input_batching_dims {batching} must together cover the {operand.rank} "
                 f"dimensions of {operand}")
    if len(index_batching) != len(batching) or ivd in index_batching:
        ctx.fail(f"scatter_indices_batching_dims {index_batching} must pair with "
                 f"input_batching_dims {batching} and exclude index_vector_dim {ivd}")
    scatter_dims = [d for d in range(update.rank) if d not in window_dims]
    index_dims = [indices.dims[d] for d in _index_batch_dims(indices, ivd)]
    if [update.dims[d] for d in scatter_dims] != index_dims:
        ctx.fail(f"the scatter dimensions of the updates {update} must match the index "
                 f"dimensions {tuple(index_dims)} of {indices}")
    window_operand_dims = [d for d in range(operand.rank) if d not in inserted + batching]
    for u, o in zip(window_dims, window_operand_dims):
        if update.dims[u] > operand.dims[o]:
            ctx.fail(f"update window dimension {u} of {update} is larger than operand "
                     f"dimension {o} of {operand}")
    check_combiner(ctx, ctx.computation(0, "to_apply"), "to_apply",
                   [s.dtype for s in operands])
    return tuple_or_single([Shape(o.dtype, o.dims) for o in operands])
