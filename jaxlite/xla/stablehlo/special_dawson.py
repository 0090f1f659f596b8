"""jaxlite's Dawson-integral kernels `dawsn` (scipy's dawsn) and `wofz` (the Faddeeva
function w(z) = exp(-z^2) erfc(-iz), scipy's wofz with NaN where a part of z is
infinite) printed as standard ops in float64 (complex128 as float64 parts).

Both rest on Dawson's integral of complex argument, D(z) = exp(-z^2) int_0^z exp(t^2) dt:

    w(z) = exp(-z^2) + 2i/sqrt(pi) D(z),   dawsn(x) = D(x) = sqrt(pi)/2 Im w(x)

Near the origin, |x| < SERIES_X_TO and |y| < SERIES_Y_TO (z = x + iy), by the power series

    D(z) = exp(-z^2) sum_n z^(2n+1) / (n! (2n+1)),

whose terms are positive on the real axis; off it the sum loses about exp(2 y^2) ulps,
which is why the series stops at |y| = SERIES_Y_TO. Elsewhere in the upper half-plane
by Laplace's continued fraction

    w(z) = i/sqrt(pi) / (z - (1/2) / (z - 1 / (z - (3/2) / (z - ...)))),

evaluated from FRACTION_STEPS terms up; and in the lower half-plane by the reflection
w(z) = 2 exp(-z^2) - w(-z), with exp(-z^2) formed part by part so that it overflows only
where its own parts do (as the kernel's). dawsn(x) beyond SERIES_X_TO is the fraction's
1 / (2 (x - (1/2) / (x - ...))) on the real axis; dawsn(+-inf) = +-0.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import complex_pairs as C
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import as_float, both, either, in_float64, loop

__all__ = ["DAWSON_EXPANSIONS", "SERIES_X_TO", "SERIES_Y_TO", "FRACTION_STEPS"]

SERIES_X_TO = 8.0
SERIES_Y_TO = 1.5
FRACTION_STEPS = 110
_REAL_FRACTION_STEPS = 40
# |z|^2 <= 66 in the series region: the terms peak near n = 66 and fall below 1e-17 of
# the sum by n = 150
_SERIES_STEPS = 180
_SQRT_PI = float(np.sqrt(np.pi))


def _real_series(w: FunctionWriter, x: str) -> str:
    """D(x) = exp(-x^2) sum_n x^(2n+1) / (n! (2n+1)) (positive terms)."""
    shape = L.shape_of(w, x)
    square = L.binary(w, "multiply", x, x)

    def step(i: str, values: Leaves) -> Leaves:
        term, total = values
        n = as_float(w, i, shape)
        term = L.binary(w, "divide", L.binary(w, "multiply", term, square), n)
        odd = L.binary(w, "add", L.binary(w, "add", n, n), L.splat(w, 1.0, shape))
        return [term, L.binary(w, "add", total, L.binary(w, "divide", term, odd))]
    total = loop(w, _SERIES_STEPS, [x, x], step)[1]
    return L.binary(w, "multiply", unary(w, "stablehlo.exponential",
                                         unary(w, "stablehlo.negate", square)), total)


def _real_fraction(w: FunctionWriter, x: str) -> str:
    """D(x) = 1 / (2 (x - (1/2) / (x - 1 / (x - ...)))) for |x| >= SERIES_X_TO."""
    shape = L.shape_of(w, x)

    def step(i: str, values: Leaves) -> Leaves:
        half_k = L.binary(w, "multiply", L.splat(w, 0.5, shape), L.binary(
            w, "subtract", L.splat(w, _REAL_FRACTION_STEPS + 1.0, shape), as_float(w, i, shape)))
        return [L.binary(w, "subtract", x, L.binary(w, "divide", half_k, values[0]))]
    tail = loop(w, _REAL_FRACTION_STEPS, [x], step)[0]
    return L.binary(w, "divide", L.splat(w, 0.5, shape), tail)


def _dawsn(w: FunctionWriter, x: str) -> str:
    near = L.compare(w, unary(w, "stablehlo.abs", x),
                     L.splat(w, SERIES_X_TO, L.shape_of(w, x)), "LT", "FLOAT")
    return L.select(w, near, _real_series(w, x), _real_fraction(w, x))


def _minus_square_exp(w: FunctionWriter, z: C.Pair, factor: float = 1.0) -> C.Pair:
    """factor exp(-z^2): exponent (y - x)(x + y) - 2ixy (no cancellation in x^2 - y^2)."""
    x, y = z
    shape = L.shape_of(w, x)
    re = C.real_op(w, "multiply", C.real_op(w, "subtract", y, x), C.real_op(w, "add", x, y))
    im = C.real_op(w, "multiply", L.splat(w, -2.0, shape), C.real_op(w, "multiply", x, y))
    return C.exp(w, (re, im), factor)


def _complex_series(w: FunctionWriter, z: C.Pair) -> C.Pair:
    """w(z) = exp(-z^2) (1 + 2i/sqrt(pi) sum_n z^(2n+1) / (n! (2n+1)))."""
    shape = L.shape_of(w, z[0])
    square = C.mul(w, z, z)

    def step(i: str, values: Leaves) -> Leaves:
        n = as_float(w, i, shape)
        term = C.scale(w, C.mul(w, (values[0], values[1]), square),
                       L.binary(w, "divide", L.splat(w, 1.0, shape), n))
        odd = L.binary(w, "add", L.binary(w, "add", n, n), L.splat(w, 1.0, shape))
        inverse_odd = L.binary(w, "divide", L.splat(w, 1.0, shape), odd)
        total = C.add(w, (values[2], values[3]), C.scale(w, term, inverse_odd))
        return [*term, *total]
    total = tuple(loop(w, _SERIES_STEPS, [*z, *z], step)[2:])
    inner = C.add(w, C.constant(w, 1.0, z[0]),
                  C.mul(w, C.constant(w, 2j / _SQRT_PI, z[0]), total))
    return C.mul(w, _minus_square_exp(w, z), inner)


def _fraction(w: FunctionWriter, z: C.Pair) -> C.Pair:
    """Laplace's continued fraction for w(z), Im z >= 0."""
    shape = L.shape_of(w, z[0])

    def step(i: str, values: Leaves) -> Leaves:
        half_k = L.binary(w, "multiply", L.splat(w, 0.5, shape), L.binary(
            w, "subtract", L.splat(w, FRACTION_STEPS + 1.0, shape), as_float(w, i, shape)))
        return list(C.sub(w, z, C.scale(w, C.reciprocal(w, (values[0], values[1])), half_k)))
    tail = tuple(loop(w, FRACTION_STEPS, list(z), step))
    return C.div(w, C.constant(w, 1j / _SQRT_PI, z[0]), tail)


