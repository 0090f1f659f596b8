"""Kernels of one fusion: what a builder returns, the options builders share, and the
builder of loop (elementwise) fusions.

A `FusionKernels` names the buffers the launcher binds: `in<k>` for the fusion's k-th
operand, `out<k>` for its k-th result (the elements of a multi-output fusion's tuple),
and scratch buffers between kernels. Buffers hold elements in memory order (the shape's
layout), as the cpu backend's buffers do.

Loop fusions become one grid-stride kernel: thread i of the whole grid computes elements
[w*i, w*i + w) of the output in memory order, then jumps by the grid's size. `w` is the
vector width: 16 bytes of the widest element type, lowered until it divides the output,
so parameters read in output order and the outputs move through 4-, 8- or 16-byte
vector accesses; broadcast, transposed or sliced reads are scalar loads.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.hlo_elemental import Elemental, UnsupportedFusion, compute_dtype
from jaxlite.backends.gpu.index_math import add, delinearize, mul
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["BuildOptions", "FusionKernels", "build_loop_fusion", "fusion_outputs",
           "grid_stride", "in_order_parameters", "kernel_name", "load_vectors",
           "operand_buffers", "output_buffers", "store", "store_run", "vector_ok",
           "vector_width"]


@dataclass(frozen=True)
class BuildOptions:
    """Launch choices of the builders (tests shrink `max_blocks` so loops go round)."""
    warp_size: int = 32
    block: int = 256
    max_blocks: int = 4096
    row_block: int = 128          # threads of a block holding one row per warp
    warp_row_limit: int = 1024    # longer rows take a whole block each
    # a reduction of minor dimensions with at least this many rows gets a row kernel even
    # where the cpu tiling (thinking of its L1 cache) said no; fewer rows: a tree
    row_kernel_min_rows: int = 64
    vector_bytes: int = 16
    name_prefix: str = "jl"       # kernels are named <prefix>_<fusion name>


@dataclass(frozen=True)
class FusionKernels:
    """The kernels computing one fusion, launched in order on one stream."""
    name: str
    kernels: tuple[ir.Kernel, ...]
    inputs: tuple[tuple[ir.Buffer, Shape], ...]
    outputs: tuple[tuple[ir.Buffer, Shape], ...]
    scratch: tuple[ir.Buffer, ...] = ()


def kernel_name(fusion: HloInstruction, options: BuildOptions) -> str:
    """A C identifier naming the kernels of `fusion` (and their constant arrays)."""
    cleaned = "".join(c if c.isalnum() else "_" for c in fusion.name)
    return f"{options.name_prefix}_{cleaned}"


def fusion_outputs(body: HloComputation) -> list[HloInstruction]:
    root = body.root
    return list(root.operands) if root.opcode is Opcode.TUPLE else [root]


def operand_buffers(fusion: HloInstruction) -> tuple[tuple[ir.Buffer, Shape], ...]:
    result = []
    for k, operand in enumerate(fusion.operands):
        if operand.shape.is_tuple:
            raise UnsupportedFusion(f"fusion %{fusion.name} takes a tuple operand")
        result.append((ir.Buffer(f"in{k}", operand.shape.dtype.name), operand.shape))
    return tuple(result)


def output_buffers(fusion: HloInstruction) -> tuple[tuple[ir.Buffer, Shape], ...]:
    shapes = fusion.shape.tuple_shapes if fusion.shape.is_tuple else (fusion.shape,)
    return tuple((ir.Buffer(f"out{k}", s.dtype.name), s) for k, s in enumerate(shapes))


def grid_stride(options: BuildOptions, work: int, block: int | None = None) -> tuple:
    """(grid, first index, step) of a grid-stride loop over `work` items."""
    block = block or options.block
    grid = max(1, min(-(-work // block), options.max_blocks))
    first = add(mul(ir.Builtin("block"), block), ir.Builtin("thread"))
    return grid, first, ir.index_const(grid * block)


def store(buffer: ir.Buffer, index: ir.Expr, value: ir.Expr) -> ir.Store:
    """buffer[index] = value, cast from its computing type to the buffer's."""
    if value.dtype != buffer.dtype:
        value = ir.Cast(value, buffer.dtype)
    return ir.Store(buffer, index, value)


