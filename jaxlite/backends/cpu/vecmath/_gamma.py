"""lgamma and digamma (float64 algorithms; float32 runs them in float64 and rounds once).

lgamma(x) for x > 0: a polynomial lgamma(2 + t) = t P(t) on |t| <= 1/2, reached by the
recurrence lgamma(x) = lgamma(x + 1) - log(x) (x < 1.5) or lgamma(x - 1) + log(x - 1)
(2.5 <= x < 8; the factors are multiplied and take one logarithm), with t computed exactly as
x minus an integer, so that the zeros at 1 and 2 keep full relative accuracy; for x >= 8
Stirling's series (x - 1/2)(log x - 1) + (log(2 pi) - 1)/2 + S(1/x^2)/x with a fitted S.
x < 0 uses the reflection lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x), with
sin(pi x) from x - round(x) (exact) and polynomials for sin(pi r), cos(pi r) on |r| <= 1/4.

digamma(x) for x > 0: (t - t0) P(t - 1/2) on x = 1 + t in [1, 2) (t0 + 1 = 1.4616... is the
positive zero, t0 subtracted in two parts), the recurrence digamma(x) = digamma(x - 1) +
1/(x - 1) up to x < 10 (and digamma(x + 1) - 1/x below 1), and log x - 1/(2x) - S(1/x^2)/x^2
from 10 on; x < 0 reflects: digamma(x) = digamma(1 - x) - pi cot(pi x).

Special values as XLA: lgamma is +inf at 0, at the negative integers and at +-inf;
digamma is NaN at 0 and the negative integers (poles) and at -inf, +inf at +inf.
"""
from __future__ import annotations

from ._ir import INF, NAN, V, coeffs, fabs, floor, fma, horner, parts, rint, select
from .exp_log import log, log_dd

STIRLING_FROM = 8.0
DIGAMMA_TAIL_FROM = 10.0


def _sinpi_cospi(r: V) -> tuple[V, V]:
    """(sin(pi r), cos(pi r)) for |r| <= 1/4."""
    z = r * r
    s = r * horner(z, coeffs("sinpi", "double"))
    c = fma(z, horner(z, coeffs("cospi", "double")), 1.0)
    return s, c


def _reflect(x: V) -> tuple[V, V, V]:
    """(r, cos_part, sin_part) for r = x - round(x) (exact): |sin(pi x)| = sin_part and
    |cot(pi r)| = cos_part / sin_part (for |r| > 1/4 through 1/2 - |r|)."""
    r = x - rint(x)
    ar = fabs(r)
    swap = ar > 0.25
    s, c = _sinpi_cospi(select(swap, 0.5 - ar, ar))
    return r, select(swap, s, c), select(swap, c, s)


def _lgamma_positive(z: V) -> V:
    """lgamma(z) for z > 0 (inf at +inf, NaN for NaN)."""
    b = z.b
    one = b.const("double", 1.0)
    stirling = z >= STIRLING_FROM
    n = floor(z - 1.5)                      # shifts down for 2.5 <= z < 8
    t = select(z < 0.5, z, select(z < 1.5, z - 1.0, z - (n + 2.0)))
    prod = one
    for j in range(6):
        prod = prod * select(n > j, t + (2.0 + j), one)
    arg = select(z < 0.5, z * (1.0 + z), select(z < 1.5, z, select(z < 2.5, one, prod)))
    arg = select(stirling, z, arg)
    lg, lg_lo = log_dd(select((arg > 0.0) & (arg < INF), arg, one))
    lg = select(arg.eq(INF), b.const("double", INF), lg)
    base = t * horner(t, coeffs("lgamma", "double"))
    small = select(z < 1.5, (base - lg) - lg_lo, (base + lg) + lg_lo)
    h, _, _ = parts("half_log_2pi", "double")
    inv = 1.0 / z
    tail = horner(inv * inv, coeffs("stirling", "double")) * inv
    big = fma(z - 0.5, (lg - 1.0) + lg_lo, (h - 0.5) + tail)
    return select(stirling, big, small)


