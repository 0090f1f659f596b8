"""jaxlite's confluent hypergeometric kernels printed as standard ops, in float64:
`hyp1f1` (scipy's hyp1f1(a, b, x) with JAX's values at the edges, see
`jaxlite.scipy._special_hypergeometric`) and its parameter derivatives `hyp1f1_da`,
`hyp1f1_db` (`jaxlite.scipy._hypergeometric_kernels`).

The value. Kummer's transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x) turns x < 0 into
M(alpha; b; y) = 1F1(alpha; b; y) with y = |x| >= 0, whose terms
t_(k+1) = t_k (alpha + k) / (b + k) y / (k + 1) change sign only while alpha + k or b + k
is negative. The power series of M is summed in double-double arithmetic
(`double_double.py`, about 32 digits; alpha + k and b + k exact by two-sums), because
where alpha is large and negative and y moderate its terms grow to about
e^(2 sqrt(|alpha| y)) before they alternate down to the value: a float64 sum loses all
digits at alpha = -39.1, y = 80 (1F1(40.1; 1; -80) = 2.4e-19), the double-double sum
keeps 13. The terms start from t_0 = e^(-shift), shift = y/2 (at most SHIFT_LIMIT for
x > 0), so that e^(-700) M(alpha; b; 700) neither overflows nor underflows; term and sum
are scaled down by 2^RESCALE_BITS whenever they pass it (counted, and undone through
logarithms at the end), so that 1F1(-150.5; 2; -900) = e^-900 M(152.5; 2; 900) is found
with M far beyond float64's range. The sum runs SERIES_STEPS steps, enough for
|x| < ASYMPTOTIC_FROM.

Below alpha = -(y - b)^2 / (4y) the recurrence in the first parameter,
(b - a) M(a - 1) = a M(a + 1) - (2a - b + y) M(a), has oscillating solutions (its
characteristic roots are complex), so rounding errors do not grow along it; there (at most
RECURRENCE_STEPS below that bound) M(alpha) comes from the series at the two a just above
the bound, recurred down. Above the bound M is the recurrence's minimal solution going
down (unstable) and the series alone is used.

For x <= -ASYMPTOTIC_FROM, the algebraic part of the asymptotic expansion,
1F1 = Gamma(b) / Gamma(b - a) |x|^(-a) sum_k (a)_k (a - b + 1)_k / k! |x|^(-k) (the e^x
part is below float64's reach). A value that overflows is +inf whatever its sign, as
scipy (boost's overflow error) gives it; 1F1(1; -0.5; 700) is -6.7e308 (mpmath).

Measured against mpmath (40 to 60 digits):
- 1980 points, a from -20.5 to 40.1, b from -10.5 to 60.2 and -2.9999, |x| <= 700: within
  2e-13 everywhere but where b - a rounds to a whole number in float64 (b = -3.7, a = 0.3:
  b - a = -4 exactly, a terminating series, while the true b - a is not whole; scipy gives
  the same values);
- 433 points, a from -150.5 to 120.9, b from -30.5 to 150.25, |x| <= 999: within 1.3e-13
  but for alpha <= -80 with y >= 400 (above the recurrence's bound, where the series
  cancels beyond double-double: 1F1(-150.5; 2; 600) has no correct digit,
  1F1(120.9; 2; -400) is off by 2.4e-5) and 1F1(-80.3; 150.25; 600), off by 4.6e-3.
  scipy is accurate there. Such values are NaN, never another number: the series tracks
  its largest term, and where that exceeds the sum by more than CANCELLATION_LIMIT (the
  double-double sum of SERIES_STEPS terms keeps about 1e-28 of its largest term) or the
  asymptotic series' last term is above ASYMPTOTIC_ERROR_LIMIT of its sum, the value is
  NaN. On 924 points with a from -400.5 to 150.7, b from -30.5 to 400.5 and x from -1500 to
  999, the unguarded expansion printed 120 wrong numbers (1F1(-250.3; -3.5; 150) as
  1.5e114 for 6.1e40); guarded, none is off by more than 2.4e-11 and 165 are NaN where
  scipy's value is finite. On 600 random points (|a| <= 150, b in [-30, 150],
  x in [-999, 700]) none is off by more than 3.2e-13, 32 are NaN, all with |a| > 40 and
  |x| > 250.
scipy (1.17, boost's 1F1) is the inaccurate one next to the poles of b with x < 0:
1F1(1; -2.9999; -3) is off by 1.4e-5 there, 1F1(15.5; -10.5; -0.7) by 7.8e-7,
1F1(40.1; -2.9999; -35.5) by 3.7e-11 (this expansion: mpmath's values to 1e-15).

The derivatives `hyp1f1_da`, `hyp1f1_db` are in `special_hyp1f1_grad.py` (double-double
sums, as the kernel's).

Edges as the kernel: NaN at infinite x; at NaN or infinite a or b, or b a negative
integer, JAX's series values; inf at b = 0 != a; e^x at a = b != 0; 1 at a = 0.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import double_double as D
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_hyp1f1_grad import HYP1F1_GRAD_EXPANSIONS
from jaxlite.xla.stablehlo.special_igamma import (as_float, both, either, in_float64,
                                                  is_value, loop, pick)

__all__ = ["HYP1F1_EXPANSIONS", "SERIES_STEPS", "ASYMPTOTIC_FROM",
           "ASYMPTOTIC_STEPS", "SHIFT_LIMIT", "RESCALE_BITS", "RECURRENCE_STEPS",
           "CANCELLATION_LIMIT", "ASYMPTOTIC_ERROR_LIMIT"]

SERIES_STEPS = 1500
ASYMPTOTIC_FROM = 1000.0
ASYMPTOTIC_STEPS = 60
SHIFT_LIMIT = 300.0
RESCALE_BITS = 600
RECURRENCE_STEPS = 200
CANCELLATION_LIMIT = 1e14
ASYMPTOTIC_ERROR_LIMIT = 1e-16


def _add(w: FunctionWriter, a: str, b: str) -> str:
    return L.binary(w, "add", a, b)


def _sub(w: FunctionWriter, a: str, b: str) -> str:
    return L.binary(w, "subtract", a, b)


def _mul(w: FunctionWriter, a: str, b: str) -> str:
    return L.binary(w, "multiply", a, b)


def _div(w: FunctionWriter, a: str, b: str) -> str:
    return L.binary(w, "divide", a, b)


def _const(w: FunctionWriter, value: float, like: str) -> str:
    return L.splat(w, value, L.shape_of(w, like))


def _abs(w: FunctionWriter, x: str) -> str:
    return unary(w, "stablehlo.abs", x)


def _exp(w: FunctionWriter, x: str) -> str:
    return unary(w, "stablehlo.exponential", x)


def _k(w: FunctionWriter, i: str, like: str) -> str:
    """The term index k = i - 1 of loop step i, as a float64 array."""
    return _sub(w, as_float(w, i, L.shape_of(w, like)), _const(w, 1.0, like))


def _series(w: FunctionWriter, alpha: str, b: str, y: str,
            shift: str) -> tuple[str, str, str]:
    """(S, n, P) with e^(-shift) M(alpha; b; y) = S 2^(RESCALE_BITS n) for y >= 0, summed in
    double-double arithmetic (the factors alpha + k and b + k exactly, by two-sums); the
    term and the sum are scaled down by 2^RESCALE_BITS (exactly) whenever either passes
    2^RESCALE_BITS, n counting how often. P is the largest term, scaled as S: P / |S|
    measures the cancellation."""
    first = _exp(w, unary(w, "stablehlo.negate", shift))
    limit = _const(w, 2.0 ** RESCALE_BITS, y)
    down = _const(w, 2.0 ** -RESCALE_BITS, y)
    one = _const(w, 1.0, y)

    def step(i: str, values: Leaves) -> Leaves:
        term, total = (values[0], values[1]), (values[2], values[3])
        k = _k(w, i, y)
        top = D.dd_mul(w, D.two_sum(w, alpha, k), D.exact(w, y))
        bottom = D.dd_mul(w, D.two_sum(w, b, k), D.exact(w, _add(w, k, one)))
        term = D.dd_mul(w, term, D.dd_div(w, top, bottom))
        total = D.dd_add(w, total, term)
        large = L.binary(w, "maximum", _abs(w, term[0]), _abs(w, total[0]))
        big = L.compare(w, large, limit, "GT", "FLOAT")
        factor = L.select(w, big, down, one)
        count = _add(w, values[4], L.select(w, big, one, _const(w, 0.0, y)))
        peak = L.binary(w, "maximum", values[5], _abs(w, term[0]))
        return [*(_mul(w, v, factor) for v in (*term, *total)), count, _mul(w, peak, factor)]
    zero = _const(w, 0.0, y)
    high, low, count, peak = loop(w, SERIES_STEPS,
                                  [first, zero, first, zero, zero, first], step)[2:]
    return _add(w, high, low), count, peak


def _stacked(w: FunctionWriter, values: list[str]) -> str:
    """The arrays (of one shape) stacked along a new leading axis."""
    shape = L.shape_of(w, values[0])
    single = shape.with_dims((1,) + shape.dims)
    pieces = [w.generic("stablehlo.reshape", [v], [single])[0] for v in values]
    return w.generic("stablehlo.concatenate", pieces,
                     [shape.with_dims((len(values),) + shape.dims)], {"dimension": T.i64(0)})[0]


def _rows(w: FunctionWriter, stacked: str, count: int) -> list[str]:
    """The `count` arrays stacked in `stacked` (the inverse of `_stacked`)."""
    shape = L.shape_of(w, stacked)
    inner = shape.dims[1:]
    out = []
    for i in range(count):
        piece = w.generic("stablehlo.slice", [stacked], [shape.with_dims((1,) + inner)],
                          {"start_indices": T.i64_array([i] + [0] * len(inner)),
                           "limit_indices": T.i64_array([i + 1, *inner]),
                           "strides": T.i64_array([1] * shape.rank)})[0]
        out.append(w.generic("stablehlo.reshape", [piece], [shape.with_dims(inner)])[0])
    return out


def _recurred(w: FunctionWriter, b: str, y: str, start: str, steps: str, lower: str,
              upper: str) -> str:
    """M(start - steps) from lower = M(start), upper = M(start + 1) (scaled alike) by the
    recurrence (b - a) M(a - 1) = a M(a + 1) - (2a - b + y) M(a), at most
    RECURRENCE_STEPS steps."""
    one = _const(w, 1.0, y)

    def step(i: str, values: Leaves) -> Leaves:
        a, upper, lower = values
        go = L.compare(w, _k(w, i, y), steps, "LT", "FLOAT")
        middle = _add(w, _sub(w, _add(w, a, a), b), y)
        below = _div(w, _sub(w, _mul(w, a, upper), _mul(w, middle, lower)), _sub(w, b, a))
        return [L.select(w, go, _sub(w, a, one), a), L.select(w, go, lower, upper),
                L.select(w, go, below, lower)]
    return loop(w, RECURRENCE_STEPS, [start, upper, lower], step)[2]


def _cancellation(w: FunctionWriter, peak: str, total: str) -> str:
    """The largest term over the sum's magnitude."""
    return _div(w, peak, _abs(w, total))


