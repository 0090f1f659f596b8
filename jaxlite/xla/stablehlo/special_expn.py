"""jaxlite's `expn` kernel (scipy's E_n(x) of integer order n, our continued fraction for
fractional n and x > 1, JAX's values at the edges) printed as standard ops, in float64,
as JAX's (Cephes's) algorithm splits it:

    n = 0:          E_0(x) = e^-x / x
    x > 1:          E_n(x) = e^-x / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / ...)),
                    by the modified Lentz method (FRACTION_STEPS steps)
    0 < x <= 1:     E_n(x) = (-x)^(n-1) / (n-1)! (psi(n) - log x)
                             - sum_(k != n-1) (-x)^k / (k - n + 1) k!      (SERIES_STEPS)

each a `stablehlo.while`; psi is `chlo.digamma`. Then the kernel's edges: NaN for n < 0,
x < 0, x = inf, NaN operands and fractional n with x <= 1; at x = 0, inf for n < 2 and
1 / (n - 1) beyond.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import (as_float, both, either, guarded,
                                                  in_float64, is_value, lentz, loop, pick)

__all__ = ["EXPN_EXPANSIONS", "SERIES_STEPS", "FRACTION_STEPS"]

SERIES_STEPS = 40
FRACTION_STEPS = 150


def _fraction(w: FunctionWriter, n: str, x: str) -> str:
    """E_n(x) e^x for x > 1 (the continued fraction)."""
    below = L.binary(w, "subtract", n, L.splat(w, 1.0, L.shape_of(w, n)))
    return lentz(w, FRACTION_STEPS, L.binary(w, "add", x, n), lambda k: unary(
        w, "stablehlo.negate", L.binary(w, "multiply", k, L.binary(w, "add", below, k))))


def _series(w: FunctionWriter, n: str, x: str) -> str:
    """E_n(x) for 0 < x <= 1 and whole n >= 1 (the power series)."""
    shape = L.shape_of(w, x)
    one = L.splat(w, 1.0, shape)
    below = L.binary(w, "subtract", n, one)
    log_x = unary(w, "stablehlo.log", x)
    first_order = unary(w, "stablehlo.negate", L.binary(
        w, "add", log_x, L.splat(w, np.euler_gamma, shape)))
    start = L.select(w, is_value(w, below, "EQ", 0.0), first_order,
                     L.binary(w, "divide", one, guarded(w, below)))
    special = L.binary(w, "subtract", unary(w, "chlo.digamma", n), log_x)
    minus_x = unary(w, "stablehlo.negate", x)

    def step(i: str, values: Leaves) -> Leaves:
        factor, total = values  # (-x)^k / k!, the sum so far
        k = as_float(w, i, shape)
        factor = L.binary(w, "multiply", factor, L.binary(w, "divide", minus_x, k))
        distance = L.binary(w, "subtract", k, below)
        ordinary = unary(w, "stablehlo.negate", L.binary(
            w, "divide", factor, guarded(w, distance)))
        term = L.select(w, is_value(w, distance, "EQ", 0.0),
                        L.binary(w, "multiply", factor, special), ordinary)
        return [factor, L.binary(w, "add", total, term)]
    return loop(w, SERIES_STEPS, [one, start], step)[1]


def _expn(w: FunctionWriter, n: str, x: str) -> str:
    shape = L.shape_of(w, x)
    one = L.splat(w, 1.0, shape)
    decay = unary(w, "stablehlo.exponential", unary(w, "stablehlo.negate", x))
    far = is_value(w, x, "GT", 1.0)
    value = L.select(w, far, L.binary(w, "multiply", _fraction(w, n, x), decay),
                     _series(w, n, x))
    value = L.select(w, is_value(w, n, "EQ", 0.0), L.binary(w, "divide", decay, x), value)
    fractional = L.compare(w, unary(w, "stablehlo.floor", n), n, "NE", "FLOAT")
    nan = either(w, either(w, is_value(w, n, "LT", 0.0), is_value(w, x, "LT", 0.0)),
                 either(w, L.compare(w, n, n, "NE", "FLOAT"), L.compare(w, x, x, "NE", "FLOAT")))
    nan = either(w, either(w, nan, is_value(w, x, "EQ", np.inf)),
                 both(w, fractional, unary(w, "stablehlo.not", far)))
    at_zero = L.select(w, is_value(w, n, "LT", 2.0), L.splat(w, np.inf, shape), L.binary(
        w, "divide", one, L.binary(w, "subtract", n, one)))
    zero = both(w, is_value(w, x, "EQ", 0.0), L.compare(w, n, n, "EQ", "FLOAT"))
    return L.select(w, zero, at_zero, pick(w, [(nan, np.nan)], value))


EXPN_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_expn": in_float64(_expn),
}
