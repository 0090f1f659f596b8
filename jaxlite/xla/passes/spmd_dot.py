"""Partitioning dot_general (mirrors the dot handler of XLA's SPMD partitioner, without its
windowed and looped variants).

A dot's dimensions play four roles: batch, lhs-free, rhs-free and contracting. A *plan*
gives each role some axes of one device grid; each operand then needs the sharding that
cuts its dimensions by the axes of their roles (other axes become copies), every partition
multiplies its blocks locally, and when contracting dimensions are cut the partial products
are summed by an `all-reduce` over the partitions along those axes. Three plans are tried,
as XLA weighs its options:

- from the result's sharding (batch- and free-dimension cuts: no reduction at all);
- from the lhs's sharding, and from the rhs's (cuts of the contracting dimensions kept:
  the Megatron layout, where x @ W2 with W2 cut by rows is one all-reduce).

Each plan is built on a scratch builder and costed by the collectives it needs (the
result's resharding included); between plans with as many, the one from the result's
sharding wins, then the one moving fewer bytes. The cheapest is built for real.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from jaxlite.xla.ir import HloInstruction, NameUniquer
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.passes import spmd_shardings as grids
from jaxlite.xla.passes.spmd_builder import ModuleState, PValue, SpmdBuilder
from jaxlite.xla.passes.spmd_reshard import reshard
from jaxlite.xla.shape import Shape

__all__ = ["partition_convolution", "partition_dot"]

_O = Opcode


@dataclass(frozen=True)
class _Dims:
    """The dimension numbers of one dot, by role."""

    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]
    lhs_free: tuple[int, ...]
    rhs_free: tuple[int, ...]

    @classmethod
    def of(cls, inst: HloInstruction) -> "_Dims":
        def ints(name: str) -> tuple[int, ...]:
            return tuple(int(d) for d in inst.attr(name, ()) or ())
        lb, rb = ints("lhs_batch"), ints("rhs_batch")
        lc, rc = ints("lhs_contracting"), ints("rhs_contracting")
        lhs_rank, rhs_rank = inst.operands[0].shape.rank, inst.operands[1].shape.rank
        lf = tuple(d for d in range(lhs_rank) if d not in lb + lc)
        rf = tuple(d for d in range(rhs_rank) if d not in rb + rc)
        return cls(lb, rb, lc, rc, lf, rf)


@dataclass(frozen=True)
class _Plan:
    """A grid and, per role, the grid axes cutting each dimension of that role."""

    ids: np.ndarray
    batch: tuple[tuple[int, ...], ...]
    lhs_free: tuple[tuple[int, ...], ...]
    rhs_free: tuple[tuple[int, ...], ...]
    contracting: tuple[tuple[int, ...], ...]

    def lhs_grid(self, dims: _Dims, rank: int) -> np.ndarray:
        return grids.regrid(self.ids, _axes_by_dim(rank, [
            (dims.lhs_batch, self.batch), (dims.lhs_free, self.lhs_free),
            (dims.lhs_contracting, self.contracting)]))

    def rhs_grid(self, dims: _Dims, rank: int) -> np.ndarray:
        return grids.regrid(self.ids, _axes_by_dim(rank, [
            (dims.rhs_batch, self.batch), (dims.rhs_free, self.rhs_free),
            (dims.rhs_contracting, self.contracting)]))

    def result_grid(self) -> np.ndarray:
        return grids.regrid(self.ids, list(self.batch + self.lhs_free + self.rhs_free))

    def reduced_axes(self) -> list[int]:
        return [a for axes in self.contracting for a in axes if self.ids.shape[a] > 1]


def _axes_by_dim(rank: int, roles: Sequence[tuple[Sequence[int], Sequence]]) -> list:
    axes: list = [[] for _ in range(rank)]
    for dims, role_axes in roles:
        for d, a in zip(dims, role_axes):
            axes[d] = list(a)
    return axes


def _plans(dims: _Dims, target: np.ndarray, lhs: PValue, rhs: PValue) -> list[_Plan]:
    nb, nlf = len(dims.lhs_batch), len(dims.lhs_free)
    none = tuple(() for _ in dims.lhs_contracting)
    from_result = _Plan(target, tuple((j,) for j in range(nb)),
                        tuple((nb + k,) for k in range(nlf)),
                        tuple((nb + nlf + m,) for m in range(len(dims.rhs_free))), none)
    from_lhs = _Plan(lhs.ids, tuple((d,) for d in dims.lhs_batch),
                     tuple((d,) for d in dims.lhs_free), tuple(() for _ in dims.rhs_free),
                     tuple((d,) for d in dims.lhs_contracting))
    from_rhs = _Plan(rhs.ids, tuple((d,) for d in dims.rhs_batch),
                     tuple(() for _ in dims.lhs_free), tuple((d,) for d in dims.rhs_free),
                     tuple((d,) for d in dims.rhs_contracting))
    return [from_result, from_lhs, from_rhs]


def _build(b: SpmdBuilder, inst: HloInstruction, plan: _Plan, dims: _Dims, lhs: PValue,
           rhs: PValue) -> PValue:
    """The dot by `plan`: operands resharded, a local dot, the partial sums reduced."""
    lhs = reshard(b, lhs, plan.lhs_grid(dims, lhs.shape.rank))
    rhs = reshard(b, rhs, plan.rhs_grid(dims, rhs.shape.rank))
    x, y = lhs.hlo, rhs.hlo
    if plan.reduced_axes():
        # Padding along a cut contracting dimension would be summed in: zero it.
        zero_l = b.constant(0, x.shape.dtype)
        x = b.mask(x, lhs.ids, lhs.shape.dims, dims.lhs_contracting, zero_l)
        zero_r = b.constant(0, y.shape.dtype)
        y = b.mask(y, rhs.ids, rhs.shape.dims, dims.rhs_contracting, zero_r)
    result_ids = plan.result_grid()
    tile = grids.tile_shape(result_ids, inst.shape.dims)
    attrs = {k: v for k, v in inst.attrs.items() if k != "sharding"}
    local = b.add(_O.DOT, (x, y), attrs, shape=Shape(inst.shape.dtype, tile))
    reduced = plan.reduced_axes()
    if reduced:
        local = b.all_reduce(local, grids.groups_along(plan.ids, reduced))
    return PValue(local, inst.shape, result_ids)


def _cost(b: SpmdBuilder, inst: HloInstruction, plan: _Plan, dims: _Dims, lhs: PValue,
          rhs: PValue, target: np.ndarray) -> tuple[int, int]:
    """(collectives, bytes they produce) of `plan`, the result's resharding included,
    measured by building it on a scratch builder."""
    scratch = SpmdBuilder("scratch", ModuleState(b.n, NameUniquer()))
    reshard(scratch, _build(scratch, inst, plan, dims, lhs, rhs), target)
    moved = [i for i in scratch.b.instructions
             if i.opcode.kind is Kind.COLLECTIVE and i.opcode is not _O.PARTITION_ID]
    return len(moved), sum(i.shape.nbytes for i in moved)


def partition_dot(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                  lhs: PValue, rhs: PValue) -> PValue:
    """The partitioned dot of `inst` (result in some grid; the caller reshards it)."""
    dims = _Dims.of(inst)
    plans = _plans(dims, target, lhs, rhs)
    costs = [_cost(b, inst, plan, dims, lhs, rhs, target) for plan in plans]
    # Fewest collectives first; between equals, keep the result's layout (as XLA does,
    # it resharded operands rather than the product), then the fewest bytes.
    best = min(range(len(plans)), key=lambda i: (costs[i][0], i > 0, costs[i][1], i))
    return _build(b, inst, plans[best], dims, lhs, rhs)


def partition_convolution(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                          lhs: PValue, rhs: PValue) -> PValue | None:
    """A convolution cut along the batch (through the lhs) and the output features
    (through the kernel), spatial and input-feature dimensions whole; None for grouped
    convolutions (the caller computes those whole)."""
    if int(inst.attr("feature_group_count", 1)) != 1 or int(
            inst.attr("batch_group_count", 1)) != 1:
        return None
    labels = str(inst.attr("dim_labels"))
    operands, out = labels.split("->")
    lhs_labels, rhs_labels = operands.split("_")
    batch, feature = out.index("b"), out.index("f")
    lhs_axes: list[list[int]] = [[] for _ in lhs_labels]
    lhs_axes[lhs_labels.index("b")] = [batch]
    rhs_axes: list[list[int]] = [[] for _ in rhs_labels]
    rhs_axes[rhs_labels.index("o")] = [feature]
    out_axes: list[list[int]] = [[] for _ in out]
    out_axes[batch], out_axes[feature] = [batch], [feature]
    lhs = reshard(b, lhs, grids.regrid(target, lhs_axes))
    rhs = reshard(b, rhs, grids.regrid(target, rhs_axes))
    result_ids = grids.regrid(target, out_axes)
    tile = grids.tile_shape(result_ids, inst.shape.dims)
    attrs = {k: v for k, v in inst.attrs.items() if k != "sharding"}
    hlo = b.add(_O.CONVOLUTION, (lhs.hlo, rhs.hlo), attrs, shape=Shape(inst.shape.dtype, tile))
    return PValue(hlo, inst.shape, result_ids)