def _scaled_value(w: FunctionWriter, alpha: str, b: str, y: str,
                  shift: str) -> tuple[str, str, str]:
    """(S, n, C) with e^(-shift) M(alpha; b; y) = S 2^(RESCALE_BITS n): the series, or where
    alpha is below -(y - b)^2 / (4y) (there the recurrence in a oscillates: rounding
    errors do not grow), the recurrence from the series at the last two a above that.
    C is the cancellation of the series used (`_cancellation`)."""
    one = _const(w, 1.0, y)
    bound = _div(w, L.binary(w, "power", _sub(w, y, b), _const(w, 2.0, y)),
                 _mul(w, _const(w, 4.0, y), y))
    steps = unary(w, "stablehlo.floor", _sub(w, _sub(w, unary(w, "stablehlo.negate", alpha),
                                                       bound), one))
    useful = both(w, is_value(w, steps, "GE", 1.0),
                  is_value(w, steps, "LE", float(RECURRENCE_STEPS)))
    steps = L.select(w, useful, steps, _const(w, 0.0, y))
    start = _add(w, alpha, steps)
    # One loop sums the three series, stacked on a new leading axis.
    totals, counts, peaks = (_rows(w, v, 3) for v in _series(
        w, _stacked(w, [alpha, start, _add(w, start, one)]), *(_stacked(w, [v] * 3)
                                                                for v in (b, y, shift))))
    (total, lower, upper), (count, lower_count, upper_count) = totals, counts
    recurred = _recurred(w, b, y, start, steps, lower, upper)
    # (not where a start overflowed, nor where the recurrence met a = b, its singular point)
    usable = both(w, both(w, useful, is_value(w, _abs(w, recurred), "LT", np.inf)),
                  is_value(w, _add(w, lower_count, upper_count), "EQ", 0.0))
    cancellation = L.select(w, usable, L.binary(
        w, "maximum", _cancellation(w, peaks[1], lower), _cancellation(w, peaks[2], upper)),
        _cancellation(w, peaks[0], total))
    return (L.select(w, usable, recurred, total),
            L.select(w, usable, _const(w, 0.0, y), count), cancellation)


