"""A small typed IR of one GPU kernel: what the gpu backend builds from a fusion, what the
numpy interpreter runs and what the renderer turns into CUDA C or HIP C.

A `Kernel` is a function run by a 1-D grid of 1-D blocks of threads. It takes `Buffer`
parameters (pointers into global memory, each with an element type) and `Var` scalar
parameters, declares `shared` arrays (one copy per block) and constant arrays (read-only
data baked into the source), and runs `body`, a tuple of statements, in every thread.

Expressions are trees of frozen dataclasses, each with a `dtype` (a numpy type name:
"float32", "bfloat16", "int32", "bool", ...):

    Const, Var, Builtin (thread / block index and sizes), Unary, Binary, Select, Cast,
    Bitcast, Load

Statements: Let (declares a variable), Assign, Store, VectorLoad / VectorStore (a run of
consecutive elements moved as one 4-, 8- or 16-byte access), For, If, Barrier (every
thread of the block waits), Shuffle (a value read from another lane of the warp) and
AtomicAdd / AtomicUpdate. Semantics are C's, with these choices made for every backend alike:

- `max` and `min` of floats propagate NaN (HLO's maximum and minimum);
- integer `div` and `rem` truncate toward zero (C's); the builders guard division by zero;
- `Cast` of a float to an integer truncates (the builders add the saturation HLO wants);
  a cast to bool tests for nonzero;
- `Shuffle` is a whole-warp operation: every lane of the warp must reach the same
  shuffle (the interpreter checks it); `down` reads lane + offset and keeps its own value
  past the warp's end, `xor` reads lane ^ offset.

Values of 16-bit floats are loaded and stored as such but computed as float32: the
builders cast on the way in and out, so arithmetic never has a 16-bit type.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Union

import numpy as np

from jaxlite.core import dtypes

__all__ = [
    "AtomicAdd", "AtomicUpdate", "Assign", "Barrier", "Bitcast", "Binary", "Buffer", "Builtin", "Cast", "Const",
    "Expr", "For", "If", "Kernel", "Let", "Load", "Select", "Shuffle", "Stmt", "Store",
    "Unary", "Var", "VectorLoad", "VectorStore", "BINARY_OPS", "COMPARISONS", "UNARY_OPS",
    "WARP_SIZES", "dtype_of", "index_const", "rename_buffers",
]

WARP_SIZES = (32, 64)  # NVIDIA warps, AMD wavefronts (CDNA)

UNARY_OPS = frozenset({
    "neg", "not", "abs", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "tanh",
    "sin", "cos", "tan", "erf", "erfc", "floor", "ceil", "rint", "round", "isfinite",
    "isnan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "lgamma",
    "exp2",
})
COMPARISONS = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
BINARY_OPS = frozenset({
    "add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr",
    "pow", "atan2", "copysign",
}) | COMPARISONS
BUILTINS = ("thread", "block", "block_dim", "grid_dim")
_MEMORY_SPACES = ("global", "shared", "constant")
_VECTOR_BYTES = (2, 4, 8, 16)


def dtype_of(name: str) -> np.dtype:
    """The numpy dtype of an IR type name (bfloat16 through ml_dtypes)."""
    if name == "bfloat16":
        return np.dtype(dtypes.bfloat16)
    return np.dtype(name)


# --------------------------------------------------------------------------- expressions

@dataclass(frozen=True)
class Const:
    """A literal of a scalar type."""
    value: Union[int, float, bool]
    dtype: str


@dataclass(frozen=True)
class Var:
    """A named scalar: a parameter, a `Let`, a loop counter or a shuffle's result."""
    name: str
    dtype: str


@dataclass(frozen=True)
class Builtin:
    """threadIdx.x ("thread"), blockIdx.x ("block"), blockDim.x, gridDim.x: int32."""
    name: str
    dtype: str = "int32"

    def __post_init__(self) -> None:
        if self.name not in BUILTINS:
            raise ValueError(f"unknown builtin {self.name!r}; known: {BUILTINS}")


