"""Row structure: when a group of instructions can run one row at a time (the analysis behind
row fusion and the row kernel; XLA's GPU softmax rewriter answers a similar question).

A *row fusion* holds one or more reductions over the same operand dimensions that reduce the
same, most minor, dimensions (a "row"), together with elementwise work before and after them.
It can be computed row by row: for each index of the kept dimensions, each reduction makes a
pass over the row (in topological order, so the second reduction may use the first one's
result, as softmax's sum uses its max), then the outputs are computed over the row. That is
only right when every value of the group relates to the rows in a fixed way, which
`row_structure` checks by giving each value *axes*: for each of its dimensions, the dimension
of the iteration space (the reductions' operand shape) it runs along, or None for a size-1
dimension. A reduction's result must run along the kept dimensions only (one value per row);
a value indexed along a reduced dimension is a full row.

Differences from XLA: XLA's CPU compiler does not fuse a reduction into the consumers of its
broadcast result; jaxlite does when the row fits in the L1 cache (see `fusion_decisions`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["RowStructure", "row_structure"]

Axes = tuple  # tuple[int | None, ...]: per dimension, its iteration-space dimension
_OPAQUE = "opaque"  # a value read through an index map the analysis does not follow


@dataclass(frozen=True)
class RowStructure:
    """The iteration space of a row fusion.

    shape : the dimensions the reductions run over (their operands' dimensions).
    reduced_dims : the dimensions reduced (the most minor ones in memory), sorted.
    dtype : the element type of the reductions' operands.
    """

    shape: tuple[int, ...]
    reduced_dims: tuple[int, ...]
    dtype: np.dtype

    @property
    def kept_dims(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(self.shape)) if d not in self.reduced_dims)

    @property
    def row_elements(self) -> int:
        """Elements of one row (the product of the reduced dimensions)."""
        return int(np.prod([self.shape[d] for d in self.reduced_dims], dtype=np.int64))

    @property
    def num_rows(self) -> int:
        return int(np.prod([self.shape[d] for d in self.kept_dims], dtype=np.int64))

    @property
    def row_bytes(self) -> int:
        return self.row_elements * np.dtype(self.dtype).itemsize


def _normalized(axes: Sequence[int | None], dims: Sequence[int]) -> Axes:
    """Size-1 dimensions run along nothing."""
    return tuple(None if size == 1 else axis for axis, size in zip(axes, dims))


def _reduces(members: Sequence[HloInstruction]) -> list[HloInstruction]:
    return [m for m in members if m.opcode is Opcode.REDUCE]


def _common_reduction(reduces: list[HloInstruction]) -> tuple[HloInstruction, tuple] | None:
    """The operand shape and reduced dimensions all reductions share, if they share one and
    the reduced dimensions are the most minor in memory."""
    if not reduces or any(r.shape.is_tuple for r in reduces):
        return None
    operand = reduces[0].operands[0].shape
    reduced = tuple(sorted(reduces[0].attr("dimensions", ())))
    for r in reduces:
        if (r.operands[0].shape.dims != operand.dims
                or tuple(sorted(r.attr("dimensions", ()))) != reduced):
            return None
    if set(operand.layout[:len(reduced)]) != set(reduced):
        return None
    return reduces[0].operands[0], reduced


def _operand_axes(inst: HloInstruction, axes: Axes | str,
                  row_axes: Axes, full_axes: Axes) -> list[Axes | str] | None:
    """The axes of each operand of `inst` given those of `inst`, or None when they break the
    row structure (a reduction whose result would run along a reduced dimension, ...)."""
    op, operands = inst.opcode, inst.operands
    if axes == _OPAQUE:
        return [_OPAQUE] * len(operands)
    if op is Opcode.REDUCE:
        if axes != row_axes:
            return None
        half = len(operands) // 2
        return [full_axes] * half + [()] * (len(operands) - half)
    if op.is_elementwise or op is Opcode.COPY:
        result: list[Axes | str] = []
        for o in operands:
            if o.shape.dims == inst.shape.dims:
                result.append(axes)
            elif o.shape.rank == 0:
                result.append(())
            else:
                return None
        return result
    if op is Opcode.BROADCAST:
        dims = inst.attr("dimensions", ())
        return [_normalized([axes[d] for d in dims], operands[0].shape.dims)]
    if op is Opcode.TRANSPOSE:
        perm = inst.attr("dimensions", ())
        operand_axes: list[int | None] = [None] * len(perm)
        for i, p in enumerate(perm):
            operand_axes[p] = axes[i]
        return [tuple(operand_axes)]
    if op is Opcode.RESHAPE:
        source, target = operands[0].shape.dims, inst.shape.dims
        if [d for d in source if d != 1] != [d for d in target if d != 1]:
            return [_OPAQUE]
        moving = iter(a for a, d in zip(axes, target) if d != 1)
        return [tuple(None if d == 1 else next(moving) for d in source)]
    return [_OPAQUE] * len(operands)


def row_structure(outputs: Sequence[HloInstruction],
                  members: Sequence[HloInstruction]) -> RowStructure | None:
    """The row structure of a group of instructions, or None when it has none.

    Parameters
    ----------
    outputs : the values the group produces (a fusion's root, or the elements of its tuple).
    members : the instructions of the group in topological order, outputs included; operands
        outside it are inputs, read by index.

    Returns
    -------
    RowStructure | None
        Set when the group holds at least one reduction, all reductions reduce the same
        most-minor dimensions of operands of one shape, every output is either a full row
        value (the reductions' operand shape) or a per-row value (their result shape), and
        every value inside follows the rows consistently: reduction results are indexed by
        the row only, through elementwise ops, broadcasts, transposes and reshapes that add
        or drop size-1 dimensions. Values computed by other movement (slices, pads, ...) are
        allowed only where no reduction feeds them.
    """
    common = _common_reduction(_reduces(members))
    if common is None:
        return None
    operand, reduced = common
    shape = operand.shape.dims
    structure = RowStructure(shape, reduced, operand.shape.dtype)
    kept = structure.kept_dims
    row_dims = tuple(shape[d] for d in kept)
    full_axes = _normalized(range(len(shape)), shape)
    row_axes = _normalized(kept, row_dims)
    member_ids = {id(m) for m in members}
    feeds_reduce: dict[int, bool] = {}
    for m in members:
        feeds_reduce[id(m)] = m.opcode is Opcode.REDUCE or any(
            feeds_reduce.get(id(o), False) for o in m.operands)
    axes: dict[int, Axes | str] = {}

    def assign(inst: HloInstruction, value: Axes | str) -> bool:
        if value != _OPAQUE and (len(value) != inst.shape.rank or any(
                a is not None and inst.shape.dims[i] != shape[a] for i, a in enumerate(value))):
            return False
        old = axes.get(id(inst))
        if old is not None and old != value:
            value = _OPAQUE
        if value == _OPAQUE and feeds_reduce[id(inst)]:
            return False
        axes[id(inst)] = value
        return True

    for out in outputs:
        if out.shape.is_tuple or id(out) not in member_ids:
            return None
        if out.shape.dims == shape:
            wanted = full_axes
        elif out.shape.dims == row_dims:
            wanted = row_axes
        else:
            return None
        if not assign(out, wanted):
            return None
    for inst in reversed(members):
        if id(inst) not in axes:
            return None
        derived = _operand_axes(inst, axes[id(inst)], row_axes, full_axes)
        if derived is None:
            return None
        for o, value in zip(inst.operands, derived):
            if id(o) in member_ids and not assign(o, value):
                return None
    return structure
