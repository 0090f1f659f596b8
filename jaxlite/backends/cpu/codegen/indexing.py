"""Index expressions: linear forms over loop variables, simplified at compile time (the CPU
backend's counterpart of XLA's `IrArray::Index`, with the algebra done symbolically).

An index component is a `Lin`: a constant plus integer multiples of `Var`s. A `Var` is a loop
counter or a value computed at run time, with the range its values lie in when known. In a
vectorized loop one variable is a *lanes* variable: lane k holds `ref + k`. A `Lin` then has
per lane the value `scalar + k * step (+ lane k of a vector term)`, so a load through it is a
plain vector load when the step is 1, a scalar load (the same in every lane) when the step is
0, and a gather otherwise.

Division and remainder by constants (delinearizing an index into a shape) are done on the
symbols when the ranges allow it: `(i * 128 + j) div 128 = i` when `0 <= j < 128`. When they
do not, a vector of consecutive lanes that starts at a multiple of the width still divides
as a whole when the divisor is a multiple of the width; only then is a vector division
emitted.

An array index is a `Multi` (one `Lin` per dimension) or a `Flat` (one `Lin`, the position
in the memory order of given dimensions and layout): a flat loop over an elementwise fusion
never splits its counter into dimensions unless something needs them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder

__all__ = ["Var", "Lin", "Multi", "Flat", "IndexMath", "strides_of", "memory_order"]


def _cached_hash(obj: object, fields: tuple) -> int:
    """The hash of a frozen index value, computed once: indices key the emitter's memo of
    computed values and are hashed at every lookup."""
    h = obj.__dict__.get("_hash")
    if h is None:
        h = hash(fields)
        object.__setattr__(obj, "_hash", h)
    return h


@dataclass(frozen=True)
class Var:
    """A run-time i64 value. kind: "scalar", "lanes" (lane k is ref + k) or "vector" (a
    <W x i64>). Every lane lies in [lo, hi) when those are known; a scalar or lanes ref is a
    multiple of `align`."""

    ref: str
    kind: str = "scalar"
    lo: int | None = 0
    hi: int | None = None
    align: int = 1

    def __hash__(self) -> int:
        return _cached_hash(self, (self.ref, self.kind, self.lo, self.hi, self.align))


@dataclass(frozen=True)
class Lin:
    """`const + sum(coef * var)`; terms sorted by the variable's ref, no zero coefficients."""

    terms: tuple[tuple[Var, int], ...] = ()
    const: int = 0

    def __hash__(self) -> int:
        return _cached_hash(self, (self.terms, self.const))

    @staticmethod
    def of(value: "int | Var | Lin") -> "Lin":
        if isinstance(value, Lin):
            return value
        if isinstance(value, Var):
            return Lin(((value, 1),), 0)
        return Lin((), int(value))

    @property
    def is_const(self) -> bool:
        return not self.terms

    def __add__(self, other: "int | Lin") -> "Lin":
        other = Lin.of(other)
        coefs: dict[Var, int] = dict(self.terms)
        for var, coef in other.terms:
            coefs[var] = coefs.get(var, 0) + coef
        terms = tuple(sorted(((v, c) for v, c in coefs.items() if c), key=lambda t: t[0].ref))
        return Lin(terms, self.const + other.const)

    def __mul__(self, factor: int) -> "Lin":
        if factor == 0:
            return Lin()
        return Lin(tuple((v, c * factor) for v, c in self.terms), self.const * factor)

    def __sub__(self, other: "int | Lin") -> "Lin":
        return self + Lin.of(other) * -1

    def bounds(self) -> tuple[int | None, int | None]:
        """Inclusive lower and upper bounds of every lane's value, None when unknown."""
        low = high = self.const
        for var, coef in self.terms:
            if var.lo is None or var.hi is None:
                return None, None
            a, b = var.lo * coef, (var.hi - 1) * coef
            low, high = low + min(a, b), high + max(a, b)
        return low, high

    def align(self) -> int:
        """A number every lane-0 value is a multiple of."""
        result = self.const
        for var, coef in self.terms:
            result = math.gcd(result, coef * (var.align if var.kind != "vector" else 1))
        return abs(result) or (1 << 30)


@dataclass(frozen=True)
class Multi:
    """An index with one component per dimension."""

    parts: tuple[Lin, ...]

    def __hash__(self) -> int:
        return _cached_hash(self, self.parts)


@dataclass(frozen=True)
class Flat:
    """The position `lin` in the memory order of an array of `dims` laid out as `layout`."""

    lin: Lin
    dims: tuple[int, ...]
    layout: tuple[int, ...]

    def __hash__(self) -> int:
        return _cached_hash(self, (self.lin, self.dims, self.layout))


def memory_order(dims: Sequence[int], layout: Sequence[int] | None) -> tuple[int, ...]:
    """Dimensions from major to minor."""
    if layout is None or len(layout) != len(dims):
        return tuple(range(len(dims)))
    return tuple(reversed(tuple(layout)))