@dataclass(frozen=True)
class Unary:
    op: str
    x: "Expr"
    dtype: str = ""

    def __post_init__(self) -> None:
        if self.op not in UNARY_OPS:
            raise ValueError(f"unknown unary op {self.op!r}")
        if not self.dtype:
            result = "bool" if self.op in ("isfinite", "isnan") else self.x.dtype
            object.__setattr__(self, "dtype", result)


@dataclass(frozen=True)
class Binary:
    op: str
    a: "Expr"
    b: "Expr"
    dtype: str = ""

    def __post_init__(self) -> None:
        if self.op not in BINARY_OPS:
            raise ValueError(f"unknown binary op {self.op!r}")
        if self.a.dtype != self.b.dtype:
            raise TypeError(f"{self.op} of {self.a.dtype} and {self.b.dtype}: operands of "
                            "a binary op share one type (insert a Cast)")
        if not self.dtype:
            object.__setattr__(self, "dtype", "bool" if self.op in COMPARISONS
                               else self.a.dtype)


@dataclass(frozen=True)
class Select:
    cond: "Expr"
    on_true: "Expr"
    on_false: "Expr"
    dtype: str = ""

    def __post_init__(self) -> None:
        if self.cond.dtype != "bool" or self.on_true.dtype != self.on_false.dtype:
            raise TypeError("select takes a bool and two values of one type, got "
                            f"{self.cond.dtype}, {self.on_true.dtype}, {self.on_false.dtype}")
        object.__setattr__(self, "dtype", self.on_true.dtype)


@dataclass(frozen=True)
class Cast:
    x: "Expr"
    dtype: str


@dataclass(frozen=True)
class Bitcast:
    """The bits of `x` read as another type of the same width (HLO's bitcast-convert)."""
    x: "Expr"
    dtype: str

    def __post_init__(self) -> None:
        if dtype_of(self.x.dtype).itemsize != dtype_of(self.dtype).itemsize:
            raise TypeError(f"bitcast of {self.x.dtype} to {self.dtype}: widths differ")


@dataclass(frozen=True)
class Buffer:
    """An array in `space`: a kernel's pointer parameter ("global"), a per-block array
    ("shared", `size` elements) or read-only data baked into the source ("constant")."""
    name: str
    dtype: str
    space: str = "global"
    size: int = 0
    values: tuple = ()

    def __post_init__(self) -> None:
        if self.space not in _MEMORY_SPACES:
            raise ValueError(f"memory space {self.space!r} is not one of {_MEMORY_SPACES}")


@dataclass(frozen=True)
class Load:
    """buffer[index], one element."""
    buffer: Buffer
    index: "Expr"

    @property
    def dtype(self) -> str:
        return self.buffer.dtype


Expr = Union[Const, Var, Builtin, Unary, Binary, Select, Cast, Bitcast, Load]


def index_const(value: int) -> Const:
    """An int32 literal, the type of every index."""
    return Const(int(value), "int32")


# ---------------------------------------------------------------------------- statements

@dataclass(frozen=True)
class Let:
    """Declares `var` with an initial value."""
    var: Var
    value: Expr


@dataclass(frozen=True)
class Assign:
    """Gives a declared variable a new value."""
    var: Var
    value: Expr


@dataclass(frozen=True)
class Store:
    buffer: Buffer
    index: Expr
    value: Expr


@dataclass(frozen=True)
class VectorLoad:
    """Declares `targets` as buffer[index], buffer[index + 1], ... read in one access of
    len(targets) * itemsize bytes; `index` must be a multiple of len(targets)."""
    targets: tuple[Var, ...]
    buffer: Buffer
    index: Expr

    def __post_init__(self) -> None:
        _check_vector(self.buffer, len(self.targets))


@dataclass(frozen=True)
class VectorStore:
    """buffer[index + k] = values[k] for every k, in one access (see VectorLoad)."""
    buffer: Buffer
    index: Expr
    values: tuple[Expr, ...]

    def __post_init__(self) -> None:
        _check_vector(self.buffer, len(self.values))


