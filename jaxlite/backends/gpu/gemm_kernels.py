"""A generated tiled GEMM for small dots: C[b] = A[b] B[b] for row-major A (batch, m, k)
and B (batch, k, n), the shape `device_ops.canonical_operands` brings every dot to.

One block of 16 x 16 threads computes a 16 x 16 tile of C: it walks k in steps of 16,
each thread loading one element of A's and one of B's tile into shared memory (zero
outside the matrices), a barrier, 16 multiply-adds from shared memory, a barrier. Blocks
take tiles grid-stride, so every thread of a block runs the same iterations (barriers are
uniform). Products are summed in the accumulation type and rounded once at the store.

Why: for small products a cuBLAS call costs its setup and a launch or two tuned for big
shapes; one small generated kernel is one launch. `use_tiled_gemm` is the rule that
picks it: at most `SMALL_GEMM_FLOPS` multiply-adds per matrix and no side above
`SMALL_GEMM_SIDE`. The thresholds are a guess, not measured: no GPU has run this code
yet (the issue asks for a measured rule; `benchmarks/gpu_check.sh` is where to measure).
"""
from __future__ import annotations

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import BuildOptions, FusionKernels
from jaxlite.backends.gpu.index_math import add, div, mul, rem
from jaxlite.xla.shape import Shape

__all__ = ["SMALL_GEMM_FLOPS", "SMALL_GEMM_SIDE", "build_tiled_gemm", "use_tiled_gemm"]

TILE = 16
SMALL_GEMM_FLOPS = 64 * 64 * 64  # multiply-adds of one matrix product
SMALL_GEMM_SIDE = 256
_THREAD, _BLOCK = ir.Builtin("thread"), ir.Builtin("block")


def use_tiled_gemm(m: int, n: int, k: int) -> bool:
    """Whether a product of (m x k) by (k x n) matrices takes the generated kernel (the
    unmeasured rule of the module docstring)."""
    return m * n * k <= SMALL_GEMM_FLOPS and max(m, n, k) <= SMALL_GEMM_SIDE and m * n > 0


def _both(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Binary("and", a, b)


def _less(a: ir.Expr, bound: int) -> ir.Expr:
    return ir.Binary("lt", a, ir.index_const(bound))


def _load_or_zero(tile: ir.Buffer, at: ir.Expr, inside: ir.Expr, source: ir.Buffer,
                  index: ir.Expr) -> ir.If:
    value = ir.Load(source, index)
    if value.dtype != tile.dtype:
        value = ir.Cast(value, tile.dtype)
    return ir.If(inside, (ir.Store(tile, at, value),),
                 (ir.Store(tile, at, ir.Const(0, tile.dtype)),))


def build_tiled_gemm(name: str, batch: int, m: int, n: int, k: int,
                     operand_dtypes: tuple[str, str], accumulation: str, result_dtype: str,
                     options: BuildOptions) -> FusionKernels:
    """The kernel of C = A B (see the module docstring); inputs A, B, output C, flat."""
    a, b = (ir.Buffer(f"in{i}", d) for i, d in enumerate(operand_dtypes))
    c = ir.Buffer("out0", result_dtype)
    tile_a = ir.Buffer("tile_a", accumulation, "shared", TILE * TILE)
    tile_b = ir.Buffer("tile_b", accumulation, "shared", TILE * TILE)
    x, y = rem(_THREAD, TILE), div(_THREAD, TILE)
    tiles_m, tiles_n = -(-m // TILE), -(-n // TILE)
    tiles = batch * tiles_m * tiles_n
    step, k0, kk = (ir.Var(v, "int32") for v in ("step", "k0", "kk"))
    acc = ir.Var("acc", accumulation)
    matrix, plane = div(step, tiles_m * tiles_n), rem(step, tiles_m * tiles_n)
    row = add(mul(div(plane, tiles_n), TILE), y)
    col = add(mul(rem(plane, tiles_n), TILE), x)
    mine = add(mul(y, TILE), x)
    a_col, b_row = add(k0, x), add(k0, y)
    product = ir.Binary("mul", ir.Load(tile_a, add(mul(y, TILE), kk)),
                        ir.Load(tile_b, add(mul(kk, TILE), x)))
    walk_k = ir.For(k0, ir.index_const(0), ir.index_const(k), ir.index_const(TILE), (
        _load_or_zero(tile_a, mine, _both(_less(row, m), _less(a_col, k)), a,
                      add(mul(matrix, m * k), add(mul(row, k), a_col))),
        _load_or_zero(tile_b, mine, _both(_less(b_row, k), _less(col, n)), b,
                      add(mul(matrix, k * n), add(mul(b_row, n), col))),
        ir.Barrier(),
        ir.For(kk, ir.index_const(0), ir.index_const(TILE), ir.index_const(1),
               (ir.Assign(acc, ir.Binary("add", acc, product)),)),
        ir.Barrier()))
    value = acc if accumulation == result_dtype else ir.Cast(acc, result_dtype)
    write = ir.If(_both(_less(row, m), _less(col, n)),
                  (ir.Store(c, add(mul(matrix, m * n), add(mul(row, n), col)), value),))
    grid = max(1, min(tiles, options.max_blocks))
    loop = ir.For(step, _BLOCK, ir.index_const(tiles), ir.index_const(grid),
                  (ir.Let(acc, ir.Const(0, accumulation)), walk_k, write))
    kernel = ir.Kernel(name, (a, b, c), (loop,), grid, TILE * TILE, options.warp_size,
                       (tile_a, tile_b), notes=(f"tiled gemm: {tiles} tiles of {TILE}x{TILE}",))
    return FusionKernels(name, (kernel,),
                         ((a, Shape(ir.dtype_of(a.dtype), (batch * m * k,))),
                          (b, Shape(ir.dtype_of(b.dtype), (batch * k * n,)))),
                         ((c, Shape(ir.dtype_of(result_dtype), (batch * m * n,))),))
