"""jaxlite's `spence` kernel (scipy's spence(x) = Li2(1 - x), the dilogarithm, NaN for
x < 0 and at +inf) printed as standard ops, in float64, reduced as JAX's (Cephes's)
algorithm reduces it to |w| <= 1/2:

    x > 3/2:   spence(x) = -log(x)^2 / 2 - spence(1/x)            (inversion)
    x < 1/2:   spence(x) = pi^2/6 - log(x) log(1 - x) - Li2(x)    (reflection)
    else:      spence(x) = Li2(1 - x)

where JAX then uses a rational approximation of Li2(-w) on |w| <= 1/2, we sum its power
series -sum_k w^k (-1)^k / k^2 (SERIES_STEPS terms, each at most 2^-k) in a
`stablehlo.while`.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import (as_float, either, in_float64, is_value,
                                                  loop, pick)

__all__ = ["SPENCE_EXPANSIONS", "SERIES_STEPS", "dilogarithm"]

SERIES_STEPS = 64
_PI2_6 = np.pi ** 2 / 6


def dilogarithm(w: FunctionWriter, z: str) -> str:
    """Li2(z) = sum_k z^k / k^2 for |z| <= 1/2."""
    shape = L.shape_of(w, z)

    def step(i: str, values: Leaves) -> Leaves:
        power, total = values
        k = as_float(w, i, shape)
        power = L.binary(w, "multiply", power, z)
        return [power, L.binary(w, "add", total, L.binary(
            w, "divide", power, L.binary(w, "multiply", k, k)))]
    return loop(w, SERIES_STEPS, [L.splat(w, 1.0, shape), L.splat(w, 0.0, shape)], step)[1]


def _spence(w: FunctionWriter, x: str) -> str:
    shape = L.shape_of(w, x)
    one = L.splat(w, 1.0, shape)
    inverted = is_value(w, x, "GT", 1.5)
    x1 = L.select(w, inverted, L.binary(w, "divide", one, x), x)
    reflected = is_value(w, x1, "LT", 0.5)
    z = L.select(w, reflected, x1, L.binary(w, "subtract", one, x1))
    value = dilogarithm(w, z)
    logs = L.binary(w, "multiply", unary(w, "stablehlo.log", x1),
                    unary(w, "stablehlo.log", L.binary(w, "subtract", one, x1)))
    value = L.select(w, reflected, L.binary(w, "subtract", L.binary(
        w, "subtract", L.splat(w, _PI2_6, shape), logs), value), value)
    log_x = unary(w, "stablehlo.log", x)
    square = L.binary(w, "multiply", L.binary(w, "multiply", log_x, log_x),
                      L.splat(w, -0.5, shape))
    value = L.select(w, inverted, L.binary(w, "subtract", square, value), value)
    nan = either(w, is_value(w, x, "LT", 0.0), is_value(w, x, "EQ", np.inf))
    return pick(w, [(nan, np.nan), (is_value(w, x, "EQ", 0.0), _PI2_6)], value)


SPENCE_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_spence": in_float64(_spence),
}