def _log_abs_sinpi(x: V) -> V:
    """log|sin(pi x)| (-inf at the integers); tiny |x - round(x)| is scaled by 2**100 before
    the polynomial so that sin(pi x) does not round in the subnormal range."""
    r = x - rint(x)
    ar = fabs(r)
    swap = ar > 0.25
    arg = select(swap, 0.5 - ar, ar)
    tiny = ar < 2.0 ** -900
    s, c = _sinpi_cospi(arg)
    s_scaled = select(tiny, (arg * 2.0 ** 100) * horner(arg * arg, coeffs("sinpi", "double")), s)
    ln2, _, _ = parts("ln2", "double")
    return log(select(swap, c, s_scaled)) - select(tiny, x.b.const("double", 100 * ln2), 0.0)


def _lgamma_f64(x: V) -> V:
    negative = x < 0.0
    z = select(negative, 1.0 - x, x)
    pos = _lgamma_positive(z)
    lp, _, _ = parts("log_pi", "double")
    neg = (lp - _log_abs_sinpi(x)) - pos
    res = select(negative, neg, pos)
    pole = (x <= 0.0) & floor(x).eq(x)
    return select(pole | fabs(x).eq(INF), INF, res)


def lgamma(x: V) -> V:
    """log |Gamma(x)|.

    Accuracy: f32 <= 1 ulp (measured 0.50); f64 <= 4.5 ulp (measured 3.78); for x < 0 near the
    zeros of lgamma (between the poles) the error is bounded in absolute terms instead:
    |err| <= 2 eps max(1, |lgamma(1 - x)|) (the reflection formula cancels there).
    """
    if x.elem == "float":
        b = x.b
        return b.cast("fptrunc", _lgamma_f64(b.cast("fpext", x, "double")), "float")
    return _lgamma_f64(x)


def _digamma_positive(z: V) -> V:
    b = z.b
    zero = b.const("double", 0.0)
    tail = z >= DIGAMMA_TAIL_FROM
    n = select(z < 1.0, zero, floor(z) - 1.0)  # shifts down, 0..8
    t = select(z < 1.0, z, z - (n + 1.0))
    t0h, t0l, _ = parts("digamma_zero", "double")
    base = ((t - (t0h - 1.0)) - t0l) * horner(t - 0.5, coeffs("digamma", "double"))
    total = select(z < 1.0, -1.0 / z, zero)
    for j in range(1, int(DIGAMMA_TAIL_FROM) - 1):
        total = total + select(n >= j, 1.0 / (t + float(j)), zero)
    inv = 1.0 / z
    w = inv * inv
    asym = (log(z) - 0.5 * inv) - w * horner(w, coeffs("digammatail", "double"))
    return select(tail, asym, base + total)


def _digamma_f64(x: V) -> V:
    negative = x < 0.0
    z = select(negative, 1.0 - x, x)
    pos = _digamma_positive(z)
    r, c, s = _reflect(x)
    cot = c / s
    cot = select(r < 0.0, -cot, cot)
    pih, _, _ = parts("pi", "double")
    res = select(negative, pos - pih * cot, pos)
    pole = (x <= 0.0) & floor(x).eq(x)
    return select(pole, NAN, res)


def digamma(x: V) -> V:
    """The digamma function psi(x) = d/dx log Gamma(x).

    Accuracy: f32 <= 1 ulp (measured 0.50); f64 <= 5 ulp (measured 4.26); for x < 0 near the
    zeros of digamma the error is bounded in absolute terms: |err| <= 4 eps max(1, |psi(1-x)|).
    """
    if x.elem == "float":
        b = x.b
        return b.cast("fptrunc", _digamma_f64(b.cast("fpext", x, "double")), "float")
    return _digamma_f64(x)
