"""jaxlite's complex gamma-family kernels printed as standard ops on float64 parts:
`loggamma_complex` (scipy's loggamma, the principal branch: analytic off the negative
real axis, real on the positive one, NaN + NaN i at the poles and NaN),
`digamma_complex` (scipy's psi of complex z) and `gamma` of complex operands (scipy's
gamma, which is exp(loggamma(z)), NaN + NaN i at the poles and where a part is not finite;
real operands are special_gamma.py's).

Both are conjugate-symmetric, so z is taken into the upper half-plane (a negative or -0
imaginary part is the lower side of the cut, as the kernel reads it) and the result
conjugated back. With u = exp(2 pi i z) (|u| <= 1 there; formed from the fraction of x so
that the angle stays exact), the reflection formulas for Re z < 1/2 are

    log Gamma(z) = log(2 pi) - i pi/2 + i pi z - log(1 - u) - log Gamma(1 - z)
    psi(z)       = psi(1 - z) + i pi (2 / (1 - u) - 1)            (= ... - pi cot(pi z))

(the first is the branch that is continuous in the upper half-plane and real at z = 1/2;
1 - u = -expm1(2 pi i z) without cancellation near the poles). For Re z >= 1/2:
Taylor series where the function has a zero (log Gamma at 1 and 2, psi at its root
x0 = 1.46163...), coefficients zeta(k), zeta(k) - 1 and the Hurwitz zeta(k + 1, x0);
elsewhere Stirling's series (and psi's asymptotic series) from |z| >= ASYMPTOTIC_FROM, after
log Gamma(z) = log Gamma(z + n) - sum_(k<n) log(z + k), psi(z) = psi(z + n) - sum 1/(z + k)
with n = SHIFT below it.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

from jaxlite.xla.stablehlo import complex_pairs as C
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import GAMMA_EXPANSIONS, unary
from jaxlite.xla.stablehlo.special_igamma import as_float, both, either, loop

__all__ = ["COMPLEX_GAMMA_EXPANSIONS", "ASYMPTOTIC_FROM", "SHIFT", "TAYLOR_RADIUS"]

ASYMPTOTIC_FROM = 10.0
SHIFT = 10
TAYLOR_RADIUS = 0.2
PSI_ROOT, _PSI_ROOT_LOW = 1.4616321449683622, 9.549995429965697e-17
_PSI_TAYLOR_RADIUS = 0.3
_TAYLOR_TERMS = 30
_ASYMPTOTIC_TERMS = 12
_BERNOULLI = sp.bernoulli(2 * _ASYMPTOTIC_TERMS)[::2][1:]  # B_2, B_4, ...
# Taylor coefficients, lowest power first
_LOG_GAMMA_AT_1 = [0.0, -np.euler_gamma] + [(-1) ** k * sp.zeta(k) / k
                                            for k in range(2, _TAYLOR_TERMS)]
_LOG_GAMMA_AT_2 = [0.0, 1 - np.euler_gamma] + [(-1) ** k * sp.zetac(k) / k
                                               for k in range(2, _TAYLOR_TERMS)]
# (about PSI_ROOT, the float64 nearest the root, where psi is -_PSI_ROOT_LOW psi'(root))
_PSI_AT_ROOT = [(-1) ** (k + 1) * sp.zeta(k + 1, PSI_ROOT) for k in range(1, _TAYLOR_TERMS)]
_PSI_AT_ROOT = [-_PSI_ROOT_LOW * _PSI_AT_ROOT[0]] + _PSI_AT_ROOT


def _polynomial(w: FunctionWriter, coefficients, x: C.Pair) -> C.Pair:
    """sum_k coefficients[k] x^k, by Horner's rule."""
    total = C.constant(w, coefficients[-1], x[0])
    for c in reversed(coefficients[:-1]):
        total = C.add(w, C.mul(w, total, x), C.constant(w, c, x[0]))
    return total


