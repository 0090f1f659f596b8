"""The GEMM micro-kernel: one register block of C computed from one packed panel of A and of B.

A micro-kernel of shape `rows x vectors` keeps `rows * vectors` accumulator vectors (512-bit:
16 float32 or 8 float64 lanes) in registers. Each step of its k loop loads `vectors` vectors
of the packed B panel, broadcasts `rows` scalars of the packed A panel, and issues
`rows * vectors` FMAs; the loop is unrolled `unroll` times. Then it merges the accumulators
into C according to where its k block lies in the whole sum:

    first block:   C = alpha * acc + beta * C      (C not read when beta == 0)
    later blocks:  C = C + alpha * acc
    last block:    ... then C = epilogue(C)

The edge tiles of C use kernels with fewer rows or vectors, and masked loads and stores for
the lanes of the last vector that lie past the right edge; all of that is known at compile
time, so every kernel is specialized for its tile.
"""
from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from jaxlite.backends.cpu.gemm_epilogue import EpilogueContext, arg_type
from jaxlite.backends.cpu.gemm_ir import I1, I64, PTR, VectorOps, define_function, i64
from jaxlite.backends.cpu.gemm_plan import GemmPlan

CACHE_LINE = 64


@dataclass(frozen=True)
class TileShape:
    """One micro-kernel's block of C.

    rows : rows of C (<= mr).
    vectors : vectors per row (<= nv).
    last_valid : lanes of the last vector inside C (== lanes unless at the right edge).
    pitch : elements per k step in the packed B panel.
    """

    rows: int
    vectors: int
    last_valid: int
    pitch: int

    def suffix(self) -> str:
        return f"uk{self.rows}x{self.vectors}v{self.last_valid}"


def kernel_params(plan: GemmPlan) -> list[tuple[str, ir.Type]]:
    params = [("ap", PTR), ("bp", PTR), ("kc", I64), ("c", PTR), ("row", I64), ("col", I64),
              ("batch", I64), ("first", I1), ("last", I1)]
    return params + [(name, arg_type(kind)) for name, kind in plan.epilogue_args]


def emit_micro_kernel(module: ir.Module, plan: GemmPlan, tile: TileShape) -> ir.Function:
    """Define `@<name>.<tile>` (internal) in `module` and return it."""
    fn, builder = define_function(module, f"{plan.spec.name}.{tile.suffix()}",
                                  kernel_params(plan), internal=True)
    for arg in fn.args[:2] + fn.args[3:4]:
        arg.add_attribute("noalias")
    args = {arg.name: arg for arg in fn.args}
    ops = VectorOps(module, builder, plan.dtype, plan.lanes)
    if plan.blocking.prefetch_c:
        _prefetch_c(ops, plan, tile, args["c"])
    zero = ops.splat_constant(0.0)
    accs = [[zero] * tile.vectors for _ in range(tile.rows)]
    unroll = plan.blocking.unroll
    main_count = builder.udiv(args["kc"], i64(unroll))
    rest_count = builder.urem(args["kc"], i64(unroll))
    accs, ap, bp = _k_loop(ops, tile, accs, args["ap"], args["bp"], main_count, unroll, "main")
    accs, _, _ = _k_loop(ops, tile, accs, ap, bp, rest_count, 1, "rest")
    _store(ops, plan, tile, accs, args)
    builder.ret_void()
    return fn


def _prefetch_c(ops: VectorOps, plan: GemmPlan, tile: TileShape, c: ir.Value) -> None:
    row_bytes = tile.vectors * plan.lanes * ops.itemsize
    for i in range(tile.rows):
        for offset in range(0, row_bytes, CACHE_LINE):
            index = i * plan.c_strides[1] + offset // ops.itemsize
            ops.prefetch(ops.element(c, index), write=True)