def vector_ok(dtype: str, width: int) -> bool:
    """Whether `width` elements of `dtype` move as one 2-, 4-, 8- or 16-byte access."""
    return width > 1 and width * ir.dtype_of(dtype).itemsize in (2, 4, 8, 16)


def vector_width(elements: int, dtypes: list[str], options: BuildOptions) -> int:
    """Elements per vector access: 16 bytes of the widest type, lowered until it divides
    `elements` (so every access is aligned)."""
    widest = max(ir.dtype_of(d).itemsize for d in dtypes)
    width = max(1, options.vector_bytes // widest)
    while width > 1 and elements % width:
        width //= 2
    return width


def in_order_parameters(body: HloComputation, shape: Shape) -> list[HloInstruction]:
    """Parameters laid out as `shape`: read at the iteration's own memory positions."""
    return [p for p in body.parameters
            if p.shape.dims == shape.dims and p.shape.layout == shape.layout]


def load_vectors(em: Elemental, params: list[HloInstruction], buffers: dict,
                 base: ir.Expr, indices: list[tuple]) -> None:
    """Loads each parameter's run of len(indices) elements from `base` in one access and
    makes them its values at `indices`."""
    width = len(indices)
    for p in params:
        buffer = buffers[p.attr("number")]
        if not vector_ok(buffer.dtype, width):
            continue
        lanes = tuple(em.fresh("x", buffer.dtype) for _ in range(width))
        em.emit(ir.VectorLoad(lanes, buffer, base))
        typed = compute_dtype(buffer.dtype)
        for index, lane in zip(indices, lanes):
            em.seed(p, index, lane if typed == buffer.dtype else em.let(ir.Cast(lane, typed)))


def store_run(em: Elemental, buffer: ir.Buffer, base: ir.Expr, values: list) -> None:
    """buffer[base + k] = values[k], in one access where the width allows."""
    if vector_ok(buffer.dtype, len(values)):
        typed = tuple(v if v.dtype == buffer.dtype else ir.Cast(v, buffer.dtype)
                      for v in values)
        em.emit(ir.VectorStore(buffer, base, typed))
    else:
        em.emit(*(store(buffer, add(base, k), v) for k, v in enumerate(values)))


def build_loop_fusion(fusion: HloInstruction, options: BuildOptions) -> FusionKernels:
    """The grid-stride kernel of a loop (kLoop) fusion, one or several outputs."""
    body = fusion.called[0]
    outputs = fusion_outputs(body)
    shape = outputs[0].shape
    if any(o.shape.dims != shape.dims or o.shape.layout != shape.layout for o in outputs):
        raise UnsupportedFusion(f"loop fusion %{fusion.name} has outputs of different "
                                "shapes")
    if any(i.opcode is Opcode.REDUCE for i in body.instructions):
        raise UnsupportedFusion(f"loop fusion %{fusion.name} holds a reduction")
    inputs, results = operand_buffers(fusion), output_buffers(fusion)
    name = kernel_name(fusion, options)
    em = Elemental(name, {k: b for k, (b, _) in enumerate(inputs)})
    in_order = in_order_parameters(body, shape)
    buffers = {k: b for k, (b, _) in enumerate(inputs)}
    width = vector_width(shape.size, [b.dtype for b, _ in results] +
                         [buffers[p.attr("number")].dtype for p in in_order], options)
    i = ir.Var("i", "int32")
    with em.scope() as loop_body:
        base = mul(i, width)
        indices = [delinearize(add(base, k), shape) for k in range(width)]
        load_vectors(em, in_order, buffers, base, indices)
        for (buffer, _), output in zip(results, outputs):
            store_run(em, buffer, base, [em.value(output, index) for index in indices])
    grid, first, step = grid_stride(options, shape.size // width)
    loop = ir.For(i, first, ir.index_const(shape.size // width), step, tuple(loop_body))
    kernel = ir.Kernel(name, tuple(b for b, _ in inputs + results), (loop,), grid,
                       options.block, options.warp_size, constants=tuple(em.constants),
                       notes=(f"loop fusion, {width} element(s) per thread step",))
    return FusionKernels(name, (kernel,), inputs, results)

