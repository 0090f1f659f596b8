"""Kernels that update an array in place: dynamic-update-slice and scatter outside fusions
(the GPU side of XLA's in-place dynamic-update-slice and scatter emitters), and
`alone`, which makes any single instruction a fusion of its own so that the loop-fusion
builder can compute it (gather and dynamic-slice outside fusions go that way).

An update kernel writes into its operand's buffer, `in0`, which is also its output
(`FusionKernels.outputs` names `in0`): the program gives it the operand's memory where
nothing else reads that value any more, else a copy of it (one device-to-device copy).

- dynamic-update-slice: one thread per element of the update, the start indices read
  from device memory (no host read-back) and clamped as XLA clamps them.
- scatter: one thread per element of the updates, its operand position computed from
  the scatter indices; a window that does not fit in the operand is skipped, as XLA's
  backends do. Elements of two updates can meet at one position, so the combiner is
  applied atomically: `atomicAdd` where it is an addition of a type CUDA and HIP both add
  (float32, float64, int32, uint32), otherwise a compare-and-swap loop (`ir.AtomicUpdate`)
  around the combiner computation, compiled as kernel IR (maximum, minimum, multiply, an
  overwrite, any scalar computation, additions of 16-bit floats: HIP has no atomicAdd of
  them; 1- and 2-byte elements swap through the 32-bit word holding them, see
  `render_header`). Overwrites of one position by several updates keep one of them,
  which XLA leaves unspecified too. Scatters of several operands at once are not built.
"""
from __future__ import annotations

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import (BuildOptions, FusionKernels, grid_stride,
                                                 kernel_name, operand_buffers, store)
from jaxlite.backends.gpu.hlo_elemental import Elemental, UnsupportedFusion, compute_dtype
from jaxlite.backends.gpu.hlo_indexing import clamped_start
from jaxlite.backends.gpu.index_math import add, delinearize, linear_index
from jaxlite.xla.ir import (ComputationBuilder, HloComputation, HloInstruction, NameUniquer)
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion_decisions import LOOP

__all__ = ["alone", "as_fusion", "build_dynamic_update", "build_scatter"]

_ATOMIC_ADD_TYPES = ("float32", "float64", "int32", "uint32")


def alone(inst: HloInstruction) -> HloComputation:
    """A computation holding `inst` alone, its operands made parameters."""
    builder = ComputationBuilder(f"alone_{inst.name}", NameUniquer())
    params = [builder.parameter(o.shape) for o in inst.operands]
    root = builder.add(inst.opcode, inst.shape, params, dict(inst.attrs), inst.called,
                       name=inst.name)
    return builder.build(root)


def as_fusion(inst: HloInstruction) -> HloInstruction:
    """`inst` as a loop fusion of itself (same name and operands)."""
    return HloInstruction(inst.name, Opcode.FUSION, inst.shape, inst.operands,
                          {"kind": LOOP}, (alone(inst),))


def _update_kernel(inst: HloInstruction, options: BuildOptions, count: int, body,
                   note: str) -> FusionKernels:
    """One grid-stride kernel over `count` update elements; `body(em, position)` adds
    the statements of one element. Its output is `in0`, updated in place."""
    for operand in inst.operands:
        if operand.shape.is_tuple:
            raise UnsupportedFusion(f"%{inst.name} takes a tuple operand")
    inputs = operand_buffers(inst)
    name = kernel_name(inst, options)
    em = Elemental(name, {k: b for k, (b, _) in enumerate(inputs)})
    position = ir.Var("p", "int32")
    with em.scope() as loop_body:
        body(em, inputs, position)
    grid, first, step = grid_stride(options, count)
    loop = ir.For(position, first, ir.index_const(count), step, tuple(loop_body))
    kernel = ir.Kernel(name, tuple(b for b, _ in inputs), (loop,), grid, options.block,
                       options.warp_size, constants=tuple(em.constants), notes=(note,))
    return FusionKernels(name, (kernel,), inputs, (inputs[0],))


def build_dynamic_update(inst: HloInstruction, options: BuildOptions) -> FusionKernels:
    """dynamic-update-slice of in0 by in1 at the scalar starts in2, in3, ..., in place."""
    operand, update = inst.operands[0].shape, inst.operands[1].shape

    def body(em: Elemental, inputs, p: ir.Var) -> None:
        index = delinearize(p, update)
        target = []
        for k, (i, dim, size) in enumerate(zip(index, operand.dims, update.dims)):
            buffer = inputs[2 + k][0]
            start = em.let(clamped_start(ir.Load(buffer, ir.index_const(0)), dim, size),
                           "start")
            target.append(add(start, i))
        value = ir.Load(inputs[1][0], p)
        em.emit(store(inputs[0][0], linear_index(tuple(target), operand), value))
    return _update_kernel(inst, options, update.size, body,
                          "update in place: dynamic-update-slice")


