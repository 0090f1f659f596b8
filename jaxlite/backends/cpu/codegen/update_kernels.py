"""Kernels that write parts of an array: dynamic-update-slice, scatter and select-and-scatter
(mirrors XLA's CPU emitters for kDynamicUpdateSlice, kScatter and kSelectAndScatter).

Both first copy the operand into the result (skipped at run time when buffer assignment put
them in the same memory), then write: dynamic-update-slice stores the update, a vectorized
loop nest over it, at its start indices clamped into the array; scatter visits the update
elements in row-major order, one at a time (later updates of an element see earlier ones,
as the evaluator's semantics require), computes each element's target from the scatter
indices and combines it with the combiner computation, skipping the windows that do not fit
in the operand entirely.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite.backends.cpu.codegen.elemental import Elemental
from jaxlite.backends.cpu.codegen.indexing import Lin, Multi, Var
from jaxlite.backends.cpu.codegen.kernel import (DEFAULT_UNROLL, Kernel, KernelContext,
                                                 emitter, kernel_function, lanes_for)
from jaxlite.backends.cpu.codegen.llvm_text import I64, FunctionBuilder, Val, llvm_elem
from jaxlite.backends.cpu.codegen.loops import Emitters, loop_nest
from jaxlite.backends.cpu.codegen.movement import saturate_unsigned_start
from jaxlite.backends.cpu.codegen.reduction import apply_computation
from jaxlite.backends.cpu.codegen.window_loops import (all_of, taps_loop, window_of_instruction,
                                                       window_position)
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["emit_dynamic_update_slice", "emit_scatter", "emit_select_and_scatter"]

_O = Opcode
_PRED = np.dtype(np.bool_)


def _params(inst: HloInstruction) -> list[HloInstruction]:
    """Stand-ins for the operands, read through the kernel's input pointers."""
    return [HloInstruction(f"param_{k}", _O.PARAMETER, o.shape, attrs={"number": k})
            for k, o in enumerate(inst.operands)]


def _copy(fb: FunctionBuilder, dest: str, src: str, size: int) -> None:
    if size == 0:
        return
    differ = fb.op(f"icmp ne ptr {dest}, {src}", "ne")
    with fb.if_then(differ, "copy"):
        fb.do(f"call void @llvm.memmove.p0.p0.i64(ptr {dest}, ptr {src}, i64 {size}, "
              "i1 false)")


def _index(em: Elemental, inst: HloInstruction, limit: int | None = None) -> Lin:
    """A scalar integer operand as an index component (a uint64 one saturated at `limit`
    first, so that values past 2**63 do not turn negative)."""
    value = em.value(inst, Multi(()))
    if limit is not None:
        value = saturate_unsigned_start(em, value, max(limit, 0))
    value = em.arith.convert(value, I64)
    return em.ix.from_value(value.ref, 1)


def emit_dynamic_update_slice(ctx: KernelContext, inst: HloInstruction,
                              noalias: bool) -> Kernel:
    fb, ins, outs = kernel_function(len(inst.operands), 1, noalias)
    params = _params(inst)
    update = params[1]
    _copy(fb, outs[0], ins[0], inst.shape.nbytes)
    dims, sizes = inst.shape.dims, update.shape.dims
    if math.prod(sizes) > 0:
        inner = update.shape.layout[0] if update.shape.rank else 0
        width = lanes_for(update.shape.dtype, sizes[inner] if sizes else 1)
        em = emitter(ctx, fb, min(width, 16), ins)
        starts = [em.ix.clamp(_index(em, p, d - n), 0, d - n)
                  for p, d, n in zip(params[2:], dims, sizes)]
        order = tuple(reversed(update.shape.layout or ()))

        def body(e: Elemental, parts: dict[int, Lin], copy: int) -> None:
            at = Multi(tuple(parts[d] for d in range(len(sizes))))
            target = Multi(tuple(s + p for s, p in zip(starts, at.parts)))
            e.store(outs[0], e.ix.offset(target, dims, inst.shape.layout),
                    e.value(update, at))
        loop_nest(fb, Emitters(em), order, sizes, em.width, DEFAULT_UNROLL, body)
    fb.ret_void()
    return Kernel(fb.text(), len(ins), 1, 0, 1, math.prod(sizes))


