"""jaxlite's regularized incomplete beta kernel (`regularized_incomplete_beta`, scipy's
betainc: `lax.betainc(a, b, x)`) printed as standard ops, as JAX computes it: a continued
fraction in a `stablehlo.while` loop, in float64.

    I_x(a, b) = front / a * CF(a, b, x)             where x < (a + 1) / (a + b + 2)
              = 1 - front' / b * CF(b, a, 1 - x)     elsewhere (the symmetry)
    front     = exp(a log x + b log(1 - x) - lgamma(a) - lgamma(b) + lgamma(a + b))
    CF        = 1 / (1 + d1 / (1 + d2 / (1 + ...))), by the modified Lentz method, with
    d(2m) = m (b - m) x / ((a + 2m - 1)(a + 2m)),
    d(2m+1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))

The edges take the kernel's (scipy's) values: NaN for NaN operands, a or b negative, x
outside [0, 1] or a = b = 0; then 0 at x = 0, 1 at x = 1, 1 at a = 0, 0 at b = 0, 0 at
a = inf, 1 at b = inf. `FRACTION_STEPS` pairs of terms suffice where a and b are below
about 10^4.
"""
from __future__ import annotations

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import (as_float, both, either, guarded,
                                                  in_float64, is_value, loop, pick)

__all__ = ["BETAINC_EXPANSIONS", "FRACTION_STEPS"]

FRACTION_STEPS = 300


def _lentz_step(w: FunctionWriter, term: str, c: str, d: str, h: str) -> Leaves:
    """One convergent more of 1 / (1 + term / (...)): new c, d and the product h."""
    one = L.splat(w, 1.0, L.shape_of(w, term))
    d = L.binary(w, "divide", one, guarded(w, L.binary(
        w, "add", one, L.binary(w, "multiply", term, d))))
    c = guarded(w, L.binary(w, "add", one, L.binary(w, "divide", term, c)))
    return [c, d, L.binary(w, "multiply", h, L.binary(w, "multiply", d, c))]


def _fraction(w: FunctionWriter, a: str, b: str, x: str) -> str:
    shape = L.shape_of(w, a)
    one = L.splat(w, 1.0, shape)
    total = L.binary(w, "add", a, b)
    first = L.binary(w, "subtract", one, L.binary(w, "divide", L.binary(
        w, "multiply", total, x), L.binary(w, "add", a, one)))
    d = L.binary(w, "divide", one, guarded(w, first))

    def step(i: str, values: Leaves) -> Leaves:
        c, d, h = values
        m = as_float(w, i, shape)
        twice = L.binary(w, "add", m, m)
        at = L.binary(w, "add", a, twice)  # a + 2m
        even = L.binary(w, "divide", L.binary(w, "multiply", L.binary(
            w, "multiply", m, L.binary(w, "subtract", b, m)), x),
            L.binary(w, "multiply", L.binary(w, "subtract", at, one), at))
        c, d, h = _lentz_step(w, even, c, d, h)
        odd = unary(w, "stablehlo.negate", L.binary(w, "divide", L.binary(
            w, "multiply", L.binary(w, "multiply", L.binary(w, "add", a, m),
                                    L.binary(w, "add", total, m)), x),
            L.binary(w, "multiply", at, L.binary(w, "add", at, one))))
        return _lentz_step(w, odd, c, d, h)
    return loop(w, FRACTION_STEPS, [one, d, d], step)[2]


def _front(w: FunctionWriter, a: str, b: str, x: str) -> str:
    """x^a (1 - x)^b / B(a, b), through logarithms."""
    lgamma = [unary(w, "chlo.lgamma", v) for v in (a, b, L.binary(w, "add", a, b))]
    logs = L.binary(w, "add", L.binary(w, "multiply", a, unary(w, "stablehlo.log", x)),
                    L.binary(w, "multiply", b, unary(w, "stablehlo.log_plus_one",
                                                     unary(w, "stablehlo.negate", x))))
    return unary(w, "stablehlo.exponential", L.binary(w, "add", L.binary(
        w, "subtract", L.binary(w, "subtract", logs, lgamma[0]), lgamma[1]), lgamma[2]))


def _betainc(w: FunctionWriter, a: str, b: str, x: str) -> str:
    shape = L.shape_of(w, a)
    one = L.splat(w, 1.0, shape)
    front = _front(w, a, b, x)
    direct = L.binary(w, "divide", L.binary(w, "multiply", front, _fraction(w, a, b, x)), a)
    mirrored = L.binary(w, "subtract", one, L.binary(w, "divide", L.binary(
        w, "multiply", front, _fraction(w, b, a, L.binary(w, "subtract", one, x))), b))
    two = L.splat(w, 2.0, shape)
    turn = L.binary(w, "divide", L.binary(w, "add", a, one),
                    L.binary(w, "add", L.binary(w, "add", a, b), two))
    core = L.select(w, L.compare(w, x, turn, "LT", "FLOAT"), direct, mirrored)
    nan = either(w, either(w, L.compare(w, a, a, "NE", "FLOAT"), L.compare(w, b, b, "NE", "FLOAT")),
                 L.compare(w, x, x, "NE", "FLOAT"))
    bad = either(w, either(w, is_value(w, a, "LT", 0.0), is_value(w, b, "LT", 0.0)),
                 either(w, is_value(w, x, "LT", 0.0), is_value(w, x, "GT", 1.0)))
    zeros = both(w, is_value(w, a, "EQ", 0.0), is_value(w, b, "EQ", 0.0))
    return pick(w, [(either(w, either(w, nan, bad), zeros), float("nan")),
                    (is_value(w, x, "EQ", 0.0), 0.0), (is_value(w, x, "EQ", 1.0), 1.0),
                    (is_value(w, a, "EQ", 0.0), 1.0), (is_value(w, b, "EQ", 0.0), 0.0),
                    (is_value(w, a, "EQ", float("inf")), 0.0),
                    (is_value(w, b, "EQ", float("inf")), 1.0)], core)


BETAINC_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_regularized_incomplete_beta": in_float64(_betainc),
}
