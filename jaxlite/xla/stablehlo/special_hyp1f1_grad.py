"""jaxlite's parameter derivatives of the confluent hypergeometric function (`hyp1f1_da`,
`hyp1f1_db`: the numpy kernel `hyp1f1_derivatives` of
`jaxlite.scipy._hypergeometric_kernels`) printed as standard ops, in float64, summed as
the kernel sums them: in double-double arithmetic (`double_double.py`, the kernel's
`jaxlite.scipy._double_double` step for step),

    t_(k+1) = t_k r_k,  r_k = (a + k) s_k,  s_k = y / ((b + k)(k + 1)),
    dt_(k+1) = dt_k r_k + t_k dr_k   (dr_k/da = s_k, dr_k/db = -r_k / (b + k)),

over y = x >= 0, and for x < 0 over Kummer's transformation F = e^x G(b - a; b; -x):
F_a = -e^x G_a, F_b = e^x (G_a + G_b). Where a < 0 (b - a < 0) the terms alternate and
grow far beyond the sum: d/da 1F1(-20.5; 25.3; 30) = 2.798e-7 from terms of 2e5, which a
float64 sum (the kernel's before) had off by 6e-5. Where the largest part of a
term exceeds the sum by more than the kernel's CANCELLATION_LIMIT (1e16: a double-double
sum keeps about 1e-29 of its largest term), the derivative is NaN, not a number that may
be wrong. On 3000 random points (a in [-50, 50], b in [-30.5, 60] to two decimals, x in
[-100, 100]) none is off from mpmath by more than 5e-13, 281 (d/da) and 272 (d/db) are
NaN (all of them off by more than 1e-10 in the float64 sums, which had 687 and 677 such);
the expansion gives the kernel's numbers to 4e-16 and its NaN.

One `stablehlo.while` freezes each element after two consecutive steps whose terms are
below float64's epsilon relative to their sums, once k has passed -a and -b (a term may
spike where b + k nears 0), or where a sum is not finite; NaN where that has not happened
in DERIVATIVE_STEPS steps (|x| beyond about 1300, the kernel sums 20000), or an operand
is not finite.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import double_double as D
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter
from jaxlite.xla.stablehlo.special_hyp2f1_series import Floats, until_converged
from jaxlite.xla.stablehlo.special_igamma import in_float64

__all__ = ["HYP1F1_GRAD_EXPANSIONS", "DERIVATIVE_STEPS", "CANCELLATION_LIMIT"]

DERIVATIVE_STEPS = 2000
CANCELLATION_LIMIT = 1e16   # the kernel's (the xla layer does not import jaxlite.scipy)
_EPS = float(np.finfo(np.float64).eps)

Pair = D.Pair


def _negated(f: Floats, x: Pair) -> Pair:
    return f.neg(x[0]), f.neg(x[1])


def _sums(f: Floats, a: str, b: str, y: str) -> tuple[list[Pair], list[str], str]:
    """([G_a, G_b] as double-doubles, [P_a, P_b], converged) of G = M(a; b; y), y >= 0,
    as the kernel's `_hyp1f1_positive`; P is the largest part of a term."""
    w = f.w
    ahead = f.add(f.max(f.neg(a), f.neg(b)), 2.0)

    def step(k: str, values: list[str]) -> tuple[list[str], str]:
        term, total = (values[0], values[1]), (values[2], values[3])
        d_terms = [(values[4], values[5]), (values[6], values[7])]
        sums = [(values[8], values[9]), (values[10], values[11])]
        peaks, quiet = values[12:14], values[14]
        b_k = D.two_sum(w, b, k)
        scale = D.dd_div(w, D.exact(w, y), D.dd_mul(w, b_k, D.exact(w, f.add(k, 1.0))))
        ratio = D.dd_mul(w, scale, D.two_sum(w, a, k))
        following = D.dd_mul(w, term, ratio)
        kept = [D.dd_mul(w, d, ratio) for d in d_terms]
        own = [D.dd_mul(w, term, scale), _negated(f, D.dd_div(w, following, b_k))]
        d_terms = [D.dd_add(w, p, q) for p, q in zip(kept, own)]
        sums = [D.dd_add(w, s, d) for s, d in zip(sums, d_terms)]
        total = D.dd_add(w, total, following)
        small = f.cmp(f.abs(following[0]), "LE", f.mul(f.abs(total[0]), _EPS))
        for d, s in zip(d_terms, sums):
            small = f.all(small, f.cmp(f.abs(d[0]), "LE", f.mul(f.abs(s[0]), _EPS)))
        small = f.all(small, f.any(f.cmp(k, "GE", ahead), f.cmp(following[0], "EQ", 0.0)))
        peaks = [f.max(peak, f.add(f.abs(p[0]), f.abs(q[0])))
                 for peak, p, q in zip(peaks, kept, own)]
        quiet = f.where(small, f.add(quiet, 1.0), 0.0)
        finite = f.all(*(f.cmp(f.abs(v[0]), "LT", np.inf) for v in [total] + sums))
        still = f.all(f.cmp(quiet, "LT", 2.0), finite)
        return [*following, *total, *d_terms[0], *d_terms[1], *sums[0], *sums[1],
                *peaks, quiet], still
    one, zero = f.of(1.0), f.of(0.0)
    start = [one, zero, one, zero] + [zero] * 8 + [zero, zero, zero]
    out = until_converged(w, DERIVATIVE_STEPS, f.cmp(one, "EQ", one), start, step)
    sums = [(out[8], out[9]), (out[10], out[11])]
    return sums, out[12:14], f.cmp(out[14], "GE", 2.0)