def _distance_below(w: FunctionWriter, z: C.Pair, centre: float, radius: float) -> str:
    shape = L.shape_of(w, z[0])
    dx = C.real_op(w, "subtract", z[0], L.splat(w, centre, shape))
    square = C.real_op(w, "add", C.real_op(w, "multiply", dx, dx),
                       C.real_op(w, "multiply", z[1], z[1]))
    return L.compare(w, square, L.splat(w, radius * radius, shape), "LT", "FLOAT")


def _shifted(w: FunctionWriter, z: C.Pair) -> tuple[str, C.Pair]:
    """Whether |z| < ASYMPTOTIC_FROM, and z + SHIFT there (z elsewhere)."""
    shape = L.shape_of(w, z[0])
    square = C.real_op(w, "add", C.real_op(w, "multiply", z[0], z[0]),
                       C.real_op(w, "multiply", z[1], z[1]))
    near = L.compare(w, square, L.splat(w, ASYMPTOTIC_FROM ** 2, shape), "LT", "FLOAT")
    moved = C.real_op(w, "add", z[0], L.splat(w, float(SHIFT), shape))
    return near, (L.select(w, near, moved, z[0]), z[1])


def _shift_sum(w: FunctionWriter, z: C.Pair, near: str, term) -> C.Pair:
    """sum_(k < SHIFT) term(z + k) where `near`, 0 elsewhere (a `stablehlo.while`)."""
    shape = L.shape_of(w, z[0])

    def step(i: str, values: list[str]) -> list[str]:
        k = C.real_op(w, "subtract", as_float(w, i, shape), L.splat(w, 1.0, shape))
        return list(C.add(w, (values[0], values[1]),
                          term((C.real_op(w, "add", z[0], k), z[1]))))
    total = tuple(loop(w, SHIFT, list(C.constant(w, 0.0, z[0])), step))
    return C.select_pair(w, near, total, C.constant(w, 0.0, z[0]))


def _stirling(w: FunctionWriter, z: C.Pair) -> C.Pair:
    """(z - 1/2) log z - z + log(2 pi)/2 + sum_k B_2k / (2k (2k - 1) z^(2k - 1))."""
    inverse = C.reciprocal(w, z)
    series = C.mul(w, inverse, _polynomial(
        w, [b / (2 * k * (2 * k - 1)) for k, b in enumerate(_BERNOULLI, 1)],
        C.mul(w, inverse, inverse)))
    half_less = C.sub(w, z, C.constant(w, 0.5, z[0]))
    main = C.sub(w, C.mul(w, half_less, C.log(w, z)), z)
    return C.add(w, C.add(w, main, C.constant(w, 0.5 * np.log(2 * np.pi), z[0])), series)


def _psi_asymptotic(w: FunctionWriter, z: C.Pair) -> C.Pair:
    """log z - 1/(2z) - sum_k B_2k / (2k z^(2k))."""
    inverse = C.reciprocal(w, z)
    square = C.mul(w, inverse, inverse)
    series = C.mul(w, square, _polynomial(
        w, [b / (2 * k) for k, b in enumerate(_BERNOULLI, 1)], square))
    half = C.scale(w, inverse, L.splat(w, 0.5, L.shape_of(w, z[0])))
    return C.sub(w, C.sub(w, C.log(w, z), half), series)


def _right_log_gamma(w: FunctionWriter, z: C.Pair) -> C.Pair:
    """log Gamma(z) for Re z >= 1/2."""
    near, moved = _shifted(w, z)
    far = C.sub(w, _stirling(w, moved), _shift_sum(w, z, near, lambda p: C.log(w, p)))
    one = C.sub(w, z, C.constant(w, 1.0, z[0]))
    two = C.sub(w, z, C.constant(w, 2.0, z[0]))
    value = C.select_pair(w, _distance_below(w, z, 2.0, TAYLOR_RADIUS),
                          _polynomial(w, _LOG_GAMMA_AT_2, two), far)
    return C.select_pair(w, _distance_below(w, z, 1.0, TAYLOR_RADIUS),
                         _polynomial(w, _LOG_GAMMA_AT_1, one), value)


