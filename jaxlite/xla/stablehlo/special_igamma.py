"""jaxlite's regularized incomplete gamma kernels (`igamma` = P(a, x), `igammac` = Q(a, x),
scipy's gammainc and gammaincc with JAX's conventions at the edges) printed as standard
ops, as JAX computes them: a power series where x < a + 1, a continued fraction
elsewhere, each a `stablehlo.while` loop, in float64 (so float32 results are the
kernel's to an ulp).

    prefactor = exp(a log x - x - lgamma(a))
    series:    P = prefactor / a * sum_n x^n / ((a + 1) ... (a + n))
    fraction:  Q = prefactor / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)),
               evaluated forwards by the modified Lentz method

Each loop runs a fixed number of steps (`SERIES_STEPS`, `FRACTION_STEPS`), enough for
float64 where a is below about 10^4; the edges (x = 0 or inf, a = 0 or inf, NaN, the
domain errors a < 0 or x < 0) are selected afterwards as the kernels give them.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import convert, unary

__all__ = ["IGAMMA_EXPANSIONS", "SERIES_STEPS", "FRACTION_STEPS", "loop", "guarded", "as_float",
           "is_value", "both", "either", "pick", "in_float64", "lentz"]

SERIES_STEPS = 1000
FRACTION_STEPS = 300
_F64 = np.dtype(np.float64)
_TINY = 1e-300


def loop(w: FunctionWriter, steps: int, start: list[str], step) -> list[str]:
    """`step(i, values) -> values` for i = 1 .. steps, in a `stablehlo.while`."""
    index = Shape(np.int32, ())
    shapes = [index] + [L.shape_of(w, v) for v in start]

    def condition(state: Leaves) -> Leaves:
        return [L.compare(w, state[0], L.scalar(w, steps + 1, np.int32), "LT", "SIGNED")]

    def body(state: Leaves) -> Leaves:
        i = state[0]
        return w.same_type("stablehlo.add", [i, L.scalar(w, 1, np.int32)], index) + \
            step(i, state[1:])
    return w.generic("stablehlo.while", [L.scalar(w, 1, np.int32)] + start, shapes, None,
                     [w.block(shapes, condition), w.block(shapes, body)])[1:]


def as_float(w: FunctionWriter, i: str, shape: Shape) -> str:
    return L.broadcast(w, convert(w, i, _F64), shape, ())


def _series(w: FunctionWriter, a: str, x: str) -> str:
    """sum_n x^n / ((a + 1) ... (a + n))."""
    shape = L.shape_of(w, a)

    def step(i: str, values: Leaves) -> Leaves:
        term, total = values
        term = L.binary(w, "multiply", term, L.binary(
            w, "divide", x, L.binary(w, "add", a, as_float(w, i, shape))))
        return [term, L.binary(w, "add", total, term)]
    one = L.splat(w, 1.0, shape)
    return loop(w, SERIES_STEPS, [one, one], step)[1]


def guarded(w: FunctionWriter, value: str) -> str:
    """`value`, or a tiny number where it is (almost) zero (Lentz's guard); real or
    complex."""
    shape = L.shape_of(w, value)
    real = shape.with_dtype(_F64)
    magnitude = w.generic("stablehlo.abs", [value], [real])[0]
    small = L.compare(w, magnitude, L.splat(w, _TINY, real), "LT", "FLOAT")
    return L.select(w, small, L.splat(w, _TINY, shape), value)


def lentz(w: FunctionWriter, steps: int, first: str, numerator, increment: float = 2.0) -> str:
    """1 / (b0 + a1 / (b0 + s + a2 / (b0 + 2 s + ...))), a_k = `numerator(k)` (k a float64
    value of b0's shape), s the `increment`, by the modified Lentz method in `steps` steps;
    real or complex."""
    shape = L.shape_of(w, first)
    one, two = L.splat(w, 1.0, shape), L.splat(w, increment, shape)
    d = L.binary(w, "divide", one, guarded(w, first))

    def step(i: str, values: Leaves) -> Leaves:
        b, c, d, h = values
        an = numerator(as_float(w, i, shape.with_dtype(_F64)))
        b = L.binary(w, "add", b, two)
        d = L.binary(w, "divide", one, guarded(w, L.binary(
            w, "add", L.binary(w, "multiply", an, d), b)))
        c = guarded(w, L.binary(w, "add", b, L.binary(w, "divide", an, c)))
        return [b, c, d, L.binary(w, "multiply", h, L.binary(w, "multiply", c, d))]
    return loop(w, steps, [first, L.splat(w, 1 / _TINY, shape), d, d], step)[3]


def _fraction(w: FunctionWriter, a: str, x: str) -> str:
    """1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), by the modified Lentz method."""
    shape = L.shape_of(w, a)
    first = L.binary(w, "subtract", L.binary(w, "add", x, L.splat(w, 1.0, shape)), a)
    return lentz(w, FRACTION_STEPS, first, lambda n: unary(w, "stablehlo.negate", L.binary(
        w, "multiply", n, L.binary(w, "subtract", n, a))))


def _p_and_q(w: FunctionWriter, a: str, x: str) -> tuple[str, str]:
    """P(a, x) and Q(a, x) for a > 0, x > 0 finite, each from the form that converges."""
    shape = L.shape_of(w, a)
    one = L.splat(w, 1.0, shape)
    log_prefactor = L.binary(w, "subtract", L.binary(
        w, "subtract", L.binary(w, "multiply", a, unary(w, "stablehlo.log", x)), x),
        unary(w, "chlo.lgamma", a))
    prefactor = unary(w, "stablehlo.exponential", log_prefactor)
    use_series = L.compare(w, x, L.binary(w, "add", a, one), "LT", "FLOAT")
    p_series = L.binary(w, "multiply", L.binary(w, "divide", prefactor, a), _series(w, a, x))
    q_fraction = L.binary(w, "multiply", prefactor, _fraction(w, a, x))
    p = L.select(w, use_series, p_series, L.binary(w, "subtract", one, q_fraction))
    q = L.select(w, use_series, L.binary(w, "subtract", one, p_series), q_fraction)
    return p, q


def is_value(w: FunctionWriter, x: str, direction: str, value: float) -> str:
    return L.compare(w, x, L.splat(w, value, L.shape_of(w, x)), direction, "FLOAT")


def both(w: FunctionWriter, p: str, q: str) -> str:
    return w.generic("stablehlo.and", [p, q], [L.shape_of(w, p)])[0]


def either(w: FunctionWriter, p: str, q: str) -> str:
    return w.generic("stablehlo.or", [p, q], [L.shape_of(w, p)])[0]


def _domain_error(w: FunctionWriter, a: str, x: str) -> str:
    """NaN operands, a < 0, x < 0, or a = x = 0 (as the kernels' domain check)."""
    nan = either(w, L.compare(w, a, a, "NE", "FLOAT"), L.compare(w, x, x, "NE", "FLOAT"))
    negative = either(w, is_value(w, a, "LT", 0.0), is_value(w, x, "LT", 0.0))
    return either(w, either(w, nan, negative), both(w, is_value(w, a, "EQ", 0.0),
                                                        is_value(w, x, "EQ", 0.0)))


def pick(w: FunctionWriter, cases: list[tuple[str, float]], otherwise: str) -> str:
    """The value of the first case whose predicate holds, else `otherwise`."""
    shape = L.shape_of(w, otherwise)
    for predicate, value in reversed(cases):
        otherwise = L.select(w, predicate, L.splat(w, value, shape), otherwise)
    return otherwise


def _igamma(w: FunctionWriter, a: str, x: str) -> str:
    p, _ = _p_and_q(w, a, x)
    from_one = both(w, is_value(w, x, "GE", 1.0), is_value(w, x, "LT", np.inf))
    below_one = both(w, is_value(w, x, "GT", 0.0), is_value(w, x, "LT", 1.0))
    nan = either(w, _domain_error(w, a, x), either(
        w, both(w, is_value(w, a, "EQ", 0.0), below_one),
        both(w, is_value(w, a, "EQ", np.inf), from_one)))
    return pick(w, [(nan, np.nan), (both(w, is_value(w, a, "EQ", 0.0), from_one), 1.0),
                     (is_value(w, x, "EQ", np.inf), 1.0), (is_value(w, x, "EQ", 0.0), 0.0)], p)


def _igammac(w: FunctionWriter, a: str, x: str) -> str:
    _, q = _p_and_q(w, a, x)
    finite_from_one = both(w, is_value(w, x, "GE", 1.0), is_value(w, x, "LT", np.inf))
    nan = either(w, _domain_error(w, a, x), both(w, is_value(w, a, "EQ", np.inf),
                                                    finite_from_one))
    return pick(w, [(nan, np.nan), (either(w, is_value(w, x, "EQ", np.inf),
                                             is_value(w, a, "EQ", 0.0)), 0.0),
                     (is_value(w, x, "EQ", 0.0), 1.0)], q)


def in_float64(formula) -> L.KernelRule:
    """A rule computing `formula(w, *operands)` in float64, rounded to the result type."""
    def rule(w: FunctionWriter, inst: HloInstruction, operands: list[str],
             config: dict) -> Leaves:
        wide = formula(w, *[convert(w, v, _F64) for v in operands])
        return [convert(w, wide, inst.shape.dtype)]
    return rule


IGAMMA_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_igamma": in_float64(_igamma),
    "jaxlite_special_igammac": in_float64(_igammac),
}