def _cancels(f: Floats, peak: str, total: str) -> str:
    """The kernel's `_cancels`: the largest part of a term above CANCELLATION_LIMIT times
    the sum, or either NaN."""
    return f.no(f.cmp(peak, "LE", f.mul(f.abs(total), CANCELLATION_LIMIT)))


def _derivatives(w: FunctionWriter, a: str, b: str, x: str) -> tuple[str, str]:
    """(d/da, d/db) of 1F1(a; b; x): for x < 0, from F = e^x G(b - a; b; -x),
    dF/da = -e^x G_a and dF/db = e^x (G_a + G_b)."""
    f = Floats(w, L.shape_of(w, x))
    finite = f.all(*(f.cmp(f.abs(v), "LT", np.inf) for v in (a, b, x)))
    # Non-finite operands are summed at harmless values, then made NaN (as the kernel).
    a, b, x = f.where(finite, a, 1.0), f.where(finite, b, 1.0), f.where(finite, x, 0.0)
    flip = f.cmp(x, "LT", 0.0)
    (g_a, g_b), (p_a, p_b), converged = _sums(f, f.where(flip, f.sub(b, a), a), b, f.abs(x))
    both = f.add(*D.dd_add(w, g_a, g_b))
    g_a, g_b = f.add(*g_a), f.add(*g_b)
    scale = f.exp(x)
    d_a = f.where(flip, f.neg(f.mul(scale, g_a)), g_a)
    d_b = f.where(flip, f.mul(scale, both), g_b)
    known = f.all(finite, converged)
    unknown_b = f.where(flip, _cancels(f, f.add(p_a, p_b), both), _cancels(f, p_b, g_b))
    unknown_a = f.any(f.no(known), _cancels(f, p_a, g_a))
    unknown_b = f.any(f.no(known), unknown_b)
    return f.where(unknown_a, np.nan, d_a), f.where(unknown_b, np.nan, d_b)


HYP1F1_GRAD_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_hyp1f1_da": in_float64(lambda w, a, b, x: _derivatives(w, a, b, x)[0]),
    "jaxlite_special_hyp1f1_db": in_float64(lambda w, a, b, x: _derivatives(w, a, b, x)[1]),
}
