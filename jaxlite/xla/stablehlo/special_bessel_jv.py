"""jaxlite's `bessel_jv` kernel (scipy's jv(v, z), NaN at infinite z) printed as standard
ops in float64, for orders |v| <= MAX_ORDER, whole or not. As JAX's bessel_jn, by Miller's
backward recurrence (here from the fixed start order MILLER_START, rescaled against
overflow), and where that does not reach, by Hankel's asymptotic expansion, a forward
recurrence or the leading terms of the power series (n = |v| for whole v; n = v = m + mu,
m whole and 0 < mu < 1, otherwise):

    z >= ASYMPTOTIC_FROM and z >= n^2 / 2:
        J_n(z) = sqrt(2 / (pi z)) (P cos w - Q sin w),  w = z - (n/2 + 1/4) pi,
        P - i Q = sum_k (-i)^k a_k / z^k,  a_k = prod_(j<=k) (4n^2 - (2j-1)^2) / (8j),
        summed (past k = n) while the terms shrink
    z >= MILLER_TO below n^2 / 2 (so z > n: the recurrence is stable upwards):
        J_(mu+k+1) = 2 (mu+k) / z J_(mu+k) - J_(mu+k-1) from Hankel's J_mu and J_(mu+1)
    SMALL_Z <= z < MILLER_TO:
        f_(k-1) = 2(mu+k)/z f_k - f_(k+1) from f_(M+1) = 0, f_M = 1 (orders mu + k);
        J_n = f_n / (f_0 + 2 f_2 + 2 f_4 + ...)                    whole n (mu = 0)
        J_n = (z/2)^mu f_n / sum_k (mu+2k) Gamma(mu+k) / k! f_2k   otherwise, from
        (z/2)^mu = sum_k (mu+2k) Gamma(mu+k) / k! J_(mu+2k)(z)
    0 < z < SMALL_Z:  J_n(z) = (z/2)^n / Gamma(n+1) (1 - (z/2)^2 / (n + 1))

J_(-n) = (-1)^n J_n and J_n(-z) = (-1)^n J_n(z) for whole n; J_0(0) = 1, J_n(0) = 0.
NaN at infinite or NaN z, and (unlike the kernel) at orders above MAX_ORDER and at
negative orders that are not whole (which need Y_v), or for those at z = 0; the kernel's
J_v(z < 0) is NaN too where v is not whole.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_gamma import unary
from jaxlite.xla.stablehlo.special_igamma import (as_float, both, either, in_float64,
                                                  is_value, loop, pick)

__all__ = ["JV_EXPANSIONS", "MILLER_START", "MILLER_TO", "ASYMPTOTIC_FROM", "MAX_ORDER"]

MILLER_START = 300
MILLER_TO = 240.0
ASYMPTOTIC_FROM = 30.0
MAX_ORDER = 100.0
SMALL_Z = 1e-5
_ASYMPTOTIC_TERMS = 600
_HUGE = 1e250


def _miller(w: FunctionWriter, n: str, z: str) -> str:
    """J_n(z) for whole n in [0, MILLER_START) and 0 < z < ASYMPTOTIC_FROM."""
    shape = L.shape_of(w, z)
    zero = L.splat(w, 0.0, shape)
    inverse_scale = L.splat(w, 1 / _HUGE, shape)

    def step(i: str, values: Leaves) -> Leaves:
        above, here, total, chosen = values  # f_(k+1), f_k, the norm's sum, f_n
        k = L.binary(w, "subtract", L.splat(w, MILLER_START + 1.0, shape), as_float(w, i, shape))
        below = L.binary(w, "subtract", L.binary(w, "multiply", L.binary(
            w, "divide", L.binary(w, "add", k, k), z), here), above)  # f_(k-1)
        k_below = L.binary(w, "subtract", k, L.splat(w, 1.0, shape))
        half = unary(w, "stablehlo.floor", L.binary(w, "multiply", k_below,
                                                    L.splat(w, 0.5, shape)))
        even = L.compare(w, L.binary(w, "add", half, half), k_below, "EQ", "FLOAT")
        weight = L.select(w, is_value(w, k_below, "EQ", 0.0), L.splat(w, 1.0, shape),
                          L.select(w, even, L.splat(w, 2.0, shape), zero))
        total = L.binary(w, "add", total, L.binary(w, "multiply", weight, below))
        chosen = L.select(w, L.compare(w, k_below, n, "EQ", "FLOAT"), below, chosen)
        large = is_value(w, unary(w, "stablehlo.abs", below), "GT", _HUGE)
        values = [here, below, total, chosen]
        return [L.select(w, large, L.binary(w, "multiply", v, inverse_scale), v)
                for v in values]
    start = L.splat(w, 1.0, shape)
    chosen = L.select(w, L.compare(w, n, L.splat(w, float(MILLER_START), shape), "EQ", "FLOAT"),
                      start, zero)
    above, here, total, chosen = loop(w, MILLER_START, [zero, start, zero, chosen], step)
    return L.binary(w, "divide", chosen, total)


def _fractional_miller(w: FunctionWriter, n: str, mu: str, z: str) -> str:
    """J_n(z) for n = m + mu, 0 < mu < 1, m in [0, MILLER_START), 0 < z < MILLER_TO."""
    shape = L.shape_of(w, z)
    zero, one = L.splat(w, 0.0, shape), L.splat(w, 1.0, shape)
    inverse_scale = L.splat(w, 1 / _HUGE, shape)
    whole_part = unary(w, "stablehlo.floor", n)

    def step(i: str, values: Leaves) -> Leaves:
        above, here, total, chosen = values  # f_(k+1), f_k, the norm's sum, f_n
        k = L.binary(w, "subtract", L.splat(w, MILLER_START + 1.0, shape), as_float(w, i, shape))
        order = L.binary(w, "add", mu, k)
        below = L.binary(w, "subtract", L.binary(w, "multiply", L.binary(
            w, "divide", L.binary(w, "add", order, order), z), here), above)  # f_(k-1)
        k_below = L.binary(w, "subtract", k, one)
        half = L.binary(w, "multiply", k_below, L.splat(w, 0.5, shape))
        even = L.compare(w, unary(w, "stablehlo.floor", half), half, "EQ", "FLOAT")
        # (mu + 2j) Gamma(mu + j) / j! at k - 1 = 2j
        weight = L.binary(w, "multiply", L.binary(w, "add", mu, k_below), unary(
            w, "stablehlo.exponential", L.binary(
                w, "subtract", unary(w, "chlo.lgamma", L.binary(w, "add", mu, half)),
                unary(w, "chlo.lgamma", L.binary(w, "add", half, one)))))
        total = L.binary(w, "add", total, L.select(w, even, L.binary(w, "multiply", weight,
                                                                       below), zero))
        chosen = L.select(w, L.compare(w, k_below, whole_part, "EQ", "FLOAT"), below, chosen)
        large = is_value(w, unary(w, "stablehlo.abs", below), "GT", _HUGE)
        values = [here, below, total, chosen]
        return [L.select(w, large, L.binary(w, "multiply", v, inverse_scale), v)
                for v in values]
    _, _, total, chosen = loop(w, MILLER_START, [zero, one, zero, zero], step)
    power = unary(w, "stablehlo.exponential", L.binary(w, "multiply", mu, unary(
        w, "stablehlo.log", L.binary(w, "multiply", z, L.splat(w, 0.5, shape)))))
    return L.binary(w, "divide", L.binary(w, "multiply", chosen, power), total)


def _forward(w: FunctionWriter, n: str, mu: str, z: str) -> str:
    """J_n(z) for n = m + mu <= MAX_ORDER and z >= MILLER_TO, upwards from J_mu, J_(mu+1)."""
    shape = L.shape_of(w, z)
    one = L.splat(w, 1.0, shape)
    first, second = _hankel(w, mu, z), _hankel(w, L.binary(w, "add", mu, one), z)
    chosen = L.select(w, L.compare(w, n, mu, "EQ", "FLOAT"), first, second)

    def step(i: str, values: Leaves) -> Leaves:
        below, here, chosen = values  # J_(mu+k-1), J_(mu+k)
        order = L.binary(w, "add", mu, as_float(w, i, shape))
        above = L.binary(w, "subtract", L.binary(w, "multiply", L.binary(
            w, "divide", L.binary(w, "add", order, order), z), here), below)
        hit = L.compare(w, L.binary(w, "add", order, one), n, "EQ", "FLOAT")
        return [here, above, L.select(w, hit, above, chosen)]
    return loop(w, int(MAX_ORDER), [first, second, chosen], step)[2]


def _hankel(w: FunctionWriter, n: str, z: str) -> str:
    """J_n(z) for z >= ASYMPTOTIC_FROM."""
    shape = L.shape_of(w, z)
    zero, one = L.splat(w, 0.0, shape), L.splat(w, 1.0, shape)
    mu = L.binary(w, "multiply", L.splat(w, 4.0, shape), L.binary(w, "multiply", n, n))

    def step(i: str, values: Leaves) -> Leaves:
        term, p, q, shrinking = values  # a_(k-1) / z^(k-1) with its sign, P, Q
        k = as_float(w, i, shape)
        odd = L.binary(w, "subtract", L.binary(w, "add", k, k), one)
        new = L.binary(w, "divide", L.binary(w, "multiply", term, L.binary(
            w, "subtract", mu, L.binary(w, "multiply", odd, odd))), L.binary(
            w, "multiply", L.splat(w, 8.0, shape), L.binary(w, "multiply", k, z)))
        smaller = L.compare(w, unary(w, "stablehlo.abs", new), unary(w, "stablehlo.abs", term),
                            "LT", "FLOAT")
        shrinking = both(w, shrinking, either(w, L.compare(w, k, n, "LE", "FLOAT"), smaller))
        kept = L.select(w, shrinking, new, zero)
        # k odd: Q += term (the signs alternate every two terms), k even: P += term
        half = unary(w, "stablehlo.floor", L.binary(w, "multiply", k, L.splat(w, 0.5, shape)))
        quarter = unary(w, "stablehlo.floor", L.binary(w, "multiply", k, L.splat(w, 0.25, shape)))
        is_odd = L.compare(w, L.binary(w, "add", half, half), k, "NE", "FLOAT")
        sign_step = L.binary(w, "subtract", half, L.binary(w, "add", quarter, quarter))
        signed = L.select(w, is_value(w, sign_step, "EQ", 1.0), unary(w, "stablehlo.negate", kept),
                          kept)
        p = L.select(w, is_odd, p, L.binary(w, "add", p, signed))
        q = L.select(w, is_odd, L.binary(w, "add", q, signed), q)
        return [L.select(w, shrinking, new, term), p, q, shrinking]
    yes = L.compare(w, zero, zero, "EQ", "FLOAT")
    _, p, q, _ = loop(w, _ASYMPTOTIC_TERMS, [one, one, zero, yes], step)
    phase = L.binary(w, "subtract", z, L.binary(w, "multiply", L.binary(
        w, "add", L.binary(w, "multiply", n, L.splat(w, 0.5, shape)), L.splat(w, 0.25, shape)),
        L.splat(w, np.pi, shape)))
    wave = L.binary(w, "subtract", L.binary(w, "multiply", p, unary(w, "stablehlo.cosine", phase)),
                    L.binary(w, "multiply", q, unary(w, "stablehlo.sine", phase)))
    return L.binary(w, "multiply", wave, unary(w, "stablehlo.sqrt", L.binary(
        w, "divide", L.splat(w, 2 / np.pi, shape), z)))


def _small(w: FunctionWriter, n: str, z: str) -> str:
    """J_n(z) = (z/2)^n / n! (1 - (z/2)^2 / (n + 1)) for 0 < z < SMALL_Z."""
    shape = L.shape_of(w, z)
    one = L.splat(w, 1.0, shape)
    half_z = L.binary(w, "multiply", z, L.splat(w, 0.5, shape))
    lead = unary(w, "stablehlo.exponential", L.binary(w, "subtract", L.binary(
        w, "multiply", n, unary(w, "stablehlo.log", half_z)), unary(
        w, "chlo.lgamma", L.binary(w, "add", n, one))))
    correction = L.binary(w, "divide", L.binary(w, "multiply", half_z, half_z),
                          L.binary(w, "add", n, one))
    return L.binary(w, "multiply", lead, L.binary(w, "subtract", one, correction))


def _parity(w: FunctionWriter, n: str) -> str:
    """n odd."""
    half = unary(w, "stablehlo.floor", L.binary(w, "multiply", n, L.splat(
        w, 0.5, L.shape_of(w, n))))
    return L.compare(w, L.binary(w, "add", half, half), n, "NE", "FLOAT")


def _jv(w: FunctionWriter, v: str, x: str) -> str:
    shape = L.shape_of(w, x)
    n, z = unary(w, "stablehlo.abs", v), unary(w, "stablehlo.abs", x)
    mu = L.binary(w, "subtract", n, unary(w, "stablehlo.floor", n))
    whole = is_value(w, mu, "EQ", 0.0)
    half_square = L.binary(w, "multiply", L.binary(w, "multiply", n, n), L.splat(w, 0.5, shape))
    far = both(w, is_value(w, z, "GE", ASYMPTOTIC_FROM), L.compare(w, z, half_square, "GE",
                                                                      "FLOAT"))
    small = is_value(w, z, "LT", SMALL_Z)
    upwards = both(w, unary(w, "stablehlo.not", far), is_value(w, z, "GE", MILLER_TO))
    # each form's z where it is used, a harmless one elsewhere
    near_z = L.select(w, either(w, either(w, far, small), upwards), L.splat(w, 1.0, shape), z)
    far_z = L.select(w, far, z, L.splat(w, ASYMPTOTIC_FROM, shape))
    tiny_z = L.select(w, small, z, L.splat(w, SMALL_Z, shape))
    upwards_z = L.select(w, upwards, z, L.splat(w, MILLER_TO, shape))
    miller = L.select(w, whole, _miller(w, n, near_z), _fractional_miller(w, n, mu, near_z))
    value = L.select(w, upwards, _forward(w, n, mu, upwards_z), miller)
    value = L.select(w, far, _hankel(w, n, far_z), value)
    value = L.select(w, small, _small(w, n, tiny_z), value)
    flips = both(w, both(w, whole, _parity(w, n)), unary(w, "stablehlo.not", L.compare(
        w, is_value(w, v, "LT", 0.0), is_value(w, x, "LT", 0.0), "EQ", "UNSIGNED")))
    value = L.select(w, flips, unary(w, "stablehlo.negate", value), value)
    at_zero = L.select(w, is_value(w, n, "EQ", 0.0), L.splat(w, 1.0, shape),
                       L.splat(w, 0.0, shape))
    value = L.select(w, is_value(w, z, "EQ", 0.0), at_zero, value)
    fractional = unary(w, "stablehlo.not", whole)
    unsupported = either(w, is_value(w, n, "GT", MAX_ORDER), both(
        w, fractional, either(w, is_value(w, v, "LT", 0.0), is_value(w, x, "LT", 0.0))))
    nan = either(w, either(w, L.compare(w, v, v, "NE", "FLOAT"), is_value(w, z, "EQ", np.inf)),
                 either(w, L.compare(w, x, x, "NE", "FLOAT"), unsupported))
    return pick(w, [(nan, np.nan)], value)


JV_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_bessel_jv": in_float64(_jv),
}
