"""jaxlite's parameter derivatives of the Gauss hypergeometric function (`hyp2f1_da`,
`hyp2f1_db`, `hyp2f1_dc`: the numpy kernels of `jaxlite.scipy._hypergeometric_kernels`)
printed as standard ops, in float64, summed as the kernels sum them:

    t_(k+1) = t_k r_k,  r_k = (a + k)(b + k) / (c + k) z / (k + 1),
    dt_(k+1) = dt_k r_k + t_k dr_k   (dr_k/da = r_k / (a + k) written without the
                                     division, dr_k/dc = -r_k / (c + k))

over z = x for 0 <= x < 1, and for x < 0 over Pfaff's transformation
F = s^-a G(a, c - b; c; z), z = x / (x - 1), s = 1 - x, whence
F_a = -log(s) F + s^-a G_a, F_b = -s^-a G_b, F_c = s^-a (G_b + G_c) (F = s^-a G, summed
in the same loop, where the kernel takes scipy's F: equal to rounding).

One `stablehlo.while` runs until every element has had two consecutive steps whose terms
are below float64's epsilon relative to their sums, or `MAX_TERMS` steps; an element that
has not is NaN (x >= 0.998 or so), as are x >= 1, NaN x and non-finite operands. As in
the kernel, elements keep being summed until all have converged (the kernel sums its
x >= 0 and x < 0 elements in two loops; here one, so an element stops with the slower
of both: the same sums to rounding).
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_hyp2f1_series import Floats, any_true
from jaxlite.xla.stablehlo.special_igamma import as_float, in_float64

__all__ = ["HYP2F1_GRAD_EXPANSIONS", "MAX_TERMS"]

MAX_TERMS = 20000
_EPS = float(np.finfo(np.float64).eps)
_F64 = np.dtype(np.float64)


def _sums(f: Floats, a: str, b: str, c: str, z: str) -> list[str]:
    """[G, G_a, G_b, G_c] of G(a, b; c; z) summed as the kernel sums them, and the number
    of consecutive quiet steps at the end."""
    w = f.w
    index = Shape(np.int32, ())
    one, zero = f.of(1.0), f.of(0.0)
    start = [one, one, zero, zero, zero, zero, zero, zero, zero]  # term, sum, dt x3, sums x3, quiet
    shapes = [index] + [L.shape_of(w, v) for v in start]

    def condition(state: Leaves) -> Leaves:
        more = L.compare(w, state[0], L.scalar(w, MAX_TERMS, np.int32), "LT", "SIGNED")
        loud = f.cmp(state[-1], "LT", 2.0)
        return w.same_type("stablehlo.and", [more, any_true(w, loud)], Shape(np.bool_, ()))

    def body(state: Leaves) -> Leaves:
        i, (term, total, *rest) = state[0], state[1:]
        d_terms, d_sums, quiet = rest[:3], rest[3:6], rest[6]
        k = as_float(w, i, f.shape)
        scale = f.div(f.div(z, f.add(k, 1.0)), f.add(c, k))
        ak, bk = f.add(a, k), f.add(b, k)
        ratio = f.mul(scale, f.mul(ak, bk))
        d_ratios = [f.mul(scale, bk), f.mul(scale, ak), f.neg(f.div(ratio, f.add(c, k)))]
        small = None
        for j in range(3):
            d_terms[j] = f.add(f.mul(d_terms[j], ratio), f.mul(term, d_ratios[j]))
            d_sums[j] = f.add(d_sums[j], d_terms[j])
            quiet_j = f.cmp(f.abs(d_terms[j]), "LE", f.mul(f.abs(d_sums[j]), _EPS))
            small = quiet_j if small is None else f.all(small, quiet_j)
        term = f.mul(term, ratio)
        total = f.add(total, term)
        small = f.all(small, f.cmp(f.abs(term), "LE", f.mul(f.abs(total), _EPS)))
        quiet = f.where(small, f.add(quiet, 1.0), 0.0)
        return w.same_type("stablehlo.add", [i, L.scalar(w, 1, np.int32)], index) + \
            [term, total] + d_terms + d_sums + [quiet]
    out = w.generic("stablehlo.while", [L.scalar(w, 0, np.int32)] + start, shapes, None,
                    [w.block(shapes, condition), w.block(shapes, body)])
    return [out[2], *out[6:9], out[9]]


def _finite(f: Floats, v: str) -> str:
    return f.cmp(f.abs(v), "LT", np.inf)


def _derivatives(w: FunctionWriter, a: str, b: str, c: str, x: str) -> list[str]:
    """[dF/da, dF/db, dF/dc] as the kernel gives them."""
    f = Floats(w, L.shape_of(w, x))
    flip = f.cmp(x, "LT", 0.0)
    direct = f.all(f.cmp(x, "GE", 0.0), f.cmp(x, "LT", 1.0))
    b2 = f.where(flip, f.sub(c, b), b)
    z = f.where(flip, f.div(x, f.sub(x, 1.0)), x)
    good = f.all(f.any(flip, direct), _finite(f, z), _finite(f, a), _finite(f, b2),
                 _finite(f, c))
    # the rest are summed at harmless values (in no time), then made NaN
    g, g_a, g_b, g_c, quiet = _sums(f, f.where(good, a, 1.0), f.where(good, b2, 1.0),
                                    f.where(good, c, 1.0), f.where(good, z, 0.0))
    s = f.sub(1.0, x)
    scale = f.pow(s, f.neg(a))
    value = f.mul(scale, g)
    from_pfaff = [f.add(f.mul(f.neg(f.log(s)), value), f.mul(scale, g_a)),
                  f.neg(f.mul(scale, g_b)), f.mul(scale, f.add(g_b, g_c))]
    converged = f.all(good, f.cmp(quiet, "GE", 2.0))
    return [f.where(converged, f.where(flip, p, d), np.nan)
            for p, d in zip(from_pfaff, (g_a, g_b, g_c))]


def _pick(index: int):
    def formula(w: FunctionWriter, a: str, b: str, c: str, x: str) -> str:
        return _derivatives(w, a, b, c, x)[index]
    return formula


HYP2F1_GRAD_EXPANSIONS = {
    f"jaxlite_special_hyp2f1_d{name}": in_float64(_pick(i)) for i, name in enumerate("abc")
}
