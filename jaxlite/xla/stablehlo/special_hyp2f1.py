"""jaxlite's Gauss hypergeometric kernel `hyp2f1` (scipy.special.hyp2f1 with JAX's edge
values, see `jaxlite.scipy._special_hypergeometric`) printed as standard ops, in float64.

The power series 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k! converges for
|x| < 1 but loses digits near x = 1, for large or alternating terms, and not at all
beyond. So several exact transformations are formed for every element, each summed by
the one stacked series loop (`special_hyp2f1_series.series`), each with its estimated
relative rounding error eps max|term| / |value| (+ eps per step, + the cancellation
between the two terms of a two-term form), and the element takes the candidate with the
smallest estimate (Abramowitz & Stegun 15.3.3-15.3.12; s = 1 - x):

    direct       F(a, b; c; x)                                    |x| < 1, x = -1, polynomials
    Euler        s^(c-a-b) F(c - a, c - b; c; x)                  the same, c - a or c - b <= 0 whole
    Pfaff        s^-a F(a, c - b; c; z) and s^-b F(c - a, b; c; z), z = x / (x - 1)   x < 0
    1 - z        G(c)G(d)/(G(c-a)G(c-b)) F(a, b; 1 - d; 1 - z)
                 + (1 - z)^d G(c)G(-d)/(G(a)G(b)) F(c - a, c - b; d + 1; 1 - z)
                 for z = x (or Pfaff's z, parameters (a, c - b)) in (0.5, 1), d = c - a - b
                 not whole; for whole d the logarithmic limit (`series.logarithmic`)
    1 / x        G(c)G(b-a)/(G(b)G(c-a)) (-x)^-a F(a, 1 - c + a; 1 - b + a; 1/x) + (a <-> b)
                 for x < -1, b - a not whole

Polynomials (a or b a whole number <= 0) are summed directly everywhere, as scipy does
(NaN at x = +-inf where scipy's recurrence in a takes over: degree > 2 and |c - a| > 2).
x = 1 is Gauss's G(c)G(d)/(G(c-a)G(c-b)) (d > 0; inf for -1 < d <= 0, and Euler's
s^d times that of (c - a, c - b) for d <= -1); x > 1 is inf, times s^d where Euler's
transformation applies; x = -inf is the limit of the 1/x form (0 or +-inf, NaN where
b - a is whole, as scipy). Parameters within 1e-13 of a whole number count as whole
(scipy's rule). Then the kernel's edges: inf at c = 0, -1, ..., at x = 1 with
c - a - b <= 0 and beyond 1, 1 at x = 0 or a = 0 or b = 0, and JAX's 1 for a NaN x.

Where this differs from the kernel (measured against mpmath at 30 digits, see
tests/xla/test_stablehlo_hyp2f1_xla.py):

- where scipy itself is inaccurate: its recurrence in a for |a| > |c| + 1 (e.g.
  hyp2f1(-7.5, 6.2, -0.5, 0.97): scipy 1.77936267241, mpmath 1.77936265808, relative
  error 8e-9) and its 1/x form and Pfaff's series with large negative a, b at x <= -5
  (up to 2e-9). Here the candidate with the smallest error estimate is accurate to about
  1e-13 there, so the numbers are mpmath's, not scipy's. On a grid of a, b in
  [-7.5, 6.2], c in [-4.5, 9.3], x in [-30, 1] that is 30 of 20570 points; everywhere
  else the two agree to 1e-11.
- where no form is known accurate (every usable estimate above ERROR_LIMIT, a
  polynomial whose sum cancels beyond it): NaN, not a number that may be wrong in every
  digit. The series do not stop before k passes -a, -b and -c, where a term may spike
  again; Euler's polynomial (c - a or c - b whole <= 0) and the logarithmic form's finite
  sum carry the estimate of their cancellation like every other sum (taken as exact, they
  once won where they cancelled: 2F1(-19.33, 19.72; -10.28; 0.8286) was 5.5e11 for
  mpmath's 7.80e10, now NaN). On 3000 random points (|a|, |b|, |c| <= 30 to two
  decimals, x in [-50, 1), numpy's default_rng(0)) that leaves 2851 within 1e-9 of
  mpmath, 135 NaN where mpmath's value is finite and 2 off by more: c - a (c - b) within
  2e-15 of -10 (-17) at x < -20, polynomials by the rule above (as scipy takes them),
  where mpmath sums the exact binary parameters (scipy, the kernel: 932 off by more than
  1e-9). On 1000 points with c in [-30, -10] and x in (0.5, 0.9), half of them with
  c - b whole: 931 within 1e-9, 60 NaN (before: 75 off by more than 1e-9).
- at the zeros of polynomials (2F1(-3, 2; 1; 1) = 0): scipy's recurrence may give 0 and
  the sum 2e-16, or the reverse: equal to rounding, not in relative terms.
- infinite a or b (not polynomials): NaN, where scipy gives +-inf, 1 or NaN depending on
  the branch it takes; c = +inf: 1 for -0.5 <= x < 1, NaN elsewhere (as scipy's series
  and Pfaff's transformation give).
- parameters a rounding away from whole (c - a = -1 + 2e-16): scipy treats such a near-
  polynomial as one in some tests and not in others; this one consistently as one.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter
from jaxlite.xla.stablehlo.special_hyp2f1_grad import HYP2F1_GRAD_EXPANSIONS
from jaxlite.xla.stablehlo.special_hyp2f1_series import (MACHEP, Floats, gamma_ratio,
                                                         logarithmic, series)
from jaxlite.xla.stablehlo.special_igamma import in_float64

__all__ = ["HYP2F1_EXPANSIONS", "SERIES_STEPS", "ERROR_LIMIT", "scipy_hyp2f1"]

SERIES_STEPS = 10000   # scipy's own limit: enough for x up to about 0.997
ERROR_LIMIT = 1e-12    # the largest estimated relative error of a value given as a number
_INF = np.inf


def _two_terms(f: Floats, first: str, second: str, errors: list[str]) -> tuple[str, str]:
    """first + second, with its relative error: each term's own (its series' and a
    rounding) in proportion to the term, relative to the sum (which may cancel)."""
    value = f.add(first, second)
    spread = f.add(f.mul(f.abs(first), f.add(errors[0], MACHEP)),
                   f.mul(f.abs(second), f.add(errors[1], MACHEP)))
    return value, f.div(spread, f.abs(value))


def _best(f: Floats, candidates: list[tuple[str, str, str]]) -> tuple[str, str]:
    """The value and error estimate of the candidate (value, error, usable) with the
    smallest error among the usable ones with a finite value; the first candidate (and an
    infinite error) where none is."""
    value, error = candidates[0][0], f.of(_INF)
    for v, e, usable in candidates:
        ok = f.all(usable, f.cmp(f.abs(v), "LT", _INF))
        e = f.where(ok, e, _INF)
        better = f.cmp(e, "LT", error)
        value, error = f.where(better, v, value), f.where(better, e, error)
    return value, error


class _Arguments:
    """The operands and the quantities every form needs."""

    def __init__(self, f: Floats, a: str, b: str, c: str, x: str) -> None:
        self.a, self.b, self.c, self.x = a, b, c, x
        self.s = f.sub(1.0, x)
        self.d = f.sub(f.sub(c, a), b)
        self.polynomial = f.any(f.nonpositive_integer(a), f.nonpositive_integer(b))
        self.c_minus = f.any(f.nonpositive_integer(f.sub(c, a)),
                             f.nonpositive_integer(f.sub(c, b)))
        self.negative = f.all(f.no(self.polynomial), f.cmp(x, "LT", 0.0))
        self.z = f.where(self.negative, f.div(x, f.sub(x, 1.0)), x)
        # where the series in x converges (scipy's x = 1 is Gauss's value)
        self.inside = f.any(f.cmp(f.abs(x), "LT", 1.0), f.cmp(x, "EQ", -1.0))


def _gated(f: Floats, use: str, z: str) -> str:
    """z where the form is used, else 0 (its series then stops at once)."""
    return f.where(use, z, 0.0)


def _candidates(f: Floats, g: _Arguments) -> list[tuple[str, str, str]]:
    a, b, c, x, s, d, z = g.a, g.b, g.c, g.x, g.s, g.d, g.z
    ordinary = f.no(g.polynomial)
    # the 1 - z forms work on (A, B; c; z): Pfaff's (a, c - b) where x < 0
    big_b = f.where(g.negative, f.sub(c, b), b)
    prefactor = f.where(g.negative, f.pow(s, f.neg(a)), 1.0)
    big_d = f.sub(f.sub(c, a), big_b)
    y = f.sub(1.0, z)
    whole = f.near_integer(big_d)
    near_one = f.all(ordinary, f.no(g.c_minus), f.cmp(z, "GT", 0.5), f.cmp(z, "LT", 1.0))
    use = {"euler": f.all(ordinary, f.any(g.inside, g.c_minus)),
           "direct": f.any(g.polynomial, g.inside),
           "pfaff": g.negative,
           "one_minus": f.all(near_one, f.no(whole)),
           "inverse": f.all(ordinary, f.cmp(x, "LT", -1.0), f.no(f.near_integer(f.sub(b, a))))}
    inverse = f.div(1.0, x)
    terms = series(f.w, [
        (f.sub(c, a), f.sub(c, b), c, _gated(f, use["euler"], x)),
        (a, b, c, _gated(f, use["direct"], x)),
        (a, f.sub(c, b), c, _gated(f, use["pfaff"], z)),
        (f.sub(c, a), b, c, _gated(f, use["pfaff"], z)),
        (a, big_b, f.sub(1.0, big_d), _gated(f, use["one_minus"], y)),
        (f.sub(c, a), f.sub(c, big_b), f.add(1.0, big_d), _gated(f, use["one_minus"], y)),
        (a, f.add(f.sub(1.0, c), a), f.add(f.sub(1.0, b), a), _gated(f, use["inverse"],
                                                                      inverse)),
        (b, f.add(f.sub(1.0, c), b), f.add(f.sub(1.0, a), b), _gated(f, use["inverse"],
                                                                      inverse)),
    ], SERIES_STEPS)
    (euler, e_euler), (direct, e_direct), (pfaff_a, e_pfaff_a), (pfaff_b, e_pfaff_b) = \
        terms[:4]
    first = f.mul(gamma_ratio(f, [c, big_d], [f.sub(c, a), f.sub(c, big_b)]), terms[4][0])
    second = f.mul(f.mul(f.pow(y, big_d), gamma_ratio(f, [c, f.neg(big_d)], [a, big_b])),
                   terms[5][0])
    one_minus, e_one_minus = _two_terms(f, first, second, [terms[4][1], terms[5][1]])
    from_a = f.mul(gamma_ratio(f, [c, f.sub(b, a)], [b, f.sub(c, a)]),
                   f.mul(terms[6][0], f.pow(f.neg(x), f.neg(a))))
    from_b = f.mul(gamma_ratio(f, [c, f.sub(a, b)], [a, f.sub(c, b)]),
                   f.mul(terms[7][0], f.pow(f.neg(x), f.neg(b))))
    inverted, e_inverted = _two_terms(f, from_a, from_b, [terms[6][1], terms[7][1]])
    # whole d: the logarithmic form, of Euler's (c - A, c - B) where d < 0
    use_log = f.all(near_one, whole)
    m = f.round(big_d)
    flip = f.cmp(m, "LT", 0.0)
    log_value, e_log = logarithmic(
        f, f.where(flip, f.sub(c, a), a), f.where(flip, f.sub(c, big_b), big_b),
        f.where(use_log, f.abs(m), 0.0), f.where(use_log, y, 0.5), SERIES_STEPS)
    log_value = f.mul(log_value, f.where(flip, f.pow(y, big_d), 1.0))
    return [(f.mul(euler, f.pow(s, d)), e_euler, use["euler"]),
            (direct, e_direct, use["direct"]),
            (f.mul(pfaff_a, f.pow(s, f.neg(a))), e_pfaff_a, use["pfaff"]),
            (f.mul(pfaff_b, f.pow(s, f.neg(b))), e_pfaff_b, use["pfaff"]),
            (f.mul(prefactor, one_minus), e_one_minus, use["one_minus"]),
            (f.mul(prefactor, log_value), e_log, use_log),
            (inverted, e_inverted, use["inverse"])]


def _at_one(f: Floats, g: _Arguments) -> str:
    """Gauss's value at x = 1: G(c)G(d)/(G(c-a)G(c-b)) for d > 0, inf for -1 < d <= 0,
    inf times that of Euler's (c - a, c - b) for d <= -1 (scipy's sign)."""
    a, b, c, d = g.a, g.b, g.c, g.d
    positive = gamma_ratio(f, [c, d], [f.sub(c, a), f.sub(c, b)])
    euler = f.mul(_INF, gamma_ratio(f, [c, f.neg(d)], [a, b]))
    return f.where(f.cmp(d, "GT", 0.0), positive,
                   f.where(f.cmp(d, "LE", -1.0), euler, _INF))


def _at_minus_infinity(f: Floats, g: _Arguments) -> str:
    """The 1/x form's limit, every series 1: G(c)G(b-a)/(G(b)G(c-a)) inf^-a + (a <-> b),
    NaN where b - a is whole; after Euler's transformation (times inf^d = 0) for
    d <= -1, as scipy takes it."""
    c, d = g.c, g.d
    euler = f.cmp(d, "LE", -1.0)
    a, b = f.where(euler, f.sub(c, g.a), g.a), f.where(euler, f.sub(c, g.b), g.b)
    infinity = f.of(_INF)
    value = f.add(f.mul(gamma_ratio(f, [c, f.sub(b, a)], [b, f.sub(c, a)]),
                        f.pow(infinity, f.neg(a))),
                  f.mul(gamma_ratio(f, [c, f.sub(a, b)], [a, f.sub(c, b)]),
                        f.pow(infinity, f.neg(b))))
    value = f.where(f.near_integer(f.sub(b, a)), np.nan, value)
    return f.mul(value, f.where(euler, 0.0, 1.0))


def scipy_hyp2f1(f: Floats, a: str, b: str, c: str, x: str) -> str:
    """scipy.special.hyp2f1(a, b, c, x) of real float64 values (see the module docstring)."""
    g = _Arguments(f, a, b, c, x)
    candidates = _candidates(f, g)
    # polynomials: their direct sum, even where it overflows (x = +-inf)
    best, error = _best(f, candidates)
    ordinary = f.no(g.polynomial)
    # Where no form is known accurate (every estimate above ERROR_LIMIT, or none usable)
    # the value is NaN, not a number that may be wrong in every digit.
    best = f.where(f.all(ordinary, f.no(f.cmp(error, "LE", ERROR_LIMIT))), np.nan, best)
    direct, direct_error = candidates[1][0], candidates[1][1]
    # (a polynomial that cancels to nothing may sum to exactly 0)
    unsure = f.all(f.no(f.cmp(direct_error, "LE", ERROR_LIMIT)), f.cmp(direct, "NE", 0.0),
                   f.cmp(f.abs(direct), "LT", _INF), f.cmp(f.abs(x), "LT", _INF))
    value = f.where(g.polynomial, f.where(unsure, np.nan, direct), best)
    value = f.where(f.all(ordinary, f.cmp(x, "EQ", 1.0)), _at_one(f, g), value)
    beyond = f.all(ordinary, f.no(g.c_minus), f.cmp(x, "GT", 1.0))
    value = f.where(beyond, f.mul(f.pow(g.s, g.d), _INF), value)
    value = f.where(f.all(ordinary, f.cmp(x, "EQ", -_INF)), _at_minus_infinity(f, g), value)
    value = f.where(f.all(ordinary, f.cmp(x, "EQ", _INF)), np.nan, value)
    # 2F1(a, b; b; x) = s^-a where the series converges (scipy's shortcut)
    small = f.any(f.cmp(f.abs(x), "LT", 1.0), f.cmp(x, "EQ", -1.0))
    for p, q in ((a, b), (b, a)):
        same = f.all(small, f.cmp(f.abs(f.sub(q, c)), "LT", 1e-13))
        value = f.where(same, f.pow(g.s, f.neg(p)), value)
    # scipy's series turns to a recurrence in the parameter of larger size (in the
    # shorter polynomial's degree) when that is > 2, away from c: NaN at x = +-inf
    swap = f.cmp(f.abs(b), "GT", f.abs(a))
    large, other = f.where(swap, b, a), f.where(swap, a, b)
    shorter = f.all(f.nonpositive_integer(other), f.cmp(f.abs(other), "LT", f.abs(large)))
    lead = f.where(shorter, other, large)
    recurrence = f.all(g.polynomial, f.any(shorter, f.cmp(f.abs(lead), "GT", f.add(
        f.abs(c), 1.0))), f.cmp(f.abs(f.sub(c, lead)), "GT", 2.0),
                       f.cmp(f.abs(lead), "GT", 2.0))
    unbounded = f.any(f.cmp(f.abs(x), "EQ", _INF), f.cmp(f.abs(c), "EQ", _INF))
    value = f.where(f.all(recurrence, unbounded), np.nan, value)
    # infinite parameters: polynomials as their series gives them, else as described
    infinite_c = f.all(ordinary, f.cmp(f.abs(c), "EQ", _INF))
    plain = f.all(f.cmp(c, "GT", 0.0), f.cmp(x, "GE", -0.5), f.cmp(x, "LT", 1.0))
    value = f.where(infinite_c, f.where(plain, 1.0, np.nan), value)
    infinite = f.all(ordinary, f.any(f.cmp(f.abs(a), "EQ", _INF), f.cmp(f.abs(b), "EQ", _INF)))
    unknown = f.any(infinite, f.is_nan(a), f.is_nan(b), f.is_nan(c), f.is_nan(x))
    value = f.where(unknown, np.nan, value)
    # at x = 1, c - a or c - b <= 0 whole, scipy's test d >= 0 fails for a NaN d: inf
    value = f.where(f.all(g.c_minus, f.is_nan(g.d), f.cmp(x, "EQ", 1.0)), _INF, value)
    trivial = f.all(f.any(f.cmp(a, "EQ", 0.0), f.cmp(b, "EQ", 0.0)), f.cmp(c, "NE", 0.0))
    return f.where(f.any(trivial, f.cmp(x, "EQ", 0.0)), 1.0, value)


def _whole(f: Floats, v: str) -> str:
    return f.cmp(f.floor(v), "EQ", v)


def _hyp2f1(w: FunctionWriter, a: str, b: str, c: str, x: str) -> str:
    """The kernel: scipy's value with JAX's edges (the kernel's own tests, exactly)."""
    f = Floats(w, L.shape_of(w, x))
    value = scipy_hyp2f1(f, a, b, c, x)
    d = f.sub(f.sub(c, a), b)
    not_whole = f.cmp(f.abs(f.sub(d, f.round(d))), "GE", 50 * np.finfo(np.float64).eps)
    euler = f.all(f.cmp(d, "LE", -1.0), f.no(f.all(not_whole, f.cmp(x, "GT", 1.0))))
    pole = f.any(f.cmp(c, "EQ", 0.0), f.all(f.cmp(c, "LT", 0.0), _whole(f, c)))
    infinite = f.any(pole, f.all(f.no(euler), f.any(
        f.all(f.cmp(d, "LE", 0.0), f.cmp(x, "EQ", 1.0)), f.cmp(x, "GT", 1.0))))
    value = f.where(infinite, _INF, value)
    terminating = f.any(*(f.all(f.cmp(p, "LE", 0.0), _whole(f, p)) for p in (a, b)))
    equal = f.all(f.any(f.cmp(b, "EQ", c), f.cmp(a, "EQ", c)), f.cmp(x, "LT", 1.0))
    summed = f.all(f.no(euler), f.no(infinite), f.no(equal), f.no(terminating), f.is_nan(x))
    value = f.where(summed, 1.0, value)
    trivial = f.all(f.any(f.cmp(a, "EQ", 0.0), f.cmp(b, "EQ", 0.0)), f.cmp(c, "NE", 0.0))
    return f.where(f.any(trivial, f.cmp(x, "EQ", 0.0)), 1.0, value)


HYP2F1_EXPANSIONS = {
    "jaxlite_special_hyp2f1": in_float64(_hyp2f1),
    **HYP2F1_GRAD_EXPANSIONS,
}
