"""jaxlite's `bessel_jv` kernel (scipy's jv(v, z), NaN at infinite z) printed as standard
ops in float64, for orders |v| <= MAX_ORDER, whole or not. As JAX's bessel_jn, by Miller's
backward recurrence (here from the fixed start order MILLER_START, rescaled against
overflow), and where that does not reach, by Hankel's asymptotic expansion, the
three-term recurrence J_(o-1) + J_(o+1) = 2o/z J_o or the leading terms of the power
series. With n = |v| = m + mu (m whole, 0 <= mu < 1) and base = mu, or -mu for negative
v that is not whole:

    z >= ASYMPTOTIC_FROM and z >= n^2 / 2 (not for negative v that is not whole):
        J_n(z) = sqrt(2 / (pi z)) (P cos w - Q sin w),  w = z - (n/2 + 1/4) pi,
        P - i Q = sum_k (-i)^k a_k / z^k,  a_k = prod_(j<=k) (4n^2 - (2j-1)^2) / (8j),
        summed (past k = n) while the terms shrink
    SMALL_Z <= z < MILLER_TO, whole n:
        f_(k-1) = 2k/z f_k - f_(k+1) from f_(M+1) = 0, f_M = 1;
        J_n = f_n / (f_0 + 2 f_2 + 2 f_4 + ...)
    otherwise J_base and J_(base+1): below MILLER_TO the same recurrence over the orders
        base + k, normalized by (z/2)^base = sum_k (base+2k) Gamma(base+k) / k! J_(base+2k);
        beyond, Hankel's expansion; then
        J_(base+m) by the recurrence upwards (z >= MILLER_TO > n: stable), or for negative
        v, J_(base-m) downwards (the direction in which J_v, v < 0 not whole, grows)
    0 < z < SMALL_Z:  J_v(z) = (z/2)^v / Gamma(v+1) (1 - (z/2)^2 / (v + 1))

J_(-n) = (-1)^n J_n and J_n(-z) = (-1)^n J_n(z) for whole n; J_0(0) = 1, J_n(0) = 0,
J_v(0) = +-inf (the sign of Gamma(v + 1)) for negative v not whole. NaN at infinite or NaN
z, at negative z for v not whole (as the kernel), and (unlike the kernel) at orders above
MAX_ORDER.
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


def _fractional_miller(w: FunctionWriter, m: str, base: str, z: str) -> tuple[str, str]:
    """J_(base+m)(z) and J_(base+m+1)(z) for -1 < base < 1 not 0, m whole in
    [0, MILLER_START - 1), 0 < z < MILLER_TO."""
    shape = L.shape_of(w, z)
    zero, one = L.splat(w, 0.0, shape), L.splat(w, 1.0, shape)
    inverse_scale = L.splat(w, 1 / _HUGE, shape)
    m_next = L.binary(w, "add", m, one)
    first_weight = unary(w, "stablehlo.exponential", unary(
        w, "chlo.lgamma", L.binary(w, "add", base, one)))  # base Gamma(base) = Gamma(base+1)

    def step(i: str, values: Leaves) -> Leaves:
        above, here, total, chosen, chosen_next = values  # f_(k+1), f_k, the norm's sum
        k = L.binary(w, "subtract", L.splat(w, MILLER_START + 1.0, shape), as_float(w, i, shape))
        order = L.binary(w, "add", base, k)
        below = L.binary(w, "subtract", L.binary(w, "multiply", L.binary(
            w, "divide", L.binary(w, "add", order, order), z), here), above)  # f_(k-1)
        k_below = L.binary(w, "subtract", k, one)
        half = L.binary(w, "multiply", k_below, L.splat(w, 0.5, shape))
        even = L.compare(w, unary(w, "stablehlo.floor", half), half, "EQ", "FLOAT")
        # (base + 2j) Gamma(base + j) / j! at k - 1 = 2j
        weight = L.binary(w, "multiply", L.binary(w, "add", base, k_below), unary(
            w, "stablehlo.exponential", L.binary(
                w, "subtract", unary(w, "chlo.lgamma", L.binary(w, "add", base, half)),
                unary(w, "chlo.lgamma", L.binary(w, "add", half, one)))))
        weight = L.select(w, is_value(w, k_below, "EQ", 0.0), first_weight, weight)
        total = L.binary(w, "add", total, L.select(w, even, L.binary(w, "multiply", weight,
                                                                       below), zero))
        chosen = L.select(w, L.compare(w, k_below, m, "EQ", "FLOAT"), below, chosen)
        chosen_next = L.select(w, L.compare(w, k_below, m_next, "EQ", "FLOAT"), below,
                               chosen_next)
        large = is_value(w, unary(w, "stablehlo.abs", below), "GT", _HUGE)
        values = [here, below, total, chosen, chosen_next]
        return [L.select(w, large, L.binary(w, "multiply", v, inverse_scale), v)
                for v in values]
    _, _, total, chosen, chosen_next = loop(w, MILLER_START, [zero, one, zero, zero, zero],
                                            step)
    power = unary(w, "stablehlo.exponential", L.binary(w, "multiply", base, unary(
        w, "stablehlo.log", L.binary(w, "multiply", z, L.splat(w, 0.5, shape)))))
    scale = L.binary(w, "divide", power, total)
    return L.binary(w, "multiply", chosen, scale), L.binary(w, "multiply", chosen_next, scale)


def _recurrence(w: FunctionWriter, m: str, base: str, z: str, first: str, second: str,
                downwards: bool) -> str:
    """J_(base+m) (upwards) or J_(base-m) (downwards, the direction in which J of negative
    orders that are not whole grows) from J_base = `first` and J_(base+1) = `second`, by
    J_(o-1) + J_(o+1) = 2o/z J_o, for m whole in [0, MAX_ORDER]."""
    shape = L.shape_of(w, z)
    one = L.splat(w, 1.0, shape)
    previous, here = (second, first) if downwards else (first, second)
    chosen = L.select(w, is_value(w, m, "EQ", 0.0), first, first if downwards else second)

    def step(i: str, values: Leaves) -> Leaves:
        previous, here, chosen = values  # J one step back, J at the current order
        step_count = as_float(w, i, shape)
        order = (L.binary(w, "subtract", L.binary(w, "add", base, one), step_count)
                 if downwards else L.binary(w, "add", base, step_count))
        new = L.binary(w, "subtract", L.binary(w, "multiply", L.binary(
            w, "divide", L.binary(w, "add", order, order), z), here), previous)
        reached = step_count if downwards else L.binary(w, "add", step_count, one)
        hit = L.compare(w, reached, m, "EQ", "FLOAT")
        return [here, new, L.select(w, hit, new, chosen)]
    return loop(w, int(MAX_ORDER), [previous, here, chosen], step)[2]


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


def _gamma_sign(w: FunctionWriter, x: str) -> str:
    """The sign of Gamma(x) for x not a pole: -1 where x < 0 and floor(x) is odd."""
    shape = L.shape_of(w, x)
    negative = both(w, is_value(w, x, "LT", 0.0), _parity(w, unary(w, "stablehlo.floor", x)))
    return L.select(w, negative, L.splat(w, -1.0, shape), L.splat(w, 1.0, shape))


def _jv(w: FunctionWriter, v: str, x: str) -> str:
    shape = L.shape_of(w, x)
    one = L.splat(w, 1.0, shape)
    n, z = unary(w, "stablehlo.abs", v), unary(w, "stablehlo.abs", x)
    m = unary(w, "stablehlo.floor", n)
    mu = L.binary(w, "subtract", n, m)
    whole = is_value(w, mu, "EQ", 0.0)
    fractional = unary(w, "stablehlo.not", whole)
    negative = both(w, fractional, is_value(w, v, "LT", 0.0))  # from J_(-mu) downwards
    base = L.select(w, negative, unary(w, "stablehlo.negate", mu), mu)
    half_square = L.binary(w, "multiply", L.binary(w, "multiply", n, n), L.splat(w, 0.5, shape))
    far = both(w, unary(w, "stablehlo.not", negative), both(
        w, is_value(w, z, "GE", ASYMPTOTIC_FROM), L.compare(w, z, half_square, "GE", "FLOAT")))
    small = is_value(w, z, "LT", SMALL_Z)
    beyond_miller = is_value(w, z, "GE", MILLER_TO)
    by_miller = both(w, unary(w, "stablehlo.not", either(w, far, small)),
                     unary(w, "stablehlo.not", beyond_miller))
    # each form's z where it is used, a harmless one elsewhere
    near_z = L.select(w, by_miller, z, one)
    far_z = L.select(w, far, z, L.splat(w, ASYMPTOTIC_FROM, shape))
    tiny_z = L.select(w, small, z, L.splat(w, SMALL_Z, shape))
    wide_z = L.select(w, beyond_miller, z, L.splat(w, MILLER_TO, shape))
    # J_base and J_(base+1): Miller's below MILLER_TO, Hankel's beyond
    target = L.select(w, negative, L.splat(w, 0.0, shape), m)
    miller_pair = _fractional_miller(w, target, base, near_z)
    hankel_pair = (_hankel(w, base, wide_z), _hankel(w, L.binary(w, "add", base, one), wide_z))
    first, second = (L.select(w, beyond_miller, h, k) for h, k in zip(hankel_pair, miller_pair))
    upwards = _recurrence(w, m, base, wide_z, *hankel_pair, downwards=False)
    downwards = _recurrence(w, m, base, L.select(w, small, one, z), first, second,
                            downwards=True)
    positive = L.select(w, whole, _miller(w, n, near_z), miller_pair[0])
    value = L.select(w, beyond_miller, upwards, positive)
    value = L.select(w, negative, downwards, value)
    value = L.select(w, far, _hankel(w, n, far_z), value)
    signed_order = L.select(w, negative, v, n)
    order_sign = _gamma_sign(w, L.binary(w, "add", signed_order, one))
    value = L.select(w, small, L.binary(w, "multiply", order_sign, _small(
        w, signed_order, tiny_z)), value)
    flips = both(w, both(w, whole, _parity(w, n)), unary(w, "stablehlo.not", L.compare(
        w, is_value(w, v, "LT", 0.0), is_value(w, x, "LT", 0.0), "EQ", "UNSIGNED")))
    value = L.select(w, flips, unary(w, "stablehlo.negate", value), value)
    # J_0(0) = 1, J_n(0) = 0, J_v(0) = +-inf for negative v not whole (the sign of Gamma)
    at_zero = L.select(w, is_value(w, n, "EQ", 0.0), one, L.splat(w, 0.0, shape))
    at_zero = L.select(w, negative, L.binary(w, "multiply", order_sign,
                                             L.splat(w, np.inf, shape)), at_zero)
    value = L.select(w, is_value(w, z, "EQ", 0.0), at_zero, value)
    unsupported = either(w, is_value(w, n, "GT", MAX_ORDER),
                         both(w, fractional, is_value(w, x, "LT", 0.0)))
    nan = either(w, either(w, L.compare(w, v, v, "NE", "FLOAT"), is_value(w, z, "EQ", np.inf)),
                 either(w, L.compare(w, x, x, "NE", "FLOAT"), unsupported))
    return pick(w, [(nan, np.nan)], value)


JV_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_bessel_jv": in_float64(_jv),
}