def build_scatter(inst: HloInstruction, options: BuildOptions) -> FusionKernels:
    """scatter of in2 into in0 at the indices in1, in place (see the module docstring)."""
    if len(inst.operands) != 3:
        raise UnsupportedFusion(f"scatter %{inst.name} of several operands: its combiner "
                                "takes tuples, which no atomic operation updates")
    operand, indices, updates = (o.shape for o in inst.operands)
    dtype = operand.dtype.name
    adds = _is_addition(inst.called[0]) and dtype in _ATOMIC_ADD_TYPES

    def body(em: Elemental, inputs, p: ir.Var) -> None:
        u = delinearize(p, updates)
        target, fits = _scatter_target(em, inst, inputs[1][0], u)
        out, value = inputs[0][0], ir.Load(inputs[2][0], p)
        with em.scope() as then:
            where = em.let(linear_index(target, operand), "at")
            if adds:
                em.emit(ir.AtomicAdd(out, where, value))
            else:
                em.emit(_combine_atomically(em, inst.called[0], out, where, value))
        em.emit(ir.If(fits, tuple(then)))
    kind = "atomicAdd" if adds else "compare-and-swap"
    return _update_kernel(inst, options, updates.size, body, f"update in place: scatter "
                                                               f"({kind})")


def _is_addition(comp: HloComputation) -> bool:
    root, params = comp.root, comp.parameters
    return root.opcode is Opcode.ADD and len(params) == 2 and \
        {id(o) for o in root.operands} == {id(p) for p in params}


def _combine_atomically(em: Elemental, comp: HloComputation, out: ir.Buffer,
                        where: ir.Expr, value: ir.Expr) -> ir.AtomicUpdate:
    """out[where] = comp(out[where], value) as a compare-and-swap loop."""
    old = em.fresh("old", out.dtype)
    typed = compute_dtype(out.dtype)
    with em.scope() as body:
        x = old if typed == out.dtype else em.let(ir.Cast(old, typed))
        y = value if typed == out.dtype else em.let(ir.Cast(value, typed))
        first, second = comp.parameters
        em.seed(first, (), x)
        em.seed(second, (), y)
        new = em.value(comp.root, ())
        new = new if new.dtype == out.dtype else em.let(ir.Cast(new, out.dtype))
    return ir.AtomicUpdate(out, where, old, tuple(body), new)


def _scatter_target(em: Elemental, inst: HloInstruction, indices: ir.Buffer,
                    u: tuple) -> tuple[tuple, ir.Expr]:
    """The operand index an update element at `u` goes to, and whether its window fits."""
    a = inst.attr
    operand, index_shape = inst.operands[0].shape, inst.operands[1].shape
    window_positions = list(a("update_window_dims"))
    vector_dim = int(a("index_vector_dim"))
    scatter = [u[d] for d in range(len(u)) if d not in window_positions]
    skipped = set(a("inserted_window_dims", ())) | set(a("input_batching_dims", ()))
    window_dims = [d for d in range(operand.rank) if d not in skipped]
    sizes = {d: inst.operands[2].shape.dims[p] for d, p in zip(window_dims, window_positions)}
    starts: list[ir.Expr] = [ir.index_const(0)] * operand.rank
    fits: ir.Expr = ir.Const(True, "bool")
    for k, d in enumerate(a("scatter_dims_to_operand_dims")):
        position = list(scatter)
        if vector_dim < index_shape.rank:
            position.insert(vector_dim, ir.index_const(k))
        raw = em.let(ir.Load(indices, linear_index(tuple(position), index_shape)), "index")
        high = ir.Const(operand.dims[d] - sizes.get(d, 1), raw.dtype)
        inside = ir.Binary("le", raw, high)
        if ir.dtype_of(raw.dtype).kind == "i":
            inside = ir.Binary("and", ir.Binary("ge", raw, ir.Const(0, raw.dtype)), inside)
        fits = ir.Binary("and", fits, inside)
        # (a start that does not fit is clamped only so that the index stays defined)
        starts[d] = em.let(clamped_start(raw, operand.dims[d], sizes.get(d, 1)), "start")
    for operand_dim, index_dim in zip(a("input_batching_dims", ()),
                                      a("scatter_indices_batching_dims", ())):
        starts[operand_dim] = scatter[index_dim - (index_dim > vector_dim)]
    target = list(starts)
    for d, p in zip(window_dims, window_positions):
        target[d] = add(starts[d], u[p])
    return tuple(target), em.let(fits, "fits")
