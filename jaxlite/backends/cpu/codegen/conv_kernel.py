"""Convolutions through the generated GEMM: blocked im2col (mirrors what XLA's CPU backend
gets from Eigen's spatial convolution: patches times the kernel matrix).

For a block of output pixels at a time (a pixel is an index of the batch and spatial output
dimensions), the kernel gathers the input patch of every pixel into a row of a small
matrix in its scratch memory: the window taps, each with its input features, in the order
the kernel's memory has them (zeros where a tap falls into the padding); then one GEMM
multiplies that [pixels x taps*features] matrix by the kernel, seen as a [taps*features x
output features] matrix, straight into the block's rows of the result. Blocks are the unit
of parallel work: each thread has its own patch matrix and GEMM scratch.

In the panel form (float32, input features a multiple of 16, output pixels a multiple of
8) the patches are written transposed in panels of 8 pixels, the format the GEMM packs A
into, and the GEMM reads them in place (`conv_panels`): the same products in the same
order, without the GEMM's copy of the block.

It applies (input dilation included: the patch holds zeros between the input's elements)
when the result stores each pixel's output features contiguously, one pixel
after another (NHWC-like), the kernel stores its taps and input features as one run with
the output features innermost (HWIO-like), the types are float32 or float64, and there are
no feature or batch groups or window reversal. Other convolutions are
computed by the loop kernels (`window_loops.convolution_at`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxlite.backends.cpu.codegen.conv_gemm_util import (BLOCK_BYTES, block_bounds,
                                                         coordinates, copy_run, gemm_spec,
                                                         gemm_texts)
from jaxlite.backends.cpu.codegen.conv_panels import PANEL, PANEL_LANES, copy_panel
from jaxlite.backends.cpu.codegen.conv_weight_kernel import (WeightConvPlan,
                                                             emit_weight_convolution,
                                                             weight_conv_plan)
from jaxlite.backends.cpu.codegen.dot_kernel import SCRATCH_ALIGN, _group
from jaxlite.backends.cpu.codegen.indexing import Lin, Var, strides_of
from jaxlite.backends.cpu.codegen.elemental import Elemental
from jaxlite.backends.cpu.codegen.kernel import (Kernel, KernelContext, emitter,
                                                 kernel_function, lanes_for)
from jaxlite.backends.cpu.gemm import DEFAULT_BLOCKING, GemmSpec, plan_gemm
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.conv_canonicalization import uses_weight_form
from jaxlite.xla.shape_inference_base import (ConvDims, RuleContext, Window, conv_dims_of,
                                              window_of)

__all__ = ["ConvPlan", "conv_plan", "emit_convolution"]



@dataclass(frozen=True)
class ConvPlan:
    """A convolution as blocked im2col and GEMMs."""

    dims: ConvDims
    pixels: int           # output pixels (batch times spatial)
    taps: int             # window taps times input features (the GEMM's k)
    features: int         # output features (the GEMM's n)
    block: int            # pixels per block
    pixel_stride: int     # result elements from one pixel to the next
    kernel_stride: int    # kernel elements from one (tap, input feature) to the next
    dtype: str
    panels: bool = False  # patches written as the GEMM's packed panels (`conv_panels`)

    @property
    def blocks(self) -> int:
        return -(-self.pixels // self.block)

    def spec(self, rows: int) -> GemmSpec:
        if self.panels:   # a batch of PANEL-row GEMMs, each reading its panel in place
            return gemm_spec(self.dtype, m=PANEL, n=self.features, k=self.taps,
                             batch=rows // PANEL, a_strides=(PANEL * self.taps, 1, PANEL),
                             b_strides=(0, self.kernel_stride, 1),
                             c_strides=(PANEL * self.pixel_stride, self.pixel_stride, 1),
                             scratch="argument")
        return gemm_spec(self.dtype, m=rows, n=self.features, k=self.taps,
                         a_strides=(0, self.taps, 1), b_strides=(0, self.kernel_stride, 1),
                         c_strides=(0, self.pixel_stride, 1), scratch="argument")

    @property
    def last_rows(self) -> int:
        return self.pixels - (self.blocks - 1) * self.block

    @property
    def patch_bytes(self) -> int:
        size = self.block * self.taps * np.dtype(self.dtype).itemsize
        return -(-size // SCRATCH_ALIGN) * SCRATCH_ALIGN

    @property
    def scratch(self) -> int:
        """Scratch bytes per thread: the patch matrix, then the GEMM's scratch."""
        gemm = max(plan_gemm(self.spec(self.block)).scratch_bytes,
                   plan_gemm(self.spec(self.last_rows)).scratch_bytes)
        return self.patch_bytes + -(-gemm // SCRATCH_ALIGN) * SCRATCH_ALIGN


def conv_plan(inst: HloInstruction) -> ConvPlan | WeightConvPlan | None:
    """How `inst` (a convolution) runs as im2col and GEMMs, or None. A convolution whose
    output is smaller than its window (a weight gradient) runs in the weight form
    (`conv_weight_kernel`)."""
    lhs, rhs = inst.operands[0].shape, inst.operands[1].shape
    out = inst.shape
    dtype = np.dtype(out.dtype)
    if dtype.name not in ("float32", "float64") or lhs.dtype != dtype or rhs.dtype != dtype:
        return None
    ctx = RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape, inst.name)
    cd = conv_dims_of(ctx, lhs.rank, rhs.rank)
    window = window_of(ctx, len(cd.lhs_spatial))
    if int(inst.attr("feature_group_count", 1)) != 1 or int(
            inst.attr("batch_group_count", 1)) != 1 or any(window.reversal):
        return None
    if uses_weight_form(tuple(out.dims[d] for d in cd.out_spatial), window.size):
        return weight_conv_plan(inst)
    os_, ks = strides_of(out.dims, out.layout), strides_of(rhs.dims, rhs.layout)
    pixels = _group([cd.out_batch, *cd.out_spatial], out.dims, os_)
    taps = _group([*cd.rhs_spatial, cd.rhs_input], rhs.dims, ks)
    if pixels is None or taps is None or os_[cd.out_feature] != 1 or ks[cd.rhs_output] != 1:
        return None
    features = out.dims[cd.out_feature]
    if pixels[0] == 0 or features == 0 or 2 * pixels[0] * taps[0] * features < 1 << 16:
        return None
    rows = max(8, BLOCK_BYTES // max(1, taps[0] * dtype.itemsize) // 8 * 8)
    block = min(rows, pixels[0])
    # The panel form: float32 runs of whole vectors, whole panels in every block, on a host
    # whose micro-kernel is PANEL rows high (512-bit vectors)
    panels = (dtype.name == "float32" and pixels[0] % PANEL == 0
              and lhs.dims[cd.lhs_feature] % PANEL_LANES == 0
              and DEFAULT_BLOCKING["float32"].mr == PANEL)
    return ConvPlan(cd, pixels[0], taps[0], features, block,
                    pixels[1] if pixels[0] > 1 else features,
                    taps[1] if taps[0] > 1 else features, dtype.name, panels)


def emit_convolution(ctx: KernelContext, inst: HloInstruction,
                     plan: ConvPlan | WeightConvPlan, noalias: bool) -> Kernel:
    """The kernel: work items are blocks of output pixels, [lo, hi) (one item for the
    weight form)."""
    if isinstance(plan, WeightConvPlan):
        return emit_weight_convolution(ctx, inst, plan, noalias)
    fb, ins, outs = kernel_function(2, 1, noalias)
    fb.params.insert(3, ("ptr", "scratch"))
    cd = plan.dims
    window = window_of(RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape,
                                   inst.name), len(cd.lhs_spatial))
    specs = [plan.spec(plan.block), plan.spec(plan.last_rows)]
    names = [plan_gemm(s).full_name for s in specs]
    lhs = HloInstruction("param_0", Opcode.PARAMETER, inst.operands[0].shape,
                         attrs={"number": 0})
    features = lhs.shape.dims[cd.lhs_feature]
    # (the panel form's transposes are written for vectors of PANEL_LANES)
    width = PANEL_LANES if plan.panels else min(16, lanes_for(lhs.shape.dtype, features))
    em = emitter(ctx, fb, width, ins)
    itemsize = np.dtype(plan.dtype).itemsize
    gemm_scratch = fb.op(f"getelementptr inbounds i8, ptr %scratch, i64 {plan.patch_bytes}",
                         "gs")
    spatial = [inst.shape.dims[d] for d in cd.out_spatial]
    taps = [list(t) for t in np.ndindex(*window.size)]
    with fb.loop("%lo", "%hi", 1, "blk") as block:
        first, last = block_bounds(fb, block, plan.block, plan.pixels, "px")
        if plan.panels:
            with fb.loop(first, last, PANEL, "pn") as pixel:
                em.push()
                row = fb.op(f"sub i64 {pixel}, {first}", "row")
                target = fb.op(f"mul i64 {row}, {plan.taps}", "pt")
                copy_panel(em, lhs, cd, window, pixel, plan.pixels, spatial, taps, target)
                em.pop()
        else:
            _copy_patches(em, lhs, cd, window, plan, first, last, spatial, taps, width)
        rows = fb.op(f"sub i64 {last}, {first}", "rows")
        full = fb.op(f"icmp eq i64 {rows}, {plan.block}", "full")
        offset = fb.op(f"mul i64 {first}, {plan.pixel_stride * itemsize}", "co")
        target = fb.op(f"getelementptr inbounds i8, ptr {outs[0]}, i64 {offset}", "c")
        with fb.if_then(full, "whole"):
            fb.do(f'call void @"{names[0]}"(ptr %scratch, ptr {ins[1]}, ptr {target}, '
                  f"ptr {gemm_scratch})")
        if plan.last_rows != plan.block:
            partial = fb.op(f"xor i1 {full}, true", "part")
            with fb.if_then(partial, "rest"):
                fb.do(f'call void @"{names[1]}"(ptr %scratch, ptr {ins[1]}, ptr {target}, '
                      f"ptr {gemm_scratch})")
    fb.ret_void()
    declarations = tuple(f'declare void @"{n}"(ptr, ptr, ptr, ptr)'
                         for n in dict.fromkeys(names))
    work = plan.pixels * plan.taps * plan.features
    modules = tuple(dict.fromkeys(t for s in specs for t in gemm_texts(s)))
    return Kernel(fb.text(), 2, 1, plan.blocks, 1, work, plan.scratch, modules, declarations)


def _copy_patches(em: Elemental, lhs: HloInstruction, cd: ConvDims, window: Window,
                  plan: ConvPlan, first: str, last: str, spatial: list[int],
                  taps: list[list[int]], width: int) -> None:
    """The block's patches as rows of [pixels x taps*features], one pixel after another."""
    fb = em.fb
    features = lhs.shape.dims[cd.lhs_feature]
    with fb.loop(first, last, 1, "px") as pixel:
        em.push()
        batch, coords = coordinates(em, pixel, plan.pixels, spatial)
        row = fb.op(f"sub i64 {pixel}, {first}", "row")
        start = Lin.of(Var(row, "scalar", 0, plan.block)) * plan.taps
        for number, tap in enumerate(taps):   # the patch: each tap's input features
            copy_run(em, lhs, cd, window, (cd.lhs_batch, batch), coords,
                     [Lin.of(t) for t in tap], cd.lhs_feature,
                     start + number * features, width)
        em.pop()
