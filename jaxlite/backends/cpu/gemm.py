"""GEMM generated as LLVM IR: the CPU backend's `dot` (and batched `dot_general`).

Mirrors what XLA:CPU gets from Eigen/oneDNN, but generated per shape: `emit_gemm(spec)`
returns the LLVM IR of a Goto/BLIS-style blocked GEMM specialized for one `GemmSpec` (sizes,
strides, dtype, alpha/beta and a fused epilogue are all compile-time constants).

The loop nest of one work item (rows [r0, r1) x columns [c0, c1) of one batch entry):

    for jc in [c0, c1) by nc:                       # block of B: kc x nc
      for pc in [0, k) by kc:
        pack op(B)[pc:pc+kc, jc:jc+nc] into nr-wide panels      (gemm_pack)
        for ic in [r0, r1) by mc:                   # block of A: mc x kc, stays in L2
          pack op(A)[ic:ic+mc, pc:pc+kc] into mr-high panels
          for each nr panel of B (its kc x nr panel stays in L1):
            for each mr panel of A:
              micro-kernel: C[mr x nr] (+)= A panel @ B panel    (gemm_kernel)

`GemmPlan` (gemm_plan) says which functions the module exports, their parameters, the scratch
memory they need and the unit of parallel work. `build_gemm` adds the functions to an existing
llvmlite module (so that an executable's single module can hold GEMMs, fusions and the vector
math library together); `emit_gemm` makes a module of its own and returns its text.

Three shapes take other routes (decided in `plan_gemm`): a matrix-vector product C[m, 1] is
computed as C^T = op(B)^T op(A)^T so that vectors run along m; a single panel of rows reads
B in place instead of packing it (each element is used once); and one row of C against a B
that is contiguous along k becomes dot products (gemm_dot).

Differences from XLA: no call into a runtime library; the epilogue is fused into the
micro-kernel's stores instead of running as a separate loop.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable

from llvmlite import ir

from jaxlite.backends.cpu.gemm_dot import emit_dot_block
from jaxlite.backends.cpu.gemm_epilogue import (
    Epilogue,
    EpilogueContext,
    arg_type,
    bias_add,
    chain,
    relu,
    scale,
    scale_by,
    vector_call,
)
from jaxlite.backends.cpu.gemm_ir import (
    I64,
    PTR,
    counted_loop,
    define_function,
    i64,
    if_block,
    min_i64,
    scalar_type,
)
from jaxlite.backends.cpu.gemm_kernel import (
    MAX_K_SPLIT,
    MIN_FMA_CHAINS,
    TileShape,
    emit_micro_kernel,
)
from jaxlite.backends.cpu.gemm_pack import a_layout, b_layout, emit_packer, packer_arguments
from jaxlite.backends.cpu.gemm_plan import (
    DEFAULT_BLOCKING,
    GemmBlocking,
    GemmPlan,
    GemmSpec,
    plan_gemm,
)

__all__ = [
    "DEFAULT_BLOCKING", "Epilogue", "EpilogueContext", "GemmBlocking", "GemmPlan", "GemmSpec",
    "bias_add", "build_gemm", "chain", "emit_gemm", "emit_gemm_modules", "plan_gemm", "relu",
    "scale", "scale_by", "vector_call",
]

# Builds a function into the module it is given and returns it.
_Builder = Callable[[ir.Module], ir.Function]


def emit_gemm(spec: GemmSpec) -> str:
    """The LLVM IR text of a module holding the GEMM of `spec` (see `GemmPlan` for its API)."""
    module = ir.Module(name=spec.name)
    build_gemm(module, spec)
    return str(module)


def emit_gemm_modules(spec: GemmSpec) -> tuple[str, ...]:
    """The GEMM of `spec` as several modules to link together: first one per micro-kernel
    and packer, each named by a digest of its code, then the GEMM's loop nest calling them.

    GEMMs of one process share micro-kernels and packers whenever their code is the same
    (C's row stride, the epilogue and the edge tile decide it, not m, n or k), so a module
    with several GEMMs code-generates each of those large, unrolled functions once; the
    object code of a module text is cached (`native.compile_library`).
    """
    shared: list[str] = []
    module = ir.Module(name=spec.name)
    build_gemm(module, spec, shared)
    return (*shared, str(module))


def build_gemm(module: ir.Module, spec: GemmSpec, shared: list[str] | None = None
               ) -> GemmPlan:
    """Add the functions of the GEMM of `spec` to `module`; return its plan.

    With `shared`, micro-kernels and packers go into modules of their own, whose texts are
    appended to it, and `module` only declares them (see `emit_gemm_modules`)."""
    plan = plan_gemm(spec)
    range_fn = _emit_range(module, plan, shared)
    _emit_full(module, plan, range_fn)
    return plan


def _function(module: ir.Module, build: _Builder, shared: list[str] | None) -> ir.Function:
    """The function `build` makes: defined in `module`, or, with `shared`, defined in a
    module of its own under a name derived from its code and declared in `module`."""
    if shared is None:
        return build(module)
    alone = ir.Module(name="jl_gemm_part")
    fn = build(alone)
    defined = [g for g in alone.globals.values()
               if isinstance(g, ir.Function) and not g.is_declaration]
    if defined != [fn]:   # it brought helpers of its own: keep them private to the GEMM
        return build(module)
    fn.linkage = ""
    text = str(alone)
    digest = hashlib.sha256(text.replace(fn.name, "").encode()).hexdigest()[:20]
    name = f"jl_gemm_part.{digest}"
    text = text.replace(f'@"{fn.name}"', f'@"{name}"')
    if text not in shared:
        shared.append(text)
    existing = module.globals.get(name)
    return existing if existing is not None else ir.Function(module, fn.ftype, name=name)


def _typed(params: list[tuple[str, str]]) -> list[tuple[str, ir.Type]]:
    return [(name, arg_type(kind)) for name, kind in params]


def _emit_full(module: ir.Module, plan: GemmPlan, range_fn: ir.Function) -> ir.Function:
    fn, b = define_function(module, plan.full_name, _typed(plan.full_params()),
                            internal=False)
    args = {arg.name: arg for arg in fn.args}
    if plan.spec.scratch == "stack":
        scratch_type = ir.ArrayType(ir.IntType(8), max(plan.scratch_bytes, 1))
        scratch = b.alloca(scratch_type, name="scratch")
        scratch.align = 64
    else:
        scratch = args["scratch"]
    forwarded = [args[name] for name in ("a", "b", "c")]
    forwarded += [args[name] for name, _ in plan.epilogue_args]
    b.call(range_fn, forwarded + [scratch, i64(0), i64(plan.items)])
    b.ret_void()
    return fn


def _emit_range(module: ir.Module, plan: GemmPlan, shared: list[str] | None) -> ir.Function:
    """`@<name>.range(...)`: the work items [start, end), batch entry by batch entry."""
    block_fn = _emit_block(module, plan, shared)
    fn, b = define_function(module, plan.range_name, _typed(plan.range_params()),
                            internal=False)
    args = {arg.name: arg for arg in fn.args}
    if plan.items == 0:
        b.ret_void()
        return fn
    per_batch = i64(plan.items_per_batch)
    start, end = args["start"], args["end"]
    with if_block(b, b.icmp_signed("<", start, end), "nonempty"):
        first_batch = b.sdiv(start, per_batch)
        last_batch = b.sdiv(b.sub(end, i64(1)), per_batch)
        with counted_loop(b, first_batch, b.add(last_batch, i64(1)), 1, "batch") as batch:
            base = b.mul(batch, per_batch)
            u0 = b.sub(b.select(b.icmp_signed(">", start, base), start, base), base)
            u1 = min_i64(b, b.sub(end, base), per_batch)
            extent = plan.n if plan.split_dim == "n" else plan.m
            x0 = b.mul(u0, i64(plan.split_unit))
            x1 = min_i64(b, b.mul(u1, i64(plan.split_unit)), i64(extent))
            if plan.split_dim == "n":
                bounds = [i64(0), i64(plan.m), x0, x1]
            else:
                bounds = [x0, x1, i64(0), i64(plan.n)]
            sources = ("b", "a", "c") if plan.swapped else ("a", "b", "c")
            operands = []
            for name, strides in zip(sources, (plan.a_strides, plan.b_strides,
                                               plan.c_strides)):
                offset = b.mul(batch, i64(strides[0]))
                operands.append(b.gep(args[name], [offset], source_etype=_scalar(plan)))
            extra = [args[name] for name, _ in plan.epilogue_args]
            b.call(block_fn, operands + extra + [args["scratch"]] + bounds + [batch])
    b.ret_void()
    return fn


def _scalar(plan: GemmPlan) -> ir.Type:
    return scalar_type(plan.dtype)


def _tile_shapes(plan: GemmPlan) -> dict[tuple[bool, bool], TileShape]:
    """Micro-kernel shapes by (is row edge, is column edge), for the edges that exist."""
    blocking, lanes = plan.blocking, plan.lanes
    row_options = [(False, blocking.mr)] if plan.m >= blocking.mr else []
    if plan.m % blocking.mr:
        row_options.append((True, plan.m % blocking.mr))
    col_options = [(False, (blocking.nv, lanes, plan.nr))] if plan.n >= plan.nr else []
    if plan.n % plan.nr:
        width = plan.n % plan.nr
        vectors = -(-width // lanes)
        col_options.append((True, (vectors, width - (vectors - 1) * lanes, vectors * lanes)))
    shapes = {}
    for row_edge, rows in row_options:
        for col_edge, (vectors, valid, pitch) in col_options:
            if not plan.pack_b:   # B read in place: its row stride, no zero padding
                pitch = plan.b_strides[1]
            k_split = min(MAX_K_SPLIT, -(-MIN_FMA_CHAINS // (rows * vectors)))
            a_pitch = 0 if plan.pack_a else plan.a_strides[2]  # A read in place
            shapes[(row_edge, col_edge)] = TileShape(rows, vectors, valid, pitch,
                                                     not plan.pack_b, k_split, a_pitch)
    return shapes


def _emit_block(module: ir.Module, plan: GemmPlan, shared: list[str] | None) -> ir.Function:
    """`@<name>.block`: the loop nest over one rectangle of C of one batch entry."""
    spec, blocking = plan.spec, plan.blocking
    params = [("a", PTR), ("b", PTR), ("c", PTR)]
    params += [(name, arg_type(kind)) for name, kind in plan.epilogue_args]
    params += [("scratch", PTR), ("r0", I64), ("r1", I64), ("c0", I64), ("c1", I64),
               ("batch", I64)]
    if plan.dot_form:
        return emit_dot_block(module, plan, params)
    kernels = {key: _function(module, lambda m, t=tile: emit_micro_kernel(m, plan, t), shared)
               for key, tile in _tile_shapes(plan).items()}
    pack_a = (_function(module, lambda m: emit_packer(m, plan, f"{spec.name}.pack_a",
                                                      a_layout(plan)), shared)
              if plan.pack_a else None)
    pack_b = (_function(module, lambda m: emit_packer(m, plan, f"{spec.name}.pack_b",
                                                      b_layout(plan)), shared)
              if plan.pack_b else None)
    fn, b = define_function(module, f"{spec.name}.block", params, internal=True)
    args = {arg.name: arg for arg in fn.args}
    byte = ir.IntType(8)
    ap = b.gep(args["scratch"], [i64(plan.a_pack_offset)], source_etype=byte)
    bp = b.gep(args["scratch"], [i64(plan.b_pack_offset)], source_etype=byte)
    k_blocks = plan.k_blocks
    with counted_loop(b, args["c0"], args["c1"], blocking.nc, "jc") as jc:
        ncur = min_i64(b, i64(blocking.nc), b.sub(args["c1"], jc))
        with counted_loop(b, i64(0), i64(k_blocks), 1, "pc") as block:
            pc = b.mul(block, i64(blocking.kc))
            kcur = min_i64(b, i64(blocking.kc), b.sub(i64(plan.k), pc))
            first = b.icmp_signed("==", block, i64(0))
            last = b.icmp_signed("==", block, i64(k_blocks - 1))
            if plan.pack_b:
                b.call(pack_b, [args["b"], bp, jc, ncur, pc, kcur]
                       + packer_arguments(b_layout(plan)))
            else:   # the panels are B itself, from row pc and column jc
                offset = b.add(b.mul(pc, i64(plan.b_strides[1])), jc)
                bp = b.gep(args["b"], [offset], source_etype=_scalar(plan))
            with counted_loop(b, args["r0"], args["r1"], blocking.mc, "ic") as ic:
                mcur = min_i64(b, i64(blocking.mc), b.sub(args["r1"], ic))
                if plan.pack_a:
                    b.call(pack_a, [args["a"], ap, ic, mcur, pc, kcur]
                           + packer_arguments(a_layout(plan)))
                else:   # the panels are A itself, from row ic and depth pc
                    offset = b.add(ic, b.mul(pc, i64(plan.a_strides[2])))
                    ap = b.gep(args["a"], [offset], source_etype=_scalar(plan))
                state = _MacroState(plan, kernels, args, ap, bp, ic, mcur, jc, ncur, kcur,
                                    first, last)
                state.emit(b)
    b.ret_void()
    return fn


class _MacroState:
    """The two innermost loops (over B panels, then A panels) around the micro-kernels."""

    def __init__(self, plan: GemmPlan, kernels: dict[tuple[bool, bool], ir.Function],
                 args: dict[str, ir.Value], ap: ir.Value, bp: ir.Value, ic: ir.Value,
                 mcur: ir.Value, jc: ir.Value, ncur: ir.Value, kcur: ir.Value, first: ir.Value,
                 last: ir.Value):
        self.plan, self.kernels, self.args = plan, kernels, args
        self.ap, self.bp, self.ic, self.mcur = ap, bp, ic, mcur
        self.jc, self.ncur, self.kcur, self.first, self.last = jc, ncur, kcur, first, last

    def emit(self, b: ir.IRBuilder) -> None:
        nr = self.plan.nr
        n_full = b.udiv(self.ncur, i64(nr))
        col_edges = {col_edge for _, col_edge in self.kernels}
        if False in col_edges:
            with counted_loop(b, i64(0), n_full, 1, "jr") as q:
                self._column_panel(b, q, col_edge=False)
        if True in col_edges:
            has_edge = b.icmp_unsigned("!=", b.urem(self.ncur, i64(nr)), i64(0))
            with if_block(b, has_edge, "nedge"):
                self._column_panel(b, n_full, col_edge=True)

    def _column_panel(self, b: ir.IRBuilder, q: ir.Value, col_edge: bool) -> None:
        plan = self.plan
        nr, mr = plan.nr, plan.blocking.mr
        panel_offset = b.mul(q, b.mul(self.kcur, i64(nr)) if plan.pack_b else i64(nr))
        b_panel = b.gep(self.bp, [panel_offset], source_etype=_scalar(plan))
        col = b.add(self.jc, b.mul(q, i64(nr)))
        m_full = b.udiv(self.mcur, i64(mr))
        if (False, col_edge) in self.kernels:
            with counted_loop(b, i64(0), m_full, 1, "ir") as p:
                self._call(b, p, b_panel, col, row_edge=False, col_edge=col_edge)
        if (True, col_edge) in self.kernels:
            has_edge = b.icmp_unsigned("!=", b.urem(self.mcur, i64(mr)), i64(0))
            with if_block(b, has_edge, "medge"):
                self._call(b, m_full, b_panel, col, row_edge=True, col_edge=col_edge)

    def _call(self, b: ir.IRBuilder, p: ir.Value, b_panel: ir.Value, col: ir.Value,
              row_edge: bool, col_edge: bool) -> None:
        plan = self.plan
        mr = plan.blocking.mr
        step = b.mul(self.kcur, i64(mr)) if plan.pack_a else i64(mr)
        a_panel = b.gep(self.ap, [b.mul(p, step)], source_etype=_scalar(plan))
        row = b.add(self.ic, b.mul(p, i64(mr)))
        c_offset = b.add(b.mul(row, i64(plan.c_strides[1])), col)
        c_tile = b.gep(self.args["c"], [c_offset], source_etype=_scalar(plan))
        extra = [self.args[name] for name, _ in plan.epilogue_args]
        b.call(self.kernels[(row_edge, col_edge)],
               [a_panel, b_panel, self.kcur, c_tile, row, col, self.args["batch"], self.first,
                self.last] + extra)

