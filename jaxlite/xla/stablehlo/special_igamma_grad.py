"""jaxlite's kernels for the derivative of P(a, x) with respect to a, `igamma_grad_a`
(dP/da) and `random_gamma_grad` (dx/da of a Gamma(a, 1) sample at fixed P), printed as
standard ops in float64, computed as our kernels (`jaxlite.lax.incomplete_gamma_kernels`)
and JAX compute them: the two expansions of P, each carried with its derivative in a
(forward-mode dual numbers), in a `stablehlo.while` of a fixed number of steps:

    x < a + 1 or x <= 1:  P = x^a e^-x / Gamma(a + 1) S,  S = sum_n x^n / ((a + 1)...(a + n))
        dP/da = x^a e^-x / Gamma(a + 1) (S (log x - psi(a + 1)) + dS/da)
        dx/da = -x / a (S (log x - psi(a + 1)) + dS/da)
    beyond:  Q = x^a e^-x / Gamma(a) F,  F = 1 / G, G = x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)
        dP/da = -x^a e^-x / Gamma(a) (F (log x - psi(a)) + dF/da)
        dx/da = x (F (log x - psi(a)) + dF/da)

with G by the modified Lentz method; psi is `chlo.digamma`. NaN where a <= 0, x < 0 or an
operand is NaN; 0 at x = 0, x = inf and a = inf.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import (FRACTION_STEPS, SERIES_STEPS, as_float, both,
                                                  either, guarded, in_float64, is_value, loop,
                                                  pick)

__all__ = ["IGAMMA_GRAD_EXPANSIONS"]


def _add(w: FunctionWriter, a: str, b: str) -> str:
    return L.binary(w, "add", a, b)


def _mul(w: FunctionWriter, a: str, b: str) -> str:
    return L.binary(w, "multiply", a, b)


def _div(w: FunctionWriter, a: str, b: str) -> str:
    return L.binary(w, "divide", a, b)


def _series(w: FunctionWriter, a: str, x: str) -> tuple[str, str]:
    """S and dS/da."""
    shape = L.shape_of(w, a)

    def step(i: str, values: Leaves) -> Leaves:
        term, d_term, total, d_total = values
        top = _add(w, a, as_float(w, i, shape))
        ratio = _div(w, x, top)
        d_term = _mul(w, L.binary(w, "subtract", d_term, _div(w, term, top)), ratio)
        term = _mul(w, term, ratio)
        return [term, d_term, _add(w, total, term), _add(w, d_total, d_term)]
    one, zero = L.splat(w, 1.0, shape), L.splat(w, 0.0, shape)
    return tuple(loop(w, SERIES_STEPS, [one, zero, one, zero], step)[2:])


def _fraction(w: FunctionWriter, a: str, x: str) -> tuple[str, str]:
    """F and dF/da: G and dG/da by the modified Lentz method with duals (db_n/da = -1)."""
    shape = L.shape_of(w, a)
    minus_one, two = L.splat(w, -1.0, shape), L.splat(w, 2.0, shape)
    b = guarded(w, L.binary(w, "subtract", _add(w, x, L.splat(w, 1.0, shape)), a))
    zero = L.splat(w, 0.0, shape)

    def step(i: str, values: Leaves) -> Leaves:
        b, c, d_c, dd, d_dd, g, d_g = values
        n = as_float(w, i, shape)
        b = _add(w, b, two)
        num = unary(w, "stablehlo.negate", _mul(w, n, L.binary(w, "subtract", n, a)))
        raw = guarded(w, _add(w, b, _mul(w, num, dd)))
        d_raw = _add(w, _add(w, minus_one, _mul(w, n, dd)), _mul(w, num, d_dd))
        dd, d_dd = _div(w, L.splat(w, 1.0, shape), raw), unary(
            w, "stablehlo.negate", _div(w, d_raw, _mul(w, raw, raw)))
        d_c = L.binary(w, "subtract", _add(w, minus_one, _div(w, n, c)),
                       _div(w, _mul(w, num, d_c), _mul(w, c, c)))
        c = guarded(w, _add(w, b, _div(w, num, c)))
        delta, d_delta = _mul(w, c, dd), _add(w, _mul(w, d_c, dd), _mul(w, c, d_dd))
        return [b, c, d_c, dd, d_dd, _mul(w, g, delta),
                _add(w, _mul(w, d_g, delta), _mul(w, g, d_delta))]
    g, d_g = loop(w, FRACTION_STEPS, [b, b, minus_one, zero, zero, b, minus_one], step)[5:]
    return _div(w, L.splat(w, 1.0, shape), g), unary(
        w, "stablehlo.negate", _div(w, d_g, _mul(w, g, g)))


def _inner(w: FunctionWriter, value: str, slope: str, log_x: str, shift: str) -> str:
    """value (log x - psi(shift)) + slope."""
    return _add(w, _mul(w, value, L.binary(w, "subtract", log_x, unary(
        w, "chlo.digamma", shift))), slope)


def _derivative(w: FunctionWriter, a: str, x: str, sample: bool) -> str:
    shape = L.shape_of(w, a)
    one = L.splat(w, 1.0, shape)
    log_x = unary(w, "stablehlo.log", x)
    above = _add(w, a, one)
    series = _inner(w, *_series(w, a, x), log_x, above)
    fraction = _inner(w, *_fraction(w, a, x), log_x, a)

    def prefactor(shift: str) -> str:
        return unary(w, "stablehlo.exponential", L.binary(w, "subtract", L.binary(
            w, "subtract", _mul(w, a, log_x), x), unary(w, "chlo.lgamma", shift)))
    if sample:
        series = _mul(w, unary(w, "stablehlo.negate", _div(w, x, a)), series)
        fraction = _mul(w, x, fraction)
    else:
        series = _mul(w, prefactor(above), series)
        fraction = unary(w, "stablehlo.negate", _mul(w, prefactor(a), fraction))
    use_fraction = both(w, L.compare(w, x, above, "GT", "FLOAT"), is_value(w, x, "GT", 1.0))
    value = L.select(w, use_fraction, fraction, series)
    unordered = either(w, L.compare(w, a, a, "NE", "FLOAT"), L.compare(w, x, x, "NE", "FLOAT"))
    nan = either(w, unordered, either(w, is_value(w, a, "LE", 0.0), is_value(w, x, "LT", 0.0)))
    edge = either(w, either(w, is_value(w, x, "EQ", 0.0), is_value(w, x, "EQ", np.inf)),
                  is_value(w, a, "EQ", np.inf))
    return pick(w, [(nan, np.nan), (edge, 0.0)], value)


IGAMMA_GRAD_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_igamma_grad_a": in_float64(lambda w, a, x: _derivative(w, a, x, False)),
    "jaxlite_special_random_gamma_grad": in_float64(
        lambda w, a, x: _derivative(w, a, x, True)),
}
