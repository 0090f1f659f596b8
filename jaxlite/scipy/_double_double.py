"""Double-double arithmetic on float64 numpy arrays: a value is an unevaluated sum hi + lo
with |lo| <= ulp(hi) / 2, about 32 significant digits, for series whose terms cancel far
beyond float64's 16 (the parameter derivatives of 1F1 in `_hypergeometric_kernels.py`).

The operations are those of the StableHLO expansions' `jaxlite/xla/stablehlo/
double_double.py`, step for step (the split clears the low 27 mantissa bits, a product is
the two-sum of the exact products of the halves), so that a kernel and its expansion round
alike.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Pair", "exact", "two_sum", "dd_add", "dd_neg", "dd_sub", "dd_mul", "dd_div", "value"]

Pair = tuple[np.ndarray, np.ndarray]
_HIGH_BITS = np.int64(-(1 << 27))  # as int64 bits: all but the 27 lowest of the mantissa


def exact(v: np.ndarray) -> Pair:
    """A float64 array as a double-double (lo = 0)."""
    v = np.asarray(v, np.float64)
    return v, np.zeros_like(v)


def value(x: Pair) -> np.ndarray:
    """The double-double rounded to float64."""
    return x[0] + x[1]


def two_sum(a: np.ndarray, b: np.ndarray) -> Pair:
    """a + b exactly, as (rounded sum, error)."""
    s = a + b
    b_part = s - a
    a_part = s - b_part
    return s, (a - a_part) + (b - b_part)


def _fast_two_sum(a: np.ndarray, b: np.ndarray) -> Pair:
    """a + b exactly where |a| >= |b|."""
    s = a + b
    return s, b - (s - a)


def _split(a: np.ndarray) -> Pair:
    """a = high + low, high a's upper 25 mantissa bits; the products of halves are exact."""
    a = np.asarray(a, np.float64)   # (int64 bits of the same size: any strides view)
    high = (a.view(np.int64) & _HIGH_BITS).view(np.float64)
    return high, a - high


def _two_product(a: np.ndarray, b: np.ndarray) -> Pair:
    (a_hi, a_lo), (b_hi, b_lo) = _split(a), _split(b)
    s, first = two_sum(a_hi * b_hi, a_hi * b_lo)
    s, second = two_sum(s, a_lo * b_hi)
    return s, (first + second) + a_lo * b_lo


def dd_add(x: Pair, y: Pair) -> Pair:
    s, e = two_sum(x[0], y[0])
    t, f = two_sum(x[1], y[1])
    s, e = _fast_two_sum(s, e + t)
    return _fast_two_sum(s, e + f)


def dd_neg(x: Pair) -> Pair:
    return -x[0], -x[1]


def dd_sub(x: Pair, y: Pair) -> Pair:
    return dd_add(x, dd_neg(y))


def dd_mul(x: Pair, y: Pair) -> Pair:
    p, e = _two_product(x[0], y[0])
    return _fast_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))


def dd_div(x: Pair, y: Pair) -> Pair:
    """x / y by three float64 quotients of the running remainder."""
    first = x[0] / y[0]
    rest = dd_sub(x, dd_mul(exact(first), y))
    second = rest[0] / y[0]
    rest = dd_sub(rest, dd_mul(exact(second), y))
    third = rest[0] / y[0]
    return dd_add(_fast_two_sum(first, second), exact(third))
