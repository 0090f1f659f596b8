"""The row-times-matrix GEMM in dot-product form, for a single row of C and B rows along k.

When C has one row (m == 1, after the matrix-vector swap of `GemmPlan`) and op(B) is
contiguous along k (B stored transposed, or A row-major in a swapped matrix-vector product),
every element of B is used exactly once: packing it would double the memory traffic, and
the broadcast micro-kernel would need a gather per vector. Instead each output C[0, n] is
the dot product of A's row with B's n-th column, which is contiguous:

    for each group of `lanes` columns n0..n0+lanes-1 (one output vector):
        acc[r] = sum over k in vectors of A[0, k:k+lanes] * B[k:k+lanes, n0 + r]   (FMA)
        out = transpose(acc) summed over rows          # out[r] = sum of the lanes of acc[r]
        store out like a 1 x 1-vector tile (alpha, beta, epilogue, masked at the edge)

`lanes` independent accumulators keep the FMA pipes busy while the loads stream B once.
"""
from __future__ import annotations

from llvmlite import ir

from jaxlite.backends.cpu.gemm_epilogue import arg_type
from jaxlite.backends.cpu.gemm_ir import (
    I64,
    PTR,
    VectorOps,
    counted_loop,
    define_function,
    i64,
    if_block,
    mark_final_loop,
    streams_without_set_conflicts,
    transpose_vectors,
)
from jaxlite.backends.cpu.gemm_kernel import TileShape, store_tile
from jaxlite.backends.cpu.gemm_plan import GemmPlan


def emit_dot_block(module: ir.Module, plan: GemmPlan, params: list[tuple[str, ir.Type]]
                   ) -> ir.Function:
    """The block function (same parameters as the blocked one) over columns [c0, c1)."""
    lanes, name = plan.lanes, plan.spec.name
    groups = {False: _emit_group(module, plan, lanes)} if plan.n >= lanes else {}
    if plan.n % lanes:
        groups[True] = _emit_group(module, plan, plan.n % lanes)
    fn, b = define_function(module, f"{name}.block", params, internal=True)
    args = {arg.name: arg for arg in fn.args}
    extra = [args[arg] for arg, _ in plan.epilogue_args]
    width = b.sub(args["c1"], args["c0"])
    full = b.udiv(width, i64(lanes))
    operands = [args["a"], args["b"], args["c"]]
    if False in groups:
        with counted_loop(b, i64(0), full, 1, "group") as g:
            n0 = b.add(args["c0"], b.mul(g, i64(lanes)))
            b.call(groups[False], operands + [n0, args["batch"]] + extra)
    if True in groups:
        has_edge = b.icmp_unsigned("!=", b.urem(width, i64(lanes)), i64(0))
        with if_block(b, has_edge, "edge"):
            n0 = b.add(args["c0"], b.mul(full, i64(lanes)))
            b.call(groups[True], operands + [n0, args["batch"]] + extra)
    b.ret_void()
    return fn


def _emit_group(module: ir.Module, plan: GemmPlan, rows: int) -> ir.Function:
    """`@<name>.dot<rows>(a, b, c, n0, batch, <epilogue args>)`: C[0, n0:n0+rows]."""
    params = [("a", PTR), ("b", PTR), ("c", PTR), ("n0", I64), ("batch", I64)]
    params += [(arg, arg_type(kind)) for arg, kind in plan.epilogue_args]
    fn, b = define_function(module, f"{plan.spec.name}.dot{rows}", params, internal=True)
    args = {arg.name: arg for arg in fn.args}
    ops = VectorOps(module, b, plan.dtype, plan.lanes)
    lanes, k = plan.lanes, plan.k
    b_rows = [ops.element(args["b"], b.mul(b.add(args["n0"], i64(r)), i64(plan.b_strides[2])))
              for r in range(rows)]
    zero = ops.splat_constant(0.0)
    # Rows of B streamed together: at most 8 (enough FMA chains), fewer when their stride
    # would put them into the same L1 sets.
    per_pass = streams_without_set_conflicts(plan.b_strides[2] * ops.itemsize, 8)
    accs = []
    for first in range(0, rows, per_pass):
        accs += _dot_loop(ops, args["a"], b_rows[first:first + per_pass], k - k % lanes)
    if k % lanes:   # the last partial vector along k, zeros past the end
        a_vec = ops.load(ops.element(args["a"], k - k % lanes), k % lanes)
        accs = [ops.fma(a_vec, ops.load(ops.element(row, k - k % lanes), k % lanes), acc)
                for row, acc in zip(b_rows, accs)]
    columns = transpose_vectors(b, accs + [zero] * (lanes - rows))
    total = columns[0]
    for column in columns[1:]:
        total = b.fadd(total, column)
    c_tile = ops.element(args["c"], args["n0"])
    store_args = dict(args, c=c_tile, row=i64(0), col=args["n0"])
    store_tile(ops, plan, TileShape(1, 1, rows, 0), [[total]], store_args, True, True)
    b.ret_void()
    return fn


def _dot_loop(ops: VectorOps, a: ir.Value, b_rows: list[ir.Value], stop: int
              ) -> list[ir.Value]:
    """Accumulators after `for k in [0, stop) by lanes: acc[r] += a[k:] * b_rows[r][k:]`."""
    b = ops.builder
    fn = b.function
    entry = b.block
    header = fn.append_basic_block("dot.head")
    body = fn.append_basic_block("dot.body")
    exit_ = fn.append_basic_block("dot.exit")
    b.branch(header)
    b.position_at_end(header)
    k = b.phi(I64, name="k")
    k.add_incoming(i64(0), entry)
    phis = [b.phi(ops.vector, name=f"acc{r}") for r in range(len(b_rows))]
    for phi in phis:
        phi.add_incoming(ops.splat_constant(0.0), entry)
    b.cbranch(b.icmp_signed("<", k, i64(stop)), body, exit_)
    b.position_at_end(body)
    a_vec = ops.load(ops.element(a, k))
    for phi, row in zip(phis, b_rows):
        phi.add_incoming(ops.fma(a_vec, ops.load(ops.element(row, k)), phi), body)
    k.add_incoming(b.add(k, i64(ops.lanes)), body)
    mark_final_loop(ops.module, b.branch(header))
    b.position_at_end(exit_)
    return list(phis)
