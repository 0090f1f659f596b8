"""Convolutions in the dimension orders the CPU backend's GEMM kernels read (mirrors XLA's
CPU `ConvCanonicalization`, with a second form for weight gradients).

The CPU backend computes a float convolution as GEMMs over patches of its input
(`backends/cpu/codegen/conv_kernel.py`), which needs each operand's contracted and kept
dimensions as contiguous runs. The transposition rules of `conv_general_dilated` produce
convolutions in whatever order the forward one had (an NHWC forward pass gives an input
gradient that writes NCHW and a weight gradient labelled `f01b_i01o->01bf`), so this pass
puts every float convolution into one of two forms, moving data with transposes before and
after it:

- pixel form `b01f_01io->b01f`: output pixels (batch and spatial) are the GEMM's rows, the
  window taps with the input features its depth; forward passes and input gradients.
- weight form `f01b_i01o->01bf`: the output is small beside its window (a weight gradient,
  whose window is the forward output): output positions with the lhs batch are the rows,
  the lhs features (the forward batch) with the window taps the depth.

A grouped convolution whose groups are large enough for a GEMM (at least
`MIN_GROUP_FEATURES` input and output features per group) becomes one convolution per
group on slices of its operands, each put in its form, and a concatenation of their
outputs (feature groups split the lhs features, batch groups the lhs batch; both split the
kernel's output features, group-major). Depthwise convolutions stay whole: the loop kernels
compute them without the copies.

The transposes it adds are ordinary instructions: the simplifier composes them with the
transposes around the convolution (an input gradient's NCHW -> NHWC transpose cancels),
and fusion folds the rest into their neighbours. Convolutions already in their form, of
other dtypes or with small groups are left as they are. Returns the same module object when
it changes nothing.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.rewriting import RewriteContext, rewrite_module
from jaxlite.xla.shape_inference_base import ConvDims, RuleContext, conv_dims_of, window_of

__all__ = ["canonicalize_convolutions", "uses_weight_form"]

_O = Opcode
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Input and output features per group from which a grouped convolution is split.
MIN_GROUP_FEATURES = 4
# At most this many groups are split (the module grows by a convolution per group).
MAX_SPLIT_GROUPS = 64


def uses_weight_form(out_spatial: tuple[int, ...], window: tuple[int, ...]) -> bool:
    """Whether a convolution with these output and window sizes takes the weight form:
    its output positions are fewer than its window taps."""
    return math.prod(out_spatial) < math.prod(window)


def _transpose(x: HloInstruction, order: tuple[int, ...], ctx: RewriteContext
               ) -> HloInstruction:
    if order == tuple(range(len(order))):
        return x
    return ctx.new(_O.TRANSPOSE, [x], {"dimensions": order})


def _slice(x: HloInstruction, dim: int, start: int, size: int, ctx: RewriteContext
           ) -> HloInstruction:
    starts, limits = [0] * x.shape.rank, list(x.shape.dims)
    starts[dim], limits[dim] = start, start + size
    return ctx.new(_O.SLICE, [x], {"starts": tuple(starts), "limits": tuple(limits),
                                   "strides": (1,) * x.shape.rank})


def _split_groups(inst: HloInstruction, cd: ConvDims, ctx: RewriteContext
                  ) -> HloInstruction | None:
    """One convolution per group, concatenated along the output features; None when the
    groups are too small to pay for the copies."""
    lhs, rhs = inst.operands
    features = int(inst.attr("feature_group_count", 1))
    groups = max(features, int(inst.attr("batch_group_count", 1)))
    lhs_dim = cd.lhs_feature if features > 1 else cd.lhs_batch
    lhs_part = lhs.shape.dims[lhs_dim] // groups
    rhs_part = rhs.shape.dims[cd.rhs_output] // groups
    inputs = lhs_part if features > 1 else rhs.shape.dims[cd.rhs_input]
    if groups > MAX_SPLIT_GROUPS or min(inputs, rhs_part) < MIN_GROUP_FEATURES:
        return None
    attrs = dict(inst.attrs)
    attrs["feature_group_count"] = attrs["batch_group_count"] = 1
    parts = []
    for g in range(groups):
        conv = ctx.new(_O.CONVOLUTION, [_slice(lhs, lhs_dim, g * lhs_part, lhs_part, ctx),
                                        _slice(rhs, cd.rhs_output, g * rhs_part, rhs_part,
                                               ctx)], attrs)
        parts.append(_rewrite(conv, ctx) or conv)
    return ctx.new(_O.CONCATENATE, parts, {"dimensions": (cd.out_feature,)},
                   shape=inst.shape, name=inst.name)


def _rewrite(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    if inst.opcode is not _O.CONVOLUTION or inst.shape.dtype not in _FLOATS:
        return None
    lhs, rhs = inst.operands
    rule = RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape, inst.name)
    cd = conv_dims_of(rule, lhs.shape.rank, rhs.shape.rank)
    if int(inst.attr("feature_group_count", 1)) != 1 or int(
            inst.attr("batch_group_count", 1)) != 1:
        return _split_groups(inst, cd, ctx)
    window = window_of(rule, len(cd.lhs_spatial))
    digits = "".join(str(i) for i in range(len(cd.lhs_spatial)))
    out_spatial = tuple(inst.shape.dims[d] for d in cd.out_spatial)
    if uses_weight_form(out_spatial, window.size):
        orders = ((cd.lhs_feature, *cd.lhs_spatial, cd.lhs_batch),
                  (cd.rhs_input, *cd.rhs_spatial, cd.rhs_output),
                  (*cd.out_spatial, cd.out_batch, cd.out_feature))
        labels = f"f{digits}b_i{digits}o->{digits}bf"
    else:
        orders = ((cd.lhs_batch, *cd.lhs_spatial, cd.lhs_feature),
                  (*cd.rhs_spatial, cd.rhs_input, cd.rhs_output),
                  (cd.out_batch, *cd.out_spatial, cd.out_feature))
        labels = f"b{digits}f_{digits}io->b{digits}f"
    if all(order == tuple(range(len(order))) for order in orders):
        return None
    lhs_order, rhs_order, out_order = orders
    attrs = dict(inst.attrs)
    attrs["dim_labels"] = labels
    conv = ctx.new(_O.CONVOLUTION, [_transpose(lhs, lhs_order, ctx),
                                    _transpose(rhs, rhs_order, ctx)], attrs)
    back = tuple(int(d) for d in np.argsort(out_order))
    return ctx.new(_O.TRANSPOSE, [conv], {"dimensions": back}, shape=inst.shape,
                   name=inst.name)


def canonicalize_convolutions(module: HloModule) -> HloModule:
    """`module` with its float convolutions in the pixel or the weight form, large groups
    split (see the module doc); the same object when there is nothing to change."""
    return rewrite_module(module, _rewrite)
