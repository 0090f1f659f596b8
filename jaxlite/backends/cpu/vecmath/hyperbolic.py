"""Hyperbolic functions and the logistic sigmoid: tanh, logistic, sinh, cosh.

float32 tanh is a minimax rational function T(z) = z P(z^2) / Q(z^2) ~ tanh(z) on [0, 4.5],
used through the doubling formula tanh(x) = 2T / (1 + T^2) at z = x/2, on x clamped to
[-9, 9] (tanh rounds to +-1 beyond 9.01; XLA saturates from 9, and so does the formula at
the clamp): with T = n/d, tanh(x) = 2nd / (n^2 + d^2), one division. The formula damps
the rounding errors of P and Q near saturation, where a plain rational on [0, 9] reaches
~5 ulp (its derivative in T vanishes at T = 1); it is odd in x as written, so it needs no
copysign: 14 multiply-adds, multiplies and adds, a
division and the two comparisons of the clamp, which keeps a tanh-GELU kernel fast (a
select of x itself for tiny x, as XLA's tanh has, cost a gelu kernel 20 % on AVX2).
float64 tanh is expm1(2|x|) / (expm1(2|x|) + 2) with the sign copied back.

logistic(x) = 1 / (1 + e^-|x|) for x >= 0 and e^-|x| / (1 + e^-|x|) below, so it never
overflows and keeps full relative accuracy down to the subnormals. sinh uses an odd
polynomial below 1 and (h - 1/(4h)) with h = e^|x| / 2 above (the halving goes into the
exponent, so sinh and cosh overflow only where their value does); cosh is h + 1/(4h).
"""
from __future__ import annotations

from ._ir import (
    V,
    clamp,
    coeffs,
    copysign,
    fabs,
    fma,
    horner,
    minimum,
    pow2,
    rational,
    select,
)
from .exp_log import exp_core, exp_limits, expm1_reduced


# Scales n and d of float32 tanh: it moves the values that are rounded (n, d, n^2, d^2)
# within their binades, which keeps the error of the doubling formula near 3 ulp instead of
# 5, and makes the value at the clamp round to exactly 1 (found by a search over the
# scales k/128 in [1, 2) with a numpy model of these operations, then 3.33 ulp on every
# 17th float32 below 9.5). Doubled to 3.6875, which rounds exactly alike, so that n stays
# above x: at 1.84375 n fell below the smallest normal for x near it, and compiled code
# flushes subnormals to zero (tanh(1.2e-38) came out 0).
_TANH_SCALE = 3.6875


def tanh(x: V) -> V:
    """Hyperbolic tangent.

    Accuracy: f32 <= 4 ulp (measured 3.30 on every 13th float32 in [0, 10]); f64 <= 3 ulp
    (measured 2.31).
    """
    if x.elem == "float":
        p, q = rational("tanh", "float")
        z = clamp(x, -9.0, 9.0)  # NaN stays NaN
        # T = tanh(z/2) = n/d with n = (z/2) P(z^2/4), d = Q(z^2/4), both scaled by c (the
        # halvings folded into the coefficients; c * 1 and the powers of 1/4 are exact).
        u = z * z
        n = z * horner(u, [_TANH_SCALE * 0.5 * c * 0.25 ** k for k, c in enumerate(p)])
        d = horner(u, [_TANH_SCALE * c * 0.25 ** k for k, c in enumerate((1.0, *q))])
        # Below XLA's 0.0004, x itself (within 0.9 ulp): n falls below the smallest normal
        # for x near it, and compiled code flushes subnormals to zero.
        return ((n + n) * d) / fma(n, n, d * d)
    a = fabs(x)
    k, em = expm1_reduced(minimum(a + a, 44.0))
    s = pow2(k, x.elem)
    e = fma(s, em, s - 1.0)
    return copysign(e / (e + 2.0), x)


def logistic(x: V) -> V:
    """The logistic sigmoid 1 / (1 + e**-x).

    Accuracy: f32 <= 3 ulp (measured 2.31); f64 <= 3 ulp (measured 2.36).
    """
    lo, _ = exp_limits(x.elem)
    e = exp_core(clamp(-fabs(x), lo, 0.0), precise=x.elem == "double")  # e^-|x|, NaN stays
    num = select(x < 0.0, e, 1.0)
    return num / (e + 1.0)


def _half_exp(a: V) -> V:
    """e**a / 2 for a >= 0 (inf where it overflows)."""
    hi = 90.0 if a.elem == "float" else 711.0
    return exp_core(minimum(a, hi), extra=-1, precise=a.elem == "double")


def sinh(x: V) -> V:
    """Hyperbolic sine.

    Accuracy: f32 <= 2 ulp (measured 1.61); f64 <= 2 ulp (measured 1.57).
    """
    a = fabs(x)
    h = _half_exp(a)
    big = h - 0.25 / h
    small = fma(a * (a * a), horner(a * a, coeffs("sinh", x.elem)), a)
    return copysign(select(a < 1.0, small, big), x)


def cosh(x: V) -> V:
    """Hyperbolic cosine.

    Accuracy: f32 <= 2 ulp (measured 1.44); f64 <= 2 ulp (measured 1.42).
    """
    h = _half_exp(fabs(x))
    return h + 0.25 / h


FUNCTIONS = {"tanh": tanh, "logistic": logistic, "sinh": sinh, "cosh": cosh}