def _right_psi(w: FunctionWriter, z: C.Pair) -> C.Pair:
    """psi(z) for Re z >= 1/2."""
    near, moved = _shifted(w, z)
    far = C.sub(w, _psi_asymptotic(w, moved),
                _shift_sum(w, z, near, lambda p: C.reciprocal(w, p)))
    shape = L.shape_of(w, z[0])
    offset = C.real_op(w, "subtract", z[0], L.splat(w, PSI_ROOT, shape))
    return C.select_pair(w, _distance_below(w, z, PSI_ROOT, _PSI_TAYLOR_RADIUS),
                         _polynomial(w, _PSI_AT_ROOT, (offset, z[1])), far)


def _one_minus_u(w: FunctionWriter, z: C.Pair) -> C.Pair:
    """1 - exp(2 pi i z) = -expm1(-2 pi y + 2 pi i frac(x)), for y >= 0."""
    x, y = z
    shape = L.shape_of(w, x)
    fraction = C.real_op(w, "subtract", x, unary(w, "stablehlo.round_nearest_even", x))
    angle = C.real_op(w, "multiply", L.splat(w, 2 * np.pi, shape), fraction)
    decay = C.real_op(w, "multiply", L.splat(w, -2 * np.pi, shape), y)
    half_sine = unary(w, "stablehlo.sine", C.real_op(w, "multiply", angle,
                                                     L.splat(w, 0.5, shape)))
    # Re: 1 - e^a cos b = 2 sin^2(b/2) - expm1(a) cos b;  Im: -e^a sin b
    re = C.real_op(w, "subtract", C.real_op(
        w, "multiply", L.splat(w, 2.0, shape), C.real_op(w, "multiply", half_sine, half_sine)),
        C.real_op(w, "multiply", unary(w, "stablehlo.exponential_minus_one", decay),
                  unary(w, "stablehlo.cosine", angle)))
    im = unary(w, "stablehlo.negate", C.real_op(
        w, "multiply", unary(w, "stablehlo.exponential", decay), unary(w, "stablehlo.sine", angle)))
    return re, im


def _lower_side(w: FunctionWriter, y: str) -> str:
    """y < 0 or y = -0."""
    shape = L.shape_of(w, y)
    zero = L.splat(w, 0.0, shape)
    inverse = C.real_op(w, "divide", L.splat(w, 1.0, shape), y)
    return either(w, L.compare(w, y, zero, "LT", "FLOAT"),
                  L.compare(w, inverse, zero, "LT", "FLOAT"))


def _reflected(w: FunctionWriter, z: C.Pair, right, reflection) -> tuple[C.Pair, str]:
    """`right(v)` at v = z (Re z >= 1/2) or 1 - z, combined by `reflection(z, value)`,
    for z taken into the upper half-plane and the result conjugated back; with the mask
    of the non-positive whole numbers."""
    x, y = z
    shape = L.shape_of(w, x)
    lower = _lower_side(w, y)
    z = (x, unary(w, "stablehlo.abs", y))
    left = L.compare(w, x, L.splat(w, 0.5, shape), "LT", "FLOAT")
    mirrored = C.sub(w, C.constant(w, 1.0, x), z)
    value = right(w, C.select_pair(w, left, mirrored, z))
    value = C.select_pair(w, left, reflection(z, value), value)
    value = C.select_pair(w, lower, C.conj(w, value), value)
    pole = both(w, both(w, L.compare(w, y, L.splat(w, 0.0, shape), "EQ", "FLOAT"),
                        L.compare(w, x, L.splat(w, 0.0, shape), "LE", "FLOAT")),
                L.compare(w, x, unary(w, "stablehlo.floor", x), "EQ", "FLOAT"))
    return value, pole


def _infinite(w: FunctionWriter, v: str) -> str:
    return L.compare(w, unary(w, "stablehlo.abs", v), L.splat(w, np.inf, L.shape_of(w, v)),
                     "EQ", "FLOAT")


