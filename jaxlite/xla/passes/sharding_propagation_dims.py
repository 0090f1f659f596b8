"""Which dimension of an operand each result dimension is, for the ops whose dimension
numbers say so (dot, convolution, gather, scatter): the maps sharding propagation moves tile
grids through. A map lists, per result dimension, the operand dimension it comes from, or
None where the result dimension has no counterpart in that operand (a dot's rhs free
dimensions, seen from the lhs). Operand dimensions missing from a map (contracted, indexed)
are not split on the other side.
"""
from __future__ import annotations

from jaxlite.xla.ir import HloInstruction

__all__ = ["dot_dims", "conv_dims", "gather_maps", "scatter_maps", "partner_dims"]


def dot_dims(dot: HloInstruction) -> tuple[list, list]:
    """(lhs map, rhs map) of a dot: its result is batch, lhs free, rhs free dimensions."""
    lhs_rank, rhs_rank = (len(o.shape.dims) for o in dot.operands)
    lhs_batch, rhs_batch = list(dot.attr("lhs_batch", ())), list(dot.attr("rhs_batch", ()))
    lhs_free = [d for d in range(lhs_rank)
                if d not in lhs_batch and d not in dot.attr("lhs_contracting", ())]
    rhs_free = [d for d in range(rhs_rank)
                if d not in rhs_batch and d not in dot.attr("rhs_contracting", ())]
    lhs_map = lhs_batch + lhs_free + [None] * len(rhs_free)
    rhs_map = rhs_batch + [None] * len(lhs_free) + rhs_free
    return lhs_map, rhs_map


def partner_dims(inst: HloInstruction, k: int) -> list:
    """For each dimension of operand `k` of a dot or convolution, the other operand's
    dimension it meets (batch with batch, contracted with contracted), or None."""
    if inst.opcode.text == "dot":
        mine = [list(inst.attr(f"{side}_{kind}", ())) for side in ("lhs", "rhs")
                for kind in ("batch", "contracting")]
        lhs, rhs = mine[:2], mine[2:]
        pairs = list(zip(lhs[0] + lhs[1], rhs[0] + rhs[1]))
    else:
        operands, _ = str(inst.attr("dim_labels")).split("->")
        lhs_labels, rhs_labels = operands.split("_")
        pairs = [] if inst.attr("feature_group_count", 1) != 1 else [
            (lhs_labels.index("f"), rhs_labels.index("i"))]
    rank = len(inst.operands[k].shape.dims)
    other = {pair[k]: pair[1 - k] for pair in pairs}
    return [other.get(d) for d in range(rank)]


def conv_dims(conv: HloInstruction) -> tuple[list, list]:
    """(lhs map, rhs map) of a convolution: batch and spatial dimensions from the input,
    output features from the kernel; input features are contracted."""
    operands, out = str(conv.attr("dim_labels")).split("->")
    lhs, rhs = operands.split("_")
    lhs_map: list = [None] * len(out)
    rhs_map: list = [None] * len(out)
    for d, label in enumerate(out):
        if label == "b" and conv.attr("batch_group_count", 1) == 1:
            lhs_map[d] = lhs.index("b")
        elif label == "f":
            rhs_map[d] = rhs.index("o")
        elif label.isdigit():
            lhs_map[d] = lhs.index(label)
    return lhs_map, rhs_map


def gather_maps(gather: HloInstruction) -> tuple[list, list]:
    """(operand map, indices map) of a gather: offset dimensions that take a whole operand
    dimension pass it through; batch dimensions are the indices' (and the operand's
    batching dimensions)."""
    operand, indices = (o.shape.dims for o in gather.operands)
    offset_dims = list(gather.attr("offset_dims"))
    collapsed = list(gather.attr("collapsed_slice_dims", ()))
    batching = list(gather.attr("operand_batching_dims", ()))
    index_batching = list(gather.attr("start_indices_batching_dims", ()))
    sizes = list(gather.attr("slice_sizes"))
    vector_dim = int(gather.attr("index_vector_dim"))
    windows = iter(d for d in range(len(operand)) if d not in collapsed + batching)
    batches = iter(d for d in range(len(indices)) if d != vector_dim)
    rank = len(gather.shape.dims)
    operand_map: list = [None] * rank
    indices_map: list = [None] * rank
    for d in range(rank):
        if d in offset_dims:
            source = next(windows)
            if sizes[source] == operand[source]:
                operand_map[d] = source
        else:
            indices_map[d] = next(batches)
            if indices_map[d] in index_batching:
                operand_map[d] = batching[index_batching.index(indices_map[d])]
    return operand_map, indices_map


def scatter_maps(scatter: HloInstruction) -> list[int]:
    """The operand dimensions a scatter indexes into: the ones not passed through whole."""
    return sorted(set(scatter.attr("scatter_dims_to_operand_dims", ()))
                  | set(scatter.attr("inserted_window_dims", ())))
