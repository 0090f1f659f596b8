"""Packing of GEMM operands into contiguous panels (the layout the micro-kernel streams).

A block of op(A) (`mcur x kcur`, from row `ic` and depth `pc`) becomes panels of `mr` rows,
each stored k-major: `panel[k * mr + i] = op(A)[ic + p*mr + i, pc + k]`; a block of op(B)
(`kcur x ncur`, from column `jc`) becomes panels of `nr` columns,
`panel[k * nr + j] = op(B)[pc + k, jc + q*nr + j]`. Both are the same operation on a matrix
seen as (wide index x, depth k), so one generator emits both packers. Whatever the strides of
the source (transposed or not), the micro-kernel then reads unit-stride memory.

The source strides are arguments of the packer, not constants in its code: GEMMs of
different shapes then share one packer (its code depends on the panel shape, the dtype and
whether a stride is 1), so a program code-generates each distinct packer once; the
transposing packers are the most expensive functions of a GEMM to code-generate (~40 ms).

The edge panel (the last rows of A, the last columns of B) is known at compile time: A's is
`m % mr` rows high with pitch `m % mr`; B's is `n % nr` wide, stored with the pitch of whole
vectors and zeros in the lanes past the edge, so the micro-kernel can load whole vectors.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from jaxlite.backends.cpu.gemm_ir import (
    I64,
    PTR,
    VectorOps,
    counted_loop,
    define_function,
    i64,
    if_block,
    streams_without_set_conflicts,
    transpose_vectors,
)
from jaxlite.backends.cpu.gemm_plan import GemmPlan

MAX_TRANSPOSE_ROWS = 16


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
    tail = plan.m % mr
    return PanelLayout(mr, plan.a_strides[1], plan.a_strides[2], tail, tail)


def b_layout(plan: GemmPlan) -> PanelLayout:
    nr, lanes = plan.nr, plan.lanes
    tail = plan.n % nr
    return PanelLayout(nr, plan.b_strides[2], plan.b_strides[1], tail,
                       -(-tail // lanes) * lanes)


PACK_PARAMS = [("src", PTR), ("dst", PTR), ("x0", I64), ("xcur", I64), ("pc", I64),
               ("kcur", I64), ("x_stride", I64), ("k_stride", I64)]


def packer_arguments(layout: PanelLayout) -> list[ir.Value]:
    """The trailing arguments of a call to the packer of `layout`: its source strides."""
    return [i64(layout.x_stride), i64(layout.k_stride)]


def emit_packer(module: ir.Module, plan: GemmPlan, name: str,
                layout: PanelLayout) -> ir.Function:
    """Define `void @name(ptr src, ptr dst, i64 x0, i64 xcur, i64 pc, i64 kcur,
    i64 x_stride, i64 k_stride)`.

    Packs source rows/columns [x0, x0 + xcur) at depths [pc, pc + kcur): `xcur // width`
    whole panels, then the edge panel when `xcur` is not a multiple of the width. Callers
    pass `layout`'s strides (`packer_arguments`); the code reads them from the arguments
    except where a stride of 1 chooses the code's shape.
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


def _transpose_width(ops: VectorOps, layout: PanelLayout, pitch: int, valid: int) -> int:
    """Lanes of the square blocks a panel is transposed in (0: copy element by element)."""
    if layout.k_stride != 1 or valid != pitch:
        return 0
    stride_bytes = layout.x_stride * ops.itemsize
    width = streams_without_set_conflicts(stride_bytes, ops.lanes)
    while width >= 4:
        if valid % width == 0:
            return width
        width //= 2
    return 0


