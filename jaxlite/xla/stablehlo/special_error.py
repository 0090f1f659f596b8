"""jaxlite's scaled kernels `erfcx` and `bessel_i0e` (scipy's) printed as standard ops,
in float64. erfcx as JAX computes it, from `chlo.erfc`:

    erfcx(x) = exp(x^2) erfc(x)                                     x < ASYMPTOTIC_FROM
             = 1 / (x sqrt(pi)) (1 - 1/(2x^2) + 3/(2x^2)^2 - ...)   beyond (erfc underflows)

Seven terms of the asymptotic series give float64 accuracy from ASYMPTOTIC_FROM = 26 on;
below it exp(x^2) erfc(x) loses at most x^2 float64 ulps. erfcx(-inf) = inf, erfcx(inf) = 0.

bessel_i0e(x) = exp(-|x|) I0(x), by the power series of I0 (positive terms: no
cancellation) in a `stablehlo.while` of I0E_SERIES_STEPS terms up to |x| = I0E_ASYMPTOTIC_FROM,
and beyond by the asymptotic series 1 / sqrt(2 pi |x|) sum_k ((2k - 1)!!)^2 / (k! (8|x|)^k).
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import as_float, in_float64, loop

__all__ = ["ERROR_EXPANSIONS", "ASYMPTOTIC_FROM", "I0E_ASYMPTOTIC_FROM", "I0E_SERIES_STEPS"]

ASYMPTOTIC_FROM = 26.0
_TERMS = 7
I0E_ASYMPTOTIC_FROM = 30.0
I0E_SERIES_STEPS = 120
_I0E_TERMS = 24


def _asymptotic(w: FunctionWriter, x: str) -> str:
    """1 / (x sqrt(pi)) sum_k (-1)^k (2k - 1)!! / (2x^2)^k."""
    shape = L.shape_of(w, x)
    inverse = L.binary(w, "divide", L.splat(w, 1.0, shape),
                       L.binary(w, "multiply", L.splat(w, 2.0, shape),
                                L.binary(w, "multiply", x, x)))
    total = L.splat(w, 0.0, shape)
    for k in reversed(range(_TERMS)):  # Horner, from the last term
        coefficient = (-1) ** k * float(np.prod(np.arange(1, 2 * k, 2)))
        total = L.binary(w, "add", L.binary(w, "multiply", total, inverse),
                         L.splat(w, coefficient, shape))
    return L.binary(w, "divide", total, L.binary(w, "multiply", x,
                                                 L.splat(w, np.sqrt(np.pi), shape)))


def _erfcx(w: FunctionWriter, x: str) -> str:
    shape = L.shape_of(w, x)
    direct = L.binary(w, "multiply", unary(w, "stablehlo.exponential",
                                           L.binary(w, "multiply", x, x)),
                      unary(w, "chlo.erfc", x))
    far = L.compare(w, x, L.splat(w, ASYMPTOTIC_FROM, shape), "GE", "FLOAT")
    return L.select(w, far, _asymptotic(w, x), direct)


def _i0e_series(w: FunctionWriter, x: str) -> str:
    """exp(-|x|) sum_k (x^2 / 4)^k / (k!)^2 (each term from the last, in a loop)."""
    shape = L.shape_of(w, x)
    quarter = L.binary(w, "multiply", L.binary(w, "multiply", x, x), L.splat(w, 0.25, shape))

    def step(i: str, values: list[str]) -> list[str]:
        term, total = values
        k = as_float(w, i, shape)
        term = L.binary(w, "divide", L.binary(w, "multiply", term, quarter),
                        L.binary(w, "multiply", k, k))
        return [term, L.binary(w, "add", total, term)]
    one = L.splat(w, 1.0, shape)
    total = loop(w, I0E_SERIES_STEPS, [one, one], step)[1]
    return L.binary(w, "multiply", total, unary(
        w, "stablehlo.exponential", unary(w, "stablehlo.negate", unary(w, "stablehlo.abs", x))))


def _i0e_asymptotic(w: FunctionWriter, x: str) -> str:
    shape = L.shape_of(w, x)
    magnitude = unary(w, "stablehlo.abs", x)
    inverse = L.binary(w, "divide", L.splat(w, 1.0, shape),
                       L.binary(w, "multiply", L.splat(w, 8.0, shape), magnitude))
    total = L.splat(w, 0.0, shape)
    for k in reversed(range(_I0E_TERMS)):  # Horner
        coefficient = float(np.prod([(2 * j - 1) ** 2 / j for j in range(1, k + 1)]))
        total = L.binary(w, "add", L.binary(w, "multiply", total, inverse),
                         L.splat(w, coefficient, shape))
    root = unary(w, "stablehlo.sqrt", L.binary(w, "multiply", magnitude,
                                               L.splat(w, 2 * np.pi, shape)))
    return L.binary(w, "divide", total, root)


def _i0e(w: FunctionWriter, x: str) -> str:
    shape = L.shape_of(w, x)
    far = L.compare(w, unary(w, "stablehlo.abs", x), L.splat(w, I0E_ASYMPTOTIC_FROM, shape),
                    "GE", "FLOAT")
    return L.select(w, far, _i0e_asymptotic(w, x), _i0e_series(w, x))


ERROR_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_erfcx": in_float64(_erfcx),
    "jaxlite_special_bessel_i0e": in_float64(_i0e),
}
