"""Float64 numpy kernels for the parameter derivatives of the hypergeometric functions
1F1(a; b; x) and 2F1(a, b; c; x), which scipy does not provide.

Both series sum t_k = (a)_k (b)_k / (c)_k x^k / k! (without b for 1F1). A derivative in a
parameter differentiates the Pochhammer symbols by the product rule, carried along the
recurrences (a)_(k+1) = (a)_k (a + k) and 1/(c)_(k+1) = 1/(c)_k / (c + k), so that whole
negative parameters (terminating series, whose derivatives do not terminate) need no
digamma and cause no 0 * inf. Terms with a sign change of the summand are kept accurate
by transformations to a positive argument:

- 1F1 at x < 0, Kummer's transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x);
- 2F1 at x < 0, Pfaff's transformation
  2F1(a, b; c; x) = (1 - x)^(-a) 2F1(a, c - b; c; x / (x - 1)), with x / (x - 1) in [0, 1).

Summation stops element by element after two consecutive terms below float64's epsilon
relative to the sum; elements that have not converged after the iteration limit
(arguments near the radius of convergence, x > 0.998 for 2F1, or |x| beyond ~10**4 for
1F1) are nan rather than a truncated, wrong sum.

1F1's series alternate where a < 0 (b - a < 0 after Kummer's transformation), with terms
far above the sum: its derivatives are summed in double-double arithmetic
(`_double_double.py`, about 32 digits), each with its largest term, and are nan where
that exceeds the sum by more than CANCELLATION_LIMIT. On 3000 random points (a in
[-50, 50], b in [-30.5, 60], x in [-100, 100]) none is off from mpmath by more than
5e-13 and 281 (d/da) and 272 (d/db) are nan; the float64 sums had 687 and 677 off by more
than 1e-10 (d/da 1F1(-20.5; 25.3; 30) by 6e-5), 503 and 501 by more than 1e-6.
"""
from __future__ import annotations

import numpy as np

from jaxlite.scipy import _double_double as DD

__all__ = ["CANCELLATION_LIMIT", "hyp1f1_derivatives", "hyp2f1_derivatives"]

_EPS = np.finfo(np.float64).eps
_MAX_TERMS = 20000
# (1F1's derivatives) the largest part of a term over the sum beyond which a
# double-double sum (about 1e-32 of its largest term a step, to 2000 steps and more) is
# not known to float64's precision: nan there. Measured: within 1e-13 of mpmath up to
# 1e18, 3e-8 at 1e24.
CANCELLATION_LIMIT = 1e16


def _series(numerators: list[np.ndarray], denominators: list[np.ndarray],
            x: np.ndarray) -> list[np.ndarray]:
    """The derivatives of sum_k t_k, t_k = prod (p)_k / prod (q)_k x^k / k!, in each
    numerator parameter p, then each denominator parameter q.

    Each term follows from the last by the ratio r_k = prod (p + k) / prod (q + k) x/(k+1);
    its derivative by dt_(k+1) = dt_k r_k + t_k dr_k, with dr_k/dp the ratio without the
    factor (p + k) (well defined where p + k = 0) and dr_k/dq = -r_k / (q + k).
    """
    bad = ~np.isfinite(x) | np.logical_or.reduce(
        [~np.isfinite(p) for p in numerators + denominators])
    # Non-finite entries are summed at harmless values (in no time), then made nan.
    x = np.where(bad, 0.0, x)
    numerators = [np.where(bad, 1.0, p) for p in numerators]
    denominators = [np.where(bad, 1.0, q) for q in denominators]
    term = np.ones_like(x)
    value_sum = np.ones_like(x)
    params = len(numerators) + len(denominators)
    d_terms = [np.zeros_like(x) for _ in range(params)]
    sums = [np.zeros_like(x) for _ in range(params)]
    quiet = np.zeros(x.shape, int)
    for k in range(_MAX_TERMS):
        scale = x / (k + 1)
        for q in denominators:
            scale = scale / (q + k)
        shifted = [p + k for p in numerators]
        ratio = scale * np.prod(shifted, axis=0) if shifted else scale
        d_ratios = [scale * np.prod([v for j, v in enumerate(shifted) if j != i], axis=0)
                    for i in range(len(shifted))]
        d_ratios += [-ratio / (q + k) for q in denominators]
        small = np.ones(x.shape, bool)
        for i in range(params):
            d_terms[i] = d_terms[i] * ratio + term * d_ratios[i]
            sums[i] = sums[i] + d_terms[i]
            small &= np.abs(d_terms[i]) <= _EPS * np.abs(sums[i])
        term = term * ratio
        value_sum = value_sum + term
        small &= np.abs(term) <= _EPS * np.abs(value_sum)
        quiet = np.where(small, quiet + 1, 0)
        if np.all(quiet >= 2):
            break
    return [np.where((quiet >= 2) & ~bad, s, np.nan) for s in sums]