def _loggamma(w: FunctionWriter, z: C.Pair) -> C.Pair:
    x = z[0]
    shape = L.shape_of(w, x)

    def reflection(z: C.Pair, mirrored: C.Pair) -> C.Pair:
        x, y = z
        turn = (C.real_op(w, "multiply", L.splat(w, -np.pi, shape), y),
                C.real_op(w, "add", C.real_op(w, "multiply", L.splat(w, np.pi, shape), x),
                          L.splat(w, -np.pi / 2, shape)))  # -i pi/2 + i pi z
        first = C.add(w, C.constant(w, np.log(2 * np.pi), x), turn)
        return C.sub(w, C.sub(w, first, C.log(w, _one_minus_u(w, z))), mirrored)
    value, pole = _reflected(w, z, _right_log_gamma, reflection)
    nan = C.constant(w, complex(np.nan, np.nan), x)
    # the kernel's edges: -inf + nan i where y is infinite and x <= 0, else NaN
    imaginary_infinite = both(w, _infinite(w, z[1]),
                              L.compare(w, x, L.splat(w, 0.0, shape), "LE", "FLOAT"))
    edge = C.select_pair(w, imaginary_infinite, C.constant(w, complex(-np.inf, np.nan), x), nan)
    bad = either(w, pole, either(w, _infinite(w, x), _infinite(w, z[1])))
    return C.select_pair(w, bad, edge, value)


def _digamma(w: FunctionWriter, z: C.Pair) -> C.Pair:
    x, y = z
    shape = L.shape_of(w, x)

    def reflection(z: C.Pair, mirrored: C.Pair) -> C.Pair:
        ratio = C.sub(w, C.div(w, C.constant(w, 2.0, x), _one_minus_u(w, z)),
                      C.constant(w, 1.0, x))
        return C.add(w, mirrored, C.mul(w, C.constant(w, 1j * np.pi, x), ratio))
    value, pole = _reflected(w, z, _right_psi, reflection)
    nan = C.constant(w, complex(np.nan, np.nan), x)
    # the kernel's edges: log z at infinity (inf + i arg z), NaN towards -inf along x
    at_infinity = (L.splat(w, np.inf, shape), C.real_op(w, "atan2", y, x))
    towards_minus = both(w, L.compare(w, x, L.splat(w, -np.inf, shape), "EQ", "FLOAT"),
                         L.compare(w, unary(w, "stablehlo.abs", y), L.splat(w, np.inf, shape),
                                   "LT", "FLOAT"))
    edge = C.select_pair(w, towards_minus, nan, at_infinity)
    value = C.select_pair(w, either(w, _infinite(w, x), _infinite(w, y)), edge, value)
    return C.select_pair(w, pole, nan, value)


def _gamma(w: FunctionWriter, z: C.Pair) -> C.Pair:
    """exp(log Gamma(z)) as the kernel's complex exp: exp(re) (cos im, sin im), the
    imaginary part exactly 0 where im is."""
    x, y = z
    shape = L.shape_of(w, x)
    re, im = _loggamma(w, z)
    modulus = unary(w, "stablehlo.exponential", re)
    value = (C.real_op(w, "multiply", modulus, unary(w, "stablehlo.cosine", im)),
             L.select(w, L.compare(w, im, L.splat(w, 0.0, shape), "EQ", "FLOAT"), im,
                      C.real_op(w, "multiply", modulus, unary(w, "stablehlo.sine", im))))
    finite = both(w, L.compare(w, unary(w, "stablehlo.abs", x), L.splat(w, np.inf, shape), "LT",
                               "FLOAT"),
                  L.compare(w, unary(w, "stablehlo.abs", y), L.splat(w, np.inf, shape), "LT",
                            "FLOAT"))
    return C.select_pair(w, finite, value, C.constant(w, complex(np.nan, np.nan), x))


_real_gamma = GAMMA_EXPANSIONS["jaxlite_special_gamma"]
_complex_gamma = C.in_complex128(_gamma)


def _gamma_rule(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                config: dict) -> Leaves | None:
    rule = _complex_gamma if inst.shape.dtype.kind == "c" else _real_gamma
    return rule(w, inst, operands, config)


COMPLEX_GAMMA_EXPANSIONS = {
    "jaxlite_special_loggamma_complex": C.in_complex128(_loggamma),
    "jaxlite_special_digamma_complex": C.in_complex128(_digamma),
    "jaxlite_special_gamma": _gamma_rule,
}
