"""jaxlite's exponential integral kernel `expi` (scipy's Ei, NaN at 0 and at +-inf as
JAX's approximation gives) printed as standard ops, in float64, piecewise as JAX computes
it:

    x >= ASYMPTOTIC_FROM:  Ei(x) = e^x / x sum_k k! / x^k         (ASYMPTOTIC_TERMS terms)
    -1 <= x < that:        Ei(x) = gamma + log|x| + sum_k x^k / (k k!)   (a while loop)
    x < -1:                Ei(x) = -E1(-x), E1(y) = e^-y / (y + 1 - 1 / (y + 3 - 4 / ...))
                           by the modified Lentz method (a while loop)
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import (as_float, either, in_float64, is_value,
                                                  lentz, loop, pick)

__all__ = ["EXPINT_EXPANSIONS", "ASYMPTOTIC_FROM", "SERIES_STEPS", "FRACTION_STEPS"]

ASYMPTOTIC_FROM = 50.0
ASYMPTOTIC_TERMS = 40
SERIES_STEPS = 200
FRACTION_STEPS = 120
_EULER_GAMMA = 0.5772156649015329


def _series(w: FunctionWriter, x: str) -> str:
    shape = L.shape_of(w, x)

    def step(i: str, values: Leaves) -> Leaves:
        power, total = values  # x^k / k!, the sum so far
        k = as_float(w, i, shape)
        power = L.binary(w, "multiply", power, L.binary(w, "divide", x, k))
        return [power, L.binary(w, "add", total, L.binary(w, "divide", power, k))]
    total = loop(w, SERIES_STEPS, [L.splat(w, 1.0, shape), L.splat(w, 0.0, shape)], step)[1]
    log = unary(w, "stablehlo.log", unary(w, "stablehlo.abs", x))
    return L.binary(w, "add", L.binary(w, "add", L.splat(w, _EULER_GAMMA, shape), log), total)


def _asymptotic(w: FunctionWriter, x: str) -> str:
    shape = L.shape_of(w, x)
    inverse = L.binary(w, "divide", L.splat(w, 1.0, shape), x)
    total = L.splat(w, 0.0, shape)
    for k in reversed(range(ASYMPTOTIC_TERMS)):  # Horner
        total = L.binary(w, "add", L.binary(w, "multiply", total, inverse),
                         L.splat(w, float(math.factorial(k)), shape))
    return L.binary(w, "multiply", total, L.binary(
        w, "divide", unary(w, "stablehlo.exponential", x), x))


def _minus_e1_of_minus(w: FunctionWriter, x: str) -> str:
    """-E1(-x) for x < -1, by the continued fraction."""
    shape = L.shape_of(w, x)
    first = L.binary(w, "subtract", L.splat(w, 1.0, shape), x)
    h = lentz(w, FRACTION_STEPS, first,
              lambda n: unary(w, "stablehlo.negate", L.binary(w, "multiply", n, n)))
    e1 = L.binary(w, "multiply", h, unary(w, "stablehlo.exponential", x))
    return unary(w, "stablehlo.negate", e1)


def _expi(w: FunctionWriter, x: str) -> str:
    shape = L.shape_of(w, x)
    value = L.select(w, is_value(w, x, "LT", -1.0), _minus_e1_of_minus(w, x),
                     _series(w, x))
    value = L.select(w, is_value(w, x, "GE", ASYMPTOTIC_FROM), _asymptotic(w, x), value)
    infinite = L.compare(w, unary(w, "stablehlo.abs", x), L.splat(w, np.inf, shape), "EQ",
                         "FLOAT")
    return pick(w, [(either(w, is_value(w, x, "EQ", 0.0), infinite), np.nan)], value)


EXPINT_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_expi": in_float64(_expi),
}
