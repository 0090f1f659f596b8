"""Kernels of loop (kLoop) fusions and of the kOutput fusions computed without a GEMM
(mirrors XLA's CPU loop emitter for fusions).

Outputs are grouped by their dimensions and layout; each group is one loop nest that
computes every output of the group at each index. A group whose whole expression reads its
operands at the very position it writes (elementwise work, scalar broadcasts, row-major
reshapes, bitcasts) runs as one flat loop over its elements, whatever its rank; any other
group runs as the loop nest the tiling recorded (the fusion's loop order, innermost loop
vectorized), and its movement instructions become index arithmetic. The outermost loop of
the first group is the one a worker pool may split.
"""
from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable

import numpy as np

from jaxlite.backends.cpu.codegen.elemental import Elemental
from jaxlite.backends.cpu.codegen.indexing import Flat, Multi, memory_order
from jaxlite.backends.cpu.codegen.kernel import (DEFAULT_UNROLL, MAX_LANES, Kernel,
                                                 KernelContext, element_cost, emitter,
                                                 kernel_function, lanes_for)
from jaxlite.backends.cpu.codegen.loops import Emitters, loop_nest, vector_loop
from jaxlite.backends.cpu.codegen.movement import row_major_layout
from jaxlite.backends.cpu.codegen.reduction import install_inner_loops
from jaxlite.xla.analysis import computation_fingerprint, freeze_attr
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.tiling import Tiling, tiling_of
from jaxlite.xla.shape import Shape

__all__ = ["emit_loop_fusion", "emit_loop_fusion_uncached", "emitted_once_per_structure",
           "fusion_outputs", "flat_friendly", "MAX_LANES"]

_O = Opcode
# A fused computation with more instructions than this runs one vector per loop step: its
# body alone holds enough independent work, and unrolling it would multiply the code that
# is generated and compiled (a deep elementwise chain emitted six times over).
UNROLLED_BODY_LIMIT = 64


def fusion_outputs(fusion: HloInstruction) -> list[tuple[HloInstruction, Shape]]:
    """(fused value, stored shape) of each output of a fusion, in result order."""
    root = fusion.called[0].root
    if root.opcode is _O.TUPLE:
        shapes = fusion.shape.tuple_shapes or ()
        return list(zip(root.operands, shapes))
    if root.shape.is_tuple:  # a variadic reduce: its elements are the outputs
        shapes = fusion.shape.tuple_shapes or ()
        return [(HloInstruction(f"{root.name}.{i}", _O.GET_TUPLE_ELEMENT, shape, (root,),
                                {"index": i}), shape) for i, shape in enumerate(shapes)]
    return [(root, fusion.shape)]


def flat_friendly(inst: HloInstruction, dims: tuple[int, ...], layout: tuple[int, ...],
                  seen: dict[tuple, bool] | None = None) -> bool:
    """Whether `inst`, visited in the memory order of (dims, layout), reads every operand
    element at the position it writes (so one flat loop needs no per-dimension index).

    An explicit stack walks the fused expression, so a chain thousands of operations deep
    needs no deep recursion."""
    seen = {} if seen is None else seen
    stack = [(inst, dims, layout)]
    while stack:
        node = stack[-1]
        key = (id(node[0]), node[1], node[2])
        if key in seen:
            stack.pop()
            continue
        rule = _flat_rule(*node)
        if isinstance(rule, bool):
            seen[key] = rule
            stack.pop()
            continue
        known = [seen.get((id(c[0]), c[1], c[2])) for c in rule]
        if False in known or None not in known:
            seen[key] = False not in known
            stack.pop()
            continue
        stack.extend(c for c, k in zip(reversed(rule), reversed(known)) if k is None)
    return seen[(id(inst), dims, layout)]


def _flat_rule(inst: HloInstruction, dims: tuple[int, ...], layout: tuple[int, ...]
               ) -> bool | list[tuple]:
    """The answer for `inst` alone, or the (operand, dims, layout) visits whose answers
    must all be true."""
    shape, op = inst.shape, inst.opcode
    if shape.rank == 0 or math.prod(dims) <= 1:
        return True
    if op is _O.PARAMETER:
        return shape.dims == dims and tuple(shape.layout or ()) == layout
    if op is _O.CONSTANT:
        flat = np.asarray(inst.attr("literal")).reshape(-1)
        return flat.size <= 1 or bool((flat.view(np.uint8).reshape(flat.size, -1)
                                       == flat.view(np.uint8).reshape(flat.size, -1)[0]).all())
    if op.is_elementwise or op is _O.COPY or op is _O.BITCAST_CONVERT and \
            inst.operands[0].shape.dtype.itemsize == shape.dtype.itemsize:
        return [(o, dims, layout) for o in inst.operands]
    if op is _O.BROADCAST:
        return inst.operands[0].shape.rank == 0
    if op is _O.RESHAPE and layout == row_major_layout(len(dims)):
        operand = inst.operands[0].shape
        return [(inst.operands[0], operand.dims, row_major_layout(operand.rank))]
    if op is _O.BITCAST and layout == tuple(shape.layout or ()):
        operand = inst.operands[0].shape
        return [(inst.operands[0], operand.dims, tuple(operand.layout or ()))]
    return False


