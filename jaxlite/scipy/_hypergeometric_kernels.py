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
"""
from __future__ import annotations

import numpy as np

__all__ = ["hyp1f1_derivatives", "hyp2f1_derivatives"]

_EPS = np.finfo(np.float64).eps
_MAX_TERMS = 20000


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


def _hyp1f1_positive(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    return _series([a], [b], x)


def hyp1f1_derivatives(a: np.ndarray, b: np.ndarray,
                       x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(d/da, d/db) of 1F1(a; b; x)."""
    a, b, x = np.broadcast_arrays(a, b, x)
    da, db = np.empty(a.shape), np.empty(a.shape)
    direct = x >= 0
    da[direct], db[direct] = _hyp1f1_positive(a[direct], b[direct], x[direct])
    flip = ~direct
    # F(a, b, x) = e^x G(b - a, b, -x): dF/da = -e^x G_1, dF/db = e^x (G_1 + G_2).
    g1, g2 = _hyp1f1_positive(b[flip] - a[flip], b[flip], -x[flip])
    scale = np.exp(x[flip])
    da[flip], db[flip] = -scale * g1, scale * (g1 + g2)
    return da, db


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
