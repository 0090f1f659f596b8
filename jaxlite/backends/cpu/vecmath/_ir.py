"""A small builder of LLVM IR text for elementwise vector math.

The math functions of this package are written as straight-line Python that calls the
`Builder`, one SSA instruction per operation, on values of one lane width: `<16 x float>`,
`<8 x double>`, ... or plain scalars when the width is 1. Values (`V`) overload the Python
arithmetic operators, so that `fma(r, p, one) * scale` reads as math and emits
`call @llvm.fma...` and `fmul`. Python numbers mix with values and become splat constants of
the other operand's element type.

Only operations that lower to a few instructions are offered (arithmetic, fma, sqrt, floor,
bit casts, integer shifts, compares, selects, gathers from constant tables); nothing here can
become a libm call. No fast-math flags are set: every rounding is the one written, which the
error analyses in the family modules rely on.
"""
from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._coeffs import COEFFS, CONSTANTS

FLOAT_BITS = {"float": 32, "double": 64}
INT_OF = {"float": "i32", "double": "i64"}
MANTISSA = {"float": 23, "double": 52}
BIAS = {"float": 127, "double": 1023}
NUMPY_NAME = {"float": "f32", "double": "f64"}


def float_literal(elem: str, value: float) -> str:
    """The LLVM literal of `value` rounded to float or double (hex of the double's bits).

    Python floats are doubles; for `float` they round to the nearest float32 here, so that
    constants written as math (`1 / math.log(2)`) mean the nearest representable value.
    """
    value = float(value)
    if elem == "float" and math.isfinite(value):
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}"


Number = int | float


@dataclass(frozen=True)
class V:
    """An SSA value (or constant) of the builder `b`, with element type `elem`."""

    ref: str
    elem: str
    b: Builder = field(repr=False, compare=False)

    @property
    def is_float(self) -> bool:
        return self.elem in FLOAT_BITS

    # float and integer arithmetic --------------------------------------------------------------
    def _bin(self, fop: str, iop: str, other: V | Number, swap: bool = False) -> V:
        other = self.b.lift(other, self.elem)
        a, c = (other, self) if swap else (self, other)
        return self.b.binop(fop if self.is_float else iop, a, c)

    def __add__(self, o: V | Number) -> V:
        return self._bin("fadd", "add", o)

    def __radd__(self, o: V | Number) -> V:
        return self._bin("fadd", "add", o, True)

    def __sub__(self, o: V | Number) -> V:
        return self._bin("fsub", "sub", o)

    def __rsub__(self, o: V | Number) -> V:
        return self._bin("fsub", "sub", o, True)

    def __mul__(self, o: V | Number) -> V:
        return self._bin("fmul", "mul", o)

    def __rmul__(self, o: V | Number) -> V:
        return self._bin("fmul", "mul", o, True)

    def __truediv__(self, o: V | Number) -> V:
        return self._bin("fdiv", "sdiv", o)

    def __rtruediv__(self, o: V | Number) -> V:
        return self._bin("fdiv", "sdiv", o, True)

    def __neg__(self) -> V:
        if self.is_float:
            return self.b.emit(self.elem, f"fneg {self.b.ty(self.elem)} {self.ref}")
        return self.b.lift(0, self.elem) - self

    # integer (and i1 mask) bit operations --------------------------------------------------------
    def _bits(self, op: str, o: V | Number) -> V:
        return self.b.binop(op, self, self.b.lift(o, self.elem))

    def __and__(self, o: V | Number) -> V:
        return self._bits("and", o)

    def __or__(self, o: V | Number) -> V:
        return self._bits("or", o)

    def __xor__(self, o: V | Number) -> V:
        return self._bits("xor", o)

    def __invert__(self) -> V:
        return self ^ (1 if self.elem == "i1" else -1)

    def __lshift__(self, o: V | Number) -> V:
        return self._bits("shl", o)

    def __rshift__(self, o: V | Number) -> V:
        """Arithmetic (sign-extending) shift right."""
        return self._bits("ashr", o)

    def lshr(self, o: V | Number) -> V:
        return self.b.binop("lshr", self, self.b.lift(o, self.elem))

    # comparisons (ordered for floats: false when either side is NaN) ----------------------------
    def _cmp(self, fpred: str, ipred: str, o: V | Number) -> V:
        o = self.b.lift(o, self.elem)
        if self.is_float:
            return self.b.emit("i1", f"fcmp {fpred} {self.b.ty(self.elem)} {self.ref}, {o.ref}")
        return self.b.emit("i1", f"icmp {ipred} {self.b.ty(self.elem)} {self.ref}, {o.ref}")

    def __lt__(self, o: V | Number) -> V:
        return self._cmp("olt", "slt", o)

    def __le__(self, o: V | Number) -> V:
        return self._cmp("ole", "sle", o)

    def __gt__(self, o: V | Number) -> V:
        return self._cmp("ogt", "sgt", o)

    def __ge__(self, o: V | Number) -> V:
        return self._cmp("oge", "sge", o)

    def eq(self, o: V | Number) -> V:
        return self._cmp("oeq", "eq", o)

    def ne(self, o: V | Number) -> V:
        """Ordered not-equal for floats (false for NaN); integer `!=` otherwise."""
        return self._cmp("one", "ne", o)

    def __hash__(self) -> int:
        return hash((self.ref, self.elem))


