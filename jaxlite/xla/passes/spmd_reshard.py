"""Resharding: the instructions that turn one partitioned layout of a value into another
(mirrors PartitionedHlo::Reshard of XLA's SPMD partitioner).

From a replicated value, each partition slices its own block (`partition-id`, a table of
offsets, `dynamic-slice`). Between tiled layouts:

- a swap of the cut dimension between two dimensions, same partitions in the same order, is
  one `all-to-all`;
- otherwise the dimensions whose cut does not survive are gathered (`all-gather` over the
  partitions holding different tiles along them: one collective even for several
  dimensions) and each partition slices its block of the target from what it then holds.

Partial replication (copies of each tile) needs no case of its own: on the device grids of
spmd_shardings the copies are one more axis, and the groups follow from it.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes import spmd_shardings as grids
from jaxlite.xla.passes.spmd_builder import PValue, SpmdBuilder

__all__ = ["reshard", "gather_dims", "replicate"]

_O = Opcode


def reshard(b: SpmdBuilder, value: PValue, target) -> PValue:
    """`value` laid out by the grid `target` (for tuples, a list of the elements' targets,
    nested as the tuple)."""
    if value.is_tuple:
        parts = [reshard(b, part, goal) for part, goal in zip(value.parts, target)]
        if all(p is q for p, q in zip(parts, value.parts)):
            return value
        hlo = b.add(_O.TUPLE, [p.hlo for p in parts])
        return PValue(hlo, value.shape, None, tuple(parts))
    src, dst = value.ids, np.asarray(target)
    if grids.same_tiles(src, dst):
        return value
    key = ("reshard", id(value.hlo), dst.shape, dst.tobytes())
    if key not in b.reshards:  # a value each of several users needs in one layout
        b.reshards[key] = _reshard_array(b, value, dst)
    return b.reshards[key]


def _reshard_array(b: SpmdBuilder, value: PValue, dst: np.ndarray) -> PValue:
    if value.whole is not None:
        return reshard(b, value.whole, dst)
    src = value.ids
    shape = value.shape.dims
    swapped = _all_to_all(b, value, dst)
    if swapped is not None:
        return swapped
    rank = len(shape)
    lost = [d for d in range(rank) if not grids.keeps_dim(dst, src, shape, d)]
    held = gather_dims(b, value, lost)
    return _slice_locally(b, held, dst)


def replicate(b: SpmdBuilder, value: PValue) -> PValue:
    """`value` whole on every partition."""
    rank = value.shape.rank
    return reshard(b, value, np.arange(b.n).reshape((1,) * rank + (b.n,)))


def gather_dims(b: SpmdBuilder, value: PValue, dims: list[int]) -> PValue:
    """`value` with the cut along `dims` undone (`all-gather`), padding dropped."""
    dims = [d for d in dims if value.ids.shape[d] > 1]
    if not dims:
        return value
    src, shape, x = value.ids, value.shape.dims, value.hlo
    groups = grids.groups_along(src, dims)
    block = x.shape.dims
    if len(dims) == 1:
        gathered = b.all_gather(x, groups, dims[0])
    else:
        # One all-gather of every block along a new leading axis, then each dimension's
        # tiles moved next to it and merged.
        stacked = b.all_gather(b.reshape(x, (1,) + block), groups, 0)
        counts = [src.shape[d] for d in dims]
        spread = b.reshape(stacked, tuple(counts) + block)
        perm = []
        for d in range(len(block)):
            if d in dims:
                perm.append(dims.index(d))
            perm.append(len(dims) + d)
        merged = [block[d] * (src.shape[d] if d in dims else 1) for d in range(len(block))]
        gathered = b.reshape(b.transpose(spread, perm), merged)
    limits = [shape[d] if d in dims else block[d] for d in range(len(block))]
    ids = grids.keep_dims(src, [d for d in range(len(block)) if d not in dims])
    return PValue(b.slice(gathered, limits), value.shape, ids)


def _slice_locally(b: SpmdBuilder, value: PValue, dst: np.ndarray) -> PValue:
    """Each partition's block under `dst`, cut from the block it holds under `value.ids`
    (which contains it, along every dimension)."""
    src, shape, x = value.ids, value.shape.dims, value.hlo
    goal = grids.tile_shape(dst, shape)
    whole = value if src.shape[:-1] == (1,) * len(shape) else None
    if goal == x.shape.dims:
        return PValue(x, value.shape, dst, whole=whole)  # only copies differ
    padded = [g * dst.shape[d] if src.shape[d] == 1 else x.shape.dims[d]
              for d, g in enumerate(goal)]
    x = b.pad_to(x, padded)
    starts = []
    for d in range(len(shape)):
        if src.shape[d] == dst.shape[d]:
            starts.append(b.table_lookup([0] * b.n))
            continue
        inner = grids.offsets(dst, shape, d)
        outer = grids.offsets(src, shape, d) if src.shape[d] > 1 else [0] * b.n
        starts.append(b.table_lookup([i - o for i, o in zip(inner, outer)]))
    return PValue(b.dynamic_slice(x, starts, goal), value.shape, dst, whole=whole)


def _all_to_all(b: SpmdBuilder, value: PValue, dst: np.ndarray) -> PValue | None:
    """The cut moved from one dimension to another by one `all-to-all`, when that is all
    that changes; None otherwise."""
    src, shape = value.ids, value.shape.dims
    moved_from = [d for d in range(len(shape)) if src.shape[d] > 1 and dst.shape[d] == 1]
    moved_to = [d for d in range(len(shape)) if dst.shape[d] > 1 and src.shape[d] == 1]
    if len(moved_from) != 1 or len(moved_to) != 1:
        return None
    a, c = moved_from[0], moved_to[0]
    n = src.shape[a]
    if dst.shape[c] != n or shape[a] % n or shape[c] % n:
        return None
    src_at, dst_at = grids.tile_indices(src), grids.tile_indices(dst)
    for p, index in src_at.items():
        want = list(index)
        want[a], want[c] = 0, index[a]
        if tuple(want) != dst_at[p]:
            return None
    x = value.hlo
    block = list(x.shape.dims)
    # Split dimension c into (n, rest), exchange along the n axis, and put the n received
    # pieces (one per tile of a, in tile order) back in front of a's part.
    split = block[:c] + [n, block[c] // n] + block[c + 1:]
    exchanged = b.all_to_all(b.reshape(x, split), grids.groups_along(src, [a]), c)
    a_at = a if a < c else a + 1
    order = [i for i in range(len(split)) if i != c]
    order.insert(order.index(a_at), c)
    goal = grids.tile_shape(dst, shape)
    hlo = b.reshape(b.transpose(exchanged, order), goal)
    return PValue(hlo, value.shape, dst)
