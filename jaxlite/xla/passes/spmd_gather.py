"""Partitioning gather without moving the table (mirrors the passthrough and
index-parallel cases of XLA's gather handler).

A gather's result dimensions are of two kinds: *batch* dimensions, one per dimension of
the indices (their index vectors), and *offset* dimensions, one per sliced operand
dimension. Two cuts need no collective:

- index-parallel: a batch dimension of the result cut like the indices it comes from
  (each partition looks up its own indices in the whole table: embedding lookups of a
  data-parallel batch);
- passthrough: an offset dimension whose slice takes the operand's whole dimension, cut
  like that operand dimension (each partition gathers from its own columns of the table).

Any other cut of the result is undone first; the partitioner reshards the local result.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes import spmd_shardings as grids
from jaxlite.xla.passes.spmd_builder import PValue, SpmdBuilder
from jaxlite.xla.passes.spmd_reshard import reshard
from jaxlite.xla.shape import Shape

__all__ = ["partition_gather"]


def _ints(inst: HloInstruction, name: str) -> tuple[int, ...]:
    value = inst.attr(name, ())
    return tuple(int(v) for v in ((value,) if isinstance(value, int) else value or ()))


def partition_gather(b: SpmdBuilder, inst: HloInstruction, target: np.ndarray,
                     operand: PValue, indices: PValue) -> PValue | None:
    """The gather with the index-parallel and passthrough cuts of `target` kept; None when
    `target` keeps none of them (then the whole gather is as good) or for batched
    gathers."""
    if _ints(inst, "operand_batching_dims"):
        return None
    offset_dims, collapsed = _ints(inst, "offset_dims"), _ints(inst, "collapsed_slice_dims")
    sizes, ivd = list(_ints(inst, "slice_sizes")), int(inst.attr("index_vector_dim"))
    rank = inst.shape.rank
    sliced = [d for d in range(operand.shape.rank) if d not in collapsed]
    batch_out = [d for d in range(rank) if d not in offset_dims]
    batch_in = [d for d in range(indices.shape.rank) if d != ivd]
    out_axes: list[list[int]] = [[] for _ in range(rank)]
    operand_axes: list[list[int]] = [[] for _ in range(operand.shape.rank)]
    index_axes: list[list[int]] = [[] for _ in range(indices.shape.rank)]
    for out, d in zip(offset_dims, sliced):
        if target.shape[out] > 1 and sizes[d] == operand.shape.dims[d]:
            operand_axes[d] = out_axes[out] = [out]
    for out, d in zip(batch_out, batch_in):
        if target.shape[out] > 1:
            index_axes[d] = out_axes[out] = [out]
    if not any(out_axes):
        return None
    table = reshard(b, operand, grids.regrid(target, operand_axes))
    where = reshard(b, indices, grids.regrid(target, index_axes))
    for d, axes in enumerate(operand_axes):
        if axes:
            sizes[d] = table.hlo.shape.dims[d]
    result_ids = grids.regrid(target, out_axes)
    tile = grids.tile_shape(result_ids, inst.shape.dims)
    attrs = {k: v for k, v in inst.attrs.items() if k != "sharding"}
    attrs["slice_sizes"] = tuple(sizes)
    hlo = b.add(Opcode.GATHER, (table.hlo, where.hlo), attrs,
                shape=Shape(inst.shape.dtype, tile))
    return PValue(hlo, inst.shape, result_ids)
