"""numpy evaluation of the data-movement opcodes, and scatter's ordered combination.

broadcast, reshape, transpose, reverse, slice, dynamic-slice and dynamic-update-slice (start
indices clamped into range, as XLA does), concatenate, pad (negative and interior), iota,
bitcast-convert, gather (start indices clamped) and scatter (an update window that does not
fit in the operand is skipped whole, as XLA's CPU backend does). Arrays are logical: an
instruction's layout never changes the values.

Each handler is `handler(inst, operands, apply)`, where `apply(comp, arrays)` runs a scalar
computation elementwise over arrays (see evaluator.py). `combine_at` (shared with
select-and-scatter) folds values into positions in order of appearance, so that duplicate
positions see the updates one after another, as a sequential loop would.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxlite.xla.evaluator_elementwise import KERNELS, binary_kernel, bitcast_convert
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["HANDLERS", "Apply", "binary_combiner", "combine_at", "pad_array"]

Apply = Callable[[HloComputation, Sequence[np.ndarray]], list[np.ndarray]]
_O = Opcode
_LOW = (np.dtype(np.float16), np.dtype("bfloat16"))
# Keys of `binary_combiner` for computations that return one of their parameters.
FIRST, SECOND = "first", "second"
_COMMUTATIVE = {_O.ADD, _O.MULTIPLY, _O.MAXIMUM, _O.MINIMUM, _O.AND, _O.OR, _O.XOR}
_AT_UFUNCS = {_O.ADD: np.add, _O.MULTIPLY: np.multiply, _O.MAXIMUM: np.maximum,
              _O.MINIMUM: np.minimum, _O.AND: np.bitwise_and, _O.OR: np.bitwise_or,
              _O.XOR: np.bitwise_xor}


def binary_combiner(comp: HloComputation) -> Opcode | str | None:
    """The opcode of a computation that is one binary operation of its two parameters
    (p0 op p1, or p1 op p0 for commutative ops), FIRST or SECOND for one returning a
    parameter, else None. Lets reductions and scatters skip interpreting `to_apply`."""
    params = comp.parameters
    if len(params) != 2 or any(p.shape.is_tuple or p.shape.rank for p in params):
        return None
    root = comp.root
    if root is params[0]:
        return FIRST
    if root is params[1]:
        return SECOND
    if binary_kernel(root.opcode) is None or root.opcode is _O.COMPLEX:
        return None
    if root.operands == (params[0], params[1]) or (
            root.opcode in _COMMUTATIVE and root.operands == (params[1], params[0])):
        return root.opcode
    return None


def _occurrence_rank(targets: np.ndarray) -> np.ndarray:
    """For each position, how many earlier entries have the same target."""
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    starts = np.ones(len(targets), bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    positions = np.arange(len(targets))
    rank = np.empty(len(targets), np.int64)
    rank[order] = positions - np.maximum.accumulate(np.where(starts, positions, 0))
    return rank


def combine_at(outs: list[np.ndarray], targets: np.ndarray, values: list[np.ndarray],
               comp: HloComputation, apply: Apply) -> None:
    """outs[i].flat[t] = comp(outs..., values...)[i] for each target t, in order (in place;
    `outs` must be C-contiguous)."""
    if not len(targets):
        return
    flat = [o.reshape(-1) for o in outs]
    combiner = binary_combiner(comp) if len(outs) == 1 else None
    if combiner == SECOND and len(np.unique(targets)) == len(targets):
        flat[0][targets] = values[0]
        return
    if combiner in _AT_UFUNCS and flat[0].dtype not in _LOW:
        _AT_UFUNCS[combiner].at(flat[0], targets, values[0])  # unbuffered: repeats add up
        return
    rank = _occurrence_rank(targets)
    for r in range(int(rank.max()) + 1):
        chosen = rank == r
        where = targets[chosen]
        new = apply(comp, [f[where] for f in flat] + [v[chosen] for v in values])
        for f, n in zip(flat, new):
            f[where] = n


# ---------------------------------------------------------------------------- handlers

def _broadcast(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    (x,), dims = ops, tuple(inst.attr("dimensions"))
    order = np.argsort(dims)  # operand dimensions in the order of their output positions
    shape = [1] * inst.shape.rank
    for d in dims:
        shape[d] = inst.shape.dims[d]
    return np.broadcast_to(np.transpose(x, order).reshape(shape), inst.shape.dims)


def _slice(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    strides = inst.attr("strides") or (1,) * ops[0].ndim
    return ops[0][tuple(slice(s, lim, st) for s, lim, st in
                        zip(inst.attr("starts"), inst.attr("limits"), strides))]


def _clamped_starts(starts: Sequence[Any], dims: Sequence[int],
                    sizes: Sequence[int]) -> list[int]:
    return [min(max(int(s), 0), d - n) for s, d, n in zip(starts, dims, sizes)]


def _dynamic_slice(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    x, sizes = ops[0], inst.attr("sizes")
    starts = _clamped_starts(ops[1:], x.shape, sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]


def _dynamic_update_slice(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    x, update = ops[0].copy(), ops[1]
    starts = _clamped_starts(ops[2:], x.shape, update.shape)
    x[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return x


def _concatenate(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    dims = inst.attr("dimensions")
    return np.concatenate(ops, axis=int(dims if isinstance(dims, int) else dims[0]))


def pad_array(x: np.ndarray, value: Any, config: Sequence[Sequence[int]]) -> np.ndarray:
    """XLA's pad: (low, high, interior) per dimension; negative edges remove elements."""
    # Pad with the nonnegative parts of the edges, then crop the negative ones (a negative
    # edge removes elements, padding included, from the interior-padded array).
    grown = [max(lo, 0) + max(hi, 0) + n + max(n - 1, 0) * interior
             for n, (lo, hi, interior) in zip(x.shape, config)]
    out = np.full(grown, value, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + max(n - 1, 0) * (interior + 1) + min(n, 1),
                    interior + 1)
              for n, (lo, _, interior) in zip(x.shape, config))] = x
    return out[tuple(slice(max(-lo, 0), total - max(-hi, 0))
                     for total, (lo, hi, _) in zip(grown, config))]