def _gamma_sign(w: FunctionWriter, z: str) -> str:
    """The sign of Gamma(z) off its poles: 1 for z > 0, else -1 where floor(z) is odd."""
    floor = unary(w, "stablehlo.floor", z)
    half = unary(w, "stablehlo.floor", _mul(w, floor, _const(w, 0.5, z)))
    odd = L.compare(w, _add(w, half, half), floor, "NE", "FLOAT")
    negative = both(w, odd, is_value(w, z, "LE", 0.0))
    return L.select(w, negative, _const(w, -1.0, z), _const(w, 1.0, z))


def _asymptotic(w: FunctionWriter, a: str, b: str, x: str) -> tuple[str, str]:
    """1F1(a; b; x) for x <= -ASYMPTOTIC_FROM: Gamma(b) / Gamma(b - a) |x|^(-a)
    sum_k (a)_k (a - b + 1)_k / k! |x|^(-k) (the e^x part is below float64's reach), and
    the last term over the sum: the error of the truncated (divergent) series."""
    y = _abs(w, x)
    one = _const(w, 1.0, y)
    shifted = _add(w, _sub(w, a, b), one)

    def step(i: str, values: Leaves) -> Leaves:
        term, total = values
        k = _k(w, i, y)
        ratio = _div(w, _mul(w, _add(w, a, k), _add(w, shifted, k)),
                     _mul(w, _add(w, k, one), y))
        term = _mul(w, term, ratio)
        return [term, _add(w, total, term)]
    term, total = loop(w, ASYMPTOTIC_STEPS, [one, one], step)
    lgamma = lambda z: unary(w, "chlo.lgamma", z)  # noqa: E731
    b_minus_a = _sub(w, b, a)
    size = _exp(w, _sub(w, _sub(w, lgamma(b), lgamma(b_minus_a)),
                        _mul(w, a, unary(w, "stablehlo.log", y))))
    sign = _mul(w, _gamma_sign(w, b), _gamma_sign(w, b_minus_a))
    return _mul(w, _mul(w, sign, size), total), _cancellation(w, _abs(w, term), total)


