"""Kernels of reduction (kInput) fusions.

Row kernels (the tiling says `row_kernel`: softmax, layernorm, a sum over the last axis):
a warp per row, or a whole block per row when rows are longer than
`BuildOptions.warp_row_limit`. For each reduction in order, the lanes stride along the
row accumulating from the combiner's identity, the warp combines its lanes by butterfly
shuffles (every lane ends with the total), a block-wide row also goes through shared
memory; the initial value joins once. Then the lanes stride along the row again computing
the outputs, the per-row values known.

Other reductions go through two kernels (a two-stage tree), with a scratch buffer of
partial results between them:
- *column* reductions (the most minor dimension is kept): stage one gives each thread a
  (chunk of reduced positions, kept position) pair, kept positions fastest so that a
  warp reads consecutive memory; stage two gives each thread a kept position and folds
  its chunks' partials.
- *full* reductions (the most minor dimension is reduced): for each kept position in turn,
  the grid strides over the reduced elements and each block folds its threads'
  accumulators (shuffles, then shared memory) into one partial; stage two is one block
  folding the blocks' partials the same way.
"""
from __future__ import annotations

import numpy as np

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import (
    BuildOptions, FusionKernels, fusion_outputs, grid_stride, in_order_parameters,
    kernel_name, load_vectors, operand_buffers, output_buffers, store, store_run,
    vector_width)
from jaxlite.backends.gpu.hlo_elemental import (
    Elemental, UnsupportedFusion, compute_dtype, round_to)
from jaxlite.backends.gpu.index_math import add, delinearize, div, linear_index, mul, rem
from jaxlite.xla.ir import HloInstruction, post_order
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["build_row_fusion", "build_tree_fusion"]

_COMBINERS = {Opcode.ADD: "add", Opcode.MULTIPLY: "mul", Opcode.MAXIMUM: "max",
              Opcode.MINIMUM: "min", Opcode.AND: "and", Opcode.OR: "or"}
_THREAD, _BLOCK = ir.Builtin("thread"), ir.Builtin("block")


def combiner(reduce: HloInstruction) -> str:
    """The IR op of a reduction whose combiner is one commutative binary opcode."""
    comp = reduce.called[0]
    root, params = comp.root, comp.parameters
    if reduce.shape.is_tuple or root.opcode not in _COMBINERS or len(params) != 2 or \
            {id(o) for o in root.operands} != {id(p) for p in params}:
        raise UnsupportedFusion(f"reduction %{reduce.name}: only single-output reductions "
                                "by add, multiply, maximum, minimum, and, or are built")
    return _COMBINERS[root.opcode]


def identity(op: str, dtype: str) -> ir.Const:
    """The value x with op(x, y) == y for every y."""
    kind = ir.dtype_of(dtype).kind
    if kind == "b":
        return ir.Const(op in ("mul", "and", "min"), dtype)
    if op in ("add", "or", "xor"):
        return ir.Const(0, dtype)
    if op == "mul":
        return ir.Const(1, dtype)
    if op == "and":
        return ir.Const(-1 if kind == "i" else int(np.iinfo(dtype).max), dtype)
    larger = op == "min"
    if kind == "f":
        return ir.Const(float("inf") if larger else float("-inf"), dtype)
    info = np.iinfo(dtype)
    return ir.Const(int(info.max if larger else info.min), dtype)


