"""Data movement inside fused loops: each opcode maps the index it is asked for to the index
of its operand (mirrors the movement part of XLA's ElementalIrEmitter).

Nothing is copied: a broadcast, transpose, slice, reverse or reshape only changes the index
expression its operand is computed at; pad and concatenate choose between operands (or the
padding value) with selects, reading every candidate at an index clamped into its bounds so
that no read leaves a buffer; iota turns its index into a value.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from jaxlite.backends.cpu.codegen.indexing import Flat, Lin, Multi
from jaxlite.backends.cpu.codegen.llvm_text import I64, Val
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

if TYPE_CHECKING:
    from jaxlite.backends.cpu.codegen.elemental import Elemental, Index

__all__ = ["MOVEMENT", "row_major_layout"]

_O = Opcode
_PRED = np.dtype(np.bool_)


def row_major_layout(rank: int) -> tuple[int, ...]:
    return tuple(range(rank - 1, -1, -1))


def _row_major_linear(em: "Elemental", index: "Index", dims: tuple[int, ...]) -> Lin:
    """The row-major linear position of a logical index."""
    if isinstance(index, Flat) and index.layout == row_major_layout(len(dims)):
        return index.lin
    return em.ix.offset(index, dims, row_major_layout(len(dims)))


def _broadcast(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    operand = inst.operands[0]
    if operand.shape.rank == 0:
        return em.value(operand, Multi(()))
    multi = em.ix.to_multi(index)
    return em.value(operand, Multi(tuple(multi.parts[d] for d in inst.attr("dimensions"))))


def _reshape(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    operand = inst.operands[0]
    lin = _row_major_linear(em, index, inst.shape.dims)
    dims = operand.shape.dims
    return em.value(operand, Flat(lin, dims, row_major_layout(len(dims))))


def _bitcast(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    # The same memory position, read under the operand's dimensions and layout.
    operand = inst.operands[0]
    position = em.ix.offset(index, inst.shape.dims, inst.shape.layout)
    return em.value(operand, Flat(position, operand.shape.dims, operand.shape.layout or ()))


def _transpose(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    multi = em.ix.to_multi(index)
    perm = inst.attr("dimensions")
    parts: list[Lin] = [Lin()] * len(perm)
    for i, d in enumerate(perm):
        parts[d] = multi.parts[i]
    return em.value(inst.operands[0], Multi(tuple(parts)))


def _copy(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    return em.value(inst.operands[0], index)


def _slice(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    multi = em.ix.to_multi(index)
    starts, strides = inst.attr("starts"), inst.attr("strides") or (1,) * len(multi.parts)
    parts = tuple(p * s + b for p, s, b in zip(multi.parts, strides, starts))
    return em.value(inst.operands[0], Multi(parts))


def _reverse(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    multi = em.ix.to_multi(index)
    dims = inst.shape.dims
    flipped = set(inst.attr("dimensions"))
    parts = tuple(Lin.of(dims[d] - 1) - p if d in flipped else p
                  for d, p in enumerate(multi.parts))
    return em.value(inst.operands[0], Multi(parts))


def _iota(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    multi = em.ix.to_multi(index)
    position = em.index_value(multi.parts[inst.attr("iota_dimension")])
    if inst.shape.dtype.kind == "c":
        return em.complex.lift(position, inst.shape.dtype)
    return em.arith.convert(position, inst.shape.dtype)


def _all(em: "Elemental", conds: list[Val]) -> Val | None:
    result = None
    for c in conds:
        result = c if result is None else em.arith.binary(_O.AND, result, c)
    return result


def _pad(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    operand, padding_value = inst.operands
    pad = em.value(padding_value, Multi(()))
    dims = operand.shape.dims
    if 0 in dims:
        return pad
    multi = em.ix.to_multi(index)
    conds: list[Val] = []
    parts: list[Lin] = []
    for d, (low, _, interior) in enumerate(inst.attr("padding")):
        position = multi.parts[d] - low
        step, last = interior + 1, (dims[d] - 1) * (interior + 1)
        b_low, b_high = position.bounds()
        known_inside = b_low is not None and b_high is not None and b_low >= 0 \
            and b_high <= last
        if not known_inside:
            for pred, bound in (("sge", 0), ("sle", last)):
                ref, width = em.ix.compare(pred, position, bound)
                conds.append(Val(ref, "i1", width, _PRED))
            position = em.ix.clamp(position, 0, last)
        if step > 1:
            quotient, remainder = em.ix.divmod(position, step)
            if not remainder.is_const:
                ref, width = em.ix.compare("eq", remainder, 0)
                conds.append(Val(ref, "i1", width, _PRED))
            elif remainder.const != 0:
                return pad
            position = quotient
        parts.append(position)
    value = em.value(operand, Multi(tuple(parts)))
    inside = _all(em, conds)
    return value if inside is None else em.select(inside, value, pad)


def _concatenate(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    d = inst.attr("dimensions")[0]
    multi = em.ix.to_multi(index)
    along = multi.parts[d]
    b_low, b_high = along.bounds()
    pieces = []
    start = 0
    for operand in inst.operands:
        size = operand.shape.dims[d]
        if size and (b_low is None or b_high is None or (start <= b_high and b_low < start + size)):
            pieces.append((operand, start, size))
        start += size
    result: Val | None = None
    for operand, start, size in reversed(pieces):
        local = em.ix.clamp(along - start, 0, size - 1)
        parts = multi.parts[:d] + (local,) + multi.parts[d + 1:]
        value = em.value(operand, Multi(parts))
        if result is None:
            result = value
        else:
            ref, width = em.ix.compare("slt", along, start + size)
            result = em.select(Val(ref, "i1", width, _PRED), value, result)
    assert result is not None, inst
    return result


def saturate_unsigned_start(em: "Elemental", value: Val, limit: int) -> Val:
    """An unsigned 64-bit start saturated at `limit` before it becomes a signed i64 (2**64 - 1
    would read as -1 and clamp to 0; XLA clamps it to the end)."""
    if value.dtype != np.uint64:
        return value
    return em.arith.binary(_O.MINIMUM, value, em.arith.const(limit, np.uint64, value.width))


def _dynamic_slice(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    operand = inst.operands[0]
    multi = em.ix.to_multi(index)
    sizes = inst.attr("sizes")
    parts = []
    for d, (part, start_inst) in enumerate(zip(multi.parts, inst.operands[1:])):
        limit = operand.shape.dims[d] - sizes[d]
        start = em.arith.convert(saturate_unsigned_start(em, em.value(start_inst, Multi(())),
                                              max(limit, 0)), I64)
        clamped = em.ix.clamp(Lin.of(em.ix.from_value(start.ref, 1)), 0, max(limit, 0))
        parts.append(part + clamped)
    return em.value(operand, Multi(tuple(parts)))


def _bitcast_convert(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    operand = inst.operands[0]
    src, dst = operand.shape.dtype, inst.shape.dtype
    if src == dst:
        return em.value(operand, index)
    if src.kind == "c" or dst.kind == "c":
        raise NotImplementedError(f"the cpu backend has no bitcast-convert of complex values "
                                  f"({inst.name}) yet")
    if src.itemsize == dst.itemsize:
        return em.arith.bitcast(em.value(operand, index), dst)
    arith = em.arith
    unsigned = {n: np.dtype(f"uint{n * 8}") for n in (1, 2, 4, 8)}
    multi = em.ix.to_multi(index)
    if dst.itemsize < src.itemsize:
        # Output element k of the new minor dimension is the k-th piece of the operand
        # element, little-endian.
        whole = arith.bitcast(em.value(operand, Multi(multi.parts[:-1])), unsigned[src.itemsize])
        piece = arith.convert(em.index_value(multi.parts[-1]), unsigned[src.itemsize])
        shift = arith.binary(_O.MULTIPLY, piece, arith.const(dst.itemsize * 8,
                                                             unsigned[src.itemsize]))
        bits = arith.binary(_O.SHIFT_RIGHT_LOGICAL, whole, shift)
        return arith.bitcast(arith.convert(bits, unsigned[dst.itemsize]), dst)
    count = dst.itemsize // src.itemsize
    result = arith.const(0, unsigned[dst.itemsize])
    for k in range(count):
        piece = arith.bitcast(em.value(operand, Multi(multi.parts + (Lin.of(k),))),
                              unsigned[src.itemsize])
        wide = arith.convert(piece, unsigned[dst.itemsize])
        moved = arith.binary(_O.SHIFT_LEFT, wide, arith.const(k * src.itemsize * 8,
                                                              unsigned[dst.itemsize]))
        result = arith.binary(_O.OR, result, moved)
    return arith.bitcast(result, dst)


def _gather(em: "Elemental", inst: HloInstruction, index: "Index") -> Val:
    operand, indices = inst.operands
    a = inst.attr
    out = em.ix.to_multi(index).parts
    offset_dims = list(a("offset_dims"))
    sizes = list(a("slice_sizes"))
    vector_dim = int(a("index_vector_dim"))
    operand_batching = list(a("operand_batching_dims", ()))
    index_batching = list(a("start_indices_batching_dims", ()))
    batch = [out[p] for p in range(inst.shape.rank) if p not in offset_dims]
    dims = operand.shape.dims
    starts: list[Lin] = [Lin()] * len(dims)
    for k, d in enumerate(a("start_index_map")):
        parts = list(batch)
        if vector_dim < indices.shape.rank:
            parts.insert(vector_dim, Lin.of(k))
        limit = max(dims[d] - sizes[d], 0)
        value = em.arith.convert(
            saturate_unsigned_start(em, em.value(indices, Multi(tuple(parts))), limit), I64)
        start = em.ix.from_value(value.ref, value.width)
        starts[d] = em.ix.clamp(start, 0, limit)
    for d, index_dim in zip(operand_batching, index_batching):
        starts[d] = batch[index_dim - (index_dim > vector_dim)]
    skipped = set(a("collapsed_slice_dims", ())) | set(operand_batching)
    window = [d for d in range(len(dims)) if d not in skipped]
    parts = tuple(starts[d] + (out[offset_dims[window.index(d)]] if d in window else Lin())
                  for d in range(len(dims)))
    return em.value(operand, Multi(parts))


MOVEMENT: dict[Opcode, Callable[["Elemental", HloInstruction, "Index"], Val]] = {
    _O.BROADCAST: _broadcast, _O.RESHAPE: _reshape, _O.BITCAST: _bitcast,
    _O.TRANSPOSE: _transpose, _O.COPY: _copy, _O.SLICE: _slice, _O.REVERSE: _reverse,
    _O.IOTA: _iota, _O.PAD: _pad, _O.CONCATENATE: _concatenate,
    _O.DYNAMIC_SLICE: _dynamic_slice, _O.BITCAST_CONVERT: _bitcast_convert,
    _O.GATHER: _gather,
}