class Builder:
    """Emits the instructions of one function, lane width `width` (1: scalars)."""

    def __init__(self, width: int):
        self.width = width
        self.lines: list[str] = []
        self.globals: list[str] = []
        self.counter = 0
        self.block = "entry"
        self.prefix = ""
        self.fname = ""

    # types and constants ------------------------------------------------------------------------
    def ty(self, elem: str) -> str:
        return elem if self.width == 1 else f"<{self.width} x {elem}>"

    def suffix(self, elem: str) -> str:
        """The overload suffix of an intrinsic: f32, v16f32, f64, v8f64, ..."""
        scalar = {"float": "f32", "double": "f64"}.get(elem, elem)
        return scalar if self.width == 1 else f"v{self.width}{scalar}"

    def const(self, elem: str, value: Number | bool) -> V:
        if elem in FLOAT_BITS:
            lit = float_literal(elem, value)
        elif elem == "i1":
            lit = "true" if value else "false"
        else:
            lit = str(int(value))
        ref = lit if self.width == 1 else f"splat ({elem} {lit})"
        return V(ref, elem, self)

    def lift(self, value: V | Number, elem: str) -> V:
        if isinstance(value, V):
            if value.elem != elem:
                raise TypeError(f"operand types differ: {value.elem} and {elem}")
            return value
        return self.const(elem, value)

    # instructions -------------------------------------------------------------------------------
    def emit(self, elem: str, text: str) -> V:
        self.counter += 1
        name = f"%{self.prefix}t{self.counter}"
        self.lines.append(f"  {name} = {text}")
        return V(name, elem, self)

    def binop(self, op: str, a: V, c: V) -> V:
        return self.emit(a.elem, f"{op} {self.ty(a.elem)} {a.ref}, {c.ref}")

    def intrinsic(self, name: str, elem: str, *args: V) -> V:
        ty = self.ty(elem)
        operands = ", ".join(f"{self.ty(a.elem)} {a.ref}" for a in args)
        return self.emit(elem, f"call {ty} @llvm.{name}.{self.suffix(elem)}({operands})")

    def select(self, cond: V, a: V | Number, c: V | Number) -> V:
        if not isinstance(a, V) and not isinstance(c, V):
            raise TypeError("select: give at least one operand as a V (for its type)")
        elem = a.elem if isinstance(a, V) else c.elem  # type: ignore[union-attr]
        a, c = self.lift(a, elem), self.lift(c, elem)
        return self.emit(elem, f"select {self.ty('i1')} {cond.ref}, {self.ty(elem)} {a.ref}, "
                               f"{self.ty(elem)} {c.ref}")

    def cast(self, op: str, v: V, elem: str) -> V:
        return self.emit(elem, f"{op} {self.ty(v.elem)} {v.ref} to {self.ty(elem)}")

    def bits(self, v: V) -> V:
        """The bits of a float value as the integer of the same width."""
        return self.cast("bitcast", v, INT_OF[v.elem])

    def from_bits(self, v: V, elem: str) -> V:
        return self.cast("bitcast", v, elem)

    def isnan(self, v: V) -> V:
        return self.emit("i1", f"fcmp uno {self.ty(v.elem)} {v.ref}, {v.ref}")

    def reduce_or(self, mask: V) -> str:
        """An i1 scalar: whether any lane of `mask` is set."""
        if self.width == 1:
            return mask.ref
        self.counter += 1
        name = f"%{self.prefix}t{self.counter}"
        self.lines.append(f"  {name} = call i1 @llvm.vector.reduce.or.v{self.width}i1("
                          f"<{self.width} x i1> {mask.ref})")
        return name

    # control flow (only for rarely taken slow paths) ----------------------------------------------
    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.block = name

    def br(self, target: str) -> None:
        self.lines.append(f"  br label %{target}")

    def cond_br(self, cond: str, yes: str, no: str) -> None:
        self.lines.append(f"  br i1 {cond}, label %{yes}, label %{no}")

    def phi(self, elem: str, incoming: Sequence[tuple[V, str]]) -> V:
        pairs = ", ".join(f"[ {v.ref}, %{blk} ]" for v, blk in incoming)
        return self.emit(elem, f"phi {self.ty(elem)} {pairs}")

    # constant tables ------------------------------------------------------------------------------
    def table(self, name: str, elem: str, values: Sequence[float]) -> str:
        """Define a private constant array `@name` of `values`; returns the global's name."""
        body = ", ".join(f"{elem} {float_literal(elem, v)}" for v in values)
        self.globals.append(f"@{name} = internal unnamed_addr constant "
                            f"[{len(values)} x {elem}] [{body}], align 64")
        return f"@{name}"

    def gather(self, table: str, elem: str, index: V) -> V:
        """Lane i gets `table[index[i]]` (index: i32 or i64, in range)."""
        idx = self.cast("sext", index, "i64") if index.elem != "i64" else index
        if self.width == 1:
            ptr = self.emit("ptr", f"getelementptr inbounds {elem}, ptr {table}, i64 {idx.ref}")
            return self.emit(elem, f"load {elem}, ptr {ptr.ref}, align 8")
        ptrs = self.emit("ptr", f"getelementptr inbounds {elem}, ptr {table}, "
                                f"<{self.width} x i64> {idx.ref}")
        ones = f"<{self.width} x i1> splat (i1 true)"
        align = FLOAT_BITS.get(elem, 64) // 8
        return self.emit(elem, f"call {self.ty(elem)} @llvm.masked.gather."
                               f"{self.suffix(elem)}.v{self.width}p0(<{self.width} x ptr> "
                               f"{ptrs.ref}, i32 {align}, {ones}, {self.ty(elem)} poison)")


