"""The sort kernel (mirrors XLA's CPU sort, a library call there; generated here).

Each row along the sort dimension is sorted by a bottom-up merge sort of the row's element
positions, comparing elements with the sort's comparator computation (compiled inline), then
every operand's row is gathered into its result in the sorted order. Merge sort is stable,
so the result is unique for any strict weak order and matches the evaluator's (stable)
merge sort. The merge step is branch-free: each output position takes the right run's head
exactly when the comparator says it goes before the left run's head. The two position
arrays of one row live in memory the kernel takes from `malloc` once per call.
"""
from __future__ import annotations

import math

from jaxlite.backends.cpu.codegen.elemental import Elemental
from jaxlite.backends.cpu.codegen.indexing import Lin, Multi, Var, strides_of
from jaxlite.backends.cpu.codegen.kernel import Kernel, KernelContext, emitter, kernel_function
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder, Val
from jaxlite.backends.cpu.codegen.loops import Emitters, loop_nest
from jaxlite.backends.cpu.codegen.reduction import apply_computation
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["emit_sort"]

_O = Opcode


def _i64(fb: FunctionBuilder, text: str) -> str:
    return fb.op(text, "s")


def emit_sort(ctx: KernelContext, inst: HloInstruction, noalias: bool) -> Kernel:
    operands = inst.operands
    count = len(operands)
    fb, ins, outs = kernel_function(count, count, noalias)
    shape = operands[0].shape
    if shape.rank == 0 or shape.size == 0:
        for k, o in enumerate(operands):
            if o.shape.nbytes:
                fb.do(f"call void @llvm.memmove.p0.p0.i64(ptr {outs[k]}, ptr {ins[k]}, "
                      f"i64 {o.shape.nbytes}, i1 false)")
        fb.ret_void()
        return Kernel(fb.text(), count, count)
    dim = int(inst.attr("dimension"))
    n = shape.dims[dim]
    em = emitter(ctx, fb, 1, ins)
    scratch = fb.op(f"call ptr @malloc(i64 {16 * n})", "scratch")
    first = scratch
    second = fb.op(f"getelementptr inbounds i64, ptr {scratch}, i64 {n}", "scratch")
    others = [d for d in range(shape.rank) if d != dim]
    stride = strides_of(shape.dims, shape.layout)[dim]

    def row(e: Elemental, parts: dict[int, Lin], copy: int) -> None:
        base = [parts.get(d, Lin()) for d in range(shape.rank)]
        _sort_row(e, inst, ins, outs, base, dim, n, stride, first, second)
    loop_nest(fb, Emitters(em), others, shape.dims, 1, 1, row, vector_inner=False)
    fb.do(f"call void @free(ptr {scratch})")
    fb.ret_void()
    return Kernel(fb.text(), count, count, 0, 1, shape.size * max(1, math.ceil(math.log2(n + 1))))