def _hyp1f1_positive(a: np.ndarray, b: np.ndarray,
                     y: np.ndarray) -> tuple[list[DD.Pair], list[np.ndarray]]:
    """([d/da, d/db], [P_a, P_b]) of M = sum_k t_k, t_k = (a)_k / (b)_k y^k / k!, for
    y >= 0, summed in double-double arithmetic (`_double_double.py`): for a < 0 the terms
    alternate while a + k < 0 and grow far beyond the sum (d/da 1F1(-20.5; 25.3; 30):
    terms of 2e5 for a sum of 3e-7), more than float64's 16 digits can cancel.

    dt_(k+1) = dt_k r_k + t_k dr_k as in `_series`, r_k = (a + k) s_k,
    s_k = y / ((b + k)(k + 1)): dr_k/da = s_k, dr_k/db = -r_k / (b + k). P is the largest
    part of a term (|dt_k r_k| + |t_k dr_k|, float64): P / |sum| measures the cancellation.
    Each element stops after two steps whose terms are below float64's epsilon relative to
    the sums, once k has passed -a and -b (before that a term may still spike, where
    b + k nears 0); NaN where that has not happened in _MAX_TERMS steps or a sum is not
    finite.
    """
    bad = ~np.isfinite(y) | ~np.isfinite(a) | ~np.isfinite(b)
    # Non-finite entries are summed at harmless values (in no time), then made NaN.
    a, b, y = np.where(bad, 1.0, a), np.where(bad, 1.0, b), np.where(bad, 0.0, y)
    zero = np.zeros_like(y)
    term, total = DD.exact(zero + 1.0), DD.exact(zero + 1.0)
    d_terms, sums, peaks = [DD.exact(zero)] * 2, [DD.exact(zero)] * 2, [zero, zero]
    quiet = np.zeros(y.shape, int)
    active = np.ones(y.shape, bool)
    ahead = np.maximum(-a, -b) + 2.0

    def move(new: DD.Pair, old: DD.Pair) -> DD.Pair:
        return np.where(active, new[0], old[0]), np.where(active, new[1], old[1])
    for k in range(_MAX_TERMS):
        b_k = DD.two_sum(b, zero + k)
        scale = DD.dd_div(DD.exact(y), DD.dd_mul(b_k, DD.exact(zero + (k + 1.0))))
        ratio = DD.dd_mul(scale, DD.two_sum(a, zero + k))
        following = DD.dd_mul(term, ratio)
        kept = [DD.dd_mul(d, ratio) for d in d_terms]
        own = [DD.dd_mul(term, scale), DD.dd_neg(DD.dd_div(following, b_k))]
        new_d = [DD.dd_add(p, q) for p, q in zip(kept, own)]
        new_sums = [DD.dd_add(s, d) for s, d in zip(sums, new_d)]
        new_total = DD.dd_add(total, following)
        small = np.abs(following[0]) <= _EPS * np.abs(new_total[0])
        for d, s in zip(new_d, new_sums):
            small &= np.abs(d[0]) <= _EPS * np.abs(s[0])
        small &= (k >= ahead) | (following[0] == 0)
        peaks = [np.where(active, np.maximum(peak, np.abs(p[0]) + np.abs(q[0])), peak)
                 for peak, p, q in zip(peaks, kept, own)]
        term, total = move(following, term), move(new_total, total)
        d_terms = [move(n, o) for n, o in zip(new_d, d_terms)]
        sums = [move(n, o) for n, o in zip(new_sums, sums)]
        quiet = np.where(active, np.where(small, quiet + 1, 0), quiet)
        finite = np.isfinite(total[0]) & np.isfinite(sums[0][0]) & np.isfinite(sums[1][0])
        active &= (quiet < 2) & finite
        if not active.any():
            break
    done = (quiet >= 2) & ~bad
    nan = np.full_like(y, np.nan)
    return [(np.where(done, s[0], nan), np.where(done, s[1], nan)) for s in sums], peaks