# ---------------------------------------------------------------------------------------------
# Free functions: the math vocabulary of the family modules.

def fma(a: V, b: V | Number, c: V | Number) -> V:
    """a * b + c with one rounding (llvm.fma: one vfmadd instruction)."""
    return a.b.intrinsic("fma", a.elem, a, a.b.lift(b, a.elem), a.b.lift(c, a.elem))


def fabs(a: V) -> V:
    return a.b.intrinsic("fabs", a.elem, a)


def sqrt(a: V) -> V:
    return a.b.intrinsic("sqrt", a.elem, a)


def floor(a: V) -> V:
    return a.b.intrinsic("floor", a.elem, a)


def trunc(a: V) -> V:
    return a.b.intrinsic("trunc", a.elem, a)


def rint(a: V) -> V:
    """Round to the nearest integer, ties to even."""
    return a.b.intrinsic("roundeven", a.elem, a)


def copysign(mag: V, sign: V) -> V:
    return mag.b.intrinsic("copysign", mag.elem, mag, sign)


def select(cond: V, a: V | Number, c: V | Number) -> V:
    return cond.b.select(cond, a, c)


def horner(u: V, coeffs: Sequence[float]) -> V:
    """coeffs[0] + coeffs[1] u + ... evaluated with fma (Horner's scheme)."""
    b = u.b
    acc = b.const(u.elem, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = fma(acc, u, c)
    return acc


def minimum(a: V, c: V | Number) -> V:
    """The smaller of a and c, keeping a when a is NaN (c must not be NaN)."""
    return select(a > c, c, a)


def maximum(a: V, c: V | Number) -> V:
    """The larger of a and c, keeping a when a is NaN (c must not be NaN)."""
    return select(a < c, c, a)


def clamp(a: V, lo: float, hi: float) -> V:
    """a limited to [lo, hi]; NaN stays NaN."""
    return minimum(maximum(a, lo), hi)


def pow2(k: V, elem: str) -> V:
    """2**k as a float of type `elem`, for integer lanes k in the normal exponent range."""
    b = k.b
    return b.from_bits((k + BIAS[elem]) << MANTISSA[elem], elem)


def two_sum(a: V, c: V) -> tuple[V, V]:
    """s + e == a + c exactly, s = fl(a + c) (Knuth's branch-free two-sum)."""
    s = a + c
    bb = s - a
    e = (a - (s - bb)) + (c - bb)
    return s, e


def fast_two_sum(a: V, c: V) -> tuple[V, V]:
    """s + e == a + c exactly, assuming |a| >= |c| or a == 0 (Dekker)."""
    s = a + c
    return s, c - (s - a)


def two_prod(a: V, c: V) -> tuple[V, V]:
    """p + e == a * c exactly (unless it under- or overflows), p = fl(a * c)."""
    p = a * c
    return p, fma(a, c, -p)


def float_consts(elem: str) -> dict[str, float]:
    """Limits of the float type `elem` as Python floats."""
    if elem == "float":
        return {"max": 3.4028234663852886e38, "min_normal": 2.0 ** -126,
                "eps": 2.0 ** -23, "digits": 24}
    return {"max": 1.7976931348623157e308, "min_normal": 2.0 ** -1022,
            "eps": 2.0 ** -52, "digits": 53}


def tag(elem: str) -> str:
    return "f32" if elem == "float" else "f64"


def coeffs(name: str, elem: str) -> tuple[float, ...]:
    """The fitted polynomial coefficients `name` for `elem` (from tools/fit_vecmath.py)."""
    return COEFFS[f"{name}_{tag(elem)}"]["p"]


def rational(name: str, elem: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(P, Q) coefficients of a fitted rational function, Q without its constant 1."""
    entry = COEFFS[f"{name}_{tag(elem)}"]
    return entry["p"], entry["q"]


def parts(name: str, elem: str) -> tuple[float, ...]:
    """A constant as (hi, mid, lo) in `elem` precision: hi + mid + lo is good to ~3x digits."""
    return CONSTANTS[f"{name}_{tag(elem)}"]


INF = float("inf")
NAN = float("nan")
