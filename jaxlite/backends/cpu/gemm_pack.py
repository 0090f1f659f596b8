"""Packing of GEMM operands into contiguous panels (the layout the micro-kernel streams).

A block of op(A) (`mcur x kcur`, from row `ic` and depth `pc`) becomes panels of `mr` rows,
each stored k-major: `panel[k * mr + i] = op(A)[ic + p*mr + i, pc + k]`; a block of op(B)
(`kcur x ncur`, from column `jc`) becomes panels of `nr` columns,
`panel[k * nr + j] = op(B)[pc + k, jc + q*nr + j]`. Both are the same operation on a matrix
seen as (wide index x, depth k), so one generator emits both packers. Whatever the strides of
the source (transposed or not), the micro-kernel then reads unit-stride memory.

The edge panel (the last rows of A, the last columns of B) is known at compile time: A's is
`m % mr` rows high with pitch `m % mr`; B's is `n % nr` wide, stored with the pitch of whole
vectors and zeros in the lanes past the edge, so the micro-kernel can load whole vectors.
"""
from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from jaxlite.backends.cpu.gemm_ir import (I64, PTR, VectorOps, counted_loop, define_function,
                                          i64, if_block)
from jaxlite.backends.cpu.gemm_plan import GemmPlan


@dataclass(frozen=True)
class PanelLayout:
    """How one operand is packed.

    width : panel width along x (mr for A, nr for B).
    x_stride, k_stride : source strides (elements) along x and along k.
    tail_valid : x extent of the edge panel (0: the operand has no edge panel).
    tail_pitch : elements per k step of the edge panel (>= tail_valid).
    """

    width: int
    x_stride: int
    k_stride: int
    tail_valid: int
    tail_pitch: int


def a_layout(plan: GemmPlan) -> PanelLayout:
    mr = plan.blocking.mr
    tail = plan.spec.m % mr
    return PanelLayout(mr, plan.a_strides[1], plan.a_strides[2], tail, tail)


def b_layout(plan: GemmPlan) -> PanelLayout:
    nr, lanes = plan.nr, plan.lanes
    tail = plan.spec.n % nr
    return PanelLayout(nr, plan.b_strides[2], plan.b_strides[1], tail,
                       -(-tail // lanes) * lanes)


PACK_PARAMS = [("src", PTR), ("dst", PTR), ("x0", I64), ("xcur", I64), ("pc", I64),
               ("kcur", I64)]


def emit_packer(module: ir.Module, plan: GemmPlan, name: str,
                layout: PanelLayout) -> ir.Function:
    """Define `void @name(ptr src, ptr dst, i64 x0, i64 xcur, i64 pc, i64 kcur)`.

    Packs source rows/columns [x0, x0 + xcur) at depths [pc, pc + kcur): `xcur // width`
    whole panels, then the edge panel when `xcur` is not a multiple of the width.
    """
    fn, builder = define_function(module, name, PACK_PARAMS, internal=True)
    fn.args[1].add_attribute("noalias")
    args = {arg.name: arg for arg in fn.args}
    ops = VectorOps(module, builder, plan.dtype, plan.lanes)
    full = builder.udiv(args["xcur"], i64(layout.width))
    panel_size = builder.mul(args["kcur"], i64(layout.width))
    with counted_loop(builder, i64(0), full, 1, "panel") as p:
        x_start = builder.add(args["x0"], builder.mul(p, i64(layout.width)))
        dst = ops.element(args["dst"], builder.mul(p, panel_size))
        _pack_panel(ops, layout, args, x_start, dst, layout.width, layout.width)
    if layout.tail_valid:
        has_tail = builder.icmp_unsigned("!=", builder.urem(args["xcur"], i64(layout.width)),
                                         i64(0))
        with if_block(builder, has_tail, "tail"):
            x_start = builder.add(args["x0"], builder.mul(full, i64(layout.width)))
            dst = ops.element(args["dst"], builder.mul(full, panel_size))
            _pack_panel(ops, layout, args, x_start, dst, layout.tail_pitch, layout.tail_valid)
    builder.ret_void()
    return fn


def _pack_panel(ops: VectorOps, layout: PanelLayout, args: dict[str, ir.Value],
                x_start: ir.Value, dst: ir.Value, pitch: int, valid: int) -> None:
    """One panel: for each k, `valid` source elements (and zeros up to `pitch`) to `dst`."""
    b = ops.builder
    src = ops.element(args["src"], b.mul(x_start, i64(layout.x_stride)))
    with counted_loop(b, i64(0), args["kcur"], 1, "k") as k:
        depth = b.add(args["pc"], k)
        src_k = ops.element(src, b.mul(depth, i64(layout.k_stride)))
        dst_k = ops.element(dst, b.mul(k, i64(pitch)))
        if layout.x_stride == 1:
            _copy_contiguous(ops, src_k, dst_k, pitch, valid)
        else:
            _copy_strided(ops, src_k, dst_k, pitch, valid, layout.x_stride)


def _copy_contiguous(ops: VectorOps, src: ir.Value, dst: ir.Value, pitch: int,
                     valid: int) -> None:
    for start in range(0, pitch, ops.lanes):
        loaded = max(0, min(ops.lanes, valid - start))
        value = (ops.load(ops.element(src, start), loaded) if loaded
                 else ops.splat_constant(0.0))
        ops.store(value, ops.element(dst, start), min(ops.lanes, pitch - start))


def _copy_strided(ops: VectorOps, src: ir.Value, dst: ir.Value, pitch: int, valid: int,
                  stride: int) -> None:
    for x in range(pitch):
        value = ops.load_scalar(ops.element(src, x * stride)) if x < valid else ops.constant(0.0)
        ops.store_scalar(value, ops.element(dst, x))