def _sign(w: FunctionWriter, x: str) -> str:
    return unary(w, "stablehlo.sign", x)


def _is_nan(w: FunctionWriter, x: str) -> str:
    return L.compare(w, x, x, "NE", "FLOAT")


def _is_inf(w: FunctionWriter, x: str) -> str:
    return is_value(w, _abs(w, x), "EQ", np.inf)


def _series_edges(w: FunctionWriter, a: str, b: str, x: str, value: str) -> str:
    """`_hyp1f1_series_edges` of the kernel: JAX's series values where a or b is NaN or
    infinite or b a negative integer."""
    pole = both(w, is_value(w, b, "LT", 0.0),
                L.compare(w, b, unary(w, "stablehlo.floor", b), "EQ", "FLOAT"))
    nan_parameter = either(w, _is_nan(w, a), _is_nan(w, b))
    odd = either(w, either(w, nan_parameter, either(w, _is_inf(w, a), _is_inf(w, b))), pole)
    infinite_a = _mul(w, _mul(w, _mul(w, _sign(w, a), _sign(w, b)), _sign(w, x)),
                      _const(w, np.inf, x))
    in_series = L.select(w, nan_parameter, _const(w, 1.0, x),
                         L.select(w, _is_inf(w, a), infinite_a, _const(w, -np.inf, x)))
    series_range = both(w, is_value(w, _abs(w, x), "LT", 100.0),
                        is_value(w, x, "NE", 0.0))
    at_edge = L.select(w, is_value(w, x, "EQ", 0.0), _const(w, 1.0, x),
                       L.select(w, series_range, in_series, _const(w, np.nan, x)))
    return L.select(w, odd, at_edge, value)