def _iota(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    dims, d = inst.shape.dims, int(inst.attr("iota_dimension"))
    line = np.arange(dims[d]).reshape([dims[d] if i == d else 1 for i in range(len(dims))])
    return np.broadcast_to(line.astype(inst.shape.dtype), dims)


def _start_vectors(indices: np.ndarray, vector_dim: int, to_operand: Sequence[int],
                   batching: Sequence[int], index_batching: Sequence[int],
                   rank: int) -> np.ndarray:
    """Per index position (the indices' dimensions but vector_dim), a full operand index."""
    if vector_dim == indices.ndim:
        indices = indices[..., None]
    else:
        indices = np.moveaxis(indices, vector_dim, -1)
    indices = indices.astype(np.int64)
    starts = np.zeros(indices.shape[:-1] + (rank,), np.int64)
    for k, d in enumerate(to_operand):
        starts[..., d] = indices[..., k]
    for operand_dim, index_dim in zip(batching, index_batching):
        axis = index_dim - (index_dim > vector_dim)  # its position once vector_dim is gone
        line = np.arange(starts.shape[axis]).reshape(
            [-1 if i == axis else 1 for i in range(starts.ndim - 1)])
        starts[..., operand_dim] = line
    return starts


def _place(values: np.ndarray, positions: Sequence[int], rank: int) -> np.ndarray:
    """`values` with its axes put at `positions` (increasing) of a rank-`rank` shape."""
    shape = [1] * rank
    for p, n in zip(positions, values.shape):
        shape[p] = n
    return values.reshape(shape)


def _full_indices(starts: np.ndarray, start_positions: Sequence[int],
                  window_dims: Sequence[int], window_positions: Sequence[int],
                  window_sizes: Sequence[int], rank: int) -> list[np.ndarray]:
    """Operand index arrays (one per operand dimension) over a result/update shape."""
    result = []
    for d in range(starts.shape[-1]):
        index = _place(starts[..., d], start_positions, rank)
        if d in window_dims:
            k = window_dims.index(d)
            index = index + _place(np.arange(window_sizes[k]), [window_positions[k]], rank)
        result.append(index)
    return result


def _gather(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    x, indices = ops
    a = inst.attr
    offset_dims, sizes = list(a("offset_dims")), list(a("slice_sizes"))
    skipped = set(a("collapsed_slice_dims", ())) | set(a("operand_batching_dims", ()))
    starts = _start_vectors(indices, int(a("index_vector_dim")), a("start_index_map"),
                            a("operand_batching_dims", ()), a("start_indices_batching_dims",
                                                              ()), x.ndim)
    starts = np.clip(starts, 0, np.array(x.shape) - np.array(sizes))
    rank = inst.shape.rank
    batch_positions = [d for d in range(rank) if d not in offset_dims]
    window_dims = [d for d in range(x.ndim) if d not in skipped]
    index = _full_indices(starts, batch_positions, window_dims, offset_dims,
                          [sizes[d] for d in window_dims], rank)
    return np.broadcast_to(x[tuple(index)], inst.shape.dims)


def _scatter(inst: HloInstruction, ops: list[Any], apply: Apply) -> Any:
    count = (len(ops) - 1) // 2
    # C order: combine_at writes through reshape(-1), which copies (and the writes are lost)
    # when an operand arrives as a strided view, as a transpose's result does.
    outs = [np.array(o, order="C") for o in ops[:count]]
    indices, updates = ops[count], ops[count + 1:]
    a = inst.attr
    window_positions = list(a("update_window_dims"))
    skipped = set(a("inserted_window_dims", ())) | set(a("input_batching_dims", ()))
    shape, rank = outs[0].shape, updates[0].ndim
    starts = _start_vectors(indices, int(a("index_vector_dim")),
                            a("scatter_dims_to_operand_dims"), a("input_batching_dims", ()),
                            a("scatter_indices_batching_dims", ()), len(shape))
    window_dims = [d for d in range(len(shape)) if d not in skipped]
    sizes = [updates[0].shape[p] for p in window_positions]
    extent = np.ones(len(shape), np.int64)
    extent[window_dims] = sizes
    # A window that would not fit entirely is skipped (XLA's CPU backend does the same).
    fits = np.all((starts >= 0) & (starts + extent <= np.array(shape)), axis=-1)
    scatter_positions = [d for d in range(rank) if d not in window_positions]
    index = _full_indices(starts, scatter_positions, window_dims, window_positions, sizes,
                          rank)
    mask = np.broadcast_to(_place(fits, scatter_positions, rank), updates[0].shape)
    index = [np.broadcast_to(i, updates[0].shape)[mask] for i in index]
    targets = np.ravel_multi_index(index, shape) if index else np.zeros(mask.sum(), np.int64)
    combine_at(outs, targets, [u[mask] for u in updates], inst.called[0], apply)
    return outs[0] if count == 1 else tuple(outs)


def _bitcast(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    return bitcast_convert(ops[0], inst.shape.dtype)


def to_memory_order(array: np.ndarray, shape: Shape) -> np.ndarray:
    """The elements of a logical array in the order `shape`'s layout stores them."""
    major_to_minor = tuple(reversed(shape.layout or ()))
    return np.ascontiguousarray(np.transpose(array, major_to_minor)).reshape(-1)


def from_memory_order(flat: np.ndarray, shape: Shape) -> np.ndarray:
    """The logical array whose memory image under `shape`'s layout is `flat`."""
    major_to_minor = tuple(reversed(shape.layout or ()))
    physical = flat.reshape(tuple(shape.dims[d] for d in major_to_minor))
    return np.transpose(physical, tuple(np.argsort(major_to_minor)))


def _bitcast_layout(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    flat = to_memory_order(np.asarray(ops[0]), inst.operands[0].shape)
    return from_memory_order(flat.view(inst.shape.dtype), inst.shape)


HANDLERS: dict[Opcode, Callable[[HloInstruction, list[Any], Apply], Any]] = {
    _O.BROADCAST: _broadcast,
    _O.RESHAPE: lambda inst, ops, apply: np.reshape(ops[0], inst.shape.dims),
    _O.TRANSPOSE: lambda inst, ops, apply: np.transpose(ops[0], inst.attr("dimensions")),
    _O.REVERSE: lambda inst, ops, apply: np.flip(ops[0], tuple(inst.attr("dimensions"))),
    _O.SLICE: _slice, _O.DYNAMIC_SLICE: _dynamic_slice,
    _O.DYNAMIC_UPDATE_SLICE: _dynamic_update_slice, _O.CONCATENATE: _concatenate,
    _O.PAD: lambda inst, ops, apply: pad_array(ops[0], ops[1], inst.attr("padding")),
    _O.IOTA: _iota, _O.BITCAST: _bitcast_layout, _O.BITCAST_CONVERT: _bitcast, _O.GATHER: _gather, _O.SCATTER: _scatter,
}
assert not set(HANDLERS) & set(KERNELS)
