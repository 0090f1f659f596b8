"""What a generated GEMM computes (`GemmSpec`) and how it is blocked (`GemmBlocking`, `GemmPlan`).

A `GemmSpec` is the compile-time description of one (batched) matrix product, as XLA's CPU
compiler sees a `dot` after layout assignment: every size and stride is a constant, so the
generator unrolls the register block and emits exact tails. `plan_gemm` checks the spec and
derives everything the generator and its caller need: the block sizes clamped to the problem,
the scratch memory for the packed panels, the function names and parameters, and the unit of
parallel work (the outermost loop a worker pool may split).

The blocking follows the Goto/BLIS scheme: a `kc x nc` block of B is packed into `nr`-wide
panels, a `mc x kc` block of A into `mr`-high panels, and an `mr x nr` micro-kernel keeps its
block of C in vector registers while it streams one panel of each. `DEFAULT_BLOCKING` holds
the sizes measured best on the host this was tuned on (benchmarks/gemm.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from jaxlite.backends.cpu.gemm_epilogue import Epilogue
from jaxlite.backends.cpu.llvm_target import vector_bytes

SUPPORTED_DTYPES = ("float32", "float64")
# Lanes of one vector register of the host: 512-bit with AVX-512 (32 registers), else
# 256-bit (AVX2, 16 registers). A wider vector than the registers would be split by LLVM,
# doubling the accumulators the micro-kernel keeps live: with 16 registers they spill
# (an 8x3 tile of 512-bit vectors on an AVX2 core ran matmul at a quarter of its speed).
WIDE_VECTORS = vector_bytes() == 64
LANES = {"float32": 16, "float64": 8} if WIDE_VECTORS else {"float32": 8, "float64": 4}
SCRATCH_ALIGN = 64
# Work items split along m each go over all of B; a B with unit column stride and at most
# this many bytes (it stays in L2) is read in place rather than packed once per item. An A
# whose rows are contiguous along m (a transposed A) and as small is read in place too.
_IN_PLACE = 1 << 20
# ... unless its row stride in bytes is a multiple of a larger power of two than this: the
# rows of a panel then fall into few cache sets and evict each other (n = 1024 float32:
# 4 KiB, measured at half the speed of a packed B).
_IN_PLACE_STRIDE_ALIGN = 1024
_IN_PLACE_A_ROW = 1024  # bytes of a row of C up to which A is read in place


@dataclass(frozen=True)
class GemmBlocking:
    """Register and cache block sizes.

    mr : rows of C per micro-kernel (accumulator rows; one broadcast of A each).
    nv : vectors of C per micro-kernel row (nr = nv * lanes columns).
    kc : depth of a packed block (rank-kc updates between loads and stores of C).
    mc : rows of a packed block of A (`mc x kc`, kept in L2); rounded to a multiple of mr.
    nc : columns of a packed block of B (`kc x nc`, in L2/L3); rounded to a multiple of nr.
    unroll : steps of the micro-kernel's k loop per iteration.
    prefetch_c : prefetch the block of C before the k loop.

    The defaults were measured with benchmarks/gemm.py on one Zen 4 core (32 KiB L1d, 1 MiB
    L2; 117 GFLOP/s float32 FMA peak measured with a register-only loop), float32:
    - micro-kernel: 4x6, 5x4, 6x4, 7x3, 8x3, 12x2 and 14x2 all ran at 105-112 GFLOP/s at
      1024^3 and 2048^3, within the noise of this shared machine; 8x3 keeps 24 accumulators,
      3 vectors of B and a broadcast in the 32 vector registers, and its 8 rows of C stay
      within the 8 ways of an L1 set when the row stride is a multiple of 4 KiB.
    - kc (2048^3): 128 -> 97-100, 192 -> 106, 256 -> 107-109, 512 -> 111, 1024 -> 112;
      the B micro-panel then streams from L2, which keeps up with one FMA per cycle.
    - mc: 32 to 256 within noise (64 for float64); nc: 2048 beat 480 and 960 by 3-4%.
    - unroll: 1, 2, 4 and 8 within noise; 1 compiles fastest. prefetch_c: about +4%.
    """

    mr: int = 8
    nv: int = 3
    kc: int = 512
    mc: int = 128
    nc: int = 4096
    unroll: int = 1
    prefetch_c: bool = True


# 512-bit vectors: measured as the docstring above says. 256-bit vectors (16 registers):
# a 4x3 tile keeps 12 accumulators, 3 vectors of B and a broadcast in registers, with the
# kc x nr panel of B (24 KiB at kc = 256) in a 32 KiB L1. Measured with benchmarks/gemm.py
# on one AVX2 EPYC core against numpy's OpenBLAS on the same core, float32: 4x3, 6x2 and
# 5x2 at 0.9-1.0x of it on 512^3 and 1024^3 (kc 256-512, mc 48-192 within the noise), but
# on the shapes of small batches 4x3 stays there while 6x2 drops (a 6-row tile leaves an
# edge of 2 rows in m = 32, 128, 256): 32x256x256 0.95x against 0.65x, 256x1024x784 0.9x
# against 0.5x; float64 likewise (32x256x256 0.92x against 0.59x). 8x1 and 3x4 ran at
# 0.4-0.6x, and the 8x3 tile of 512-bit vectors at a quarter.
DEFAULT_BLOCKING = {
    "float32": GemmBlocking(mr=8, nv=3, kc=512, mc=128, nc=4096),
    "float64": GemmBlocking(mr=8, nv=3, kc=512, mc=64, nc=4096),
} if WIDE_VECTORS else {
    "float32": GemmBlocking(mr=4, nv=3, kc=256, mc=96, nc=4096),
    "float64": GemmBlocking(mr=4, nv=3, kc=256, mc=48, nc=4096),
}
# Accumulator vectors a micro-kernel may keep (three quarters of the registers).
ACCUMULATORS = 24 if WIDE_VECTORS else 12


@dataclass(frozen=True)
class GemmSpec:
    """C[b] = epilogue(alpha * op(A)[b] @ op(B)[b] + beta * C[b]) for b in range(batch).

    m, n, k : op(A) is m x k, op(B) is k x n, C is m x n (all compile-time constants; any may
        be 0).
    dtype : "float32" or "float64"; products accumulate in this dtype.
    transpose_a, transpose_b : the buffer holds A^T (k x m) or B^T (n x k), row-major.
    a_strides, b_strides, c_strides : (batch, row, column) strides in elements of op(A), op(B)
        and C, overriding the dense row-major layout the transposition flags imply (then the
        flag must be False). C's column stride must be 1.
    alpha, beta : scalars; with beta == 0 the old contents of C are never read.
    epilogue : applied to each output vector after the last block of k (bias, activation...).
    blocking : block sizes; None takes `DEFAULT_BLOCKING[dtype]`.
    scratch : "argument" (the caller passes a buffer of `plan.scratch_bytes`, best 64-byte
        aligned; NULL when that is 0) or "stack" (the full function allocates it on the
        stack; for small problems).
    """

    name: str
    m: int
    n: int
    k: int
    dtype: str = "float32"
    batch: int = 1
    transpose_a: bool = False
    transpose_b: bool = False
    a_strides: tuple[int, int, int] | None = None
    b_strides: tuple[int, int, int] | None = None
    c_strides: tuple[int, int, int] | None = None
    alpha: float = 1.0
    beta: float = 0.0
    epilogue: Epilogue | None = None
    blocking: GemmBlocking | None = None
    scratch: str = "argument"


@dataclass(frozen=True)
class GemmPlan:
    """Everything derived from a `GemmSpec`: strides, clamped blocking, scratch, signature.

    Generated functions (parameters in this order):
      `@<name>(ptr a, ptr b, ptr c, <epilogue args>, ptr scratch)` computes everything;
      `@<name>.range(ptr a, ptr b, ptr c, <epilogue args>, ptr scratch, i64 start, i64 end)`
      computes work items [start, end) of `items`; disjoint ranges write disjoint parts of C,
      so a worker pool may run them concurrently (each with its own scratch).
    With `scratch="stack"` the full function has no scratch parameter (the range one keeps it).

    The generated loop nest computes an m x n x k problem with operands of strides a_strides,
    b_strides, c_strides. That is the spec's own problem unless `swapped`: a matrix-vector
    product C[m, 1] = A @ b is computed as C^T[1, m] = b^T @ A^T (whole vectors along m
    instead of one lane in sixteen), with the roles of the `a` and `b` pointers exchanged.
    `pack_b` is False when B is read in place (one panel of rows, unit column stride: every
    element of B is used once, so copying it would only cost time; or work items split
    along m, each of which would pack all of a small B again). `pack_a` is False when A is
    read in place: its rows are contiguous along m, so one step along k of an `mr`-high
    panel is `mr` neighbouring elements, as in a packed panel. `dot_form`: one row of C
    and B contiguous along k; computed as dot products without packing (gemm_dot).
    """

    spec: GemmSpec
    dtype: str
    lanes: int
    m: int
    n: int
    k: int
    swapped: bool
    pack_b: bool
    pack_a: bool
    dot_form: bool
    a_strides: tuple[int, int, int]
    b_strides: tuple[int, int, int]
    c_strides: tuple[int, int, int]
    blocking: GemmBlocking
    split_dim: str
    split_unit: int
    items_per_batch: int
    a_pack_offset: int
    b_pack_offset: int
    scratch_bytes: int
    epilogue_args: tuple[tuple[str, str], ...] = field(default=())

    @property
    def nr(self) -> int:
        return self.blocking.nv * self.lanes

    @property
    def k_blocks(self) -> int:
        """Blocks of kc along k (at least one, so that k == 0 still writes C)."""
        return max(1, -(-self.k // self.blocking.kc))

    @property
    def items(self) -> int:
        return self.spec.batch * self.items_per_batch

    @property
    def full_name(self) -> str:
        return self.spec.name

    @property
    def range_name(self) -> str:
        return f"{self.spec.name}.range"

    def full_params(self) -> list[tuple[str, str]]:
        """(name, kind) of the full function's parameters; kind is "ptr", "i64" or a dtype."""
        params = [("a", "ptr"), ("b", "ptr"), ("c", "ptr"), *self.epilogue_args]
        if self.spec.scratch == "argument":
            params.append(("scratch", "ptr"))
        return params

    def range_params(self) -> list[tuple[str, str]]:
        return [("a", "ptr"), ("b", "ptr"), ("c", "ptr"), *self.epilogue_args,
                ("scratch", "ptr"), ("start", "i64"), ("end", "i64")]


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _default_strides(spec: GemmSpec) -> tuple[tuple[int, int, int], ...]:
    m, n, k = spec.m, spec.n, spec.k
    a = (m * k, 1, m) if spec.transpose_a else (m * k, k, 1)
    b = (k * n, 1, k) if spec.transpose_b else (k * n, n, 1)
    return a, b, (m * n, n, 1)