class _Reductions:
    """The reductions of one fusion and the iteration space they share."""

    def __init__(self, fusion: HloInstruction) -> None:
        body = fusion.called[0]
        self.fusion, self.outputs = fusion, fusion_outputs(body)
        self.reduces = [i for i in body.instructions if i.opcode is Opcode.REDUCE]
        first = self.reduces[0]
        self.shape: Shape = first.operands[0].shape
        self.reduced = tuple(sorted(first.attr("dimensions")))
        for r in self.reduces:
            if r.operands[0].shape.dims != self.shape.dims or \
                    tuple(sorted(r.attr("dimensions"))) != self.reduced:
                raise UnsupportedFusion(f"fusion %{fusion.name}: reductions over "
                                        "different spaces")
        self.ops = {id(r): combiner(r) for r in self.reduces}
        self.kept = tuple(d for d in range(len(self.shape.dims)) if d not in self.reduced)
        self.kept_shape = _sub_shape(self.shape, self.kept)
        self.reduced_shape = _sub_shape(self.shape, self.reduced)

    def accumulator(self, em: Elemental, r: HloInstruction) -> ir.Var:
        dtype = compute_dtype(r.shape.dtype)
        acc = em.fresh("acc", dtype)
        em.emit(ir.Let(acc, identity(self.ops[id(r)], dtype)))
        return acc

    def accumulate(self, em: Elemental, acc: ir.Var, r: HloInstruction, x: ir.Expr) -> None:
        em.emit(ir.Assign(acc, ir.Binary(self.ops[id(r)], acc, x)))

    def finish(self, em: Elemental, acc: ir.Var, r: HloInstruction) -> None:
        """Joins the initial value and makes the result known to the outputs."""
        total = ir.Binary(self.ops[id(r)], acc, em.value(r.operands[1], ()))
        em.known(r, em.let(round_to(total, r.shape.dtype), "total"))

    def store_kept_outputs(self, em: Elemental, pairs: list, kept_index: tuple) -> None:
        """Stores outputs that have one value per kept position: `pairs` of
        ((buffer, shape), output instruction)."""
        for (buffer, shape), output in pairs:
            index = self.output_index(shape, kept_index)
            em.emit(store(buffer, linear_index(index, shape), em.value(output, index)))

    def output_index(self, shape: Shape, kept_index: tuple) -> tuple:
        """The index of an output of `shape` at the kept position `kept_index`: the same,
        with zeros at unit dimensions the output adds (a reshape of the reduced values
        to (1, m, n) reads them in the same order)."""
        kept = self.kept_shape.dims
        if shape.dims == kept:
            return kept_index
        if [d for d in shape.dims if d != 1] != [d for d in kept if d != 1]:
            raise UnsupportedFusion(f"fusion %{self.fusion.name}: output shape "
                                    f"{shape.dims} is not the kept {kept}")
        moving = iter(i for i, d in zip(kept_index, kept) if d != 1)
        return tuple(ir.index_const(0) if d == 1 else next(moving) for d in shape.dims)

    def full_index(self, kept_index: tuple, reduced_index: tuple) -> tuple:
        index = [None] * len(self.shape.dims)
        for d, i in zip(self.kept, kept_index):
            index[d] = i
        for d, i in zip(self.reduced, reduced_index):
            index[d] = i
        return tuple(index)


def _sub_shape(shape: Shape, dims: tuple[int, ...]) -> Shape:
    """The dimensions `dims` of `shape`, keeping their order in memory."""
    layout = tuple(dims.index(d) for d in shape.layout if d in dims)
    return Shape(shape.dtype, tuple(shape.dims[d] for d in dims), layout)


def warp_allreduce(em: Elemental, acc: ir.Var, op: str, warp_size: int) -> None:
    """Every lane of the warp ends with op over all lanes' `acc` (butterfly shuffles)."""
    carried = "int32" if acc.dtype == "bool" else acc.dtype  # no shuffle of bool
    offset = warp_size // 2
    while offset:
        other = em.fresh("lane", carried)
        em.emit(ir.Shuffle(other, "xor", acc if carried == acc.dtype else
                           ir.Cast(acc, carried), offset))
        value = other if carried == acc.dtype else ir.Cast(other, acc.dtype)
        em.emit(ir.Assign(acc, ir.Binary(op, acc, value)))
        offset //= 2


