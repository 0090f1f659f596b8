"""jaxlite's trigonometric integral kernels, the sine and cosine integrals `sici_si` /
`sici_ci` and the Fresnel integrals `fresnel_s` / `fresnel_c` (scipy's sici and fresnel),
printed as standard ops in float64, split as JAX's (Cephes's) algorithms split them: a
power series near zero, beyond it what the function's asymptotic form is the tail of,
here a complex continued fraction (modified Lentz, complex128 ops) rather than rational
approximations:

    t = |x| <= SICI_SERIES_TO:
        Si(t) = sum_k (-1)^k t^(2k+1) / ((2k+1) (2k+1)!)
        Ci(t) = gamma + log t + sum_(k>=1) (-1)^k t^(2k) / (2k (2k)!)
    beyond: E1(i t) = e^(-i t) / (1 + i t - 1 / (3 + i t - 4 / (5 + i t - ...)))
        Ci(t) = -Re E1(i t), Si(t) = pi/2 + Im E1(i t)

    t < FRESNEL_SERIES_TO, u = pi t^2 / 2:
        C(t) = sum_k (-1)^k u^(2k) t / ((4k+1) (2k)!)
        S(t) = sum_k (-1)^k u^(2k+1) t / ((4k+3) (2k+1)!)
    beyond: C + i S = (1 + i) / 2 (1 - (1 - i) t e^(i u) / (1 - 2iu - 2 / (5 - 2iu - ...)))

Si, C and S are odd, Ci even (scipy's real Ci of x < 0); Si(+-inf) = +-pi/2, Ci(0) = -inf,
Ci(inf) = 0, Ci(-inf) = NaN, C(+-inf) = S(+-inf) = +-1/2.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import (as_float, in_float64, is_value, lentz,
                                                  loop, pick)

__all__ = ["SICI_EXPANSIONS", "SICI_SERIES_TO", "FRESNEL_SERIES_TO"]

SICI_SERIES_TO = 2.0
FRESNEL_SERIES_TO = 1.5
_SERIES_STEPS = 40
_SICI_FRACTION_STEPS = 120
_FRESNEL_FRACTION_STEPS = 80
_C128 = np.dtype(np.complex128)


def _complex(w: FunctionWriter, re: str, im: str) -> str:
    return w.generic("stablehlo.complex", [re, im], [L.shape_of(w, re).with_dtype(_C128)])[0]


def _part(w: FunctionWriter, which: str, z: str) -> str:
    real = L.shape_of(w, z).with_dtype(np.dtype(np.float64))
    return w.generic(f"stablehlo.{which}", [z], [real])[0]


def _paired_series(w: FunctionWriter, x: str, first: tuple[str, str],
                   totals: tuple[str, str], denominators) -> tuple[str, str]:
    """sum_k e_k / d_e(k) and sum_k o_k / d_o(k) over k >= 1 added to `totals`, where
    e_k = -o_(k-1) x / (2k) and o_k = e_k x / (2k + 1) from (e_0, o_0) = `first`: the even
    and odd terms of an alternating exponential series; `denominators(k)` = (d_e, d_o)."""
    shape = L.shape_of(w, x)

    def step(i: str, values: Leaves) -> Leaves:
        even, odd, even_total, odd_total = values
        k = as_float(w, i, shape)
        two_k = L.binary(w, "add", k, k)
        even = unary(w, "stablehlo.negate", L.binary(
            w, "divide", L.binary(w, "multiply", odd, x), two_k))
        odd = L.binary(w, "divide", L.binary(w, "multiply", even, x), L.binary(
            w, "add", two_k, L.splat(w, 1.0, shape)))
        d_even, d_odd = denominators(k)
        return [even, odd, L.binary(w, "add", even_total, L.binary(w, "divide", even, d_even)),
                L.binary(w, "add", odd_total, L.binary(w, "divide", odd, d_odd))]
    return tuple(loop(w, _SERIES_STEPS, list(first) + list(totals), step)[2:])


def _sici_series(w: FunctionWriter, t: str) -> tuple[str, str]:
    """Si(t), Ci(t): the odd and even powers of t / n!."""
    shape = L.shape_of(w, t)

    def denominators(k: str) -> tuple[str, str]:
        two_k = L.binary(w, "add", k, k)
        return two_k, L.binary(w, "add", two_k, L.splat(w, 1.0, shape))
    # Ci's k = 0 term is gamma + log t
    start = L.binary(w, "add", L.splat(w, np.euler_gamma, shape), unary(w, "stablehlo.log", t))
    ci, si = _paired_series(w, t, (L.splat(w, 1.0, shape), t), (start, t), denominators)
    return si, ci


def _sici_fraction(w: FunctionWriter, t: str) -> tuple[str, str]:
    shape = L.shape_of(w, t)
    zero, one = L.splat(w, 0.0, shape), L.splat(w, 1.0, shape)
    h = lentz(w, _SICI_FRACTION_STEPS, _complex(w, one, t), lambda k: _complex(
        w, unary(w, "stablehlo.negate", L.binary(w, "multiply", k, k)), zero))
    turn = _complex(w, unary(w, "stablehlo.cosine", t),
                    unary(w, "stablehlo.negate", unary(w, "stablehlo.sine", t)))
    e1 = L.binary(w, "multiply", h, turn)
    return (L.binary(w, "add", L.splat(w, np.pi / 2, shape), _part(w, "imag", e1)),
            unary(w, "stablehlo.negate", _part(w, "real", e1)))


def _odd(w: FunctionWriter, x: str, value: str) -> str:
    return L.select(w, is_value(w, x, "LT", 0.0), unary(w, "stablehlo.negate", value), value)


def _sici(w: FunctionWriter, x: str) -> tuple[str, str]:
    t = unary(w, "stablehlo.abs", x)
    near = is_value(w, t, "LE", SICI_SERIES_TO)
    (si_near, ci_near), (si_far, ci_far) = _sici_series(w, t), _sici_fraction(w, t)
    si = _odd(w, x, L.select(w, near, si_near, si_far))
    ci = L.select(w, near, ci_near, ci_far)
    si = pick(w, [(is_value(w, x, "EQ", np.inf), np.pi / 2),
                  (is_value(w, x, "EQ", -np.inf), -np.pi / 2)], si)
    ci = pick(w, [(is_value(w, x, "EQ", 0.0), -np.inf), (is_value(w, x, "EQ", np.inf), 0.0),
                  (is_value(w, x, "EQ", -np.inf), np.nan)], ci)
    return si, ci


def _fresnel_series(w: FunctionWriter, t: str) -> tuple[str, str]:
    """S(t), C(t): the odd and even powers of u / n!, times t."""
    shape = L.shape_of(w, t)
    u = L.binary(w, "multiply", L.splat(w, np.pi / 2, shape), L.binary(w, "multiply", t, t))
    four = L.splat(w, 4.0, shape)

    def denominators(k: str) -> tuple[str, str]:
        four_k = L.binary(w, "multiply", four, k)
        return (L.binary(w, "add", four_k, L.splat(w, 1.0, shape)),
                L.binary(w, "add", four_k, L.splat(w, 3.0, shape)))
    ut = L.binary(w, "multiply", u, t)
    c, s = _paired_series(w, u, (t, ut), (t, L.binary(w, "divide", ut, L.splat(w, 3.0, shape))),
                          denominators)
    return s, c


def _fresnel_fraction(w: FunctionWriter, t: str) -> tuple[str, str]:
    shape = L.shape_of(w, t)
    zero, one = L.splat(w, 0.0, shape), L.splat(w, 1.0, shape)
    u = L.binary(w, "multiply", L.splat(w, np.pi / 2, shape), L.binary(w, "multiply", t, t))
    first = _complex(w, one, unary(w, "stablehlo.negate", L.binary(w, "add", u, u)))
    h = lentz(w, _FRESNEL_FRACTION_STEPS, first, lambda k: _complex(w, unary(
        w, "stablehlo.negate", L.binary(w, "multiply", L.binary(w, "subtract", L.binary(
            w, "add", k, k), one), L.binary(w, "add", k, k))), zero), increment=4.0)
    h = L.binary(w, "multiply", h, _complex(w, t, unary(w, "stablehlo.negate", t)))
    turn = _complex(w, unary(w, "stablehlo.cosine", u), unary(w, "stablehlo.sine", u))
    c128 = shape.with_dtype(_C128)
    half = _complex(w, L.splat(w, 0.5, shape), L.splat(w, 0.5, shape))
    cs = L.binary(w, "multiply", half, L.binary(w, "subtract", L.splat(w, 1.0, c128),
                                                   L.binary(w, "multiply", h, turn)))
    return _part(w, "imag", cs), _part(w, "real", cs)


def _fresnel(w: FunctionWriter, x: str) -> tuple[str, str]:
    t = unary(w, "stablehlo.abs", x)
    near = is_value(w, t, "LT", FRESNEL_SERIES_TO)
    (s_near, c_near), (s_far, c_far) = _fresnel_series(w, t), _fresnel_fraction(w, t)
    s, c = (_odd(w, x, L.select(w, near, a, b)) for a, b in ((s_near, s_far),
                                                                (c_near, c_far)))
    infinite = [(is_value(w, x, "EQ", np.inf), 0.5), (is_value(w, x, "EQ", -np.inf), -0.5)]
    return pick(w, infinite, s), pick(w, infinite, c)


SICI_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_sici_si": in_float64(lambda w, x: _sici(w, x)[0]),
    "jaxlite_special_sici_ci": in_float64(lambda w, x: _sici(w, x)[1]),
    "jaxlite_special_fresnel_s": in_float64(lambda w, x: _fresnel(w, x)[0]),
    "jaxlite_special_fresnel_c": in_float64(lambda w, x: _fresnel(w, x)[1]),
}