def _check(spec: GemmSpec) -> None:
    where = f"GEMM {spec.name!r}"
    dtype = np.dtype(spec.dtype).name
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{where}: dtype {dtype} is not supported; expected one of "
                        f"{SUPPORTED_DTYPES}. Convert the operands first.")
    for label, value in (("m", spec.m), ("n", spec.n), ("k", spec.k), ("batch", spec.batch)):
        if not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{where}: size {label}={value!r} must be an integer >= 0.")
    for label, strides, flag in (("a", spec.a_strides, spec.transpose_a),
                                 ("b", spec.b_strides, spec.transpose_b)):
        if strides is not None and flag:
            raise ValueError(f"{where}: {label}_strides describe op({label.upper()}) already; "
                             f"pass transpose_{label}=False with explicit strides.")
    if spec.c_strides is not None and spec.c_strides[2] != 1 and spec.n > 1:
        raise ValueError(f"{where}: C must have unit column stride, got c_strides="
                         f"{spec.c_strides}. Compute the transpose (swap and transpose A and "
                         f"B) or copy the result.")
    if spec.blocking is not None:
        for label in ("mr", "nv", "kc", "mc", "nc", "unroll"):
            value = getattr(spec.blocking, label)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{where}: blocking.{label}={value!r} must be an integer "
                                 f">= 1.")
    if spec.scratch not in ("argument", "stack"):
        raise ValueError(f"{where}: scratch={spec.scratch!r}; expected 'argument' or 'stack'.")
    if not isinstance(spec.name, str) or not spec.name:
        raise ValueError(f"GEMM name must be a non-empty string, got {spec.name!r}.")


