"""Sharding arithmetic for the SPMD partitioner: shardings as device grids.

Every array sharding of a rank-r value over N partitions is read here as a *grid*: an int
array of shape `[t_0, ..., t_{r-1}, c]` whose entry at `(i_0, ..., i_{r-1}, k)` is the
partition holding copy `k` of tile `(i_0, ..., i_{r-1})`. A replicated value is the grid
`[1, ..., 1, N]`; a tiled one without replication has `c = 1`. On grids, the partitioner's
questions become axis bookkeeping: which partitions hold different tiles along some
dimensions (the groups of an all-gather or all-reduce), what sharding an operand needs so
that a local operation yields the result's tiles (move grid axes between dimensions and the
copy axis), and whether one sharding's tiles lie inside another's (a local slice).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from jaxlite.xla.hlo_sharding import HloSharding

__all__ = ["grid", "groups_along", "keep_dims", "keeps_dim", "offsets", "regrid", "same_tiles",
           "tile_indices", "tile_shape"]


def grid(sharding: HloSharding | None, rank: int, num_partitions: int) -> np.ndarray:
    """The device grid `[tiles..., copies]` of an array sharding (see the module doc).
    Shardings that name no tiles (replicated, maximal, missing) read as replicated: the
    partitioner computes such values on every partition."""
    if sharding is None or not sharding.is_tiled or len(sharding.tiles_per_dim) != rank:
        return np.arange(num_partitions).reshape((1,) * rank + (num_partitions,))
    ids = sharding.tile_assignment
    if not sharding.replicate_on_last_tile_dim:
        ids = ids.reshape(ids.shape + (1,))
    return np.asarray(ids)


def regrid(ids: np.ndarray, axes_of_dims: Sequence[Sequence[int]]) -> np.ndarray:
    """A new grid from the axes of `ids`: dimension i of the new value is tiled by the axes
    `axes_of_dims[i]` (major first, their sizes multiplied); every axis no dimension takes
    becomes part of the copy axis. This one move expresses transposes, broadcasts, a
    reduce's result, a dot's operands, and un-tiling dimensions."""
    taken = [a for axes in axes_of_dims for a in axes]
    rest = [a for a in range(ids.ndim) if a not in taken]
    sizes = [math.prod(ids.shape[a] for a in axes) for axes in axes_of_dims]
    copies = math.prod(ids.shape[a] for a in rest)
    return ids.transpose(taken + rest).reshape(sizes + [copies])


def keep_dims(ids: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """The grid of the same value with only `dims` still tiled (others become copies)."""
    rank = ids.ndim - 1
    return regrid(ids, [[d] if d in dims else [] for d in range(rank)])


def groups_along(ids: np.ndarray, axes: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """The partitions that differ only in their positions along grid `axes`, one group per
    position on the other axes; inside a group, partitions are in row-major order of the
    axes (so an all-gather along one dimension concatenates the tiles in order)."""
    rest = [a for a in range(ids.ndim) if a not in axes]
    size = math.prod(ids.shape[a] for a in axes)
    flat = ids.transpose(rest + list(axes)).reshape(-1, size)
    return tuple(tuple(int(i) for i in row) for row in flat)


def tile_indices(ids: np.ndarray) -> dict[int, tuple[int, ...]]:
    """partition -> the tile coordinates it holds (do not modify: shared)."""
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    return _tile_indices(ids.shape, ids.tobytes())


@functools.lru_cache(maxsize=4096)
def _tile_indices(shape: tuple[int, ...], data: bytes) -> dict[int, tuple[int, ...]]:
    ids = np.frombuffer(data, dtype=np.int64).reshape(shape)
    return {int(ids[index]): tuple(int(i) for i in index[:-1])
            for index in np.ndindex(*shape)}


def same_tiles(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether every partition holds the same tile under both grids (copies may be
    numbered differently: that changes nothing)."""
    return a.shape[:-1] == b.shape[:-1] and tile_indices(a) == tile_indices(b)


def keeps_dim(inner: np.ndarray, outer: np.ndarray, shape: Sequence[int], dim: int) -> bool:
    """Whether along `dim` each partition's tile under `inner` lies inside its tile under
    `outer` (a local slice suffices along `dim`). A cut whose tiles are refined must divide
    evenly: padded tiles do not nest."""
    t_in, t_out = inner.shape[dim], outer.shape[dim]
    if t_out == 1:
        return True
    if t_in % t_out or (t_in != t_out and shape[dim] % t_in):
        return False
    ratio = t_in // t_out
    inner_at, outer_at = tile_indices(inner), tile_indices(outer)
    return all(index[dim] // ratio == outer_at[p][dim] for p, index in inner_at.items())


def offsets(ids: np.ndarray, shape: Sequence[int], dim: int) -> list[int]:
    """For each partition in order, where its tile starts along `dim`."""
    block = -(-int(shape[dim]) // ids.shape[dim])
    at = tile_indices(ids)
    return [at[p][dim] * block for p in range(len(at))]


def tile_shape(ids: np.ndarray, shape: Sequence[int]) -> tuple[int, ...]:
    """The (padded) block one partition holds of a value of `shape`."""
    return tuple(-(-int(d) // t) for d, t in zip(shape, ids.shape[:-1]))
