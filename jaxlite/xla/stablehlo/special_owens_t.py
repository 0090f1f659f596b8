"""jaxlite's `owens_t` kernel (scipy's owens_t(h, a), NaN at h = 0 with an infinite a)
printed as standard ops in float64. Owen's T function is an integral over [0, a],

    T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx,

even in h and odd in a. For |a| <= 1 the integrand is smooth and positive, and it is
summed by composite Gauss-Legendre quadrature (PANELS panels of len(NODES) nodes, in a
`stablehlo.while` over the panels). For large h the integrand is a narrow peak at x = 0:
the quadrature stops where h^2 x^2 / 2 reaches CUTOFF (the rest is below exp(-CUTOFF) of
the integral), so that its panels follow the peak. For |a| > 1, Owen's identity

    T(h, a) = (Q(h) + Q(a h)) / 2 - Q(h) Q(a h) - T(a h, 1/a),   Q(x) = erfc(x / sqrt 2) / 2

(h >= 0) brings the integral back to [0, 1/a]; its terms do not cancel (T(h, a) is at
least Q(h) (1/2 - Q(a h)) there). Infinite and NaN arguments need no case of their own:
T(+-inf, a) = 0, T(h, +-inf) = +-Q(|h|)/2, T(0, +-inf) = NaN (a h = 0 inf) as the kernel's.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import as_float, in_float64, loop

__all__ = ["OWENS_T_EXPANSIONS", "PANELS", "NODES", "CUTOFF"]

PANELS = 8
NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)
CUTOFF = 50.0


def _integral(w: FunctionWriter, s: str, b: str) -> str:
    """int_0^b exp(-s (1 + x^2)) / (1 + x^2) dx for 0 <= b <= 1, s >= 0."""
    shape = L.shape_of(w, s)
    one = L.splat(w, 1.0, shape)
    # the peak's reach: exp(-s x^2) < exp(-CUTOFF) beyond (inf at s = 0)
    reach = unary(w, "stablehlo.sqrt", L.binary(w, "divide", L.splat(w, CUTOFF, shape), s))
    top = L.binary(w, "minimum", b, reach)
    width = L.binary(w, "divide", top, L.splat(w, float(PANELS), shape))

    def step(i: str, values: Leaves) -> Leaves:
        start = L.binary(w, "multiply", width, L.binary(
            w, "subtract", as_float(w, i, shape), one))
        total = values[0]
        for node, weight in zip(NODES, _WEIGHTS):
            x = L.binary(w, "add", start, L.binary(w, "multiply", width,
                                                   L.splat(w, (1 + node) / 2, shape)))
            widened = L.binary(w, "add", one, L.binary(w, "multiply", x, x))
            value = L.binary(w, "divide", unary(w, "stablehlo.exponential", unary(
                w, "stablehlo.negate", L.binary(w, "multiply", s, widened))), widened)
            total = L.binary(w, "add", total, L.binary(w, "multiply", value,
                                                       L.splat(w, weight / 2, shape)))
        return [total]
    total = loop(w, PANELS, [L.splat(w, 0.0, shape)], step)[0]
    return L.binary(w, "multiply", total, width)


def _upper_tail(w: FunctionWriter, x: str) -> str:
    """Q(x) = erfc(x / sqrt 2) / 2, the normal distribution's upper tail."""
    shape = L.shape_of(w, x)
    return L.binary(w, "multiply", L.splat(w, 0.5, shape), unary(
        w, "chlo.erfc", L.binary(w, "multiply", x, L.splat(w, np.sqrt(0.5), shape))))


def _owens_t(w: FunctionWriter, h: str, a: str) -> str:
    shape = L.shape_of(w, h)
    half = L.splat(w, 0.5, shape)
    h = unary(w, "stablehlo.abs", h)
    sign, a = unary(w, "stablehlo.sign", a), unary(w, "stablehlo.abs", a)
    ah = L.binary(w, "multiply", a, h)
    within = L.compare(w, a, L.splat(w, 1.0, shape), "LE", "FLOAT")
    # the integral's (h, a): (h, a) itself, or (a h, 1/a) of Owen's identity
    h_integral = L.select(w, within, h, ah)
    b = L.select(w, within, a, L.binary(w, "divide", L.splat(w, 1.0, shape), a))
    s = L.binary(w, "multiply", half, L.binary(w, "multiply", h_integral, h_integral))
    integral = L.binary(w, "multiply", _integral(w, s, b),
                        L.splat(w, 1 / (2 * np.pi), shape))
    q_h, q_ah = _upper_tail(w, h), _upper_tail(w, ah)
    identity = L.binary(w, "subtract", L.binary(w, "subtract", L.binary(
        w, "multiply", half, L.binary(w, "add", q_h, q_ah)), L.binary(w, "multiply", q_h, q_ah)),
        integral)
    return L.binary(w, "multiply", sign, L.select(w, within, integral, identity))


OWENS_T_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_owens_t": in_float64(_owens_t),
}
