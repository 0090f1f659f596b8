"""jaxlite's confluent hypergeometric kernels printed as standard ops, in float64:
`hyp1f1` (scipy's hyp1f1(a, b, x) with JAX's values at the edges, see
`jaxlite.scipy._special_hypergeometric`) and its parameter derivatives `hyp1f1_da`,
`hyp1f1_db` (`jaxlite.scipy._hypergeometric_kernels`).

The value. Kummer's transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x) turns x < 0 into
M(alpha; b; y) = 1F1(alpha; b; y) with y = |x| >= 0, whose terms
t_(k+1) = t_k (alpha + k) / (b + k) y / (k + 1) change sign only while alpha + k or b + k
is negative. M is taken from whichever of two forms has the smaller error estimate:

- the power series, summed from t_0 = e^(-shift), shift = y/2 (at most SHIFT_LIMIT for
  x > 0), so that e^(-700) M(alpha; b; 700) neither overflows nor underflows, in
  SERIES_STEPS steps (enough for |x| up to ASYMPTOTIC_FROM); its error is about
  eps sum|t_k| / |sum t_k|;
- for alpha < -1 (at most RECURRENCE_STEPS below), the recurrence in the first parameter
  (b - a) M(a - 1) = a M(a + 1) - (2a - b + y) M(a), run down from the series at alpha's
  fractional part f and f - 1 (where the series does not cancel). Its error is estimated
  by running it a second time from a start nudged by NUDGE (relative): the change, over
  NUDGE, is the factor by which it amplifies rounding errors.

For x <= -ASYMPTOTIC_FROM, the algebraic part of the asymptotic expansion,
1F1 = Gamma(b) / Gamma(b - a) |x|^(-a) sum_k (a)_k (a - b + 1)_k / k! |x|^(-k) (the e^x
part is below float64's reach). A value that overflows is +inf whatever its sign, as
scipy (boost's overflow error) gives it; 1F1(1; -0.5; 700) is -6.7e308 (mpmath).

Where a is negative (x > 0) or b - a is (x < 0), both forms lose digits in a band where
|alpha| is large and y moderate: the series cancels (its terms grow to about
e^(2 sqrt(|alpha| y)) before they alternate down to the value) and the recurrence runs
where M is its minimal solution (a recurrence of this kind is stable only where
4 |alpha| y > (y - b)^2, that is, away from small |alpha|, the start). Measured against
mpmath (40 digits) on a grid of 1980 points (a, b, x of both signs, |x| <= 700): the
error is below 5e-14 wherever |alpha| <= 10; up to 5e-9 for 10 < |alpha| <= 15, 5e-6 for
15 < |alpha| <= 30, and no correct digits beyond at 30 <= y <= 80 (e.g. a = 40.1, b = 1,
x = -80). scipy (boost's 1F1) is accurate there: that band is not printed faithfully.

scipy is the inaccurate one near the poles of b with x < 0: 1F1(1; -2.9999; -3) is off by
1.4e-5 relative in scipy 1.17 (mpmath and this expansion agree to 1e-15).

The derivatives are the kernel's series (`_hypergeometric_kernels._series`) step for step,
with Kummer's transformation for x < 0, in DERIVATIVE_STEPS steps; NaN where the terms
have not become negligible by then (|x| beyond about 1300) or an operand is not finite.

Edges as the kernel: NaN at infinite x; at NaN or infinite a or b, or b a negative
integer, JAX's series values; inf at b = 0 != a; e^x at a = b != 0; 1 at a = 0.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import (as_float, both, either, in_float64,
                                                  is_value, loop, pick)

__all__ = ["HYP1F1_EXPANSIONS", "SERIES_STEPS", "RECURRENCE_STEPS", "DERIVATIVE_STEPS",
           "ASYMPTOTIC_FROM", "ASYMPTOTIC_STEPS"]

SERIES_STEPS = 1500
RECURRENCE_STEPS = 64
DERIVATIVE_STEPS = 2000
ASYMPTOTIC_FROM = 1000.0
ASYMPTOTIC_STEPS = 60
SHIFT_LIMIT = 300.0
NUDGE = 1e-6
_EPS = float(np.finfo(np.float64).eps)


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
            shift: str) -> tuple[str, str]:
    """(e^(-shift) M(alpha; b; y), e^(-shift) sum |t_k|) for y >= 0."""
    first = _exp(w, unary(w, "stablehlo.negate", shift))

    def step(i: str, values: Leaves) -> Leaves:
        term, total, size = values
        k = _k(w, i, y)
        ratio = _mul(w, _div(w, _add(w, alpha, k), _add(w, b, k)),
                     _div(w, y, _add(w, k, _const(w, 1.0, y))))
        term = _mul(w, term, ratio)
        return [term, _add(w, total, term), _add(w, size, _abs(w, term))]
    _, total, size = loop(w, SERIES_STEPS, [first, first, first], step)
    return total, size


def _recurred(w: FunctionWriter, alpha: str, b: str, y: str, upper: str, lower: str,
              start: str) -> str:
    """e^(-y/2) M(alpha; b; y) by the recurrence in a, down from `upper` = M(start + 1)
    and `lower` = M(start) (scaled alike) to alpha (no further than RECURRENCE_STEPS)."""
    one = _const(w, 1.0, y)
    steps = _sub(w, start, alpha)

    def step(i: str, values: Leaves) -> Leaves:
        a, upper, lower = values
        go = L.compare(w, _k(w, i, y), steps, "LT", "FLOAT")
        middle = _add(w, _sub(w, _add(w, a, a), b), y)
        below = _div(w, _sub(w, _mul(w, a, upper), _mul(w, middle, lower)), _sub(w, b, a))
        return [L.select(w, go, _sub(w, a, one), a), L.select(w, go, lower, upper),
                L.select(w, go, below, lower)]
    return loop(w, RECURRENCE_STEPS, [start, upper, lower], step)[2]


def _scaled_value(w: FunctionWriter, alpha: str, b: str, y: str, shift: str) -> str:
    """e^(-shift) M(alpha; b; y) from the series or the recurrence, whichever is
    estimated the more accurate."""
    value, size = _series(w, alpha, b, y, shift)
    one = _const(w, 1.0, y)
    fraction = _sub(w, alpha, unary(w, "stablehlo.floor", alpha))
    start = _sub(w, fraction, one)
    upper, _ = _series(w, fraction, b, y, shift)
    lower, _ = _series(w, start, b, y, shift)
    recurred = _recurred(w, alpha, b, y, upper, lower, start)
    nudged = _recurred(w, alpha, b, y, _mul(w, upper, _const(w, 1.0 + NUDGE, y)), lower,
                       start)
    amplification = _div(w, _abs(w, _sub(w, nudged, recurred)),
                         _mul(w, _abs(w, recurred), _const(w, NUDGE, y)))
    cancellation = _div(w, size, _abs(w, value))
    reachable = both(w, is_value(w, alpha, "LT", -1.0),
                     is_value(w, alpha, "GE", -float(RECURRENCE_STEPS)))
    better = L.compare(w, amplification, cancellation, "LT", "FLOAT")
    return L.select(w, both(w, reachable, better), recurred, value)


def _gamma_sign(w: FunctionWriter, z: str) -> str:
    """The sign of Gamma(z) off its poles: 1 for z > 0, else -1 where floor(z) is odd."""
    floor = unary(w, "stablehlo.floor", z)
    half = unary(w, "stablehlo.floor", _mul(w, floor, _const(w, 0.5, z)))
    odd = L.compare(w, _add(w, half, half), floor, "NE", "FLOAT")
    negative = both(w, odd, is_value(w, z, "LE", 0.0))
    return L.select(w, negative, _const(w, -1.0, z), _const(w, 1.0, z))


def _asymptotic(w: FunctionWriter, a: str, b: str, x: str) -> str:
    """1F1(a; b; x) for x <= -ASYMPTOTIC_FROM: Gamma(b) / Gamma(b - a) |x|^(-a)
    sum_k (a)_k (a - b + 1)_k / k! |x|^(-k) (the e^x part is below float64's reach)."""
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
    total = loop(w, ASYMPTOTIC_STEPS, [one, one], step)[1]
    lgamma = lambda z: unary(w, "chlo.lgamma", z)  # noqa: E731
    b_minus_a = _sub(w, b, a)
    size = _exp(w, _sub(w, _sub(w, lgamma(b), lgamma(b_minus_a)),
                        _mul(w, a, unary(w, "stablehlo.log", y))))
    sign = _mul(w, _gamma_sign(w, b), _gamma_sign(w, b_minus_a))
    return _mul(w, _mul(w, sign, size), total)


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
    scale = _exp(w, L.select(w, negative, unary(w, "stablehlo.negate", half), shift))
    value = _mul(w, _scaled_value(w, alpha, b, y, shift), scale)
    value = L.select(w, is_value(w, x, "LE", -ASYMPTOTIC_FROM), _asymptotic(w, a, b, x),
                     value)
    # scipy (boost's overflow error) gives +inf for an overflowing value of either sign
    # (here inf, or NaN from inf - inf or 0 * inf in the series at x > 0).
    overflow = either(w, _is_inf(w, value), both(w, _is_nan(w, value),
                                                  is_value(w, x, "GT", 0.0)))
    value = L.select(w, overflow, _const(w, np.inf, x), value)
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


def _derivative_series(w: FunctionWriter, a: str, b: str, x: str) -> tuple[str, str]:
    """(d/da, d/db) of sum_k (a)_k / (b)_k x^k / k! for x >= 0 as the kernel sums them
    (its `_series([a], [b], x)`), NaN where not converged in DERIVATIVE_STEPS steps."""
    zero, one = _const(w, 0.0, x), _const(w, 1.0, x)
    eps = _const(w, _EPS, x)

    def small(d: str, total: str) -> str:
        return L.compare(w, _abs(w, d), _mul(w, eps, _abs(w, total)), "LE", "FLOAT")

    def step(i: str, values: Leaves) -> Leaves:
        term, value, d_a, d_b, sum_a, sum_b, quiet = values
        k = _k(w, i, x)
        b_k = _add(w, b, k)
        scale = _div(w, _div(w, x, _add(w, k, one)), b_k)
        ratio = _mul(w, scale, _add(w, a, k))
        d_a = _add(w, _mul(w, d_a, ratio), _mul(w, term, scale))
        d_b = _add(w, _mul(w, d_b, ratio), _mul(w, term, unary(
            w, "stablehlo.negate", _div(w, ratio, b_k))))
        sum_a, sum_b = _add(w, sum_a, d_a), _add(w, sum_b, d_b)
        term = _mul(w, term, ratio)
        value = _add(w, value, term)
        settled = both(w, both(w, small(d_a, sum_a), small(d_b, sum_b)), small(term, value))
        quiet = L.select(w, settled, _add(w, quiet, one), zero)
        return [term, value, d_a, d_b, sum_a, sum_b, quiet]
    state = loop(w, DERIVATIVE_STEPS, [one, one, zero, zero, zero, zero, zero], step)
    converged = is_value(w, state[6], "GE", 2.0)
    nan = _const(w, np.nan, x)
    return L.select(w, converged, state[4], nan), L.select(w, converged, state[5], nan)


def _derivatives(w: FunctionWriter, a: str, b: str, x: str) -> tuple[str, str]:
    """(d/da, d/db) of 1F1(a; b; x): for x < 0, from F = e^x G(b - a; b; -x),
    dF/da = -e^x G_1 and dF/db = e^x (G_1 + G_2)."""
    finite = both(w, both(w, is_value(w, _abs(w, a), "LT", np.inf),
                          is_value(w, _abs(w, b), "LT", np.inf)),
                  is_value(w, _abs(w, x), "LT", np.inf))
    # Non-finite operands are summed at harmless values, then made NaN (as the kernel).
    one = _const(w, 1.0, x)
    a, b = L.select(w, finite, a, one), L.select(w, finite, b, one)
    x = L.select(w, finite, x, _const(w, 0.0, x))
    flip = is_value(w, x, "LT", 0.0)
    first, second = _derivative_series(w, L.select(w, flip, _sub(w, b, a), a), b, _abs(w, x))
    scale = _exp(w, x)
    d_a = L.select(w, flip, unary(w, "stablehlo.negate", _mul(w, scale, first)), first)
    d_b = L.select(w, flip, _mul(w, scale, _add(w, first, second)), second)
    nan = _const(w, np.nan, x)
    return L.select(w, finite, d_a, nan), L.select(w, finite, d_b, nan)


HYP1F1_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_hyp1f1": in_float64(_hyp1f1),
    "jaxlite_special_hyp1f1_da": in_float64(lambda w, a, b, x: _derivatives(w, a, b, x)[0]),
    "jaxlite_special_hyp1f1_db": in_float64(lambda w, a, b, x: _derivatives(w, a, b, x)[1]),
}
