"""Special functions: erf, erfc, erf_inv, lgamma, digamma.

float32 erf and erf_inv are XLA's own kernels (xla_kernels.py), so that jitted code gives
JAX's values bit for bit. float64 erf is x + x P(x^2) below 0.84375 and 1 - erfc above;
float64 erfc is
(1 - x) - x P(x^2) below 0.84375 (1 - x exact, no cancellation) and
erfc(x) = exp(-x^2) R(1/x^2) / x above, with R rational on two pieces (its coefficients
chosen per lane by selects) and x^2 split exactly into hi + lo by fma, so that the exponential
sees the exact argument; negative x use erfc(-x) = 2 - erfc(x). float32 erfc is the same with
one rational piece on [0.84375, 10.1] (evaluated in float64).

float64 erf_inv(x) = x p(w) with w = -log((1 - x)(1 + x)) and p a polynomial in w or sqrt(w)
on three pieces (the arrangement of M. Giles, "Approximating the erfinv function", with our
own coefficients).

lgamma and digamma live in _gamma.py (float64 algorithms; float32 runs them in float64).
"""
from __future__ import annotations

from . import xla_kernels
from ._gamma import digamma, lgamma
from ._ir import (
    INF,
    V,
    clamp,
    coeffs,
    copysign,
    fabs,
    fma,
    horner,
    rational,
    select,
    sqrt,
    two_prod,
)
from .exp_log import exp_core, exp_limits, log

ERF_SMALL = {"float": 1.0, "double": 0.84375}

def _erf_small(a: V) -> V:
    return fma(a, horner(a * a, coeffs("erf", a.elem)), a)


ERFC_TOP = {"float": 10.1, "double": 28.0}  # erfc rounds to 0 beyond


def _erfc_big(a: V) -> V:
    """erfc(a) for a >= 0.84375 (finite results for smaller a, unused).

    erfc(a) = exp(-a^2) P(s) / (Q(s) a), s = 1/a^2. Every coefficient of P and Q is positive,
    so they do not cancel; float64 picks the coefficients of one of two pieces per lane by
    selects, float32 has one piece and evaluates P / (Q a) in float64 (in float32 its rounding
    errors alone reach 3 ulp). a^2 = hi + lo exactly, and the exponential takes lo into its
    reduced argument and the factor P/(Q a) before its final scaling.
    """
    b = a.b
    elem = a.elem
    ac = clamp(a, ERF_SMALL["double"], ERFC_TOP[elem])
    hi, lo = two_prod(ac, ac)
    s = 1.0 / hi
    if elem == "float":
        p, q = rational("erfc", elem)
        sd, ad = b.cast("fpext", s, "double"), b.cast("fpext", ac, "double")
        factor = b.cast("fptrunc", horner(sd, p) / (horner(sd, (1.0, *q)) * ad), "float")
    else:
        first = ac < 2.0
        (pa, qa), (pb, qb) = rational("erfca", elem), rational("erfcb", elem)
        num = b.const(elem, 0.0)
        for ka, kb in zip(reversed(pa), reversed(pb), strict=True):
            num = fma(num, s, select(first, b.const(elem, ka), kb))
        den = b.const(elem, 0.0)
        for ka, kb in zip(reversed(qa), reversed(qb), strict=True):
            den = fma(den, s, select(first, b.const(elem, ka), kb))
        factor = num / (fma(den, s, 1.0) * ac)
    lowest, _ = exp_limits(elem)
    return exp_core(clamp(-hi, lowest, 0.0), lo=-lo, factor=factor)


def erf(x: V) -> V:
    """The error function.

    Accuracy: f32 <= 5.5 ulp (measured 5.09: XLA's kernel, for JAX's values bit for bit);
    f64 <= 2 ulp (measured 1.29).
    """
    if x.elem == "float":
        return xla_kernels.erf_f32(x)  # XLA's own kernel: JAX's values bit for bit
    a = fabs(x)
    small = a < ERF_SMALL["double"]
    return copysign(select(small, _erf_small(a), 1.0 - _erfc_big(a)), x)


def erfc(x: V) -> V:
    """The complementary error function 1 - erf(x), accurate in the tail.

    Accuracy: f32 <= 2.5 ulp (measured 1.89); f64 <= 4.5 ulp (measured 3.92).
    """
    a = fabs(x)
    small = a < ERF_SMALL["double"]
    p = a * horner(a * a, coeffs("erf", x.elem))   # erf(a) = a + p; 1 - a is exact
    big = _erfc_big(a)
    positive = select(small, (1.0 - a) - p, big)
    negative = select(small, (1.0 + a) + p, 2.0 - big)
    return select(x < 0.0, negative, positive)


ERFINV_PIECES = {  # (first w of the piece, variable, centre): must match tools/fit_vecmath.py
    "float": [(0.0, "w", 2.5), (5.0, "sqrt", 3.0)],
    "double": [(0.0, "w", 3.125), (6.25, "sqrt", 3.25), (16.0, "sqrt", 5.0)],
}


def erf_inv(x: V) -> V:
    """The inverse error function; +-inf at +-1, NaN outside [-1, 1].

    Accuracy: f32 <= 66 ulp (measured 64.7 near |x| = 1: XLA's kernel, which forms 1 - x^2 in
    float32, for JAX's values bit for bit); f64 <= 3 ulp (measured 2.30).
    """
    elem = x.elem
    if elem == "float":
        return xla_kernels.erf_inv_f32(x)  # XLA's own kernel: JAX's values bit for bit
    a = fabs(x)
    w = -log((1.0 - a) * (1.0 + a))
    root = sqrt(w)
    res = None
    for i, (start, kind, centre) in enumerate(ERFINV_PIECES[elem]):
        u = (w if kind == "w" else root) - centre
        p = horner(u, coeffs(f"erfinv{i}", elem))
        res = p if res is None else select(w >= start, p, res)
    res = select(a.eq(1.0), x.b.const(elem, INF), a * res)
    return copysign(res, x)


FUNCTIONS = {"erf": erf, "erfc": erfc, "erf_inv": erf_inv, "lgamma": lgamma,
             "digamma": digamma}