def _pack_panel(ops: VectorOps, layout: PanelLayout, args: dict[str, ir.Value],
                x_start: ir.Value, dst: ir.Value, pitch: int, valid: int) -> None:
    """One panel: for each k, `valid` source elements (and zeros up to `pitch`) to `dst`."""
    b = ops.builder
    x_stride, k_stride = _stride(layout.x_stride, args), _stride(layout.k_stride, args, "k")
    src = ops.element(args["src"], b.mul(x_start, x_stride))
    k_start: ir.Value = i64(0)
    width = _transpose_width(ops, layout, pitch, valid)
    if width:
        k_start = b.and_(args["kcur"], i64(-width))
        block_ops = VectorOps(ops.module, b, ops.dtype, width)
        # One group of `width` source rows at a time, all along k: `width` sequential
        # streams, which the prefetchers and the TLB follow better than the whole panel.
        # The groups are a loop, not unrolled: one transposed block is ~100 instructions,
        # and code generation time grows with their count while speed does not.
        with counted_loop(b, i64(0), i64(valid), width, "group") as group:
            src_group = ops.element(src, b.mul(group, x_stride))
            # The rows' offsets, computed once per group (the packer is code-generated
            # without LLVM's loop-invariant code motion).
            row_offsets = [_times(b, x, x_stride) for x in range(width)]
            with counted_loop(b, i64(0), k_start, width, "kt") as k:
                src_k = ops.element(src_group, b.add(args["pc"], k))
                dst_k = ops.element(dst, b.add(b.mul(k, i64(pitch)), group))
                _transpose_block(block_ops, src_k, dst_k, row_offsets, pitch)
    with counted_loop(b, k_start, args["kcur"], 1, "k") as k:
        depth = b.add(args["pc"], k)
        src_k = ops.element(src, b.mul(depth, k_stride))
        dst_k = ops.element(dst, b.mul(k, i64(pitch)))
        if layout.x_stride == 1:
            _copy_contiguous(ops, src_k, dst_k, pitch, valid)
        else:
            _copy_strided(ops, src_k, dst_k, pitch, valid, x_stride)


def _copy_contiguous(ops: VectorOps, src: ir.Value, dst: ir.Value, pitch: int,
                     valid: int) -> None:
    """Copy `valid` elements and write zeros up to `pitch`, in the widest vectors that fit."""
    start = 0
    while start < pitch:
        width = ops.lanes
        while width > pitch - start:
            width //= 2
        loaded = max(0, min(width, valid - start))
        if width == 1:
            value = (ops.load_scalar(ops.element(src, start)) if loaded
                     else ops.constant(0.0))
            ops.store_scalar(value, ops.element(dst, start))
        else:
            part = VectorOps(ops.module, ops.builder, ops.dtype, width)
            value = (part.load(part.element(src, start), loaded) if loaded
                     else part.splat_constant(0.0))
            part.store(value, part.element(dst, start))
        start += width


def _stride(value: int, args: dict[str, ir.Value], axis: str = "x") -> ir.Value:
    """A source stride as the code uses it: the constant 1, else the packer's argument."""
    return i64(1) if value == 1 else args[f"{axis}_stride"]


def _times(b: ir.IRBuilder, count: int, stride: ir.Value) -> ir.Value:
    """`count * stride` (stride a constant or an argument) without needless instructions."""
    if isinstance(stride, ir.Constant):
        return i64(count * stride.constant)
    return i64(0) if count == 0 else stride if count == 1 else b.mul(stride, i64(count))


def _copy_strided(ops: VectorOps, src: ir.Value, dst: ir.Value, pitch: int, valid: int,
                  stride: ir.Value) -> None:
    b = ops.builder
    for x in range(pitch):
        value = (ops.load_scalar(ops.element(src, _times(b, x, stride))) if x < valid
                 else ops.constant(0.0))
        ops.store_scalar(value, ops.element(dst, x))


def _transpose_block(ops: VectorOps, src: ir.Value, dst: ir.Value,
                     row_offsets: list[ir.Value], dst_stride: int) -> None:
    """dst[t * dst_stride + x] = src[row_offsets[x] + t] for a square block of `ops.lanes`."""
    rows = [ops.load(ops.element(src, offset)) for offset in row_offsets]
    for t, row in enumerate(transpose_vectors(ops.builder, rows)):
        ops.store(row, ops.element(dst, t * dst_stride))