def _unknown(w: FunctionWriter, x: str, alpha: str, total: str, cancellation: str,
             divergence: str) -> str:
    """Where the series cancels beyond what double-double keeps, or the asymptotic series
    has not converged: the value is not known to float64's precision, and is NaN rather
    than a wrong number (scipy's value may be finite there; see the module docstring)."""
    not_ = lambda v: unary(w, "stablehlo.not", v)  # noqa: E731
    # (a terminating series may sum to exactly 0)
    terminating = both(w, is_value(w, total, "EQ", 0.0), both(
        w, is_value(w, alpha, "LE", 0.0),
        L.compare(w, alpha, unary(w, "stablehlo.floor", alpha), "EQ", "FLOAT")))
    cancels = both(w, not_(is_value(w, cancellation, "LE", CANCELLATION_LIMIT)),
                   not_(terminating))
    diverges = not_(is_value(w, divergence, "LE", ASYMPTOTIC_ERROR_LIMIT))
    return L.select(w, is_value(w, x, "LE", -ASYMPTOTIC_FROM), diverges, cancels)


def _hyp1f1(w: FunctionWriter, a: str, b: str, x: str) -> str:
    negative = is_value(w, x, "LT", 0.0)
    alpha = L.select(w, negative, _sub(w, b, a), a)
    y = _abs(w, x)
    half = _mul(w, y, _const(w, 0.5, y))
    # The terms are scaled by e^(-shift): shift = y/2, at most SHIFT_LIMIT for x > 0 (the
    # terminating series of a whole negative a stays finite at any x); then
    # 1F1 = e^shift (e^-shift M) for x >= 0, e^(x + shift) (e^-shift M) for x < 0.
    limited = L.binary(w, "minimum", half, _const(w, SHIFT_LIMIT, y))
    shift = L.select(w, negative, half, limited)
    log_scale = L.select(w, negative, unary(w, "stablehlo.negate", half), shift)
    total, count, cancellation = _scaled_value(w, alpha, b, y, shift)
    # Rescaled sums (far beyond float64's range, the value need not be) through logarithms.
    logarithm = _add(w, _add(w, unary(w, "stablehlo.log", _abs(w, total)), log_scale),
                     _mul(w, count, _const(w, RESCALE_BITS * np.log(2.0), y)))
    value = L.select(w, is_value(w, count, "EQ", 0.0), _mul(w, total, _exp(w, log_scale)),
                     _mul(w, _sign(w, total), _exp(w, logarithm)))
    asymptotic, divergence = _asymptotic(w, a, b, x)
    value = L.select(w, is_value(w, x, "LE", -ASYMPTOTIC_FROM), asymptotic, value)
    # scipy (boost's overflow error) gives +inf for an overflowing value of either sign
    # (here inf, or NaN from inf - inf or 0 * inf in the series at x > 0).
    overflow = either(w, _is_inf(w, value), both(w, _is_nan(w, value),
                                                  is_value(w, x, "GT", 0.0)))
    value = L.select(w, overflow, _const(w, np.inf, x), value)
    value = L.select(w, _unknown(w, x, alpha, total, cancellation, divergence),
                     _const(w, np.nan, x), value)
    finite = both(w, both(w, is_value(w, _abs(w, a), "LT", np.inf),
                          is_value(w, _abs(w, b), "LT", np.inf)),
                  is_value(w, _abs(w, x), "LT", np.inf))
    value = L.select(w, finite, value, _const(w, np.nan, x))
    value = _series_edges(w, a, b, x, value)
    a_is_zero = is_value(w, a, "EQ", 0.0)
    not_zero = unary(w, "stablehlo.not", a_is_zero)
    value = L.select(w, both(w, is_value(w, b, "EQ", 0.0), not_zero), _const(w, np.inf, x),
                     value)
    value = L.select(w, both(w, L.compare(w, a, b, "EQ", "FLOAT"), not_zero), _exp(w, x),
                     value)
    return pick(w, [(a_is_zero, 1.0)], value)


HYP1F1_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_hyp1f1": in_float64(_hyp1f1),
    **HYP1F1_GRAD_EXPANSIONS,
}
