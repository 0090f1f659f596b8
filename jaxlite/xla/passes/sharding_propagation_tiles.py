"""Tile grids: the algebra sharding propagation does on tiled shardings (the part of XLA's
hlo_sharding_util that moves a sharding from one value's dimensions to another's).

A tiled or replicated sharding of a rank-r value over n partitions is handled here as its
*grid*: an int array of shape `tiles + (replication,)` naming the partition of each tile
copy (a replicated sharding is the grid `(1,)*r + (n,)`). Every rule of propagation is then
a short array operation: mapping dimensions (transpose, broadcast, reduce, dot), folding a
dimension's tiles into the replication (the dimension is no longer split), reshaping, and
merging two compatible grids into the most tiled one both allow.

Maximal and manual shardings have no grid; the rules pass them through unchanged only where
a value is an elementwise image of another (`grid_of` returns None for them).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from jaxlite.xla.hlo_sharding import HloSharding

__all__ = ["grid_of", "sharding_of", "map_dims", "replicate_dims", "reverse_dims",
           "reshape_grid", "merge", "num_tiles", "better", "refine", "is_manual",
           "manual_like"]


def grid_of(sharding: HloSharding | None, rank: int, n: int) -> np.ndarray | None:
    """The grid of a tiled or replicated sharding of a rank-`rank` value (None otherwise)."""
    if sharding is None:
        return None
    if sharding.is_replicated:
        return np.arange(n).reshape((1,) * rank + (n,))
    if not sharding.is_tiled or sharding.subgroups or len(sharding.tiles_per_dim) != rank:
        return None
    ids = np.asarray(sharding.tile_assignment)
    return ids if sharding.replicate_on_last_tile_dim else ids[..., None]


def sharding_of(grid: np.ndarray) -> HloSharding:
    """The sharding of a grid (replicated when no dimension is split)."""
    return HloSharding.tiled(grid, replicate_on_last_tile_dim=True)


def num_tiles(sharding: HloSharding | None) -> int:
    """How many distinct tiles the sharding cuts a value into (0 for no sharding): XLA's
    measure of how specific a sharding is."""
    if sharding is None:
        return 0
    if sharding.is_tiled:
        return math.prod(sharding.tiles_per_dim)
    return 1


def replicate_dims(grid: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """The grid with `dims` no longer split: their tiles join the replication, after the
    dimensions that stay split and before the old replication (XLA's order)."""
    rank = grid.ndim - 1
    dims = sorted({d for d in dims if grid.shape[d] > 1})
    if not dims:
        return grid
    kept = [d for d in range(rank) if d not in dims]
    moved = grid.transpose(kept + dims + [rank])
    new_shape = [1 if d in dims else grid.shape[d] for d in range(rank)]
    return moved.reshape(new_shape + [-1])


def map_dims(grid: np.ndarray, source_of: Sequence[int | None]) -> np.ndarray:
    """A grid for a new value whose dimension `k` is the source's dimension `source_of[k]`
    (None: a dimension the source does not have, unsplit). Source dimensions no new
    dimension takes are folded into the replication."""
    rank = grid.ndim - 1
    taken = [d for d in source_of if d is not None]
    folded = replicate_dims(grid, [d for d in range(rank) if d not in taken])
    # Drop the folded (now size-1) source dimensions, order the rest as the new value wants.
    squeezed = folded.reshape([folded.shape[d] for d in range(rank) if d in taken] + [-1])
    order = sorted(taken)
    moved = squeezed.transpose([order.index(d) for d in taken] + [len(taken)])
    shape = [1 if d is None else grid.shape[d] for d in source_of]
    return moved.reshape(shape + [-1])


def reverse_dims(grid: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """The grid of a value reversed along `dims`: its tiles come in the opposite order."""
    return np.flip(grid, axis=tuple(dims)) if dims else grid


def _groups(source: Sequence[int], target: Sequence[int]):
    """Runs of source and target dimensions (sizes > 1) whose products match, as pairs of
    index lists: the dimensions a reshape splits or merges among each other."""
    s = [i for i, d in enumerate(source) if d > 1]
    t = [j for j, d in enumerate(target) if d > 1]
    groups, i, j = [], 0, 0
    while i < len(s) and j < len(t):
        gs, gt = [s[i]], [t[j]]
        ps, pt = source[s[i]], target[t[j]]
        i, j = i + 1, j + 1
        while ps != pt:
            if ps < pt:
                gs.append(s[i])
                ps *= source[s[i]]
                i += 1
            else:
                gt.append(t[j])
                pt *= target[t[j]]
                j += 1
        groups.append((gs, gt))
    return groups


def _split_tiles(tiles: int, sizes: Sequence[int]) -> list[int] | None:
    """How `tiles` contiguous blocks of a dimension fall on the dimensions `sizes` it is
    reshaped into (major first), or None when a block would not be a rectangle."""
    result, left = [], tiles
    for size in sizes:
        if left == 1 or size % left == 0:
            result.append(left)
            left = 1
        elif left % size == 0:
            result.append(size)
            left //= size
        else:
            return None
    return result if left == 1 else None


def _group_tiles(tiles: Sequence[int], source: Sequence[int],
                 target: Sequence[int]) -> list[int] | None:
    """Target tiles for one group of a reshape, or None when the blocks do not carry over."""
    total = math.prod(tiles)
    if math.prod(source) % total:
        return None
    # The source tiles must themselves be one contiguous split of the flattened group.
    if _split_tiles(total, source) != list(tiles):
        return None
    return _split_tiles(total, target)


def reshape_grid(grid: np.ndarray, source: Sequence[int],
                 target: Sequence[int]) -> np.ndarray:
    """The grid of a reshape of a value of dims `source` into `target`: blocks that stay
    rectangles keep their tiles (a split dimension's tiles go to its major parts, merged
    dimensions multiply theirs); dimensions whose blocks would not carry over, and split
    size-1 dimensions, are replicated instead (mirrors hlo_sharding_util::ReshapeSharding)."""
    rank = len(source)
    tiles = list(grid.shape[:rank])
    target_tiles = [1] * len(target)
    failed = [d for d in range(rank) if source[d] == 1]
    for gs, gt in _groups(source, target):
        split = _group_tiles([tiles[d] for d in gs], [source[d] for d in gs],
                             [target[d] for d in gt])
        if split is None:
            failed.extend(gs)
        else:
            for d, t in zip(gt, split):
                target_tiles[d] = t
    grouped = {d for gs, _ in _groups(source, target) for d in gs}
    failed.extend(d for d in range(rank) if d not in grouped)
    grid = replicate_dims(grid, failed)
    return grid.reshape(target_tiles + [-1])


def merge(old: np.ndarray, new: np.ndarray) -> np.ndarray | None:
    """The grid that splits every dimension as `old` or `new` does (where one leaves it
    whole or both split it alike), each partition keeping its tile of both; None when the
    two cannot be combined (XLA's MergeSharding of partially replicated shardings)."""
    rank = old.ndim - 1
    tiles = []
    for a, b in zip(old.shape[:rank], new.shape[:rank]):
        if a != b and a != 1 and b != 1:
            return None
        tiles.append(max(a, b))
    n = old.size
    if new.size != n:
        return None
    copies = n // math.prod(tiles)
    where_old = _tile_positions(old)
    where_new = _tile_positions(new)
    grid = np.full(tiles + [copies], -1, dtype=np.int64)
    filled: dict[tuple[int, ...], int] = {}
    for p in range(n):
        index = tuple(o if a > 1 else w for o, w, a in
                      zip(where_old[p], where_new[p], old.shape[:rank]))
        index = tuple(i if t > 1 else 0 for i, t in zip(index, tiles))
        # Both must agree where both split the dimension.
        if any(a > 1 and b > 1 and x != y for x, y, a, b in
               zip(where_old[p], where_new[p], old.shape[:rank], new.shape[:rank])):
            return None
        slot = filled.get(index, 0)
        if slot >= copies:
            return None
        grid[index + (slot,)] = p
        filled[index] = slot + 1
    return grid


def _tile_positions(grid: np.ndarray) -> dict[int, tuple[int, ...]]:
    """Partition id -> the tile it holds in the grid."""
    return {int(p): tuple(int(i) for i in index[:-1])
            for index, p in np.ndenumerate(grid)}


def is_manual(sharding) -> bool:
    """Whether the value (or some partitions' part of it) is in a shard_map body."""
    return isinstance(sharding, HloSharding) and (
        sharding.is_manual or sharding.has_manual_subgroup)


def manual_like(sharding: HloSharding, rank: int) -> HloSharding:
    """The layout of another value, of rank `rank`, in the same shard_map body as a value
    laid out as `sharding`: manual over the same partitions, its own dimensions whole."""
    if sharding.is_manual:
        return sharding
    ids = sharding.tile_assignment
    data = ids.ndim - len(sharding.subgroups)
    manual = [data + i for i, kind in enumerate(sharding.subgroups) if kind == "manual"]
    copies = [d for d in range(ids.ndim) if d not in manual]
    # Manual dimensions first, then one replicated one (XLA's canonical order).
    grouped = ids.transpose(manual + copies).reshape(
        (1,) * rank + tuple(ids.shape[d] for d in manual) + (-1,))
    return HloSharding.subgrouped(grouped, ["manual"] * len(manual) + ["replicated"])


def better(old: HloSharding | None, new: HloSharding | None, rank: int, n: int,
           combine: bool = True) -> HloSharding | None:
    """What a value holding `old` takes when propagation offers `new`: the merge of both
    when they combine into something more tiled (if `combine`: XLA combines partial
    shardings after its first round), else `new` when it is more tiled (XLA's
    MaybeImproveInstructionSharding), else None (no change)."""
    if new is None or new == old:
        return None
    if old is None or (is_manual(new) and not is_manual(old)):
        return new  # a shard_map body's values are its own, whatever else is proposed
    a, b = grid_of(old, rank, n), grid_of(new, rank, n)
    if combine and a is not None and b is not None and merge(a, b) is not None:
        return refine(old, new, rank, n)
    return new if num_tiles(new) > num_tiles(old) else None


def refine(old: HloSharding, new: HloSharding, rank: int, n: int) -> HloSharding | None:
    """`old` split further where `new` splits dimensions `old` leaves whole, when the two
    combine and that gains tiles; else None."""
    a, b = grid_of(old, rank, n), grid_of(new, rank, n)
    merged = None if a is None or b is None else merge(a, b)
    if merged is None:
        return None
    result = sharding_of(merged)
    return result if num_tiles(result) > num_tiles(old) else None
