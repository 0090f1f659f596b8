"""Fused instructions that read data at positions computed from other data: dynamic-slice,
dynamic-update-slice and gather at one output index, and floating-point comparisons in
XLA's total order. `hlo_elemental.Elemental` calls these; each returns kernel IR.

Start indices are read from the fused instruction's index operands (scalars for the
dynamic slices, elements of the indices array for gather), clamped as XLA clamps them so
that the whole window lies inside the operand ([0, dim - window size]), in the indices'
own type (so an int64 index far out of range clamps before it is narrowed to int32).
"""
from __future__ import annotations

from typing import Any

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.index_math import add
from jaxlite.xla.ir import HloInstruction

__all__ = ["clamped_start", "dynamic_slice_index", "dynamic_update_value", "gather_index",
           "total_order_compare"]


def clamped_start(start: ir.Expr, dim: int, size: int) -> ir.Expr:
    """An int32 start index clamped into [0, dim - size], as XLA clamps window starts."""
    dtype = start.dtype
    if dtype == "bool":
        start, dtype = ir.Cast(start, "int32"), "int32"
    high = ir.Const(dim - size, dtype)
    low = ir.Const(0, dtype)
    clamped = ir.Binary("max", ir.Binary("min", start, high), low)
    return clamped if dtype == "int32" else ir.Cast(clamped, "int32")


def dynamic_slice_index(em: Any, inst: HloInstruction, index: tuple) -> tuple:
    """The operand index of dynamic-slice `inst` at its output index `index`."""
    operand, sizes = inst.operands[0], inst.attr("sizes")
    starts = [clamped_start(em.value(s, ()), dim, size)
              for s, dim, size in zip(inst.operands[1:], operand.shape.dims, sizes)]
    return tuple(add(em.let(s, "start"), i) for s, i in zip(starts, index))


def dynamic_update_value(em: Any, inst: HloInstruction, index: tuple) -> ir.Expr:
    """dynamic-update-slice `inst` at `index`: the update inside its window, else the
    operand."""
    operand, update = inst.operands[0], inst.operands[1]
    inside: ir.Expr = ir.Const(True, "bool")
    shifted = []
    for s, i, dim, size in zip(inst.operands[2:], index, operand.shape.dims,
                               update.shape.dims):
        start = em.let(clamped_start(em.value(s, ()), dim, size), "start")
        offset = ir.Binary("sub", i, start)
        inside = ir.Binary("and", inside, ir.Binary("and", ir.Binary("ge", offset,
                                                                     ir.index_const(0)),
                                                    ir.Binary("lt", offset,
                                                              ir.index_const(size))))
        shifted.append(offset)
    return em.choose(inside, lambda: em.value(update, tuple(shifted)),
                     lambda: em.value(operand, index))


def gather_index(em: Any, inst: HloInstruction, index: tuple) -> tuple:
    """The operand index gather `inst` reads for its output index `index` (XLA's gather:
    batch dimensions of the output pick a start vector from the indices, offset
    dimensions move inside the slice)."""
    operand, indices = inst.operands
    a = inst.attr
    offset_dims, sizes = list(a("offset_dims")), list(a("slice_sizes"))
    vector_dim = int(a("index_vector_dim"))
    batch = [index[d] for d in range(len(index)) if d not in offset_dims]
    skipped = set(a("collapsed_slice_dims", ())) | set(a("operand_batching_dims", ()))
    window_dims = [d for d in range(operand.shape.rank) if d not in skipped]

    def index_element(k: int) -> ir.Expr:
        if vector_dim == indices.shape.rank:
            return em.value(indices, tuple(batch))
        position = tuple(batch[:vector_dim]) + (ir.index_const(k),) + tuple(batch[vector_dim:])
        return em.value(indices, position)

    starts: list[ir.Expr] = [ir.index_const(0)] * operand.shape.rank
    for k, d in enumerate(a("start_index_map")):
        starts[d] = em.let(clamped_start(index_element(k), operand.shape.dims[d], sizes[d]),
                           "start")
    for operand_dim, index_dim in zip(a("operand_batching_dims", ()),
                                      a("start_indices_batching_dims", ())):
        starts[operand_dim] = batch[index_dim - (index_dim > vector_dim)]
    result = list(starts)
    for k, d in enumerate(window_dims):
        result[d] = add(starts[d], index[offset_dims[k]])
    return tuple(result)


def _sign_bit(x: ir.Expr) -> ir.Expr:
    return ir.Binary("lt", ir.Binary("copysign", ir.Const(1.0, x.dtype), x),
                     ir.Const(0.0, x.dtype))


def _nan_class(x: ir.Expr) -> ir.Expr:
    """-1 for a NaN with the sign bit set, 1 for another NaN, 0 for a number."""
    return ir.Select(ir.Unary("isnan", x),
                     ir.Select(_sign_bit(x), ir.index_const(-1), ir.index_const(1)),
                     ir.index_const(0))


def total_order_compare(em: Any, direction: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """a <direction> b for floats in XLA's total order: -NaN < -inf < ... < -0 < +0 < ...
    < +inf < +NaN (NaNs of one sign equal, whatever their payload)."""
    ca, cb = em.let(_nan_class(a), "cls"), em.let(_nan_class(b), "cls")
    sa, sb = em.let(_sign_bit(a), "neg"), em.let(_sign_bit(b), "neg")
    numbers = ir.Binary("eq", ca, ir.index_const(0))

    def less(x, y, cx, cy, sx, sy) -> ir.Expr:
        within = ir.Binary("or", ir.Binary("lt", x, y), ir.Binary(
            "and", ir.Binary("eq", x, y), ir.Binary("and", sx, ir.Unary("not", sy))))
        same = ir.Binary("eq", cx, cy)
        return ir.Binary("or", ir.Binary("lt", cx, cy),
                         ir.Binary("and", same, ir.Binary("and", numbers, within)))
    lt = em.let(less(a, b, ca, cb, sa, sb), "lt")
    gt = em.let(less(b, a, cb, ca, sb, sa), "gt")
    results = {"lt": lt, "gt": gt, "le": ir.Unary("not", gt), "ge": ir.Unary("not", lt),
               "ne": ir.Binary("or", lt, gt), "eq": ir.Unary("not", ir.Binary("or", lt, gt))}
    return results[direction]

