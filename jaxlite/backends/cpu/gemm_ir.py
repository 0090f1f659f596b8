"""Small helpers over llvmlite's IR builder for the GEMM generator.

Owns the vocabulary the GEMM code generator is written in: integer and vector constants,
element addressing, plain and masked vector loads and stores, splats, FMA, counted loops and
`if` blocks. They keep the generator readable; they know nothing about matrices.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from llvmlite import ir

I1 = ir.IntType(1)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()

# The L1 data cache of the tuning host (Zen 4: 32 KiB, 8 ways of 64 sets of 64-byte lines).
L1_LINE, L1_SETS, L1_WAYS = 64, 64, 8

_SCALAR_TYPES = {"float32": ir.FloatType(), "float64": ir.DoubleType()}
_SUFFIX = {"float32": "f32", "float64": "f64"}


def scalar_type(dtype: str) -> ir.Type:
    return _SCALAR_TYPES[dtype]


def i64(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


def lane_mask(lanes: int, valid: int) -> ir.Constant:
    """The constant `<lanes x i1>` whose first `valid` lanes are set."""
    return ir.Constant(ir.VectorType(I1, lanes), [int(i < valid) for i in range(lanes)])


def get_function(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    """The function `name` of `module`, declared with type `fnty` if it is not there yet."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, fnty, name=name)


class VectorOps:
    """Vector and memory operations on one dtype and vector width, emitted through `builder`.

    Loads and stores give the element alignment only: packed panels are aligned in practice,
    and on x86 an unaligned vector move costs nothing when its address happens to be aligned.
    """

    def __init__(self, module: ir.Module, builder: ir.IRBuilder, dtype: str, lanes: int):
        self.module = module
        self.builder = builder
        self.dtype = dtype
        self.lanes = lanes
        self.scalar = scalar_type(dtype)
        self.vector = ir.VectorType(self.scalar, lanes)
        self.itemsize = 4 if dtype == "float32" else 8
        self.vec_suffix = f"v{lanes}{_SUFFIX[dtype]}"

    # Addressing and constants.
    def element(self, base: ir.Value, index: ir.Value | int) -> ir.Value:
        """Pointer to element `index` (i64) of the array of scalars at `base`."""
        if isinstance(index, int):
            index = i64(index)
        return self.builder.gep(base, [index], source_etype=self.scalar)

    def constant(self, value: float) -> ir.Constant:
        return ir.Constant(self.scalar, value)

    def splat_constant(self, value: float) -> ir.Constant:
        return ir.Constant(self.vector, [value] * self.lanes)

    def splat(self, scalar: ir.Value) -> ir.Value:
        b = self.builder
        undef = ir.Constant(self.vector, ir.Undefined)
        one = b.insert_element(undef, scalar, ir.Constant(I32, 0))
        zeros = ir.Constant(ir.VectorType(I32, self.lanes), [0] * self.lanes)
        return b.shuffle_vector(one, undef, zeros)

    # Memory.
    def load_scalar(self, ptr: ir.Value) -> ir.Value:
        return self.builder.load(ptr, typ=self.scalar, align=self.itemsize)

    def store_scalar(self, value: ir.Value, ptr: ir.Value) -> None:
        self.builder.store(value, ptr, align=self.itemsize)

    def load(self, ptr: ir.Value, valid: int | None = None) -> ir.Value:
        """A vector from `ptr`; with `valid`, only the first `valid` lanes (others zero)."""
        if valid is None or valid >= self.lanes:
            return self.builder.load(ptr, typ=self.vector, align=self.itemsize)
        fn = self._masked("load")
        zeros = ir.Constant(self.vector, None)
        return self.builder.call(fn, [ptr, ir.Constant(I32, self.itemsize),
                                      lane_mask(self.lanes, valid), zeros])

    def store(self, value: ir.Value, ptr: ir.Value, valid: int | None = None) -> None:
        """Store a vector at `ptr`; with `valid`, only its first `valid` lanes."""
        if valid is None or valid >= self.lanes:
            self.builder.store(value, ptr, align=self.itemsize)
            return
        fn = self._masked("store")
        self.builder.call(fn, [value, ptr, ir.Constant(I32, self.itemsize),
                               lane_mask(self.lanes, valid)])

    def _masked(self, kind: str) -> ir.Function:
        # The alignment operand is the pre-LLVM-21 form; newer LLVMs upgrade it on parsing.
        mask = ir.VectorType(I1, self.lanes)
        name = f"llvm.masked.{kind}.{self.vec_suffix}.p0"
        if kind == "load":
            fnty = ir.FunctionType(self.vector, [PTR, I32, mask, self.vector])
        else:
            fnty = ir.FunctionType(VOID, [self.vector, PTR, I32, mask])
        return get_function(self.module, name, fnty)

    def prefetch(self, ptr: ir.Value, write: bool) -> None:
        fnty = ir.FunctionType(VOID, [PTR, I32, I32, I32])
        fn = get_function(self.module, "llvm.prefetch.p0", fnty)
        self.builder.call(fn, [ptr, ir.Constant(I32, int(write)), ir.Constant(I32, 3),
                               ir.Constant(I32, 1)])

    # Arithmetic.
    def fma(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        """a * b + c, one rounding."""
        fnty = ir.FunctionType(self.vector, [self.vector] * 3)
        fn = get_function(self.module, f"llvm.fma.{self.vec_suffix}", fnty)
        return self.builder.call(fn, [a, b, c])

    def scale(self, value: ir.Value, factor: float) -> ir.Value:
        if factor == 1.0:
            return value
        return self.builder.fmul(value, self.splat_constant(factor))


class _LoopID(ir.values.MDValue):
    """A loop's `llvm.loop` node: distinct, its first operand itself (as LLVM requires)."""

    def descr(self, buf: list[str]) -> None:
        operands = ", ".join([self.get_reference()] + [op.get_reference()
                                                       for op in self.operands])
        buf += (f"distinct !{{ {operands} }}", "\n")


def mark_final_loop(module: ir.Module, latch: ir.Instruction) -> None:
    """Tell LLVM that the loop closed by branch `latch` is in its final form: no unrolling,
    no vectorization. The generator shapes its loops itself; letting the loop vectorizer
    try the remainder and edge loops made compilation up to 2x slower for nothing."""
    properties = [module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")]),
                  module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.enable"),
                                       ir.Constant(I1, 0)])]
    loop_id = _LoopID(module, properties, name=str(len(module.metadata)))
    latch.set_metadata("llvm.loop", loop_id)