def _cancels(peak: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Where the largest part of a term exceeds the sum by more than CANCELLATION_LIMIT
    (beyond what a double-double sum keeps to float64's precision), or either is NaN."""
    with np.errstate(invalid="ignore"):
        return ~(peak <= CANCELLATION_LIMIT * np.abs(total))


def hyp1f1_derivatives(a: np.ndarray, b: np.ndarray,
                       x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(d/da, d/db) of 1F1(a; b; x); NaN where their series cancel beyond double-double
    (`_cancels`)."""
    a, b, x = (np.asarray(v, np.float64) for v in np.broadcast_arrays(a, b, x))
    flip = x < 0
    # F(a, b, x) = e^x G(b - a, b, -x): dF/da = -e^x G_1, dF/db = e^x (G_1 + G_2).
    (g1, g2), (p1, p2) = _hyp1f1_positive(np.where(flip, b - a, a), b, np.abs(x))
    both = DD.value(DD.dd_add(g1, g2))
    g1, g2 = DD.value(g1), DD.value(g2)
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.exp(x)
        da = np.where(flip, -scale * g1, g1)
        db = np.where(flip, scale * both, g2)
    unknown_b = np.where(flip, _cancels(p1 + p2, both), _cancels(p2, g2))
    return np.where(_cancels(p1, g1), np.nan, da), np.where(unknown_b, np.nan, db)


def _hyp2f1_direct(a: np.ndarray, b: np.ndarray, c: np.ndarray,
                   x: np.ndarray) -> list[np.ndarray]:
    return _series([a, b], [c], x)


def hyp2f1_derivatives(a: np.ndarray, b: np.ndarray, c: np.ndarray, x: np.ndarray,
                       value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(d/da, d/db, d/dc) of 2F1(a, b; c; x) for x < 1; `value` is 2F1 itself."""
    a, b, c, x, value = np.broadcast_arrays(a, b, c, x, value)
    out = [np.full(a.shape, np.nan) for _ in range(3)]
    direct = (x >= 0) & (x < 1)
    for o, d in zip(out, _hyp2f1_direct(a[direct], b[direct], c[direct], x[direct])):
        o[direct] = d
    flip = x < 0
    af, bf, cf, xf = a[flip], b[flip], c[flip], x[flip]
    # F(a, b, c, x) = s^-a G(a, c - b, c, z), s = 1 - x, z = x / (x - 1):
    # F_a = -log(s) F + s^-a G_1, F_b = -s^-a G_2, F_c = s^-a (G_2 + G_3).
    s = 1.0 - xf
    g1, g2, g3 = _hyp2f1_direct(af, cf - bf, cf, xf / (xf - 1.0))
    scale = s ** (-af)
    out[0][flip] = -np.log(s) * value[flip] + scale * g1
    out[1][flip] = -scale * g2
    out[2][flip] = scale * (g2 + g3)
    return out[0], out[1], out[2]