def block_allreduce(em: Elemental, acc: ir.Var, op: str, shared: ir.Buffer,
                    options: BuildOptions, block: int) -> None:
    """Every thread of the block ends with op over all threads' `acc`."""
    warp = options.warp_size
    warp_allreduce(em, acc, op, warp)
    lane_zero = ir.Binary("eq", rem(_THREAD, warp), ir.index_const(0))
    em.emit(ir.If(lane_zero, (ir.Store(shared, div(_THREAD, warp), acc),)), ir.Barrier())
    total: ir.Expr = ir.Load(shared, ir.index_const(0))
    for w in range(1, block // warp):
        total = ir.Binary(op, total, ir.Load(shared, ir.index_const(w)))
    # the second barrier keeps the next use of `shared` from racing with these reads
    em.emit(ir.Assign(acc, total), ir.Barrier())


def _shared_for(name: str, r: HloInstruction, options: BuildOptions, block: int) -> ir.Buffer:
    return ir.Buffer(f"{name}_{r.name.replace('.', '_').replace('-', '_')}",
                     compute_dtype(r.shape.dtype), "shared", block // options.warp_size)


def _row_launch(rows: int, length: int, options: BuildOptions) -> tuple:
    """(block, lanes per row, this thread's lane, grid, first row, row step)."""
    warp = options.warp_size
    if length > options.warp_row_limit:  # a block per row
        grid = max(1, min(rows, options.max_blocks))
        return options.block, options.block, _THREAD, grid, _BLOCK, ir.index_const(grid)
    per_block = options.row_block // warp
    grid = max(1, min(-(-rows // per_block), options.max_blocks))
    first_row = add(mul(_BLOCK, per_block), div(_THREAD, warp))
    return (options.row_block, warp, rem(_THREAD, warp), grid, first_row,
            ir.index_const(grid * per_block))


class _AlongRow:
    """Loops over one row: each lane takes runs of `width` consecutive elements, the
    parameters laid out as the row read by one vector access per run."""

    def __init__(self, em: Elemental, red: _Reductions, row_index: tuple, lane: ir.Expr,
                 lanes: int, width: int, in_order: list, buffers: dict) -> None:
        self.em, self.red, self.row_index = em, red, row_index
        self.lane, self.lanes, self.width = lane, lanes, width
        self.in_order, self.buffers = in_order, buffers

    def loop(self, work) -> None:
        """Emits the loop; `work(indices)` emits what a run does at its indices."""
        em, red, width = self.em, self.red, self.width
        j = em.fresh("j", "int32")
        with em.scope() as body:
            indices = [red.full_index(self.row_index, delinearize(add(j, k), red.reduced_shape))
                       for k in range(width)]
            if width > 1:
                load_vectors(em, self.in_order, self.buffers,
                             linear_index(indices[0], red.shape), indices)
            work(indices)
        em.emit(ir.For(j, mul(self.lane, width), ir.index_const(red.reduced_shape.size),
                       ir.index_const(self.lanes * width), tuple(body)))


def build_row_fusion(fusion: HloInstruction, options: BuildOptions) -> FusionKernels:
    """One kernel computing a row fusion a row at a time (see the module docstring)."""
    red = _Reductions(fusion)
    if set(red.shape.layout[:len(red.reduced)]) != set(red.reduced):
        raise UnsupportedFusion(f"fusion %{fusion.name}: reduced dimensions are not the "
                                "most minor")
    length, rows = red.reduced_shape.size, red.kept_shape.size
    inputs, results = operand_buffers(fusion), output_buffers(fusion)
    name = kernel_name(fusion, options)
    buffers = {k: b for k, (b, _) in enumerate(inputs)}
    em = Elemental(name, buffers)
    block, lanes, lane, grid, first_row, row_step = _row_launch(rows, length, options)
    full = [(result, o) for result, o in zip(results, red.outputs)
            if result[1].dims == red.shape.dims]
    per_row = [(result, o) for result, o in zip(results, red.outputs)
               if result[1].dims != red.shape.dims]
    in_order = in_order_parameters(fusion.called[0], red.shape)
    width = vector_width(length, [buffers[p.attr("number")].dtype for p in in_order] +
                         [b.dtype for (b, _), _ in full], options) if in_order else 1
    shared = []
    row = ir.Var("row", "int32")
    row_index = delinearize(row, red.kept_shape)
    along = _AlongRow(em, red, row_index, lane, lanes, width, in_order, buffers)
    with em.scope() as row_body:
        for r in red.reduces:
            acc = red.accumulator(em, r)
            along.loop(lambda indices: [red.accumulate(em, acc, r, em.value(r.operands[0], i))
                                        for i in indices])
            if lanes > options.warp_size:
                shared.append(_shared_for("rowpart", r, options, block))
                block_allreduce(em, acc, red.ops[id(r)], shared[-1], options, block)
            else:
                warp_allreduce(em, acc, red.ops[id(r)], options.warp_size)
            red.finish(em, acc, r)
        if full:
            along.loop(lambda indices: _store_full_outputs(em, red, full, indices))
        if per_row:
            with em.scope() as first_lane:
                red.store_kept_outputs(em, per_row, row_index)
            em.emit(ir.If(ir.Binary("eq", lane, ir.index_const(0)), tuple(first_lane)))
    loop = ir.For(row, first_row, ir.index_const(rows), row_step, tuple(row_body))
    mode = "a block" if lanes > options.warp_size else "a warp"
    kernel = ir.Kernel(name, tuple(b for b, _ in inputs + results), (loop,), grid, block,
                       options.warp_size, tuple(shared), tuple(em.constants),
                       notes=(f"row kernel, {mode} per row of {length}, runs of {width}",))
    return FusionKernels(name, (kernel,), inputs, results)


def _store_full_outputs(em: Elemental, red: _Reductions, full: list, indices: list) -> None:
    """Stores a run of each output shaped like the row space."""
    for (buffer, shape), output in full:
        values = [em.value(output, index) for index in indices]
        if shape.layout == red.shape.layout:
            store_run(em, buffer, linear_index(indices[0], shape), values)
        else:
            em.emit(*(store(buffer, linear_index(index, shape), v)
                      for index, v in zip(indices, values)))


def build_tree_fusion(fusion: HloInstruction, options: BuildOptions) -> FusionKernels:
    """Two kernels (partials, then their fold) of a column or full reduction."""
    red = _Reductions(fusion)
    for r in red.reduces:
        inner = post_order([r.operands[0]])
        if any(i.opcode is Opcode.REDUCE for i in inner):
            raise UnsupportedFusion(f"fusion %{fusion.name}: a reduction of a reduction "
                                    "outside a row kernel")
    if red.shape.layout and red.shape.layout[0] in red.kept:
        return _column_tree(red, options)
    return _full_tree(red, options)


def _column_tree(red: _Reductions, options: BuildOptions) -> FusionKernels:
    fusion = red.fusion
    kept, length = red.kept_shape.size, red.reduced_shape.size
    splits = max(1, min(length, (options.block * 4) // max(kept, 1), 64))
    chunk = -(-length // splits)
    inputs, results = operand_buffers(fusion), output_buffers(fusion)
    name = kernel_name(fusion, options)
    partials = [ir.Buffer(f"partial{n}", compute_dtype(r.shape.dtype), "global",
                          splits * kept) for n, r in enumerate(red.reduces)]
    em = Elemental(name, {k: b for k, (b, _) in enumerate(inputs)})
    i, n = ir.Var("i", "int32"), ir.Var("n", "int32")
    with em.scope() as stage_one:
        s, k = div(i, kept), rem(i, kept)
        kept_index = delinearize(k, red.kept_shape)
        stop = ir.Binary("min", add(mul(s, chunk), chunk), ir.index_const(length))
        for r, partial in zip(red.reduces, partials):
            acc = red.accumulator(em, r)
            with em.scope() as along:
                index = red.full_index(kept_index, delinearize(n, red.reduced_shape))
                red.accumulate(em, acc, r, em.value(r.operands[0], index))
            em.emit(ir.For(n, mul(s, chunk), stop, ir.index_const(1), tuple(along)),
                    ir.Store(partial, i, acc))
    grid, first, step = grid_stride(options, splits * kept)
    first_kernel = ir.Kernel(
        f"{name}_partials", tuple(b for b, _ in inputs) + tuple(partials),
        (ir.For(i, first, ir.index_const(splits * kept), step, tuple(stage_one)),), grid,
        options.block, options.warp_size, constants=tuple(em.constants),
        notes=(f"column reduction stage 1: {splits} chunks of {chunk}",))
    em = Elemental(name, {k: b for k, (b, _) in enumerate(inputs)})
    with em.scope() as stage_two:
        for r, partial in zip(red.reduces, partials):
            acc = red.accumulator(em, r)
            with em.scope() as fold:
                red.accumulate(em, acc, r, ir.Load(partial, add(mul(n, kept), i)))
            em.emit(ir.For(n, ir.index_const(0), ir.index_const(splits), ir.index_const(1),
                           tuple(fold)))
            red.finish(em, acc, r)
        red.store_kept_outputs(em, list(zip(results, red.outputs)),
                               delinearize(i, red.kept_shape))
    grid, first, step = grid_stride(options, kept)
    second_kernel = ir.Kernel(
        f"{name}_fold", tuple(b for b, _ in inputs) + tuple(partials) +
        tuple(b for b, _ in results),
        (ir.For(i, first, ir.index_const(kept), step, tuple(stage_two)),), grid,
        options.block, options.warp_size, constants=tuple(em.constants),
        notes=("column reduction stage 2",))
    return FusionKernels(name, (first_kernel, second_kernel), inputs, results,
                         tuple(partials))


def _full_tree(red: _Reductions, options: BuildOptions) -> FusionKernels:
    fusion = red.fusion
    kept, length, block = red.kept_shape.size, red.reduced_shape.size, options.block
    inputs, results = operand_buffers(fusion), output_buffers(fusion)
    name = kernel_name(fusion, options)
    grid, first, step = grid_stride(options, length)
    partials = [ir.Buffer(f"partial{n}", compute_dtype(r.shape.dtype), "global",
                          grid * kept) for n, r in enumerate(red.reduces)]
    shared = [_shared_for("blockpart", r, options, block) for r in red.reduces]
    k, n = ir.Var("k", "int32"), ir.Var("n", "int32")
    thread_zero = ir.Binary("eq", _THREAD, ir.index_const(0))
    em = Elemental(name, {m: b for m, (b, _) in enumerate(inputs)})
    with em.scope() as stage_one:
        kept_index = delinearize(k, red.kept_shape)
        for r, partial, part in zip(red.reduces, partials, shared):
            acc = red.accumulator(em, r)
            with em.scope() as along:
                index = red.full_index(kept_index, delinearize(n, red.reduced_shape))
                red.accumulate(em, acc, r, em.value(r.operands[0], index))
            em.emit(ir.For(n, first, ir.index_const(length), step, tuple(along)))
            block_allreduce(em, acc, red.ops[id(r)], part, options, block)
            em.emit(ir.If(thread_zero, (ir.Store(partial, add(mul(k, grid), _BLOCK), acc),)))
    one = ir.index_const(1)
    first_kernel = ir.Kernel(
        f"{name}_partials", tuple(b for b, _ in inputs) + tuple(partials),
        (ir.For(k, ir.index_const(0), ir.index_const(kept), one, tuple(stage_one)),),
        grid, block, options.warp_size, tuple(shared), tuple(em.constants),
        notes=(f"full reduction stage 1: {grid} blocks",))
    em = Elemental(name, {m: b for m, (b, _) in enumerate(inputs)})
    with em.scope() as stage_two:
        accumulators = []
        for r, partial, part in zip(red.reduces, partials, shared):
            acc = red.accumulator(em, r)
            accumulators.append(acc)
            with em.scope() as fold:
                red.accumulate(em, acc, r, ir.Load(partial, add(mul(k, grid), n)))
            em.emit(ir.For(n, _THREAD, ir.index_const(grid), ir.index_const(block),
                           tuple(fold)))
            block_allreduce(em, acc, red.ops[id(r)], part, options, block)
        with em.scope() as first_thread:
            for r, acc in zip(red.reduces, accumulators):
                red.finish(em, acc, r)
            red.store_kept_outputs(em, list(zip(results, red.outputs)),
                                   delinearize(k, red.kept_shape))
        em.emit(ir.If(thread_zero, tuple(first_thread)))
    second_kernel = ir.Kernel(
        f"{name}_fold", tuple(b for b, _ in inputs) + tuple(partials) +
        tuple(b for b, _ in results),
        (ir.For(k, ir.index_const(0), ir.index_const(kept), one, tuple(stage_two)),),
        1, block, options.warp_size, tuple(shared), tuple(em.constants),
        notes=("full reduction stage 2: one block",))
    return FusionKernels(name, (first_kernel, second_kernel), inputs, results,
                         tuple(partials))

