"""Loop fusions that read a parameter transposed, through shared-memory tiles.

Read in output order, a transposed parameter is read with a stride: each warp touches 32
different memory segments. When a loop fusion reads one parameter through a `transpose`
that moves the parameter's most minor dimension (call its output dimension `j`) away from
the output's most minor dimension (`m`), the kernel works in 32 x 32 tiles of the (j, m)
plane, one tile per block step (grid-stride over tiles and the other, "batch",
dimensions), with blocks of 32 x 8 threads:

1. lanes run along j, reading the parameter along its minor dimension (consecutive
   addresses), and write the tile into shared memory;
2. a barrier;
3. lanes run along m, reading the tile across (a row of 33 elements, so that the 32 reads
   of a warp fall in 32 different banks), computing the fusion's outputs and writing them
   along the output's minor dimension (consecutive addresses again);
4. a barrier, so that the next tile's writes wait for this tile's reads.
"""
from __future__ import annotations

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import (
    BuildOptions, FusionKernels, fusion_outputs, kernel_name, operand_buffers,
    output_buffers, store)
from jaxlite.backends.gpu.hlo_elemental import Elemental, compute_dtype
from jaxlite.backends.gpu.index_math import add, delinearize, div, linear_index, mul, rem
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["build_transpose_fusion", "tiled_transpose"]

TILE, ROWS = 32, 8          # a tile's side; rows of threads in a block (32 x 8 threads)
_PITCH = TILE + 1           # a padded tile row: column reads hit 32 different banks
_THREAD, _BLOCK = ir.Builtin("thread"), ir.Builtin("block")


def tiled_transpose(fusion: HloInstruction) -> tuple[HloInstruction, int, int] | None:
    """(transpose, j, m) when `fusion` is a loop fusion worth tiling (see the module
    docstring), else None."""
    body = fusion.called[0]
    outputs = fusion_outputs(body)
    shape = outputs[0].shape
    if any(o.shape.dims != shape.dims or o.shape.layout != shape.layout for o in outputs):
        return None
    transposes = [i for i in body.instructions if i.opcode is Opcode.TRANSPOSE
                  and i.operands[0].opcode is Opcode.PARAMETER]
    if len(transposes) != 1 or transposes[0].shape.dims != shape.dims:
        return None
    transpose = transposes[0]
    if not _read_elementwise(body, transpose):
        return None
    param_minor = transpose.operands[0].shape.layout[0]
    j = list(transpose.attr("dimensions")).index(param_minor)
    m = shape.layout[0]
    if j == m or shape.dims[j] < 2 or shape.dims[m] < 2:
        return None
    return transpose, j, m


def _read_elementwise(body, transpose: HloInstruction) -> bool:
    """Whether every use of `transpose`, up to the outputs, is elementwise (so that it is
    read at the output's own index)."""
    users = body.users()
    pending, seen = [transpose], {id(transpose)}
    while pending:
        for user in users[pending.pop()]:
            if user.opcode is Opcode.TUPLE or id(user) in seen:
                continue
            if not user.opcode.is_elementwise:
                return False
            seen.add(id(user))
            pending.append(user)
    return True


def build_transpose_fusion(fusion: HloInstruction, options: BuildOptions) -> FusionKernels:
    """The tiled kernel of a loop fusion that `tiled_transpose` accepts."""
    transpose, j, m = tiled_transpose(fusion)
    body = fusion.called[0]
    outputs = fusion_outputs(body)
    shape = outputs[0].shape
    inputs, results = operand_buffers(fusion), output_buffers(fusion)
    name = kernel_name(fusion, options)
    em = Elemental(name, {k: b for k, (b, _) in enumerate(inputs)})
    batch_dims = tuple(d for d in range(len(shape.dims)) if d not in (j, m))
    batch_shape = Shape(shape.dtype, tuple(shape.dims[d] for d in batch_dims))
    tiles_j, tiles_m = -(-shape.dims[j] // TILE), -(-shape.dims[m] // TILE)
    tiles = batch_shape.size * tiles_j * tiles_m
    tile = ir.Buffer("tile", compute_dtype(transpose.shape.dtype), "shared", TILE * _PITCH)
    lane, row = rem(_THREAD, TILE), div(_THREAD, TILE)
    step = ir.Var("step", "int32")

    def index_of(batch: tuple, along_j: ir.Expr, along_m: ir.Expr) -> tuple:
        index = [None] * len(shape.dims)
        for d, i in zip(batch_dims, batch):
            index[d] = i
        index[j], index[m] = along_j, along_m
        return tuple(index)

    def inside(along_j: ir.Expr, along_m: ir.Expr) -> ir.Expr:
        return ir.Binary("and", ir.Binary("lt", along_j, ir.index_const(shape.dims[j])),
                         ir.Binary("lt", along_m, ir.index_const(shape.dims[m])))

    with em.scope() as tile_body:
        plane = rem(step, tiles_j * tiles_m)
        batch = delinearize(div(step, tiles_j * tiles_m), batch_shape)
        first_j, first_m = mul(div(plane, tiles_m), TILE), mul(rem(plane, tiles_m), TILE)
        for k in range(0, TILE, ROWS):  # read: lanes along j
            along_j, along_m = add(first_j, lane), add(first_m, add(row, k))
            with em.scope() as read:
                value = em.value(transpose, index_of(batch, along_j, along_m))
                em.emit(ir.Store(tile, add(mul(add(row, k), _PITCH), lane), value))
            em.emit(ir.If(inside(along_j, along_m), tuple(read)))
        em.emit(ir.Barrier())
        for k in range(0, TILE, ROWS):  # write: lanes along m
            along_j, along_m = add(first_j, add(row, k)), add(first_m, lane)
            with em.scope() as write:
                index = index_of(batch, along_j, along_m)
                em.seed(transpose, index, em.let(
                    ir.Load(tile, add(mul(lane, _PITCH), add(row, k)))))
                for (buffer, out_shape), output in zip(results, outputs):
                    em.emit(store(buffer, linear_index(index, out_shape),
                                  em.value(output, index)))
            em.emit(ir.If(inside(along_j, along_m), tuple(write)))
        em.emit(ir.Barrier())
    grid = max(1, min(tiles, options.max_blocks))
    loop = ir.For(step, _BLOCK, ir.index_const(tiles), ir.index_const(grid), tuple(tile_body))
    kernel = ir.Kernel(name, tuple(b for b, _ in inputs + results), (loop,), grid,
                       TILE * ROWS, options.warp_size, (tile,), tuple(em.constants),
                       notes=(f"transpose through shared-memory tiles: {tiles} tiles",))
    return FusionKernels(name, (kernel,), inputs, results)