def _wofz(w: FunctionWriter, z: C.Pair) -> C.Pair:
    x, y = z
    shape = L.shape_of(w, x)
    near = both(w, L.compare(w, unary(w, "stablehlo.abs", x), L.splat(w, SERIES_X_TO, shape),
                             "LT", "FLOAT"),
                L.compare(w, unary(w, "stablehlo.abs", y), L.splat(w, SERIES_Y_TO, shape),
                          "LT", "FLOAT"))
    lower = L.compare(w, y, L.splat(w, 0.0, shape), "LT", "FLOAT")
    upper_z = C.select_pair(w, lower, C.neg(w, z), z)
    far = _fraction(w, upper_z)
    reflected = C.sub(w, _minus_square_exp(w, z, 2.0), far)
    value = C.select_pair(w, near, _complex_series(w, z), C.select_pair(w, lower, reflected, far))
    infinite = either(w, _is_infinite(w, x), _is_infinite(w, y))
    nan = C.constant(w, complex(np.nan, np.nan), x)
    re, im = C.select_pair(w, infinite, nan, value)
    # the kernel's w(0 + nan i) is real (its imaginary axis is erfcx(y))
    nan_on_axis = both(w, L.compare(w, x, L.splat(w, 0.0, shape), "EQ", "FLOAT"),
                       L.compare(w, y, y, "NE", "FLOAT"))
    return re, L.select(w, nan_on_axis, L.splat(w, 0.0, shape), im)


def _is_infinite(w: FunctionWriter, v: str) -> str:
    return L.compare(w, unary(w, "stablehlo.abs", v), L.splat(w, np.inf, L.shape_of(w, v)),
                     "EQ", "FLOAT")


DAWSON_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_dawsn": in_float64(_dawsn),
    "jaxlite_special_wofz": C.in_complex128(_wofz),
}
