"""Shape rules of reductions and contractions (mirrors those cases of xla::ShapeInference).

reduce and reduce-window (variadic: N inputs, N initial values, a `to_apply` of 2N scalars),
select-and-scatter, sort (a comparator of 2N scalars returning pred[]), dot (batch, then lhs
free, then rhs free dimensions) and convolution (window + dim_labels, feature and batch
groups). The result type of dot and convolution is the declared one when given (XLA's
preferred element type); without it the operands must agree.
"""
from __future__ import annotations

from jaxlite.core import dtypes
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference_base import (
    PRED,
    RuleContext,
    check_combiner,
    conv_dims_of,
    describe,
    scalar,
    tuple_or_single,
    window_of,
)


def _inputs_and_inits(ctx: RuleContext) -> tuple[list[Shape], list[Shape]]:
    n = len(ctx.operands)
    if n < 2 or n % 2:
        ctx.fail(f"expects N inputs followed by N initial values (an even count >= 2), got {n}")
    shapes = ctx.arrays()
    inputs, inits = shapes[:n // 2], shapes[n // 2:]
    if len({s.dims for s in inputs}) > 1:
        ctx.fail(f"the inputs must share dimensions, got {describe(inputs)}")
    for i, (x, init) in enumerate(zip(inputs, inits)):
        if init.rank != 0 or init.dtype != x.dtype:
            ctx.fail(f"initial value {i} must be a scalar of the type of input {x}, got {init}")
    return inputs, inits


def reduce_rule(ctx: RuleContext) -> Shape:
    inputs, inits = _inputs_and_inits(ctx)
    dims = ctx.ints("dimensions")
    ctx.check_dims(dims, inputs[0].rank, "dimensions")
    check_combiner(ctx, ctx.computation(0, "to_apply"), "to_apply", [s.dtype for s in inits])
    kept = tuple(size for d, size in enumerate(inputs[0].dims) if d not in dims)
    return tuple_or_single([Shape(s.dtype, kept) for s in inputs])


def reduce_window_rule(ctx: RuleContext) -> Shape:
    inputs, inits = _inputs_and_inits(ctx)
    base = inputs[0]
    window = window_of(ctx, base.rank)
    check_combiner(ctx, ctx.computation(0, "to_apply"), "to_apply", [s.dtype for s in inits])
    out = tuple(window.output_size(d, size) for d, size in enumerate(base.dims))
    return tuple_or_single([Shape(s.dtype, out) for s in inputs])


def select_and_scatter_rule(ctx: RuleContext) -> Shape:
    operand, source, init = ctx.arrays()
    if not operand.dtype == source.dtype == init.dtype or init.rank != 0:
        ctx.fail(f"operand, source and a scalar initial value must share one type, got "
                 f"{describe([operand, source, init])}")
    window = window_of(ctx, operand.rank)
    positions = tuple(window.output_size(d, size) for d, size in enumerate(operand.dims))
    if source.dims != positions:
        ctx.fail(f"the source {source} must have one element per window position "
                 f"{positions} of the window over {operand}")
    element = scalar(operand.dtype)
    ctx.check_signature(ctx.computation(0, "select"), "select", [element, element],
                        scalar(PRED))
    ctx.check_signature(ctx.computation(1, "scatter"), "scatter", [element, element], element)
    return Shape(operand.dtype, operand.dims)


def sort_rule(ctx: RuleContext) -> Shape:
    ctx.count(1)
    shapes = ctx.arrays()
    if len({s.dims for s in shapes}) > 1:
        ctx.fail(f"the operands must share dimensions, got {describe(shapes)}")
    dimension = ctx.attr("dimension")
    if not 0 <= int(dimension) < max(shapes[0].rank, 1):
        ctx.fail(f"dimension {dimension} is not a dimension of {shapes[0]}")
    params = [scalar(s.dtype) for s in shapes for _ in range(2)]
    ctx.check_signature(ctx.computation(0, "comparator"), "comparator", params, scalar(PRED))
    return tuple_or_single([Shape(s.dtype, s.dims) for s in shapes])


def _result_dtype(ctx: RuleContext, lhs: Shape, rhs: Shape) -> object:
    if ctx.declared is not None and not ctx.declared.is_tuple:
        return ctx.declared.dtype
    if lhs.dtype != rhs.dtype:
        ctx.fail(f"operands {lhs} and {rhs} differ in type and no result type was declared")
    return lhs.dtype


def dot_rule(ctx: RuleContext) -> Shape:
    lhs, rhs = ctx.array(0, "the lhs"), ctx.array(1, "the rhs")
    lc, rc = ctx.ints("lhs_contracting", ()), ctx.ints("rhs_contracting", ())
    lb, rb = ctx.ints("lhs_batch", ()), ctx.ints("rhs_batch", ())
    ctx.check_dims(lc + lb, lhs.rank, "lhs contracting + batch dimensions")
    ctx.check_dims(rc + rb, rhs.rank, "rhs contracting + batch dimensions")
    if len(lc) != len(rc) or len(lb) != len(rb):
        ctx.fail(f"lhs and rhs need as many contracting ({lc} vs {rc}) and batch ({lb} vs "
                 f"{rb}) dimensions")
    for kind, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        if [lhs.dims[d] for d in ld] != [rhs.dims[d] for d in rd]:
            ctx.fail(f"{kind} dimensions {ld} of {lhs} and {rd} of {rhs} differ in size")
    lhs_free = [s for d, s in enumerate(lhs.dims) if d not in lc + lb]
    rhs_free = [s for d, s in enumerate(rhs.dims) if d not in rc + rb]
    dims = tuple(lhs.dims[d] for d in lb) + tuple(lhs_free) + tuple(rhs_free)
    return Shape(_result_dtype(ctx, lhs, rhs), dims)


def convolution_rule(ctx: RuleContext) -> Shape:
    lhs, rhs = ctx.array(0, "the lhs"), ctx.array(1, "the rhs (kernel)")
    if lhs.rank != rhs.rank or lhs.rank < 2:
        ctx.fail(f"lhs {lhs} and kernel {rhs} must have one rank, at least 2")
    cd = conv_dims_of(ctx, lhs.rank, rhs.rank)
    window = window_of(ctx, len(cd.lhs_spatial))
    groups = int(ctx.attr("feature_group_count", 1))
    batch_groups = int(ctx.attr("batch_group_count", 1))
    batch, features = lhs.dims[cd.lhs_batch], lhs.dims[cd.lhs_feature]
    kernel_in, kernel_out = rhs.dims[cd.rhs_input], rhs.dims[cd.rhs_output]
    if groups < 1 or batch_groups < 1 or (groups > 1 and batch_groups > 1):
        ctx.fail(f"feature_group_count {groups} and batch_group_count {batch_groups} must be "
                 ">= 1 and not both above 1")
    if features % groups or features // groups != kernel_in:
        ctx.fail(f"lhs features {features} / feature_group_count {groups} must equal the "
                 f"kernel input features {kernel_in} (lhs {lhs}, kernel {rhs})")
    if kernel_out % groups or kernel_out % batch_groups or batch % batch_groups:
        ctx.fail(f"kernel output features {kernel_out} and lhs batch {batch} must divide by "
                 f"the group counts ({groups}, {batch_groups})")
    sizes = tuple(rhs.dims[d] for d in cd.rhs_spatial)
    if sizes != window.size:
        ctx.fail(f"window sizes {window.size} must equal the kernel spatial sizes {sizes} of "
                 f"{rhs}")
    out = [0] * lhs.rank
    out[cd.out_batch] = batch // batch_groups
    out[cd.out_feature] = kernel_out
    for i, d in enumerate(cd.out_spatial):
        out[d] = window.output_size(i, lhs.dims[cd.lhs_spatial[i]])
    dtype = _result_dtype(ctx, lhs, rhs)
    if dtypes.is_complex(lhs.dtype) != dtypes.is_complex(rhs.dtype):
        ctx.fail(f"lhs {lhs} and kernel {rhs} must both be complex or both real")
    return Shape(dtype, tuple(out))
