"""Double-double arithmetic printed as standard StableHLO ops: a value is an unevaluated
sum hi + lo of two float64 arrays with |lo| <= ulp(hi) / 2, about 32 significant digits,
for sums whose terms cancel far beyond float64's 16 (see `special_hyp1f1.py`).

Knuth's two-sum needs each float64 addition rounded once as written, which XLA keeps (it
reassociates no floating-point arithmetic). XLA:CPU fuses a multiply feeding an add into
one multiply-add (also a multiply with other users, which fusion duplicates), which
breaks Dekker's two-product (fl(a b) subtracted from the product of the high halves) and
his split (by a multiplication by 2^27 + 1). Here the split clears mantissa bits (a
bitcast to int64 and a mask), and a product is the two-sum of the exact products of the
halves, never a rounded product: every product that can be fused is exact, and fusing
changes nothing.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter

__all__ = ["Pair", "exact", "two_sum", "dd_add", "dd_mul", "dd_div"]

Pair = tuple[str, str]
_HIGH_BITS = -(1 << 27)  # as int64 bits: all but the 27 lowest of the mantissa


def _op(w: FunctionWriter, op: str, a: str, b: str) -> str:
    return L.binary(w, op, a, b)


def exact(w: FunctionWriter, value: str) -> Pair:
    """A float64 array as a double-double (lo = 0)."""
    return value, L.splat(w, 0.0, L.shape_of(w, value))


def two_sum(w: FunctionWriter, a: str, b: str) -> Pair:
    """a + b exactly, as (rounded sum, error)."""
    s = _op(w, "add", a, b)
    b_part = _op(w, "subtract", s, a)
    a_part = _op(w, "subtract", s, b_part)
    error = _op(w, "add", _op(w, "subtract", a, a_part), _op(w, "subtract", b, b_part))
    return s, error


def _fast_two_sum(w: FunctionWriter, a: str, b: str) -> Pair:
    """a + b exactly where |a| >= |b|."""
    s = _op(w, "add", a, b)
    return s, _op(w, "subtract", b, _op(w, "subtract", s, a))


def _split(w: FunctionWriter, a: str) -> Pair:
    """a = high + low, high with a's sign, exponent and upper 25 mantissa bits (the low 27
    cleared), low = a - high exactly; products of the halves are exact but low * low (one
    bit short, below a double-double's precision)."""
    shape = L.shape_of(w, a)
    bits = shape.with_dtype(np.dtype(np.int64))
    raw = w.generic("stablehlo.bitcast_convert", [a], [bits])[0]
    kept = w.generic("stablehlo.and", [raw, L.splat(w, _HIGH_BITS, bits)], [bits])[0]
    high = w.generic("stablehlo.bitcast_convert", [kept], [shape])[0]
    return high, _op(w, "subtract", a, high)


def _two_product(w: FunctionWriter, a: str, b: str) -> Pair:
    """a b as a double-double, summed from the exact products of the halves."""
    (a_hi, a_lo), (b_hi, b_lo) = _split(w, a), _split(w, b)
    s, first = two_sum(w, _op(w, "multiply", a_hi, b_hi), _op(w, "multiply", a_hi, b_lo))
    s, second = two_sum(w, s, _op(w, "multiply", a_lo, b_hi))
    error = _op(w, "add", _op(w, "add", first, second), _op(w, "multiply", a_lo, b_lo))
    return s, error


def dd_add(w: FunctionWriter, x: Pair, y: Pair) -> Pair:
    s, e = two_sum(w, x[0], y[0])
    t, f = two_sum(w, x[1], y[1])
    s, e = _fast_two_sum(w, s, _op(w, "add", e, t))
    return _fast_two_sum(w, s, _op(w, "add", e, f))


def dd_mul(w: FunctionWriter, x: Pair, y: Pair) -> Pair:
    p, e = _two_product(w, x[0], y[0])
    cross = _op(w, "add", _op(w, "multiply", x[0], y[1]), _op(w, "multiply", x[1], y[0]))
    return _fast_two_sum(w, p, _op(w, "add", e, cross))


def _negated(w: FunctionWriter, x: Pair) -> Pair:
    return tuple(w.generic("stablehlo.negate", [v], [L.shape_of(w, v)])[0] for v in x)


def dd_div(w: FunctionWriter, x: Pair, y: Pair) -> Pair:
    """x / y by three float64 quotients of the running remainder."""
    first = _op(w, "divide", x[0], y[0])
    rest = dd_add(w, x, _negated(w, dd_mul(w, exact(w, first), y)))
    second = _op(w, "divide", rest[0], y[0])
    rest = dd_add(w, rest, _negated(w, dd_mul(w, exact(w, second), y)))
    third = _op(w, "divide", rest[0], y[0])
    return dd_add(w, _fast_two_sum(w, first, second), exact(w, third))
