"""Kernels of reduction (kInput) fusions: row kernels (mirrors XLA's CPU reduction emitter and
the GPU softmax fusion's row kernel).

When every reduction of the fusion reduces the same, most minor, dimensions of operands of
the same shape, the kernel runs one *row* (one index of the kept dimensions) at a time: the
reductions make passes over the row in waves (a reduction that reads another one's result
comes in a later wave; independent ones share a pass), each wave with vector accumulators
(`reduction.reduce_pass`); their results are bound as per-row scalars; then the outputs are
computed: per-row outputs once, full-size outputs in a last vectorized pass over the row
(softmax, layernorm: the row stays in L1 between the passes). A transcendental full-row
value that several passes need (softmax's exp) is computed once: the first pass keeps it in
a stack buffer of one row, the later passes read it from there. The outermost kept loop is the
one a worker pool may split; a full reduction is one row.

Any other reduction fusion (column reductions, reductions over different dimensions merged
into one multi-output fusion) runs as a loop fusion whose reductions are computed by inner
loops at each output index (`loop_kernel`): a column reduction so keeps one column per lane.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from jaxlite.backends.cpu.codegen.elemental import Elemental, RowCache
from jaxlite.backends.cpu.codegen.indexing import Flat, Lin, Multi, memory_order, strides_of
from jaxlite.backends.cpu.codegen.kernel import (DEFAULT_UNROLL, Kernel, KernelContext,
                                                 element_cost, emitter, kernel_function,
                                                 lanes_for)
from jaxlite.backends.cpu.codegen.loop_kernel import (MAX_LANES, emit_loop_fusion,
                                                     emitted_once_per_structure,
                                                     fusion_outputs)
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder, llvm_elem
from jaxlite.backends.cpu.codegen.loops import Emitters, loop_nest
from jaxlite.backends.cpu.codegen.mathfns import MATH_OPCODES
from jaxlite.backends.cpu.codegen.movement import row_major_layout
from jaxlite.backends.cpu.codegen.reduction import install_inner_loops, reduce_pass
from jaxlite.xla.ir import HloInstruction, post_order
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.tiling import tiling_of

__all__ = ["emit_input_fusion", "row_plan", "RowPlan"]

_O = Opcode


@dataclass(frozen=True)
class RowPlan:
    """How a row kernel runs: the iteration space, its loop order split into kept and
    reduced dimensions, the reductions in waves, and each output's kind ("row": one value
    per row, "full": one per element of the iteration space)."""

    dims: tuple[int, ...]
    kept_order: tuple[int, ...]
    reduced_order: tuple[int, ...]
    waves: tuple[tuple[HloInstruction, ...], ...]
    output_kinds: tuple[str, ...]


def _squeezed(dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in dims if d != 1)


def row_plan(fusion: HloInstruction) -> RowPlan | None:
    """The row kernel of a reduction fusion, or None when it is not one."""
    comp = fusion.called[0]
    reduces = [i for i in comp.instructions if i.opcode is _O.REDUCE]
    if not reduces:
        return None
    operand = reduces[0].operands[0].shape
    reduced = tuple(sorted(reduces[0].attr("dimensions")))
    for r in reduces:
        if r.operands[0].shape.dims != operand.dims or tuple(
                sorted(r.attr("dimensions"))) != reduced:
            return None
    dims = operand.dims
    tiling = tiling_of(fusion)
    if tiling is not None and tuple(tiling.iteration_shape) == dims:
        order = tuple(tiling.loop_order)
    else:
        order = memory_order(dims, operand.layout)
    if reduced and set(order[len(order) - len(reduced):]) != set(reduced):
        return None
    kept_order = order[:len(order) - len(reduced)]
    kept_dims = tuple(dims[d] for d in sorted(kept_order))
    kinds = []
    for value, stored in fusion_outputs(fusion):
        if stored.is_tuple:
            return None
        if stored.dims == dims:
            kinds.append("full")
        elif _squeezed(stored.dims) == _squeezed(kept_dims) and (
                stored.dims == kept_dims or tuple(stored.layout or ()) == row_major_layout(
                    stored.rank)):
            kinds.append("row")
        else:
            return None
    return RowPlan(dims, kept_order, order[len(kept_order):], _waves(reduces),
                   tuple(kinds))


def _waves(reduces: list[HloInstruction]) -> tuple[tuple[HloInstruction, ...], ...]:
    """Reductions grouped so that each reads only results of earlier groups."""
    level: dict[int, int] = {}
    ids = {id(r) for r in reduces}
    for r in reduces:  # topological order: a reduce's inputs come first
        upstream = [level[id(v)] for v in post_order(r.operands) if id(v) in ids]
        level[id(r)] = 1 + max(upstream, default=-1)
    count = 1 + max(level.values())
    return tuple(tuple(r for r in reduces if level[id(r)] == k) for k in range(count))


# Bytes of one row's cached values a row kernel keeps on its stack, at most.
_ROW_CACHE_BYTES = 64 * 1024


def _passes(plan: RowPlan, outputs: list[tuple[HloInstruction, object]]
            ) -> dict[int, tuple[HloInstruction, list[int]]]:
    """For each full-row value: the passes over the row that compute it (pass k < len(waves)
    computes wave k's reductions, the last pass the full-size outputs)."""
    found: dict[int, tuple[HloInstruction, list[int]]] = {}
    roots = [[o for r in wave for o in r.operands[:len(r.operands) // 2]]
             for wave in plan.waves]
    roots.append([v for (v, _), kind in zip(outputs, plan.output_kinds) if kind == "full"])
    for number, values in enumerate(roots):
        seen: set[int] = set()
        stack = list(values)
        while stack:
            inst = stack.pop()
            if id(inst) in seen or inst.opcode is _O.REDUCE:
                continue
            seen.add(id(inst))
            if not inst.shape.is_tuple and inst.shape.dims == plan.dims:
                found.setdefault(id(inst), (inst, []))[1].append(number)
            stack.extend(inst.operands)
    return found


def _row_cache(fb: FunctionBuilder, fusion: HloInstruction, plan: RowPlan,
               outputs: list[tuple[HloInstruction, object]]) -> list[RowCache]:
    """Transcendental full-row values that several passes need (softmax's exp): the first
    pass stores them in a stack buffer of one row, the later ones read them back (from L1)
    instead of computing them again."""
    row = math.prod(plan.dims[d] for d in plan.reduced_order)
    strides = strides_of(plan.dims, None)
    caches, budget = [], _ROW_CACHE_BYTES
    for inst, passes in _passes(plan, outputs).values():
        dtype = inst.shape.dtype
        if len(passes) < 2 or inst.opcode not in MATH_OPCODES or dtype.kind not in "f":
            continue
        elem = llvm_elem(dtype)
        size = row * (8 if elem == "double" else 4)
        if size > budget:
            continue
        budget -= size
        buffer = fb.alloca(f"[{row} x {elem}]", 64, "rowcache")
        row_strides = {d: strides[d] for d in plan.reduced_order}
        caches.append(RowCache(inst, buffer, min(passes), row_strides))
    return caches


def _cache_modes(e: Elemental, caches: list[RowCache], number: int) -> None:
    for cache in caches:
        if number == cache.first_pass:
            e.cached[id(cache.inst)] = (cache, "store")
        elif number > cache.first_pass:
            e.cached[id(cache.inst)] = (cache, "load")


@emitted_once_per_structure
def emit_input_fusion(ctx: KernelContext, fusion: HloInstruction, noalias: bool) -> Kernel:
    """The kernel of a reduction fusion (see the module docstring)."""
    plan = row_plan(fusion)
    if plan is None:
        return emit_loop_fusion(ctx, fusion, noalias)
    outputs = fusion_outputs(fusion)
    fb, ins, outs = kernel_function(len(fusion.operands), len(outputs), noalias)
    tiling = tiling_of(fusion)
    dims = plan.dims
    inner = plan.reduced_order[-1] if plan.reduced_order else None
    reduce_dtype = plan.waves[0][0].operands[0].shape.dtype
    width = lanes_for(reduce_dtype, dims[inner] if inner is not None else 1)
    if tiling is not None and tuple(tiling.iteration_shape) == dims:
        width = tiling.vector_width
    width = max(1, min(width, MAX_LANES))
    em = emitter(ctx, fb, 1, ins)
    install_inner_loops(em)
    ems = Emitters(em)
    kept_sorted = sorted(plan.kept_order)
    kept_dims = tuple(dims[d] for d in kept_sorted)
    reduces = [r for wave in plan.waves for r in wave]

    cached = _row_cache(fb, fusion, plan, outputs)

    def row(e: Elemental, parts: dict[int, Lin], copy: int) -> None:
        for r in reduces:
            e.bound.pop(id(r), None)
            e.tuples.pop(id(r), None)
        for number, wave in enumerate(plan.waves):
            _cache_modes(e, cached, number)
            for r, values in zip(wave, reduce_pass(e, wave, parts, plan.reduced_order, width,
                                                   DEFAULT_UNROLL)):
                if r.shape.is_tuple:
                    e.tuples[id(r)] = values
                else:
                    e.bind(r, values[0])
        kept_lin = e.ix.offset(Multi(tuple(parts[d] for d in kept_sorted)), kept_dims,
                               row_major_layout(len(kept_dims)))
        full = []
        for k, ((value, stored), kind) in enumerate(zip(outputs, plan.output_kinds)):
            if kind == "full":
                full.append(k)
                continue
            index = Flat(kept_lin, stored.dims, row_major_layout(stored.rank)) \
                if stored.dims != kept_dims else Multi(tuple(parts[d] for d in kept_sorted))
            e.store(outs[k], e.ix.offset(index, stored.dims, stored.layout),
                    e.value(value, index))
        _cache_modes(e, cached, len(plan.waves))
        if full:
            def element(v: Elemental, red: dict[int, Lin], copy: int) -> None:
                merged = {**parts, **red}
                index = Multi(tuple(merged[d] for d in range(len(dims))))
                for k in full:
                    value, stored = outputs[k]
                    v.store(outs[k], v.ix.offset(index, stored.dims, stored.layout),
                            v.value(value, index))
            inner_ems = Emitters(e.with_width(width) if width > 1 else e.with_width(1))
            loop_nest(fb, inner_ems, plan.reduced_order, dims, width, DEFAULT_UNROLL, element)

    parallel = bool(plan.kept_order)
    loop_nest(fb, ems, plan.kept_order, dims, 1, 1, row,
              outer_range=("%lo", "%hi") if parallel else None, vector_inner=False)
    fb.ret_void()
    units = dims[plan.kept_order[0]] if parallel else 0
    return Kernel(fb.text(), len(ins), len(outs), units, 1,
                  math.prod(dims) * element_cost(fusion.called[0]))
