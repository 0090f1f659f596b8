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

from llvmlite import ir

from jaxlite.backends.cpu.gemm_epilogue import EpilogueContext, arg_type
from jaxlite.backends.cpu.gemm_ir import (
    I1,
    I64,
    PTR,
    VectorOps,
    define_function,
    i64,
    mark_final_loop,
)
from jaxlite.backends.cpu.gemm_plan import GemmPlan

CACHE_LINE = 64
# Independent accumulators needed to hide the FMA latency (4 cycles, 2 pipes on Zen 4), and
# the most accumulator sets a small tile may split its k loop into to get there.
MIN_FMA_CHAINS = 8
MAX_K_SPLIT = 4


@dataclass(frozen=True)
class TileShape:
    """One micro-kernel's block of C.

    rows : rows of C (<= mr).
    vectors : vectors per row (<= nv).
    last_valid : lanes of the last vector inside C (== lanes unless at the right edge).
    pitch : elements per k step in the B panel.
    b_masked : B is read in place, so the last vector's lanes past C's edge are not there to
        load (a packed panel has zeros there).
    k_split : independent sets of accumulators, used by turns along k and summed at the end
        (for tiles too small to keep MIN_FMA_CHAINS FMAs in flight).
    a_pitch : elements per k step in the A panel (0: a packed panel, `rows`).
    """

    rows: int
    vectors: int
    last_valid: int
    pitch: int
    b_masked: bool = False
    k_split: int = 1
    a_pitch: int = 0

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
    sets = [[[zero] * tile.vectors for _ in range(tile.rows)] for _ in range(tile.k_split)]
    steps = max(plan.blocking.unroll, tile.k_split)
    main_count = builder.udiv(args["kc"], i64(steps))
    sets, ap, bp = _k_loop(ops, tile, sets, args["ap"], args["bp"], main_count, steps, "main")
    if steps > 1:
        rest_count = builder.urem(args["kc"], i64(steps))
        sets[:1], _, _ = _k_loop(ops, tile, sets[:1], ap, bp, rest_count, 1, "rest")
    accs = sets[0]
    for other in sets[1:]:
        accs = [[builder.fadd(x, y) for x, y in zip(row, other_row)]
                for row, other_row in zip(accs, other)]
    _store(ops, plan, tile, accs, args)
    builder.ret_void()
    return fn


def _prefetch_c(ops: VectorOps, plan: GemmPlan, tile: TileShape, c: ir.Value) -> None:
    row_bytes = tile.vectors * plan.lanes * ops.itemsize
    for i in range(tile.rows):
        for offset in range(0, row_bytes, CACHE_LINE):
            index = i * plan.c_strides[1] + offset // ops.itemsize
            ops.prefetch(ops.element(c, index), write=True)


def _k_loop(ops: VectorOps, tile: TileShape, sets: list[list[list[ir.Value]]], ap: ir.Value,
            bp: ir.Value, count: ir.Value, steps: int,
            name: str) -> tuple[list[list[list[ir.Value]]], ir.Value, ir.Value]:
    """`count` iterations of `steps` rank-1 updates, step s into accumulator set s % len(sets).

    Returns the accumulator sets after the loop and the panel pointers past its end.
    """
    b = ops.builder
    fn = b.function
    entry = b.block
    a_step = tile.a_pitch or tile.rows
    header = fn.append_basic_block(f"{name}.head")
    body = fn.append_basic_block(f"{name}.body")
    exit_ = fn.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    left = b.phi(I64, name=f"{name}.left")
    ap_phi = b.phi(PTR, name=f"{name}.ap")
    bp_phi = b.phi(PTR, name=f"{name}.bp")
    phis = [[[b.phi(ops.vector, name=f"{name}.acc{s}_{i}_{j}") for j in range(tile.vectors)]
             for i in range(tile.rows)] for s in range(len(sets))]
    left.add_incoming(count, entry)
    ap_phi.add_incoming(ap, entry)
    bp_phi.add_incoming(bp, entry)
    for phi, value in zip(_flat(phis), _flat(sets)):
        phi.add_incoming(value, entry)
    b.cbranch(b.icmp_unsigned("!=", left, i64(0)), body, exit_)

    b.position_at_end(body)
    current = [[list(row) for row in acc_set] for acc_set in phis]
    for step in range(steps):
        accs = current[step % len(current)]
        b_vecs = []
        for j in range(tile.vectors):
            valid = tile.last_valid if tile.b_masked and j == tile.vectors - 1 else None
            b_vecs.append(ops.load(ops.element(bp_phi, step * tile.pitch + j * ops.lanes),
                                   valid))
        for i in range(tile.rows):
            a_vec = ops.splat(ops.load_scalar(ops.element(ap_phi, step * a_step + i)))
            for j in range(tile.vectors):
                accs[i][j] = ops.fma(a_vec, b_vecs[j], accs[i][j])
    left.add_incoming(b.sub(left, i64(1)), body)
    ap_phi.add_incoming(ops.element(ap_phi, steps * a_step), body)
    bp_phi.add_incoming(ops.element(bp_phi, steps * tile.pitch), body)
    for phi, value in zip(_flat(phis), _flat(current)):
        phi.add_incoming(value, body)
    mark_final_loop(ops.module, b.branch(header))
    b.position_at_end(exit_)
    return phis, ap_phi, bp_phi


def _flat(sets: list[list[list[ir.Value]]]) -> list[ir.Value]:
    return [value for acc_set in sets for row in acc_set for value in row]


def store_modes(plan: GemmPlan) -> list[tuple[bool, bool]]:
    """The (first, last) positions of a k block that occur; `last` only matters with an
    epilogue."""
    if plan.k_blocks == 1:
        return [(True, True)]
    if plan.spec.epilogue is None:
        return [(True, False), (False, False)]
    return [(True, False), (False, False), (False, True)]


def _store(ops: VectorOps, plan: GemmPlan, tile: TileShape, accs: list[list[ir.Value]],
           args: dict[str, ir.Value]) -> None:
    """Merge the accumulators into C; one straight-line block per (first, last) that occurs."""
    b = ops.builder
    modes = store_modes(plan)
    if len(modes) == 1:
        store_tile(ops, plan, tile, accs, args, *modes[0])
        return
    fn = b.function
    done = fn.append_basic_block("store.done")
    blocks = {mode: fn.append_basic_block(f"store.first{int(mode[0])}.last{int(mode[1])}")
              for mode in modes}
    selector = b.shl(b.zext(args["first"], I64), i64(1))
    if plan.spec.epilogue is not None:
        selector = b.or_(selector, b.zext(args["last"], I64))
    switch = b.switch(selector, blocks[modes[0]])
    for first, last in modes[1:]:
        case = 2 * first + (last if plan.spec.epilogue is not None else 0)
        switch.add_case(i64(case), blocks[(first, last)])
    for (first, last), block in blocks.items():
        b.position_at_end(block)
        store_tile(ops, plan, tile, accs, args, first, last)
        b.branch(done)
    b.position_at_end(done)


def store_tile(ops: VectorOps, plan: GemmPlan, tile: TileShape, accs: list[list[ir.Value]],
               args: dict[str, ir.Value], first: bool, last: bool) -> None:
    """Merge `accs` (alpha * acc, beta * C on the first k block, the epilogue on the last) into
    the tile of C at args["c"] (row args["row"], column args["col"] of batch args["batch"]).
    """
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