def _groups(outputs: list[tuple[HloInstruction, Shape]]) -> list[list[int]]:
    """Output positions grouped by (dims, layout), largest group first."""
    groups: dict[tuple, list[int]] = {}
    for k, (_, shape) in enumerate(outputs):
        groups.setdefault((shape.dims, tuple(shape.layout or ())), []).append(k)
    return sorted(groups.values(), key=lambda g: -outputs[g[0]][1].size)


def emitted_once_per_structure(emit: Callable[[KernelContext, HloInstruction, bool], Kernel]
                               ) -> Callable[[KernelContext, HloInstruction, bool], Kernel]:
    """`emit` memoized per module being built (its KernelContext) by the fusion's structure:
    the layers of a deep network repeat the same fusions, and the text of one is the text
    of all (constants and math functions are registered with the context, which dedups
    them). The memo dies with the context."""
    memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(emit)
    def emit_once(ctx: KernelContext, fusion: HloInstruction, noalias: bool) -> Kernel:
        key = (computation_fingerprint(fusion.called[0]), freeze_attr(dict(fusion.attrs)),
               fusion.shape, tuple(o.shape for o in fusion.operands), noalias)
        emitted = memo.setdefault(ctx, {})
        if key not in emitted:
            emitted[key] = emit(ctx, fusion, noalias)
        return emitted[key]
    return emit_once


def emit_loop_fusion(ctx: KernelContext, fusion: HloInstruction, noalias: bool) -> Kernel:
    """The kernel of a loop fusion (see the module docstring)."""
    return _emit_loop_fusion_once(ctx, fusion, noalias)


def emit_loop_fusion_uncached(ctx: KernelContext, fusion: HloInstruction,
                              noalias: bool) -> Kernel:
    """`emit_loop_fusion` without the per-module memo."""
    outputs = fusion_outputs(fusion)
    if any(shape.is_tuple for _, shape in outputs):
        raise NotImplementedError(f"the cpu backend has no nested tuple outputs "
                                  f"({fusion.name}) yet")
    fb, ins, outs = kernel_function(len(fusion.operands), len(outputs), noalias)
    tiling = tiling_of(fusion)
    groups = [g for g in _groups(outputs) if outputs[g[0]][1].size > 0]
    units, grain, work = 0, 1, 0
    parallel = len(groups) == 1  # one loop nest: its outermost loop can be split
    for group in groups:
        shape = outputs[group[0]][1]
        split = _emit_group(ctx, fb, ins, outs, outputs, group, shape, tiling, parallel,
                            len(fusion.called[0].instructions) <= UNROLLED_BODY_LIMIT)
        if parallel:
            units, grain = split
        work += shape.size * element_cost(fusion.called[0])
    fb.ret_void()
    return Kernel(fb.text(), len(ins), len(outs), units, grain, work)


def _emit_group(ctx: KernelContext, fb, ins: list[str], outs: list[str],
                outputs: list[tuple[HloInstruction, Shape]], group: list[int], shape: Shape,
                tiling: Tiling | None, parallel: bool, may_unroll: bool) -> tuple[int, int]:
    dims, layout = shape.dims, tuple(shape.layout or ())
    matches = tiling is not None and tuple(tiling.iteration_shape) == dims
    order = tuple(tiling.loop_order) if matches else memory_order(dims, layout)
    inner = order[-1] if order else None
    width = tiling.vector_width if matches else lanes_for(shape.dtype, dims[inner]
                                                          if inner is not None else 1)
    width = max(1, min(width, MAX_LANES))
    unroll = DEFAULT_UNROLL
    if matches and inner is not None and tiling.tile_shape[inner] >= width:
        unroll = max(1, tiling.tile_shape[inner] // width)
    if not may_unroll:
        unroll = 1
    em = emitter(ctx, fb, width, ins)
    install_inner_loops(em)
    ems = Emitters(em)
    seen: dict[tuple, bool] = {}
    flat = len(dims) > 0 and all(flat_friendly(outputs[k][0], dims, layout, seen)
                                 for k in group)

    def store_all(e: Elemental, index: Multi | Flat) -> None:
        for k in group:
            value, stored = outputs[k]
            e.store(outs[k], e.ix.offset(index, stored.dims, stored.layout),
                    e.value(value, index))

    if flat:
        total = shape.size
        if total > 1:
            width = max(1, min(MAX_LANES, lanes_for(shape.dtype, total)))
            if width != em.width:
                ems = Emitters(em.with_width(width))
        step = width * unroll
        start, end = ("%lo", "%hi") if parallel else ("0", str(total))
        vector_loop(fb, ems, start, end, total, width, unroll,
                    lambda e, lin, copy: store_all(e, Flat(lin, dims, layout)), "e")
        return total, step
    outer = ("%lo", "%hi") if parallel and order else None
    loop_nest(fb, ems, order, dims, width, unroll,
              lambda e, parts, copy: store_all(e, Multi(tuple(parts[d] for d in
                                                              range(len(dims))))),
              outer_range=outer)
    return (dims[order[0]] if order else 0), 1


_emit_loop_fusion_once = emitted_once_per_structure(emit_loop_fusion_uncached)