def _sort_row(e: Elemental, inst: HloInstruction, ins: list[str], outs: list[str],
              base: list[Lin], dim: int, n: int, stride: int, first: str,
              second: str) -> None:
    fb = e.fb
    shape = inst.operands[0].shape
    row_start = e.ix.offset(Multi(tuple(base)), shape.dims, shape.layout)

    def key_offset(position: str) -> Lin:
        return row_start + Lin.of(Var(position, "scalar", 0, n)) * stride

    def keys(position: str) -> list[Val]:
        return [e.load(ins[k], o.shape.dtype, key_offset(position))  # type: ignore[misc]
                for k, o in enumerate(inst.operands)]

    with fb.loop("0", str(n), 1, "init") as k:
        slot = fb.op(f"getelementptr inbounds i64, ptr {first}, i64 {k}", "s")
        fb.do(f"store i64 {k}, ptr {slot}, align 8")
    src = fb.alloca("ptr", 8, "src")
    dst = fb.alloca("ptr", 8, "dst")
    fb.do(f"store ptr {first}, ptr {src}, align 8")
    fb.do(f"store ptr {second}, ptr {dst}, align 8")
    run = fb.alloca("i64", 8, "run")
    fb.do(f"store i64 1, ptr {run}, align 8")
    head, body, done = fb.label("runs.head"), fb.label("runs.body"), fb.label("runs.done")
    fb.br(head)
    fb.start(head)
    width = _i64(fb, f"load i64, ptr {run}, align 8")
    more = _i64(fb, f"icmp slt i64 {width}, {n}")
    fb.cond_br(more, body, done)
    fb.start(body)
    source = _i64(fb, f"load ptr, ptr {src}, align 8")
    target = _i64(fb, f"load ptr, ptr {dst}, align 8")
    double = _i64(fb, f"shl i64 {width}, 1")
    with fb.loop("0", str(n), double, "merge") as lo:
        mid = _i64(fb, f"add i64 {lo}, {width}")
        mid = _i64(fb, f"call i64 @llvm.smin.i64(i64 {mid}, i64 {n})")
        hi = _i64(fb, f"add i64 {lo}, {double}")
        hi = _i64(fb, f"call i64 @llvm.smin.i64(i64 {hi}, i64 {n})")
        i_slot, j_slot = fb.alloca("i64", 8, "i"), fb.alloca("i64", 8, "j")
        fb.do(f"store i64 {lo}, ptr {i_slot}, align 8")
        fb.do(f"store i64 {mid}, ptr {j_slot}, align 8")
        with fb.loop(lo, hi, 1, "take") as k:
            e.push()
            i = _i64(fb, f"load i64, ptr {i_slot}, align 8")
            j = _i64(fb, f"load i64, ptr {j_slot}, align 8")
            i_ok = _i64(fb, f"icmp slt i64 {i}, {mid}")
            j_ok = _i64(fb, f"icmp slt i64 {j}, {hi}")
            ic = _i64(fb, f"call i64 @llvm.smin.i64(i64 {i}, i64 {n - 1})")
            jc = _i64(fb, f"call i64 @llvm.smin.i64(i64 {j}, i64 {n - 1})")
            pi = _load_position(fb, source, ic)
            pj = _load_position(fb, source, jc)
            left, right = keys(pi), keys(pj)
            args = [v for pair in zip(right, left) for v in pair]
            before = apply_computation(e, inst.called[0], args)[0]
            not_i = _i64(fb, f"xor i1 {i_ok}, true")
            either = _i64(fb, f"or i1 {not_i}, {before.ref}")
            take_j = _i64(fb, f"and i1 {j_ok}, {either}")
            chosen = _i64(fb, f"select i1 {take_j}, i64 {pj}, i64 {pi}")
            out = _i64(fb, f"getelementptr inbounds i64, ptr {target}, i64 {k}")
            fb.do(f"store i64 {chosen}, ptr {out}, align 8")
            step_j = _i64(fb, f"zext i1 {take_j} to i64")
            fb.do(f"store i64 {_i64(fb, f'add i64 {j}, {step_j}')}, ptr {j_slot}, align 8")
            step_i = _i64(fb, f"sub i64 1, {step_j}")
            fb.do(f"store i64 {_i64(fb, f'add i64 {i}, {step_i}')}, ptr {i_slot}, align 8")
            e.pop()
    fb.do(f"store ptr {target}, ptr {src}, align 8")
    fb.do(f"store ptr {source}, ptr {dst}, align 8")
    fb.do(f"store i64 {double}, ptr {run}, align 8")
    fb.br(head)
    fb.start(done)
    order = _i64(fb, f"load ptr, ptr {src}, align 8")
    with fb.loop("0", str(n), 1, "gather") as k:
        e.push()
        slot = _i64(fb, f"getelementptr inbounds i64, ptr {order}, i64 {k}")
        position = _i64(fb, f"load i64, ptr {slot}, align 8")
        values = keys(position)
        at = row_start + Lin.of(Var(k, "scalar", 0, n)) * stride
        for out_ptr, value in zip(outs, values):
            e.store(out_ptr, at, value)
        e.pop()


def _load_position(fb: FunctionBuilder, positions: str, k: str) -> str:
    slot = _i64(fb, f"getelementptr inbounds i64, ptr {positions}, i64 {k}")
    return _i64(fb, f"load i64, ptr {slot}, align 8")
