"""Weight-gradient convolutions through the generated GEMM (the weight form of
`xla/passes/conv_canonicalization.py`, labels `f01b_i01o->01bf`).

A weight gradient is a convolution whose window (the forward output) is larger than its
output (the forward kernel): out[s, b, o] = sum over c and window taps t of
lhs[c, s * stride + t * dilation - pad, b] * rhs[c, t, o]. As a GEMM its rows are the
output positions with the lhs batch (s, b) (the forward kernel's taps and input features),
its depth the lhs features with the taps (c, t) (the forward batch and output pixels) and
its columns the output features: C[(s, b), o] = sum over (c, t) of A[(s, b), (c, t)] *
rhs[(c, t), o], with the rhs read in place (its (c, t) rows are contiguous) and C the
result (its (s, b) rows too). A is built one block of depth at a time in scratch memory,
stored transposed: row (c, t) holds, for each output position s, the run of lhs batch
elements at the tap's position (zeros in the padding), copied from the lhs where the run is
contiguous. Each block's GEMM adds into C (the first one writes it). The output positions
are split into chunks whose rows of A fill a block at a depth of 128 or more: a chunk's
rows of C stay in cache across its blocks, and chunks are the units of parallel work.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxlite.backends.cpu.codegen.conv_gemm_util import (BLOCK_BYTES, block_bounds,
                                                         coordinates, copy_run, gemm_spec,
                                                         gemm_texts)
from jaxlite.backends.cpu.codegen.dot_kernel import SCRATCH_ALIGN, _group
from jaxlite.backends.cpu.codegen.indexing import Lin, Var, strides_of
from jaxlite.backends.cpu.codegen.kernel import (Kernel, KernelContext, emitter,
                                                 kernel_function, lanes_for)
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder
from jaxlite.backends.cpu.gemm import GemmSpec, plan_gemm
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape_inference_base import ConvDims, RuleContext, conv_dims_of, window_of

__all__ = ["WeightConvPlan", "weight_conv_plan", "emit_weight_convolution"]



# Depth of a block at the least: output positions are split into chunks (work items) so
# that a chunk's rows of A fill a block of scratch at this depth.
_MIN_DEPTH = 128


@dataclass(frozen=True)
class WeightConvPlan:
    """A weight-form convolution as chunks of output positions (the work items, each with
    its own rows of C) and, within a chunk, blocks of depth with accumulating GEMMs."""

    dims: ConvDims
    positions: int        # output positions (spatial)
    batch: int            # lhs batch: rows per output position
    chunk: int            # output positions per work item
    depth: int            # lhs features times window taps (the GEMM's k)
    features: int         # output features (the GEMM's n)
    block: int            # depth per block
    row_stride: int       # result elements from one row to the next
    rhs_stride: int       # rhs elements from one (feature, tap) to the next
    dtype: str

    @property
    def units(self) -> int:
        return -(-self.positions // self.chunk)

    @property
    def rows(self) -> int:
        """Rows of A (and of C) of a whole chunk."""
        return self.chunk * self.batch

    @property
    def last_rows(self) -> int:
        return (self.positions - (self.units - 1) * self.chunk) * self.batch

    @property
    def blocks(self) -> int:
        return -(-self.depth // self.block)

    @property
    def last_depth(self) -> int:
        return self.depth - (self.blocks - 1) * self.block

    def spec(self, rows: int, depth: int, accumulate: bool) -> GemmSpec:
        return gemm_spec(self.dtype, m=rows, n=self.features, k=depth,
                         a_strides=(0, 1, self.rows), b_strides=(0, self.rhs_stride, 1),
                         c_strides=(0, self.row_stride, 1),
                         beta=1.0 if accumulate else 0.0, scratch="argument")

    def specs(self, rows: int) -> list[GemmSpec]:
        """A chunk's GEMMs of the first, the middle and the last block (as many as
        differ)."""
        if self.blocks == 1:
            return [self.spec(rows, self.depth, False)]
        return [self.spec(rows, self.block, False), self.spec(rows, self.block, True),
                self.spec(rows, self.last_depth, True)]

    @property
    def block_bytes(self) -> int:
        size = self.block * self.rows * np.dtype(self.dtype).itemsize
        return -(-size // SCRATCH_ALIGN) * SCRATCH_ALIGN

    @property
    def scratch(self) -> int:
        """Scratch bytes per thread: the block of A, then the GEMM's scratch."""
        gemm = max(plan_gemm(s).scratch_bytes
                   for s in self.specs(self.rows) + self.specs(self.last_rows))
        return self.block_bytes + -(-gemm // SCRATCH_ALIGN) * SCRATCH_ALIGN


def weight_conv_plan(inst: HloInstruction) -> WeightConvPlan | None:
    """How `inst` (a float convolution without groups or window reversal) runs in the
    weight form, or None when its layouts do not fit it."""
    lhs, rhs, out = inst.operands[0].shape, inst.operands[1].shape, inst.shape
    ctx = RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape, inst.name)
    cd = conv_dims_of(ctx, lhs.rank, rhs.rank)
    os_, ks = strides_of(out.dims, out.layout), strides_of(rhs.dims, rhs.layout)
    rows = _group([*cd.out_spatial, cd.out_batch], out.dims, os_)
    depth = _group([cd.rhs_input, *cd.rhs_spatial], rhs.dims, ks)
    if rows is None or depth is None or os_[cd.out_feature] != 1 or ks[cd.rhs_output] != 1:
        return None
    if strides_of(lhs.dims, lhs.layout)[cd.lhs_batch] != 1:
        return None
    features = out.dims[cd.out_feature]
    if rows[0] == 0 or depth[0] == 0 or features == 0 or \
            2 * rows[0] * depth[0] * features < 1 << 16:
        return None
    itemsize = np.dtype(out.dtype).itemsize
    batch = out.dims[cd.out_batch]
    positions = rows[0] // batch
    chunk = max(1, min(positions, BLOCK_BYTES // (_MIN_DEPTH * itemsize * batch)))
    block = min(depth[0], max(8, BLOCK_BYTES // (chunk * batch * itemsize) // 8 * 8))
    return WeightConvPlan(cd, positions, batch, chunk, depth[0], features, block,
                          rows[1] if rows[0] > 1 else features,
                          depth[1] if depth[0] > 1 else features, np.dtype(out.dtype).name)


def emit_weight_convolution(ctx: KernelContext, inst: HloInstruction,
                            plan: WeightConvPlan, noalias: bool) -> Kernel:
    """The kernel: work items are chunks of output positions, [lo, hi); each runs every
    block of depth in order."""
    fb, ins, outs = kernel_function(2, 1, noalias)
    fb.params.insert(3, ("ptr", "scratch"))
    cd = plan.dims
    window = window_of(RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape,
                                   inst.name), len(cd.lhs_spatial))
    whole, last = plan.specs(plan.rows), plan.specs(plan.last_rows)
    lhs = HloInstruction("param_0", Opcode.PARAMETER, inst.operands[0].shape,
                         attrs={"number": 0})
    width = min(16, lanes_for(lhs.shape.dtype, plan.batch))
    em = emitter(ctx, fb, width, ins)
    itemsize = np.dtype(plan.dtype).itemsize
    gemm_scratch = fb.op(f"getelementptr inbounds i8, ptr %scratch, i64 {plan.block_bytes}",
                         "gs")
    taps = [inst.operands[1].shape.dims[d] for d in cd.rhs_spatial]
    positions = [inst.shape.dims[d] for d in cd.out_spatial]
    with fb.loop("%lo", "%hi", 1, "unit") as unit:
        s_first, s_last = block_bounds(fb, unit, plan.chunk, plan.positions, "s")
        offset = fb.op(f"mul i64 {s_first}, {plan.batch * plan.row_stride * itemsize}", "co")
        target = fb.op(f"getelementptr inbounds i8, ptr {outs[0]}, i64 {offset}", "c")
        with fb.loop("0", str(plan.blocks), 1, "blk") as block:
            first, last_k = block_bounds(fb, block, plan.block, plan.depth, "k")
            with fb.loop(first, last_k, 1, "k") as k:
                em.push()
                feature, tap = coordinates(em, k, plan.depth, taps)
                row = fb.op(f"sub i64 {k}, {first}", "row")
                base = Lin.of(Var(row, "scalar", 0, plan.block)) * plan.rows
                # Row (feature, tap) of A: for each output position, the lhs batch run.
                with fb.loop(s_first, s_last, 1, "s") as s:
                    em.push()
                    _, coords = coordinates(em, s, plan.positions, positions)
                    local = fb.op(f"sub i64 {s}, {s_first}", "sl")
                    start = base + Lin.of(Var(local, "scalar", 0, plan.chunk)) * plan.batch
                    copy_run(em, lhs, cd, window, (cd.lhs_feature, feature), coords, tap,
                             cd.lhs_batch, start, width)
                    em.pop()
                em.pop()
            b_offset = fb.op(f"mul i64 {first}, {plan.rhs_stride * itemsize}", "bo")
            b_ptr = fb.op(f"getelementptr inbounds i8, ptr {ins[1]}, i64 {b_offset}", "b")
            args = f"(ptr %scratch, ptr {b_ptr}, ptr {target}, ptr {gemm_scratch})"
            if plan.last_rows == plan.rows:
                _call_stage(fb, plan, block, whole, args)
            else:
                is_last = fb.op(f"icmp eq i64 {unit}, {plan.units - 1}", "lastu")
                with fb.if_then(is_last, "lastchunk"):
                    _call_stage(fb, plan, block, last, args)
                with fb.if_then(fb.op(f"xor i1 {is_last}, true", "notlast"), "chunk"):
                    _call_stage(fb, plan, block, whole, args)
    fb.ret_void()
    names = [plan_gemm(s).full_name for s in whole + last]
    declarations = tuple(f'declare void @"{n}"(ptr, ptr, ptr, ptr)'
                         for n in dict.fromkeys(names))
    work = plan.positions * plan.batch * plan.depth * plan.features
    modules = tuple(dict.fromkeys(t for s in whole + last for t in gemm_texts(s)))
    return Kernel(fb.text(), 2, 1, plan.units, 1, work, plan.scratch, modules, declarations)


def _call_stage(fb: FunctionBuilder, plan: WeightConvPlan, block: str,
                specs: list[GemmSpec], args: str) -> None:
    """Call the GEMM of block `block`: the first writes C, the others add to it."""
    names = [plan_gemm(s).full_name for s in specs]
    if len(names) == 1:
        fb.do(f'call void @"{names[0]}"{args}')
        return
    is_first = fb.op(f"icmp eq i64 {block}, 0", "first")
    is_last = fb.op(f"icmp eq i64 {block}, {plan.blocks - 1}", "last")
    either = fb.op(f"or i1 {is_first}, {is_last}", "edge")
    middle = fb.op(f"xor i1 {either}, true", "mid")
    for cond, name in zip((is_first, middle, is_last), names):
        with fb.if_then(cond, "gemm"):
            fb.do(f'call void @"{name}"{args}')
