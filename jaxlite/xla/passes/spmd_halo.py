"""Halo exchange: slices, concatenations and rotations along a cut dimension by trading
edge blocks with neighbouring partitions (`collective-permute`) instead of gathering the
dimension whole (mirrors the halo exchange and the rotate rewrite of XLA's partitioner).

The one primitive is a *window*: partition i (its tile index along the dimension) wants
rows [i*T + start, i*T + start + T) of a value cut into tiles of t rows. Those rows lie in
the tiles i+k for a few shifts k; each shift other than 0 is one collective-permute of whole
blocks from partition i+k to partition i. The received blocks, laid side by side in order
of k, hold the window, which each partition cuts out with a dynamic-slice at its own
offset. Rows outside the value are don't-care (padding) unless the window is periodic,
where rows wrap around (a rotation, `jnp.roll`).
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes import spmd_shardings as grids
from jaxlite.xla.passes.spmd_builder import PValue, SpmdBuilder
from jaxlite.xla.passes.spmd_reshard import reshard

__all__ = ["concatenate_along_cut", "pad_along_cut", "rotation", "slice_along_cut", "window"]

_O = Opcode

def window(b: SpmdBuilder, value: PValue, dim: int, start: int, out_tile: int,
           periodic: bool = False, max_shifts: int = 1) -> HloInstruction | None:
    """Each partition's block of rows [i*out_tile + start, ...+out_tile) of `value` along
    `dim`; None when that would take more than `max_shifts` collective-permutes (one
    all-gather would do it in one collective) or is periodic over uneven tiles."""
    ids, size = value.ids, value.shape.dims[dim]
    n, t = ids.shape[dim], value.hlo.shape.dims[dim]
    if periodic and size != n * t:
        return None
    wanted = {}  # tile index -> the rows it wants (unwrapped)
    for i in range(n):
        lo, hi = i * out_tile + start, (i + 1) * out_tile + start
        valid = (lo, hi) if periodic else (max(lo, 0), min(hi, size))
        if valid[0] < valid[1]:
            wanted[i] = (lo, hi, valid)
    if not wanted:
        return None
    first = min(lo // t - i for i, (lo, _, _) in wanted.items())
    last = max((hi - 1) // t - i for i, (_, hi, _) in wanted.items())
    senders = {k: _senders(wanted, k, t, n, periodic) for k in range(first, last + 1)}
    remote = [k for k, pairs in senders.items() if pairs and not _local(k, n, periodic)]
    if len(remote) > max_shifts:
        return None
    groups = grids.groups_along(ids, [dim])
    zero = None
    pieces = []
    for k in range(first, last + 1):
        if _local(k, n, periodic):
            pieces.append(value.hlo)
        elif k in remote:
            pairs = [(g[q], g[i]) for g in groups for q, i in senders[k]]
            pieces.append(b.collective_permute(value.hlo, pairs))
        else:
            zero = zero or b.full(b.constant(0, value.hlo.shape.dtype), value.hlo.shape.dims)
            pieces.append(zero)
    side_by_side = pieces[0] if len(pieces) == 1 else b.add(
        _O.CONCATENATE, pieces, {"dimensions": (dim,)})
    at = grids.tile_indices(ids)
    table = [0] * b.n
    for p in range(b.n):
        i = at[p][dim]
        if i in wanted:
            table[p] = wanted[i][0] - (i + first) * t
    starts = [b.table_lookup(table) if d == dim else b.table_lookup([0] * b.n)
              for d in range(value.shape.rank)]
    sizes = list(value.hlo.shape.dims)
    sizes[dim] = out_tile
    return b.dynamic_slice(side_by_side, starts, sizes)


def _local(k: int, n: int, periodic: bool) -> bool:
    return k % n == 0 if periodic else k == 0


def _senders(wanted: dict, k: int, t: int, n: int, periodic: bool) -> list[tuple[int, int]]:
    """(source tile, receiving tile) pairs of shift k: where tile i+k holds rows i wants."""
    pairs = []
    for i, (_, _, (lo, hi)) in wanted.items():
        q = i + k
        if lo // t <= q <= (hi - 1) // t and (periodic or 0 <= q < n):
            pairs.append((q % n, i))
    return pairs


def rotation(ops: list[PValue], dim: int) -> tuple[PValue, int] | None:
    """(the value, the row the result starts at) when `ops`, concatenated along `dim`, are
    slices of one value along `dim` that go round it once in order: a rotation."""
    origins = [v.sliced_from for v in ops]
    if any(o is None for o in origins) or len(origins) < 2:
        return None
    source = origins[0][0]
    size = source.shape.dims[dim]
    at = origins[0][2]
    for whole, d, lo, hi in origins:
        if whole is not source or d != dim or lo != at % size:
            return None
        at = hi
    if at % size != origins[0][2] or sum(hi - lo for _, _, lo, hi in origins) != size:
        return None
    return source, origins[0][2]


def shifted_rows(b: SpmdBuilder, block: HloInstruction, ids: np.ndarray, dim: int,
                 out_tile: int) -> HloInstruction:
    """The global row number of each element of a block cut into `out_tile` rows along
    `dim` (an s32 array of the block's shape)."""
    s32 = np.dtype(np.int32)
    shape = block.shape.dims
    iota = b.add(_O.IOTA, attrs={"iota_dimension": dim}, shape=block.shape.with_dtype(s32))
    offsets = [grids.tile_indices(ids)[p][dim] * out_tile for p in range(b.n)]
    return b.add(_O.ADD, (iota, b.full(b.table_lookup(offsets), shape)))


def _cut_one(changed: list[int], target: np.ndarray) -> int | None:
    """The one changed dimension the target cuts, if exactly one is."""
    cut = [d for d in changed if target.shape[d] > 1]
    return cut[0] if len(cut) == 1 else None


def _rows_tile(inst: HloInstruction, target: np.ndarray, dim: int) -> int:
    return -(-inst.shape.dims[dim] // target.shape[dim])


def slice_along_cut(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                    operand: PValue, changed: list[int]) -> PValue | None:
    """A slice whose result stays cut along a sliced dimension: the window of rows each
    partition needs, then the other sliced dimensions locally; None if not worth it."""
    starts, limits = inst.attr("starts"), inst.attr("limits")
    strides = inst.attr("strides") or (1,) * len(starts)
    dim = _cut_one(changed, target)
    if dim is None or strides[dim] != 1:
        return None
    ids = grids.keep_dims(target, [d for d in range(len(starts))
                                   if d not in changed or d == dim])
    source = reshard(b, operand, ids)
    tile = _rows_tile(inst, target, dim)
    rows = window(b, source, dim, int(starts[dim]), tile)
    if rows is None:
        return None
    others = [d for d in changed if d != dim]
    if others:
        block = rows.shape.dims
        rows = b.add(_O.SLICE, (rows,), {
            "starts": tuple(starts[d] if d in others else 0 for d in range(len(block))),
            "limits": tuple(limits[d] if d in others else block[d] for d in range(len(block))),
            "strides": tuple(strides[d] if d in others else 1 for d in range(len(block)))})
    return PValue(rows, inst.shape, ids)


def pad_along_cut(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                  operand: PValue, fill: HloInstruction, changed: list[int]) -> PValue | None:
    """Edge padding (no interior) of a dimension that stays cut: the shifted window of
    the operand, the rows outside it set to the padding value."""
    config = [tuple(c) for c in inst.attr("padding")]
    dim = _cut_one(changed, target)
    if dim is None or config[dim][2] != 0:
        return None
    ids = grids.keep_dims(target, [d for d in range(len(config))
                                   if d not in changed or d == dim])
    source = reshard(b, operand, ids)
    low, size = config[dim][0], operand.shape.dims[dim]
    tile = _rows_tile(inst, target, dim)
    rows = window(b, source, dim, -low, tile)
    if rows is None:
        return None
    where = shifted_rows(b, rows, ids, dim, tile)
    block = rows.shape.dims
    s32 = np.dtype(np.int32)
    above = b.add(_O.COMPARE, (where, b.full(b.constant(low, s32), block)), {"direction": "GE"})
    below = b.add(_O.COMPARE, (where, b.full(b.constant(low + size, s32), block)),
                  {"direction": "LT"})
    inside = b.add(_O.AND, (above, below))
    padded = b.add(_O.SELECT, (inside, rows, b.full(fill, block)))
    others = [d for d in changed if d != dim]
    if others:
        padded = b.add(_O.PAD, (padded, fill), {"padding": tuple(
            config[d] if d in others else (0, 0, 0) for d in range(len(config)))})
    return PValue(padded, inst.shape, ids)


def concatenate_along_cut(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                          ops: list[PValue], dim: int) -> PValue | None:
    """A concatenation that stays cut along its dimension: a rotation when the operands
    are slices going round one value (one shift), else each operand's window of the
    result's rows, chosen row by row; None if that takes more shifts than gathering the
    operands whole would take all-gathers."""
    if target.shape[dim] == 1:
        return None
    tile = _rows_tile(inst, target, dim)
    rotated = rotation(ops, dim)
    if rotated is not None:
        source, begin = rotated
        rows = window(b, reshard(b, source, target), dim, begin, tile, periodic=True)
        if rows is not None:
            return PValue(rows, inst.shape, target)
    gathers = len({id(v.hlo) for v in ops if v.ids.shape[dim] > 1}) or 1
    before = len(b.b.instructions)
    pieces, bounds, offset = [], [], 0
    for value in ops:
        rows = window(b, reshard(b, value, target), dim, -offset, tile, max_shifts=gathers)
        if rows is None:
            return None
        pieces.append(rows)
        bounds.append(offset)
        offset += value.shape.dims[dim]
    shifts = sum(1 for i in b.b.instructions[before:] if i.opcode is _O.COLLECTIVE_PERMUTE)
    if shifts > gathers:
        return None  # what was built is dead code, removed after partitioning
    where = shifted_rows(b, pieces[0], target, dim, tile)
    block = pieces[0].shape.dims
    result = pieces[0]
    for rows, start in zip(pieces[1:], bounds[1:]):
        start_at = b.full(b.constant(start, np.int32), block)
        inside = b.add(_O.COMPARE, (where, start_at), {"direction": "GE"})
        result = b.add(_O.SELECT, (inside, rows, result))
    return PValue(result, inst.shape, target)