def _check_vector(buffer: Buffer, width: int) -> None:
    if width * dtype_of(buffer.dtype).itemsize not in _VECTOR_BYTES:
        raise ValueError(f"a vector access of {width} x {buffer.dtype} is not 2, 4, 8 or "
                         "16 bytes")


@dataclass(frozen=True)
class For:
    """for (var = start; var < stop; var += step) body, with int32 `var`."""
    var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()


@dataclass(frozen=True)
class Barrier:
    """__syncthreads(): every thread of the block arrives before any goes on."""


@dataclass(frozen=True)
class Shuffle:
    """Declares `target` as `value` read from another lane of the warp: lane + offset
    ("down") or lane ^ offset ("xor"); `offset` is a literal."""
    target: Var
    kind: str
    value: Expr
    offset: int

    def __post_init__(self) -> None:
        if self.kind not in ("down", "xor"):
            raise ValueError(f"shuffle kind {self.kind!r} is not 'down' or 'xor'")


@dataclass(frozen=True)
class AtomicAdd:
    """buffer[index] += value, indivisibly."""
    buffer: Buffer
    index: Expr
    value: Expr


@dataclass(frozen=True)
class AtomicUpdate:
    """buffer[index] = new, indivisibly, where `old` names the element's value before the
    update and `body` (no barriers or shuffles) computes what `new` reads. Rendered as a
    compare-and-swap loop on the element's bits (1-, 2-, 4- or 8-byte elements): for
    combiners a GPU has no atomic instruction for (multiply, a scatter's arbitrary
    computation, an overwrite)."""
    buffer: Buffer
    index: Expr
    old: Var
    body: tuple["Stmt", ...]
    new: Expr

    def __post_init__(self) -> None:
        if dtype_of(self.buffer.dtype).itemsize not in (1, 2, 4, 8):
            raise ValueError(f"an atomic update of {self.buffer.dtype}: compare-and-swap "
                             "takes 1-, 2-, 4- or 8-byte elements")
        if self.old.dtype != self.buffer.dtype or self.new.dtype != self.buffer.dtype:
            raise TypeError("an atomic update's old and new values have the buffer's type")


Stmt = Union[Let, Assign, Store, VectorLoad, VectorStore, For, If, Barrier, Shuffle,
             AtomicAdd, AtomicUpdate]


# ------------------------------------------------------------------------------- kernels

@dataclass(frozen=True)
class Kernel:
    """One kernel and how it is launched: `grid` blocks of `block` threads.

    params: Buffers ("global") and Vars, in the order the launcher passes them.
    shared / constants: per-block arrays and baked-in read-only arrays.
    """
    name: str
    params: tuple[Union[Buffer, Var], ...]
    body: tuple[Stmt, ...]
    grid: int
    block: int
    warp_size: int = 32
    shared: tuple[Buffer, ...] = ()
    constants: tuple[Buffer, ...] = ()
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if self.warp_size not in WARP_SIZES:
            raise ValueError(f"warp size {self.warp_size} is not one of {WARP_SIZES}")
        if self.block % self.warp_size:
            raise ValueError(f"a block of {self.block} threads is not a whole number of "
                             f"{self.warp_size}-lane warps")

    @property
    def buffers(self) -> tuple[Buffer, ...]:
        return tuple(p for p in self.params if isinstance(p, Buffer))


def rename_buffers(kernel: Kernel, names: dict[str, str]) -> Kernel:
    """`kernel` with its global buffers renamed (old name -> new name), everywhere they
    appear; kernels built for one fusion join another's this way."""
    def walk(node):
        if isinstance(node, Buffer):
            if node.space == "global" and node.name in names:
                return Buffer(names[node.name], node.dtype, node.space, node.size,
                              node.values)
            return node
        if isinstance(node, tuple):
            return tuple(walk(n) for n in node)
        if isinstance(node, (Const, Var, Builtin, Barrier)) or not hasattr(
                node, "__dataclass_fields__"):
            return node
        changes = {f: walk(getattr(node, f)) for f in node.__dataclass_fields__
                   if f != "dtype"}
        return replace(node, **changes)
    return replace(kernel, params=walk(kernel.params), body=walk(kernel.body))