def strides_of(dims: Sequence[int], layout: Sequence[int] | None) -> tuple[int, ...]:
    """The element stride of each dimension in memory."""
    result = [0] * len(dims)
    stride = 1
    for d in reversed(memory_order(dims, layout)):
        result[d] = stride
        stride *= dims[d]
    return tuple(result)


class IndexMath:
    """Emits the run-time part of index arithmetic into a function, `width` lanes wide."""

    def __init__(self, fb: FunctionBuilder, width: int) -> None:
        self.fb = fb
        self.width = width
        self._scopes: list[dict[object, object]] = [{}]

    # Materialized values are valid in the block they were made in and the blocks it
    # dominates: a loop body opens a scope that is dropped at its end.
    def push(self) -> None:
        self._scopes.append({})

    def pop(self) -> None:
        self._scopes.pop()

    def _memo_get(self, key: object) -> object | None:
        for scope in reversed(self._scopes):
            if key in scope:
                return scope[key]
        return None

    def _memo_put(self, key: object, value: object) -> None:
        self._scopes[-1][key] = value

    # ------------------------------------------------------------------ materialize
    def parts(self, lin: Lin) -> tuple[str, int, str | None]:
        """(scalar i64 of lane 0 without vector terms, lane step, <W x i64> vector term or
        None)."""
        key = ("parts", lin, self.width)
        cached = self._memo_get(key)
        if cached is not None:
            return cached  # type: ignore[return-value]
        fb = self.fb
        scalar = str(lin.const)
        step = 0
        vector: str | None = None
        for var, coef in lin.terms:
            if var.kind == "vector":
                term = var.ref if coef == 1 else fb.op(
                    f"mul <{self.width} x i64> {var.ref}, splat (i64 {coef})", "ix")
                vector = term if vector is None else fb.op(
                    f"add <{self.width} x i64> {vector}, {term}", "ix")
                continue
            if var.kind == "lanes" and self.width > 1:
                step += coef
            term = var.ref if coef == 1 else fb.op(f"mul nsw i64 {var.ref}, {coef}", "ix")
            scalar = term if scalar == "0" else fb.op(f"add nsw i64 {scalar}, {term}", "ix")
        result = (scalar, step, vector)
        self._memo_put(key, result)
        return result

    def scalar(self, lin: Lin) -> str:
        """The i64 value of a lane-uniform `lin` (or of its lane 0)."""
        return self.parts(lin)[0]

    def vector(self, lin: Lin) -> str:
        """The <W x i64> of `lin`'s lanes."""
        scalar, step, vector = self.parts(lin)
        key = ("vector", lin, self.width)
        cached = self._memo_get(key)
        if cached is not None:
            return cached  # type: ignore[return-value]
        w, fb = self.width, self.fb
        base = self.splat(scalar)
        if step:
            lanes = ", ".join(f"i64 {k * step}" for k in range(w))
            base = fb.op(f"add <{w} x i64> {base}, <{lanes}>", "ix")
        if vector is not None:
            base = fb.op(f"add <{w} x i64> {base}, {vector}", "ix")
        self._memo_put(key, base)
        return base

    def splat(self, scalar: str, elem: str = "i64") -> str:
        if not scalar.startswith("%"):
            return f"splat ({elem} {scalar})"
        w, fb = self.width, self.fb
        one = fb.op(f"insertelement <{w} x {elem}> poison, {elem} {scalar}, i64 0", "sp")
        return fb.op(f"shufflevector <{w} x {elem}> {one}, <{w} x {elem}> poison, "
                     f"<{w} x i32> zeroinitializer", "sp")

    def lane_kind(self, lin: Lin) -> str:
        """"uniform", "contiguous" (lane k = lane 0 + k) or "scattered"."""
        if self.width == 1:
            return "uniform"
        if any(v.kind == "vector" for v, _ in lin.terms):
            return "scattered"
        step = sum(c for v, c in lin.terms if v.kind == "lanes")
        return "uniform" if step == 0 else "contiguous" if step == 1 else "scattered"

    # ------------------------------------------------------------------- division
    def divmod(self, lin: Lin, divisor: int) -> tuple[Lin, Lin]:
        """(lin div divisor, lin mod divisor) for a non-negative `lin`."""
        if divisor == 1:
            return lin, Lin()
        q_terms: list[tuple[Var, int]] = []
        rest = Lin((), lin.const % divisor)
        q_const = lin.const // divisor
        for var, coef in lin.terms:
            if coef % divisor == 0:
                q_terms.append((var, coef // divisor))
            else:
                rest = rest + Lin(((var, coef),), 0)
        low, high = rest.bounds()
        if low is not None and high is not None and 0 <= low and high < divisor:
            quotient = Lin(tuple(sorted(q_terms, key=lambda t: t[0].ref)), q_const)
            return quotient, rest
        low, high = lin.bounds()
        if high is not None and low is not None and 0 <= low and high < divisor:
            return Lin(), lin
        return self._runtime_divmod(lin, divisor, low, high)

    def _runtime_divmod(self, lin: Lin, divisor: int, low: int | None,
                        high: int | None) -> tuple[Lin, Lin]:
        fb, w = self.fb, self.width
        kind = self.lane_kind(lin)
        q_hi = None if high is None else high // divisor + 1
        if kind == "uniform" or (kind == "contiguous" and lin.align() % w == 0
                                 and divisor % w == 0):
            scalar = self.scalar(lin)
            q = fb.op(f"udiv i64 {scalar}, {divisor}", "q")
            r = fb.op(f"urem i64 {scalar}, {divisor}", "r")
            r_kind = "lanes" if kind == "contiguous" else "scalar"
            r_align = w if kind == "contiguous" else 1
            return (Lin.of(Var(q, "scalar", 0, q_hi)),
                    Lin.of(Var(r, r_kind, 0, divisor, r_align)))
        vec = self.vector(lin)
        q = fb.op(f"udiv <{w} x i64> {vec}, splat (i64 {divisor})", "q")
        r = fb.op(f"urem <{w} x i64> {vec}, splat (i64 {divisor})", "r")
        return Lin.of(Var(q, "vector", 0, q_hi)), Lin.of(Var(r, "vector", 0, divisor))

    # ------------------------------------------------------------- run-time values
    def opaque(self, lin: Lin, lo: int | None, hi: int | None) -> Lin:
        """`lin` as a fresh variable with known bounds [lo, hi)."""
        kind = self.lane_kind(lin)
        if kind == "uniform":
            return Lin.of(Var(self.scalar(lin), "scalar", lo, hi))
        if kind == "contiguous":
            return Lin.of(Var(self.scalar(lin), "lanes", lo, hi, lin.align()))
        return Lin.of(Var(self.vector(lin), "vector", lo, hi))

    def clamp(self, lin: Lin, low: int, high: int) -> Lin:
        """min(max(lin, low), high), signed."""
        b_low, b_high = lin.bounds()
        if b_low is not None and b_high is not None and low <= b_low and b_high <= high:
            return lin
        fb, w = self.fb, self.width
        if self.lane_kind(lin) == "uniform":
            x = self.scalar(lin)
            x = fb.op(f"call i64 @llvm.smax.i64(i64 {x}, i64 {low})", "cl")
            x = fb.op(f"call i64 @llvm.smin.i64(i64 {x}, i64 {high})", "cl")
            return Lin.of(Var(x, "scalar", low, high + 1))
        v = self.vector(lin)
        ty = f"<{w} x i64>"
        v = fb.op(f"call {ty} @llvm.smax.v{w}i64({ty} {v}, {ty} splat (i64 {low}))", "cl")
        v = fb.op(f"call {ty} @llvm.smin.v{w}i64({ty} {v}, {ty} splat (i64 {high}))", "cl")
        return Lin.of(Var(v, "vector", low, high + 1))

    def from_value(self, ref: str, width: int, lo: int | None = None,
                   hi: int | None = None) -> Lin:
        """An i64 value computed by the kernel (a loaded index) as an index component."""
        if width == 1 or self.width == 1:
            return Lin.of(Var(ref, "scalar", lo, hi))
        return Lin.of(Var(ref, "vector", lo, hi))

    def compare(self, pred: str, lin: Lin, bound: int) -> tuple[str, int]:
        """i1 (or <W x i1>) of `lin <pred> bound` (signed), and its width."""
        fb, w = self.fb, self.width
        if self.lane_kind(lin) == "uniform":
            return fb.op(f"icmp {pred} i64 {self.scalar(lin)}, {bound}", "c"), 1
        return fb.op(f"icmp {pred} <{w} x i64> {self.vector(lin)}, splat (i64 {bound})",
                     "c"), w

    # ------------------------------------------------------------------- arrays
    def to_multi(self, index: "Multi | Flat") -> Multi:
        if isinstance(index, Multi):
            return index
        dims, rest = index.dims, index.lin
        parts: list[Lin] = [Lin()] * len(dims)
        order = memory_order(dims, index.layout)
        for position in range(len(order) - 1, -1, -1):
            d = order[position]
            if position == 0:
                parts[d] = rest
            else:
                rest, parts[d] = self.divmod(rest, dims[d])
        return Multi(tuple(parts))

    def offset(self, index: "Multi | Flat", dims: Sequence[int],
               layout: Sequence[int] | None) -> Lin:
        """The element offset of `index` in an array of `dims` stored as `layout`."""
        dims = tuple(dims)
        if isinstance(index, Flat) and index.dims == dims and tuple(index.layout) == tuple(
                layout or ()):
            return index.lin
        if isinstance(index, Flat) and math.prod(dims) <= 1:
            return Lin()
        multi = self.to_multi(index)
        total = Lin()
        for part, stride in zip(multi.parts, strides_of(dims, layout)):
            total = total + part * stride
        return total