def _clamp(blocking: GemmBlocking, m: int, n: int, k: int, lanes: int) -> GemmBlocking:
    """Block sizes no larger than the problem, mc a multiple of mr and nc of nr."""
    mr, nr = blocking.mr, blocking.nv * lanes
    kc = max(1, min(blocking.kc, k))
    mc = max(mr, min(blocking.mc - blocking.mc % mr, _round_up(max(m, 1), mr)))
    nc = max(nr, min(blocking.nc - blocking.nc % nr, _round_up(max(n, 1), nr)))
    return replace(blocking, kc=kc, mc=mc, nc=nc)


def _parallel_split(m: int, n: int, blocking: GemmBlocking, lanes: int,
                    max_items: int = 64) -> tuple[str, int, int]:
    """The dimension whose blocks are work items, the rows/columns per item, items per batch.

    Splitting over columns (n) lets each item pack only its part of B; over rows (m), only its
    part of A. Take the dimension with more micro-tiles, in units of whole micro-tiles.
    """
    if m == 0 or n == 0:
        return "n", 1, 0
    nr = blocking.nv * lanes
    tiles_m, tiles_n = -(-m // blocking.mr), -(-n // nr)
    if tiles_n >= tiles_m:
        unit = nr * -(-tiles_n // max_items)
        return "n", unit, -(-n // unit)
    unit = blocking.mr * -(-tiles_m // max_items)
    return "m", unit, -(-m // unit)


def _in_place(elements: int, stride: int, itemsize: int) -> bool:
    """Whether a matrix of `elements` with row stride `stride` is read in place."""
    step = stride * itemsize
    return elements * itemsize <= _IN_PLACE and (step & -step) <= _IN_PLACE_STRIDE_ALIGN


def _default_blocking(dtype: str, m: int) -> GemmBlocking:
    """The measured blocking, with fewer rows and more vectors per micro-kernel when m is
    small: a short, wide tile keeps enough independent FMA chains in flight and reads longer
    runs of each row of B (m == 1, 1024 x 1024 float32 B: 4 vectors 16, 8 vectors 29, 16
    vectors 35 GFLOP/s; that case is bound by memory, numpy's BLAS gets 39)."""
    blocking = DEFAULT_BLOCKING[dtype]
    if 0 < m < blocking.mr:
        blocking = replace(blocking, mr=m,
                           nv=min(16, max(blocking.nv, ACCUMULATORS // m)))
    return blocking


def _swap_for_matrix_vector(spec: GemmSpec, a: tuple, b: tuple, c: tuple) -> bool:
    """Compute C^T = op(B)^T op(A)^T instead: n == 1, no epilogue (its columns would become
    lanes) and C^T with unit column stride (C's row stride is 1)."""
    return spec.n == 1 and spec.m > 1 and spec.epilogue is None and c[1] == 1


def plan_gemm(spec: GemmSpec) -> GemmPlan:
    """Check `spec` and derive the blocking, scratch layout and signature of its GEMM."""
    _check(spec)
    dtype = np.dtype(spec.dtype).name
    lanes = LANES[dtype]
    a_def, b_def, c_def = _default_strides(spec)
    a, b, c = (tuple(spec.a_strides or a_def), tuple(spec.b_strides or b_def),
               tuple(spec.c_strides or c_def))
    m, n, k = spec.m, spec.n, spec.k
    swapped = _swap_for_matrix_vector(spec, a, b, c)
    if swapped:
        m, n = n, m
        a, b, c = (b[0], b[2], b[1]), (a[0], a[2], a[1]), (c[0], c[2], c[1])
    blocking = _clamp(spec.blocking or _default_blocking(dtype, m), m, n, k, lanes)
    dot_form = m == 1 and a[2] == 1 and b[1] == 1 and b[2] != 1
    split_dim, unit, items_per_batch = _parallel_split(m, n, blocking, lanes)
    # A work item packs at most its own rows of A (or columns of B): the scratch is no
    # larger than one item needs.
    if split_dim == "m":
        blocking = replace(blocking, mc=min(blocking.mc, unit))
    else:
        blocking = replace(blocking, nc=min(blocking.nc, unit))
    itemsize = np.dtype(dtype).itemsize
    pack_b = not (m <= blocking.mr and b[2] == 1) and not dot_form and not (
        split_dim == "m" and b[2] == 1 and n >= blocking.nv * lanes
        and _in_place(k * n, b[1], itemsize))
    # (A's in-place panel takes twice the cache lines of a packed one: only for a narrow C,
    # whose few B panels reuse it)
    pack_a = not (a[1] == 1 and a[2] != 1 and n * itemsize <= _IN_PLACE_A_ROW
                  and _in_place(m * k, a[2], itemsize))
    a_bytes = blocking.mc * blocking.kc * itemsize if pack_a else 0
    b_bytes = blocking.kc * blocking.nc * itemsize if pack_b else 0
    if k == 0 or items_per_batch == 0 or spec.batch == 0 or dot_form:
        a_bytes = b_bytes = 0
    b_offset = _round_up(a_bytes, SCRATCH_ALIGN)
    epilogue_args = spec.epilogue.args if spec.epilogue is not None else ()
    return GemmPlan(
        spec=spec, dtype=dtype, lanes=lanes, m=m, n=n, k=k, swapped=swapped, pack_b=pack_b,
        pack_a=pack_a,
        dot_form=dot_form,
        a_strides=a, b_strides=b, c_strides=c, blocking=blocking, split_dim=split_dim,
        split_unit=unit, items_per_batch=items_per_batch, a_pack_offset=0,
        b_pack_offset=b_offset, scratch_bytes=b_offset + _round_up(b_bytes, SCRATCH_ALIGN),
        epilogue_args=tuple(epilogue_args))