def emit_scatter(ctx: KernelContext, inst: HloInstruction, noalias: bool) -> Kernel:
    count = (len(inst.operands) - 1) // 2
    fb, ins, outs = kernel_function(len(inst.operands), count, noalias)
    params = _params(inst)
    arrays, indices, updates = params[:count], params[count], params[count + 1:]
    for k, array in enumerate(arrays):
        _copy(fb, outs[k], ins[k], array.shape.nbytes)
    a = inst.attr
    shape = arrays[0].shape
    update_dims = updates[0].shape.dims
    window_positions = list(a("update_window_dims"))
    batching = list(a("input_batching_dims", ()))
    index_batching = list(a("scatter_indices_batching_dims", ()))
    vector_dim = int(a("index_vector_dim"))
    skipped = set(a("inserted_window_dims", ())) | set(batching)
    window = [d for d in range(shape.rank) if d not in skipped]
    extent = [1] * shape.rank
    for k, d in enumerate(window):
        extent[d] = update_dims[window_positions[k]]
    scatter_positions = [p for p in range(len(update_dims)) if p not in window_positions]
    em = emitter(ctx, fb, 1, ins)
    comp = inst.called[0]

    def body(e: Elemental, parts: dict[int, Lin], copy: int) -> None:
        at = [parts[p] for p in range(len(update_dims))]
        spots = [at[p] for p in scatter_positions]
        starts: list[Lin] = [Lin()] * shape.rank
        for k, d in enumerate(a("scatter_dims_to_operand_dims")):
            where = list(spots)
            if vector_dim < indices.shape.rank:
                where.insert(vector_dim, Lin.of(k))
            value = e.arith.convert(e.value(indices, Multi(tuple(where))), I64)
            starts[d] = e.ix.from_value(value.ref, 1)
        for d, index_dim in zip(batching, index_batching):
            starts[d] = spots[index_dim - (index_dim > vector_dim)]
        fits: Val | None = None
        for d in range(shape.rank):
            for pred, bound in (("sge", 0), ("sle", shape.dims[d] - extent[d])):
                ref, _ = e.ix.compare(pred, starts[d], bound)
                c = Val(ref, "i1", 1, _PRED)
                fits = c if fits is None else e.arith.binary(_O.AND, fits, c)
        target = Multi(tuple(starts[d] + (at[window_positions[window.index(d)]]
                                          if d in window else Lin())
                             for d in range(shape.rank)))
        offset = e.ix.offset(target, shape.dims, shape.layout)
        update_index = Multi(tuple(at))

        def combine() -> None:
            current = [e.load(outs[k], arrays[k].shape.dtype, offset) for k in range(count)]
            new = apply_computation(e, comp, current + [e.value(u, update_index)
                                                         for u in updates])
            for k, value in enumerate(new):
                e.store(outs[k], offset, value)
        if fits is None:
            combine()
            return
        e.push()
        with fb.if_then(fits.ref, "fits"):
            combine()
        e.pop()
    order = tuple(range(len(update_dims)))
    if math.prod(update_dims) > 0:
        loop_nest(fb, Emitters(em), order, update_dims, 1, 1, body, vector_inner=False)
    fb.ret_void()
    return Kernel(fb.text(), len(ins), count, 0, 1, math.prod(update_dims))


def emit_select_and_scatter(ctx: KernelContext, inst: HloInstruction,
                            noalias: bool) -> Kernel:
    """select-and-scatter: the result starts as the initial value; for each window position
    (row-major), the window element the `select` computation prefers (the first of equals,
    padding never) receives the source value, combined by the `scatter` computation."""
    fb, ins, outs = kernel_function(3, 1, noalias)
    operand, source, init = _params(inst)
    shape = operand.shape
    window = window_of_instruction(inst, shape.rank)
    em = emitter(ctx, fb, 1, ins)
    dtype = shape.dtype
    start = em.value(init, Multi(()))

    def fill(e: Elemental, parts: dict[int, Lin], copy: int) -> None:
        e.store(outs[0], e.ix.offset(Multi(tuple(parts[d] for d in range(shape.rank))),
                                     shape.dims, shape.layout), start)
    order = tuple(reversed(shape.layout or ()))
    if shape.size:
        loop_nest(fb, Emitters(em), order, shape.dims, 1, 1, fill, vector_inner=False)
    select, scatter = inst.called
    value_slot = fb.alloca(llvm_elem(dtype), 8, "best")
    where_slot = fb.alloca("i64", 8, "where")
    found_slot = fb.alloca("i1", 1, "found")

    def position(e: Elemental, parts: dict[int, Lin], copy: int) -> None:
        out = [parts[d] for d in range(shape.rank)]
        fb.do(f"store i1 false, ptr {found_slot}, align 1")
        fb.do(f"store i64 0, ptr {where_slot}, align 8")

        def tap(taps: list[Lin]) -> None:
            index, conds = [], []
            for d in range(shape.rank):
                part, c = window_position(e, out[d], taps[d], window, d, shape.dims[d])
                index.append(part)
                conds += c
            offset = e.ix.offset(Multi(tuple(index)), shape.dims, shape.layout)
            candidate = e.load(ins[0], dtype, offset)
            valid = all_of(e, conds) or e.arith.const(True, _PRED)
            best = Val(fb.op(f"load {llvm_elem(dtype)}, ptr {value_slot}, align 8", "b"),
                       llvm_elem(dtype), 1, dtype)
            found = Val(fb.op(f"load i1, ptr {found_slot}, align 1", "f"), "i1", 1, _PRED)
            keep = apply_computation(e, select, [best, candidate])[0]
            fresh = e.arith.unary(_O.NOT, found)
            take = e.arith.binary(_O.AND, valid, e.arith.binary(
                _O.OR, fresh, e.arith.unary(_O.NOT, keep)))  # type: ignore[arg-type]
            fb.do(f"store {e.arith.select(take, candidate, best).typed}, ptr {value_slot}, "
                  "align 8")
            where = e.ix.scalar(offset)
            old = fb.op(f"load i64, ptr {where_slot}, align 8", "w")
            fb.do(f"store i64 {fb.op(f'select i1 {take.ref}, i64 {where}, i64 {old}', 'w')}, "
                  f"ptr {where_slot}, align 8")
            fb.do(f"store {e.arith.binary(_O.OR, found, valid).typed}, ptr {found_slot}, "
                  "align 1")
        taps_loop(e, list(window.size), tap, "t")
        found = fb.op(f"load i1, ptr {found_slot}, align 1", "f")
        e.push()
        with fb.if_then(found, "chosen"):
            target = Lin.of(Var(fb.op(f"load i64, ptr {where_slot}, align 8", "w"), "scalar",
                                0, shape.size))
            current = e.load(outs[0], dtype, target)
            incoming = e.value(source, Multi(tuple(out)))
            e.store(outs[0], target, apply_computation(e, scatter, [current, incoming])[0])
        e.pop()
    if source.shape.size and shape.size:
        loop_nest(fb, Emitters(em), tuple(range(source.shape.rank)), source.shape.dims, 1, 1,
                  position, vector_inner=False)
    fb.ret_void()
    return Kernel(fb.text(), 3, 1, 0, 1, source.shape.size * max(1, math.prod(window.size)))
