"""jaxlite's scaled complementary error function kernel (`erfcx`, scipy's) printed as
standard ops, as JAX computes it from `chlo.erfc`, in float64:

    erfcx(x) = exp(x^2) erfc(x)                                     x < ASYMPTOTIC_FROM
             = 1 / (x sqrt(pi)) (1 - 1/(2x^2) + 3/(2x^2)^2 - ...)   beyond (erfc underflows)

Seven terms of the asymptotic series give float64 accuracy from ASYMPTOTIC_FROM = 26 on;
below it exp(x^2) erfc(x) loses at most x^2 float64 ulps. erfcx(-inf) = inf, erfcx(inf) = 0.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import in_float64

__all__ = ["ERROR_EXPANSIONS", "ASYMPTOTIC_FROM"]

ASYMPTOTIC_FROM = 26.0
_TERMS = 7


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


ERROR_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_erfcx": in_float64(_erfcx),
}
