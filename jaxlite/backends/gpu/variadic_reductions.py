"""Kernels of variadic reductions: one reduce of several operands whose combiner is a
computation over tuples (argmax and argmin: a value and its index, compared with NaN and
tie rules), the root of its fusion.

Two loop kernels, no shuffles: the combiner is the fused computation's own HLO, evaluated
in kernel IR on scalars (`hlo_elemental`), so any comparator works, but it needs every
component at once, which the warp-wide butterflies of `reduction_kernels` do not carry.
- stage one: each thread folds one chunk of at least `MIN_CHUNK` consecutive reduced
  positions of one kept position into one partial per component (scratch buffers);
- stage two: each thread folds the partials of one kept position in chunk order and
  stores the results.
Chunks are folded in order, which suits combiners that are associative, as a reduction's
must be. A long reduction to few kept positions thus runs on up to `MAX_THREADS` threads.
"""
from __future__ import annotations

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import (BuildOptions, FusionKernels, grid_stride,
                                                 kernel_name, operand_buffers, output_buffers,
                                                 store)
from jaxlite.backends.gpu.hlo_elemental import Elemental, UnsupportedFusion, compute_dtype
from jaxlite.backends.gpu.index_math import add, delinearize, div, linear_index, mul, rem
from jaxlite.backends.gpu.window_reductions import combine
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["build_variadic_reduction", "is_variadic_reduction"]

MIN_CHUNK = 32
MAX_THREADS = 16384


def is_variadic_reduction(fusion: HloInstruction) -> bool:
    """Whether `fusion` is a reduction fusion whose root is one reduce of several operands
    (the case `build_variadic_reduction` builds)."""
    root = fusion.called[0].root
    return root.opcode is Opcode.REDUCE and root.shape.is_tuple and \
        sum(i.opcode is Opcode.REDUCE for i in fusion.called[0].instructions) == 1


def build_variadic_reduction(fusion: HloInstruction, options: BuildOptions) -> FusionKernels:
    """The two kernels of a variadic reduction fusion (see the module docstring)."""
    if not is_variadic_reduction(fusion):
        raise UnsupportedFusion(f"fusion %{fusion.name} is not one variadic reduction")
    reduce = fusion.called[0].root
    count = len(reduce.operands) // 2
    operand = reduce.operands[0].shape
    reduced = tuple(sorted(reduce.attr("dimensions")))
    kept = tuple(d for d in range(len(operand.dims)) if d not in reduced)
    kept_shape = Shape(operand.dtype, tuple(operand.dims[d] for d in kept))
    reduced_shape = Shape(operand.dtype, tuple(operand.dims[d] for d in reduced))
    positions, length = max(kept_shape.size, 1), reduced_shape.size
    splits = max(1, min(-(-length // MIN_CHUNK), MAX_THREADS // positions))
    chunk = -(-length // splits)
    inputs, results = operand_buffers(fusion), output_buffers(fusion)
    name = kernel_name(fusion, options)
    dtypes = [compute_dtype(s.dtype) for s in reduce.shape.tuple_shapes]
    partials = tuple(ir.Buffer(f"partial{j}", d, "global", splits * positions)
                     for j, d in enumerate(dtypes))

    def full_index(kept_index: tuple, n: ir.Expr) -> tuple:
        index: list = [None] * len(operand.dims)
        for d, i in zip(kept, kept_index):
            index[d] = i
        for d, i in zip(reduced, delinearize(n, reduced_shape)):
            index[d] = i
        return tuple(index)

    # stage one: thread i folds chunk i // positions of kept position i % positions
    em = Elemental(name, {k: b for k, (b, _) in enumerate(inputs)})
    i, n = ir.Var("i", "int32"), ir.Var("n", "int32")
    with em.scope() as stage_one:
        s, k = div(i, positions), rem(i, positions)
        kept_index = delinearize(k, kept_shape)
        accs = _initial_values(em, reduce, count)
        with em.scope() as along:
            index = full_index(kept_index, n)
            combine(em, reduce.called[0], accs,
                    [em.value(o, index) for o in reduce.operands[:count]])
        stop = ir.Binary("min", add(mul(s, chunk), chunk), ir.index_const(length))
        em.emit(ir.For(n, mul(s, chunk), stop, ir.index_const(1), tuple(along)),
                *(ir.Store(p, i, acc) for p, acc in zip(partials, accs)))
    grid, first, step = grid_stride(options, splits * positions)
    first_kernel = ir.Kernel(
        f"{name}_partials", tuple(b for b, _ in inputs) + partials,
        (ir.For(i, first, ir.index_const(splits * positions), step, tuple(stage_one)),),
        grid, options.block, options.warp_size, constants=tuple(em.constants),
        notes=(f"variadic reduction stage 1: {splits} chunks of {chunk}",))
    # stage two: thread i folds the partials of kept position i, in chunk order
    em = Elemental(name, {k: b for k, (b, _) in enumerate(inputs)})
    with em.scope() as stage_two:
        accs = _initial_values(em, reduce, count)
        with em.scope() as fold:
            combine(em, reduce.called[0], accs, [ir.Load(p, add(mul(n, positions), i))
                                        for p in partials])
        em.emit(ir.For(n, ir.index_const(0), ir.index_const(splits), ir.index_const(1),
                       tuple(fold)))
        kept_index = delinearize(i, kept_shape)
        em.emit(*(store(buffer, linear_index(kept_index, shape), acc)
                  for (buffer, shape), acc in zip(results, accs)))
    grid, first, step = grid_stride(options, kept_shape.size)
    second_kernel = ir.Kernel(
        f"{name}_fold", tuple(b for b, _ in inputs) + partials + tuple(b for b, _ in results),
        (ir.For(i, first, ir.index_const(kept_shape.size), step, tuple(stage_two)),), grid,
        options.block, options.warp_size, constants=tuple(em.constants),
        notes=("variadic reduction stage 2",))
    return FusionKernels(name, (first_kernel, second_kernel), inputs, results, partials)


def _initial_values(em: Elemental, reduce: HloInstruction, count: int) -> list[ir.Var]:
    """A mutable accumulator per component, holding the reduction's initial value."""
    accs = []
    for init in reduce.operands[count:]:
        value = em.value(init, ())
        acc = em.fresh("acc", value.dtype)
        em.emit(ir.Let(acc, value))
        accs.append(acc)
    return accs