def _k_loop(ops: VectorOps, tile: TileShape, accs: list[list[ir.Value]], ap: ir.Value,
            bp: ir.Value, count: ir.Value, steps: int,
            name: str) -> tuple[list[list[ir.Value]], ir.Value, ir.Value]:
    """`count` iterations of `steps` rank-1 updates; returns the accumulators and panel ends."""
    b = ops.builder
    fn = b.function
    entry = b.block
    header = fn.append_basic_block(f"{name}.head")
    body = fn.append_basic_block(f"{name}.body")
    exit_ = fn.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    left = b.phi(I64, name=f"{name}.left")
    ap_phi = b.phi(PTR, name=f"{name}.ap")
    bp_phi = b.phi(PTR, name=f"{name}.bp")
    acc_phis = [[b.phi(ops.vector, name=f"{name}.acc{i}_{j}") for j in range(tile.vectors)]
                for i in range(tile.rows)]
    left.add_incoming(count, entry)
    ap_phi.add_incoming(ap, entry)
    bp_phi.add_incoming(bp, entry)
    for phis, values in zip(acc_phis, accs):
        for phi, value in zip(phis, values):
            phi.add_incoming(value, entry)
    b.cbranch(b.icmp_unsigned("!=", left, i64(0)), body, exit_)

    b.position_at_end(body)
    current = [list(row) for row in acc_phis]
    for step in range(steps):
        b_vecs = [ops.load(ops.element(bp_phi, step * tile.pitch + j * ops.lanes))
                  for j in range(tile.vectors)]
        for i in range(tile.rows):
            a_vec = ops.splat(ops.load_scalar(ops.element(ap_phi, step * tile.rows + i)))
            for j in range(tile.vectors):
                current[i][j] = ops.fma(a_vec, b_vecs[j], current[i][j])
    next_ap = ops.element(ap_phi, steps * tile.rows)
    next_bp = ops.element(bp_phi, steps * tile.pitch)
    left.add_incoming(b.sub(left, i64(1)), body)
    ap_phi.add_incoming(next_ap, body)
    bp_phi.add_incoming(next_bp, body)
    for phis, values in zip(acc_phis, current):
        for phi, value in zip(phis, values):
            phi.add_incoming(value, body)
    b.branch(header)
    b.position_at_end(exit_)
    return acc_phis, ap_phi, bp_phi


def _store(ops: VectorOps, plan: GemmPlan, tile: TileShape, accs: list[list[ir.Value]],
           args: dict[str, ir.Value]) -> None:
    """Merge the accumulators into C; one straight-line block per (first, last) combination."""
    b = ops.builder
    fn = b.function
    spec = plan.spec
    has_epilogue = spec.epilogue is not None
    done = fn.append_basic_block("store.done")
    modes = [(first, last) for first in (False, True) for last in (False, True)]
    if not has_epilogue:
        modes = [(False, False), (True, False)]
    blocks = {mode: fn.append_basic_block(f"store.first{int(mode[0])}.last{int(mode[1])}")
              for mode in modes}
    selector = b.zext(args["first"], I64)
    selector = b.shl(selector, i64(1))
    if has_epilogue:
        selector = b.or_(selector, b.zext(args["last"], I64))
    switch = b.switch(selector, blocks[modes[0]])
    for mode in modes:
        switch.add_case(i64(2 * mode[0] + (mode[1] if has_epilogue else 0)), blocks[mode])
    for (first, last), block in blocks.items():
        b.position_at_end(block)
        _store_mode(ops, plan, tile, accs, args, first, last)
        b.branch(done)
    b.position_at_end(done)


def _store_mode(ops: VectorOps, plan: GemmPlan, tile: TileShape, accs: list[list[ir.Value]],
                args: dict[str, ir.Value], first: bool, last: bool) -> None:
    b = ops.builder
    spec = plan.spec
    row_stride = plan.c_strides[1]
    alpha = ops.splat_constant(spec.alpha)
    for i in range(tile.rows):
        for j in range(tile.vectors):
            valid = tile.last_valid if j == tile.vectors - 1 else ops.lanes
            ptr = ops.element(args["c"], i * row_stride + j * ops.lanes)
            acc = accs[i][j]
            if first and spec.beta == 0.0:
                value = ops.scale(acc, spec.alpha)
            elif first:
                old = ops.scale(ops.load(ptr, valid), spec.beta)
                value = ops.fma(alpha, acc, old) if spec.alpha != 1.0 else b.fadd(acc, old)
            else:
                old = ops.load(ptr, valid)
                value = ops.fma(alpha, acc, old) if spec.alpha != 1.0 else b.fadd(acc, old)
            if last and spec.epilogue is not None:
                context = EpilogueContext(b, ops, {n: args[n] for n, _ in plan.epilogue_args},
                                          args["batch"], valid)
                row = b.add(args["row"], i64(i))
                col = b.add(args["col"], i64(j * ops.lanes))
                value = spec.epilogue.emit(context, value, row, col)
            ops.store(value, ptr, valid)
