"""Complex arithmetic on (real, imaginary) pairs of float64 values, for the complex
kernel expansions (wofz, loggamma, digamma): the parts are explicit so that each formula
controls its overflow and its zeros (a quotient by Smith's scaling, exp(z) without
inf * 0 where the angle is 0), as XLA's complex ops do not promise.

`in_complex128(formula)` is the rule wrapper: the operand (complex64 or complex128) is
converted to complex128, split into parts, `formula(w, (x, y))` returns the result's
parts, and these are joined and rounded back to the operand's type.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import convert, unary

__all__ = ["Pair", "add", "sub", "mul", "scale", "div", "reciprocal", "exp", "log",
           "conj", "neg", "constant", "select_pair", "in_complex128", "real_op"]

Pair = tuple[str, str]
_F64 = np.dtype(np.float64)
_C128 = np.dtype(np.complex128)


def real_op(w: FunctionWriter, op: str, *operands: str) -> str:
    """`stablehlo.<op>` of float64 values of one shape."""
    return w.same_type(f"stablehlo.{op}", list(operands), L.shape_of(w, operands[0]))[0]


def constant(w: FunctionWriter, value: complex, like: str) -> Pair:
    shape = L.shape_of(w, like)
    return L.splat(w, float(np.real(value)), shape), L.splat(w, float(np.imag(value)), shape)


def add(w: FunctionWriter, a: Pair, b: Pair) -> Pair:
    return real_op(w, "add", a[0], b[0]), real_op(w, "add", a[1], b[1])


def sub(w: FunctionWriter, a: Pair, b: Pair) -> Pair:
    return real_op(w, "subtract", a[0], b[0]), real_op(w, "subtract", a[1], b[1])


def neg(w: FunctionWriter, a: Pair) -> Pair:
    return unary(w, "stablehlo.negate", a[0]), unary(w, "stablehlo.negate", a[1])


def conj(w: FunctionWriter, a: Pair) -> Pair:
    return a[0], unary(w, "stablehlo.negate", a[1])


def mul(w: FunctionWriter, a: Pair, b: Pair) -> Pair:
    (p, q), (r, s) = a, b
    return (real_op(w, "subtract", real_op(w, "multiply", p, r), real_op(w, "multiply", q, s)),
            real_op(w, "add", real_op(w, "multiply", p, s), real_op(w, "multiply", q, r)))


def scale(w: FunctionWriter, a: Pair, factor: str) -> Pair:
    """a times the real value `factor`."""
    return real_op(w, "multiply", a[0], factor), real_op(w, "multiply", a[1], factor)


def div(w: FunctionWriter, a: Pair, b: Pair) -> Pair:
    """a / b by Smith's method: divide through by b's larger part, so that |b|^2 is never
    formed (no overflow for |b| up to the largest float64)."""
    (p, q), (r, s) = a, b
    abs_r, abs_s = unary(w, "stablehlo.abs", r), unary(w, "stablehlo.abs", s)
    real_larger = L.compare(w, abs_r, abs_s, "GE", "FLOAT")
    big = L.select(w, real_larger, r, s)
    small = L.select(w, real_larger, s, r)
    ratio = real_op(w, "divide", small, big)
    denominator = real_op(w, "add", big, real_op(w, "multiply", small, ratio))
    # real larger: (p + q t, q - p t) / d; imaginary larger: (p t + q, q t - p) / d
    pt, qt = real_op(w, "multiply", p, ratio), real_op(w, "multiply", q, ratio)
    re = L.select(w, real_larger, real_op(w, "add", p, qt), real_op(w, "add", pt, q))
    im = L.select(w, real_larger, real_op(w, "subtract", q, pt), real_op(w, "subtract", qt, p))
    return real_op(w, "divide", re, denominator), real_op(w, "divide", im, denominator)


def reciprocal(w: FunctionWriter, b: Pair) -> Pair:
    return div(w, constant(w, 1.0, b[0]), b)


def _signed_exp(w: FunctionWriter, magnitude_log: str, factor: str) -> str:
    """factor * exp(magnitude_log), as sign(factor) exp(magnitude_log + log|factor|): no
    inf * 0 where exp overflows and the factor is 0, and no early overflow where the
    product is finite."""
    shape = L.shape_of(w, factor)
    log_factor = unary(w, "stablehlo.log", unary(w, "stablehlo.abs", factor))
    value = unary(w, "stablehlo.exponential", real_op(w, "add", magnitude_log, log_factor))
    zero = L.compare(w, factor, L.splat(w, 0.0, shape), "EQ", "FLOAT")
    return L.select(w, zero, factor, real_op(w, "multiply", unary(w, "stablehlo.sign", factor),
                                             value))


def exp(w: FunctionWriter, a: Pair, factor: float = 1.0) -> Pair:
    """factor * exp(a), each part formed without overflow before its own value does."""
    shape = L.shape_of(w, a[0])
    re, im = a
    log_factor = real_op(w, "add", re, L.splat(w, float(np.log(factor)), shape))
    return (_signed_exp(w, log_factor, unary(w, "stablehlo.cosine", im)),
            _signed_exp(w, log_factor, unary(w, "stablehlo.sine", im)))


def log(w: FunctionWriter, a: Pair) -> Pair:
    """The principal logarithm: log|a| (by a scaled hypot) + i atan2(im, re)."""
    re, im = a
    abs_re, abs_im = unary(w, "stablehlo.abs", re), unary(w, "stablehlo.abs", im)
    big = real_op(w, "maximum", abs_re, abs_im)
    small = real_op(w, "minimum", abs_re, abs_im)
    shape = L.shape_of(w, re)
    safe_big = L.select(w, L.compare(w, big, L.splat(w, 0.0, shape), "EQ", "FLOAT"),
                        L.splat(w, 1.0, shape), big)
    ratio = real_op(w, "divide", small, safe_big)
    # log(big) + log1p(ratio^2) / 2
    half_log1p = real_op(w, "multiply", L.splat(w, 0.5, shape), unary(
        w, "stablehlo.log_plus_one", real_op(w, "multiply", ratio, ratio)))
    magnitude = real_op(w, "add", unary(w, "stablehlo.log", big), half_log1p)
    return magnitude, real_op(w, "atan2", im, re)


def select_pair(w: FunctionWriter, predicate: str, a: Pair, b: Pair) -> Pair:
    return L.select(w, predicate, a[0], b[0]), L.select(w, predicate, a[1], b[1])


def in_complex128(formula: Callable[[FunctionWriter, Pair], Pair]) -> L.KernelRule:
    """A rule computing `formula(w, (re, im))` on the complex operand's float64 parts,
    the result joined and rounded to the operand's complex type."""
    def rule(w: FunctionWriter, inst: HloInstruction, operands: list[str],
             config: dict) -> Leaves | None:
        dtype = inst.shape.dtype
        if dtype.kind != "c":
            return None
        z = convert(w, operands[0], _C128)
        real = L.shape_of(w, z).with_dtype(_F64)
        parts = tuple(w.generic(f"stablehlo.{p}", [z], [real])[0] for p in ("real", "imag"))
        re, im = formula(w, parts)
        joined = w.generic("stablehlo.complex", [re, im], [L.shape_of(w, z)])[0]
        return [convert(w, joined, dtype)]
    return rule