@contextlib.contextmanager
def counted_loop(builder: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: int | ir.Value,
                 name: str) -> Iterator[ir.Value]:
    """`for (i = start; i < stop; i += step)` over i64; yields `i`, positioned in the body.

    Leaves the builder after the loop when the `with` block ends.
    """
    fn = builder.function
    header = fn.append_basic_block(f"{name}.head")
    body = fn.append_basic_block(f"{name}.body")
    exit_ = fn.append_basic_block(f"{name}.exit")
    entry = builder.block
    builder.branch(header)
    builder.position_at_end(header)
    index = builder.phi(I64, name=name)
    index.add_incoming(start, entry)
    builder.cbranch(builder.icmp_signed("<", index, stop), body, exit_)
    builder.position_at_end(body)
    yield index
    step_value = i64(step) if isinstance(step, int) else step
    index.add_incoming(builder.add(index, step_value), builder.block)
    mark_final_loop(builder.module, builder.branch(header))
    builder.position_at_end(exit_)


@contextlib.contextmanager
def if_block(builder: ir.IRBuilder, condition: ir.Value, name: str) -> Iterator[None]:
    """`if (condition) { ... }`; leaves the builder after the block when the `with` ends."""
    fn = builder.function
    then = fn.append_basic_block(f"{name}.then")
    done = fn.append_basic_block(f"{name}.done")
    builder.cbranch(condition, then, done)
    builder.position_at_end(then)
    yield
    builder.branch(done)
    builder.position_at_end(done)


def min_i64(builder: ir.IRBuilder, a: ir.Value, b: ir.Value) -> ir.Value:
    return builder.select(builder.icmp_signed("<", a, b), a, b)


def define_function(module: ir.Module, name: str, params: Sequence[tuple[str, ir.Type]],
                    internal: bool) -> tuple[ir.Function, ir.IRBuilder]:
    """A new `void` function with named parameters and an entry block to build into.

    `internal` functions are private to the module and never inlined.
    """
    fnty = ir.FunctionType(VOID, [t for _, t in params])
    fn = ir.Function(module, fnty, name=name)
    for arg, (pname, _) in zip(fn.args, params):
        arg.name = pname
    if internal:
        # Kept out of line: inlining the unrolled kernels into the loop nest makes LLVM's
        # pipeline about 2.5x slower and the code no faster.
        fn.linkage = "internal"
        fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    return fn, builder


def transpose_vectors(builder: ir.IRBuilder, rows: Sequence[ir.Value]) -> list[ir.Value]:
    """Transpose a square block held in registers: result[t][x] = rows[x][t].

    Stage `bit` exchanges bit `bit` of the row index with bit `bit` of the lane index, with
    one two-input shuffle per row; log2(lanes) stages in all.
    """
    lanes = len(rows)
    rows = list(rows)
    bit = 1
    while bit < lanes:
        low_mask = _shuffle_mask([j if j & bit == 0 else lanes + j - bit for j in range(lanes)])
        high_mask = _shuffle_mask([j + bit if j & bit == 0 else lanes + j for j in range(lanes)])
        mixed = list(rows)
        for low in range(lanes):
            if low & bit == 0:
                high = low | bit
                mixed[low] = builder.shuffle_vector(rows[low], rows[high], low_mask)
                mixed[high] = builder.shuffle_vector(rows[low], rows[high], high_mask)
        rows = mixed
        bit *= 2
    return rows


def _shuffle_mask(indices: list[int]) -> ir.Constant:
    return ir.Constant(ir.VectorType(I32, len(indices)), indices)


def streams_without_set_conflicts(stride_bytes: int, most: int) -> int:
    """How many rows `stride_bytes` apart may be streamed together (a power of two <= most).

    Rows whose stride is a multiple of a large power of two put their cache lines into the
    same few L1 sets; more such streams than a set has ways evict each other's prefetched
    lines (a 16-row transpose at a 4 KiB stride ran 2.5x slower than at 4000 bytes, and 8
    rows at a time fixed it). Keep at most L1_WAYS distinct lines per set.
    """
    rows = most
    while rows > 1:
        lines = {r * stride_bytes // L1_LINE for r in range(rows)}
        sets = [line % L1_SETS for line in lines]
        if max(sets.count(s) for s in set(sets)) <= L1_WAYS:
            return rows
        rows //= 2
    return 1
