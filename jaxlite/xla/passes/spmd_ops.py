"""Partitioning the array operations: elementwise, movement, iota, reduce, and the
always-correct fallback (mirrors the per-opcode handlers of XLA's SPMD partitioner).

Each handler takes the builder, the original instruction, the grid its result should
have (`target`) and the partitioned operands, and returns the partitioned result in a grid
of its choosing, often `target` itself; the partitioner then reshards it to `target`. That
lets a handler stop at the layout that is natural for it, e.g. a reduce's result after its
all-reduce, or a slice's with the sliced dimension whole.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes import spmd_halo as halo
from jaxlite.xla.passes import spmd_shardings as grids
from jaxlite.xla.passes.spmd_builder import PValue, SpmdBuilder
from jaxlite.xla.passes.spmd_reshard import replicate, reshard
from jaxlite.xla.shape import Shape

__all__ = ["HANDLERS", "fallback", "tuple_value"]

_O = Opcode
Handler = Callable[[SpmdBuilder, HloInstruction, np.ndarray, list[PValue]], PValue]


def _attrs(inst: HloInstruction, **changes) -> dict:
    attrs = {k: v for k, v in inst.attrs.items() if k != "sharding"}
    attrs.update(changes)
    return attrs


def _local(b: SpmdBuilder, inst: HloInstruction, operands: list[HloInstruction],
           ids: np.ndarray, **changes) -> PValue:
    """`inst` applied to blocks, giving the block of grid `ids`."""
    tile = grids.tile_shape(ids, inst.shape.dims)
    hlo = b.add(inst.opcode, operands, _attrs(inst, **changes), _stripped(b, inst),
                shape=Shape(inst.shape.dtype, tile))
    return PValue(hlo, inst.shape, ids)


def _stripped(b: SpmdBuilder, inst: HloInstruction) -> tuple[HloComputation, ...]:
    return tuple(b.state.strip(c) for c in inst.called)


def elementwise(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                ops: list[PValue]) -> PValue:
    """Operands in the result's layout, then the operation block by block (scalar operands
    of clamp and select stay whole)."""
    moved = [reshard(b, v, target) if v.shape.rank == inst.shape.rank else replicate(b, v)
             for v in ops]
    return _local(b, inst, [v.hlo for v in moved], target)


def broadcast(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
              ops: list[PValue]) -> PValue:
    """The operand cut as the result along the dimensions it maps to."""
    dims = tuple(int(d) for d in inst.attr("dimensions", ()))
    operand = reshard(b, ops[0], grids.regrid(target, [[d] for d in dims]))
    return _local(b, inst, [operand.hlo], target)


def transpose(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
              ops: list[PValue]) -> PValue:
    perm = [int(d) for d in inst.attr("dimensions")]
    operand = reshard(b, ops[0], grids.regrid(target, [[perm.index(j)]
                                                      for j in range(len(perm))]))
    return _local(b, inst, [operand.hlo], target)


def reshape(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
            ops: list[PValue]) -> PValue:
    """Locally when each cut result dimension is the major part of a group of dimensions
    that reshape keeps together and the cut divides evenly; else on the whole value."""
    source = _reshape_source_grid(ops[0].shape.dims, inst.shape.dims, target)
    if source is None:
        whole = replicate(b, ops[0])
        return _local(b, inst, [whole.hlo], _replicated(b, inst.shape.rank))
    operand = reshard(b, ops[0], source)
    return _local(b, inst, [operand.hlo], target)


def _replicated(b: SpmdBuilder, rank: int) -> np.ndarray:
    return np.arange(b.n).reshape((1,) * rank + (b.n,))


def _reshape_source_grid(src: tuple[int, ...], dst: tuple[int, ...],
                         target: np.ndarray) -> np.ndarray | None:
    """The operand grid that makes the reshape local, or None."""
    groups = _reshape_groups(src, dst)
    if groups is None or any(target.shape[k] > 1 and dst[k] == 1 for k in range(len(dst))):
        return None
    axes: list[list[int]] = [[] for _ in src]
    for gi, gj in groups:
        cut = [k for k in gj if target.shape[k] > 1]
        if not cut:
            continue
        tiles = target.shape[gj[0]]
        if cut != [gj[0]] or src[gi[0]] % tiles or dst[gj[0]] % tiles:
            return None  # only the major dimension of a group may be cut, evenly
        axes[gi[0]] = [gj[0]]
    return grids.regrid(target, axes)


def _reshape_groups(src: tuple[int, ...], dst: tuple[int, ...]) -> list | None:
    """The dimensions (of size > 1) of `src` and `dst` in runs of equal products: the
    groups a reshape keeps together, major first."""
    left = [d for d in range(len(src)) if src[d] != 1]
    right = [d for d in range(len(dst)) if dst[d] != 1]
    if 0 in src or 0 in dst:
        return None
    groups = []
    while left and right:
        gi, gj = [left.pop(0)], [right.pop(0)]
        a, c = src[gi[0]], dst[gj[0]]
        while a != c:
            if a < c and left:
                gi.append(left.pop(0))
                a *= src[gi[-1]]
            elif c < a and right:
                gj.append(right.pop(0))
                c *= dst[gj[-1]]
            else:
                return None
        groups.append((gi, gj))
    return groups if not left and not right else None


def _whole_along(changed: list[int], target: np.ndarray) -> np.ndarray:
    """`target` with the dimensions in `changed` uncut."""
    rank = target.ndim - 1
    return grids.keep_dims(target, [d for d in range(rank) if d not in changed])


def slice_(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
           ops: list[PValue]) -> PValue:
    """Sliced dimensions whole; the others sliced not at all, block by block."""
    starts, limits = inst.attr("starts"), inst.attr("limits")
    strides = inst.attr("strides") or (1,) * len(starts)
    full = ops[0].shape.dims
    changed = [d for d in range(len(full))
               if (starts[d], limits[d], strides[d]) != (0, full[d], 1)]
    value = halo.slice_along_cut(b, inst, target, ops[0], changed)
    if value is None:
        ids = _whole_along(changed, target)
        operand = reshard(b, ops[0], ids)
        block = operand.hlo.shape.dims
        value = _local(b, inst, [operand.hlo], ids,
                       starts=tuple(starts[d] if d in changed else 0 for d in range(len(full))),
                       limits=tuple(limits[d] if d in changed else block[d]
                                    for d in range(len(full))),
                       strides=tuple(strides[d] if d in changed else 1
                                     for d in range(len(full))))
    if len(changed) == 1 and strides[changed[0]] == 1:
        d = changed[0]
        return dataclasses.replace(value, sliced_from=(ops[0], d, starts[d], limits[d]))
    return value


def pad(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
        ops: list[PValue]) -> PValue:
    config = inst.attr("padding")
    changed = [d for d, c in enumerate(config) if tuple(c) != (0, 0, 0)]
    fill = replicate(b, ops[1])
    value = halo.pad_along_cut(b, inst, target, ops[0], fill.hlo, changed)
    if value is not None:
        return value
    ids = _whole_along(changed, target)
    operand = reshard(b, ops[0], ids)
    return _local(b, inst, [operand.hlo, fill.hlo], ids,
                  padding=tuple(tuple(c) if d in changed else (0, 0, 0)
                                for d, c in enumerate(config)))


def reverse(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
            ops: list[PValue]) -> PValue:
    dims = inst.attr("dimensions")
    ids = _whole_along([int(d) for d in dims], target)
    return _local(b, inst, [reshard(b, ops[0], ids).hlo], ids)


def concatenate(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                ops: list[PValue]) -> PValue:
    dims = inst.attr("dimensions")
    dim = int(dims if isinstance(dims, int) else dims[0])
    value = halo.concatenate_along_cut(b, inst, target, ops, dim)
    if value is not None:
        return value
    ids = _whole_along([dim], target)
    return _local(b, inst, [reshard(b, v, ids).hlo for v in ops], ids)


def dynamic_slice(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                  ops: list[PValue]) -> PValue:
    """Dimensions that are sliced whole; the others (sizes equal the operand's, so their
    start clamps to 0) block by block."""
    sizes, full = inst.attr("sizes"), ops[0].shape.dims
    changed = [d for d in range(len(full)) if sizes[d] != full[d]]
    ids = _whole_along(changed, target)
    operand = reshard(b, ops[0], ids)
    starts = [replicate(b, v).hlo for v in ops[1:]]
    tile = grids.tile_shape(ids, inst.shape.dims)
    return _local(b, inst, [operand.hlo, *starts], ids, sizes=tile)


def dynamic_update_slice(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                         ops: list[PValue]) -> PValue:
    full, part = ops[0].shape.dims, ops[1].shape.dims
    changed = [d for d in range(len(full)) if part[d] != full[d]]
    ids = _whole_along(changed, target)
    operand, update = reshard(b, ops[0], ids), reshard(b, ops[1], ids)
    starts = [replicate(b, v).hlo for v in ops[2:]]
    return _local(b, inst, [operand.hlo, update.hlo, *starts], ids)


def iota(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
         ops: list[PValue]) -> PValue:
    """A block of the iota: the local iota plus where this tile starts."""
    dim = int(inst.attr("iota_dimension"))
    value = _local(b, inst, [], target)
    if target.shape[dim] == 1:
        return value
    start = b.offset(target, inst.shape.dims, dim)
    if inst.shape.dtype != start.shape.dtype:
        start = b.add(_O.CONVERT, (start,), shape=Shape(inst.shape.dtype, ()))
    hlo = b.add(_O.ADD, (value.hlo, b.full(start, value.hlo.shape.dims)))
    return PValue(hlo, inst.shape, target)


def reduce(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
           ops: list[PValue]) -> PValue:
    """A local reduce of each block (padding masked with the reduction's identity), then
    an `all-reduce` over the partitions holding different parts of the reduced dimensions;
    an initial value other than the identity joins once, at the end."""
    if inst.shape.is_tuple:
        return _reduce_variadic(b, inst, ops)
    operand, init = ops
    init = replicate(b, init)
    reduced = [int(d) for d in inst.attr("dimensions")]
    cut = [d for d in reduced if operand.ids.shape[d] > 1]
    op = _reducer_opcode(inst.called[0])
    if cut and op is None:
        return _reduce_variadic(b, inst, ops)  # an unknown reducer: dimensions whole
    kept = [d for d in range(operand.shape.rank) if d not in reduced]
    result_ids = grids.regrid(operand.ids, [[d] for d in kept])
    if not cut:
        return _local(b, inst, [operand.hlo, init.hlo], result_ids)
    identity = b.constant(_identity(op, inst.shape.dtype))
    x = b.mask(operand.hlo, operand.ids, operand.shape.dims, reduced, identity)
    local = _local(b, inst, [x, identity], result_ids)
    combiner = b.state.strip(inst.called[0])
    hlo = b.all_reduce(local.hlo, grids.groups_along(operand.ids, cut), combiner)
    if not _is_identity(inst.operands[1], op):
        hlo = b.add(op, (hlo, b.full(init.hlo, hlo.shape.dims)))
    return PValue(hlo, inst.shape, result_ids)


_REDUCERS = (_O.ADD, _O.MULTIPLY, _O.MAXIMUM, _O.MINIMUM, _O.AND, _O.OR, _O.XOR)


def _reducer_opcode(comp: HloComputation) -> Opcode | None:
    """The opcode of a reducer that is one commutative operation of its two parameters."""
    root, params = comp.root, comp.parameters
    if root.opcode in _REDUCERS and len(comp.instructions) == 3 and len(params) == 2 and \
            set(map(id, root.operands)) == set(map(id, params)):
        return root.opcode
    return None


def _identity(op: Opcode, dtype: np.dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if op in (_O.MAXIMUM, _O.MINIMUM):
        high = op is _O.MINIMUM
        if dtype == np.bool_:
            value = high
        elif dtype.kind in "iu":
            value = np.iinfo(dtype).max if high else np.iinfo(dtype).min
        else:
            value = np.inf if high else -np.inf
    else:
        value = 1 if op in (_O.MULTIPLY, _O.AND) else 0
    return np.asarray(value).astype(dtype)


def _is_identity(init: HloInstruction, op: Opcode) -> bool:
    if init.opcode is not _O.CONSTANT:
        return False
    literal = np.asarray(init.attr("literal"))
    return bool(literal == _identity(op, literal.dtype))


def _reduce_variadic(b: SpmdBuilder, inst: HloInstruction, ops: list[PValue]) -> PValue:
    """Several operands reduced together (argmax): their combiner cannot run inside an
    all-reduce, so the reduced dimensions are made whole first."""
    half = len(ops) // 2
    reduced = [int(d) for d in inst.attr("dimensions")]
    ids = _whole_along(reduced, ops[0].ids)
    arrays = [reshard(b, v, ids) for v in ops[:half]]
    inits = [replicate(b, v) for v in ops[half:]]
    kept = [d for d in range(ops[0].shape.rank) if d not in reduced]
    result_ids = grids.regrid(ids, [[d] for d in kept])
    return _local_maybe_tuple(b, inst, [v.hlo for v in arrays + inits], result_ids)


def sort(b: SpmdBuilder, inst: HloInstruction, target, ops: list[PValue]) -> PValue:
    """Each block sorted locally, with the sorted dimension whole."""
    first = target[0] if inst.shape.is_tuple else target
    ids = _whole_along([int(inst.attr("dimension"))], first)
    operands = [reshard(b, v, ids).hlo for v in ops]
    return _local_maybe_tuple(b, inst, operands, ids)


def reduce_window(b: SpmdBuilder, inst: HloInstruction, target,
                  ops: list[PValue]) -> PValue:
    """Locally, with the dimensions the window spans (or strides, pads, dilates) whole."""
    window = inst.attr("window")
    first = target[0] if inst.shape.is_tuple else target
    spanned = [d for d in range(len(window.size))
               if (window.size[d], window.stride[d], window.pad_low[d], window.pad_high[d],
                   window.base_dilation[d], window.window_dilation[d]) != (1, 1, 0, 0, 1, 1)]
    ids = _whole_along(spanned, first)
    half = len(ops) // 2
    operands = [reshard(b, v, ids).hlo for v in ops[:half]]
    operands += [replicate(b, v).hlo for v in ops[half:]]
    return _local_maybe_tuple(b, inst, operands, ids)


def _local_maybe_tuple(b: SpmdBuilder, inst: HloInstruction, operands: list[HloInstruction],
                       ids: np.ndarray) -> PValue:
    """`inst` on blocks, for array results and tuples of equally shaped arrays alike."""
    if not inst.shape.is_tuple:
        return _local(b, inst, operands, ids)
    shapes = [Shape(s.dtype, grids.tile_shape(ids, s.dims)) for s in inst.shape.tuple_shapes]
    hlo = b.add(inst.opcode, operands, _attrs(inst), _stripped(b, inst),
                shape=Shape.tuple(shapes))
    return tuple_value(b, hlo, inst.shape, [ids] * len(shapes))


def tuple_value(b: SpmdBuilder, hlo: HloInstruction, shape: Shape, targets) -> PValue:
    """A PValue of the tuple `hlo` whose leaves have grids `targets` (nested as `shape`),
    with a get-tuple-element for each element."""
    parts = []
    for i, (element, goal) in enumerate(zip(shape.tuple_shapes, targets)):
        part = b.add(_O.GET_TUPLE_ELEMENT, (hlo,), {"index": i})
        if element.is_tuple:
            parts.append(tuple_value(b, part, element, goal))
        else:
            parts.append(PValue(part, element, goal))
    return PValue(hlo, shape, None, tuple(parts))


def fallback(b: SpmdBuilder, inst: HloInstruction, target, ops: list[PValue]) -> PValue:
    """Any operation: its operands made whole, the operation computed whole on every
    partition (correct for every opcode; the partitioner slices the result). The
    program's own collectives (inside shard_map) keep their groups, with a new channel."""
    whole = [replicate(b, v) if not v.is_tuple else _replicate_tuple(b, v) for v in ops]
    attrs = _attrs(inst)
    if attrs.get("channel_id") is not None:
        attrs["channel_id"] = next(b.state.channels)
    hlo = b.add(inst.opcode, [v.hlo for v in whole], attrs, _stripped(b, inst),
                shape=inst.shape)
    if inst.shape.is_tuple:
        return tuple_value(b, hlo, inst.shape, _replicated_targets(b, inst.shape))
    return PValue(hlo, inst.shape, _replicated(b, inst.shape.rank))


def _replicated_targets(b: SpmdBuilder, shape: Shape):
    if shape.is_tuple:
        return [_replicated_targets(b, s) for s in shape.tuple_shapes]
    return _replicated(b, shape.rank)


def _replicate_tuple(b: SpmdBuilder, value: PValue) -> PValue:
    return reshard(b, value, _replicated_targets(b, value.shape))


HANDLERS: dict[Opcode, Handler] = {
    _O.COPY: elementwise,
    _O.BROADCAST: broadcast, _O.TRANSPOSE: transpose, _O.RESHAPE: reshape,
    _O.SLICE: slice_, _O.PAD: pad, _O.REVERSE: reverse, _O.CONCATENATE: concatenate,
    _O.DYNAMIC_SLICE: dynamic_slice, _O.DYNAMIC_UPDATE_SLICE: dynamic_update_slice,
    _O.IOTA: iota, _O.REDUCE: reduce, _O.SORT: sort, _O.REDUCE_WINDOW: reduce_window,
}
