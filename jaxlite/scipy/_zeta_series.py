"""The derivative in x of the Hurwitz zeta function zeta(x, q), composed with lax.

There is no closed form for d zeta(x, q) / dx = -sum_k log(q + k) (q + k)^(-x), so it is
the derivative of the Euler-Maclaurin formula with N terms summed directly and M
Bernoulli corrections at w = q + N:

    zeta(x, q) ~ sum_{k<N} (q + k)^(-x) + w^(1-x) / (x - 1) + w^(-x) / 2
                 + sum_{j=1..M} B_2j / (2j)! * x (x + 1) ... (x + 2j - 2) * w^(-x-2j+1)

differentiated term by term (the rising products with their derivatives by the product
rule, so that zeros of the product at x = 0, -1, ... cause no 0/0). With N = 16 and M = 8
the omitted remainder is below float64's resolution for q > 0 and moderate x (the
correction terms shrink like (x + 2j)^(2j) / (2 pi w)^(2j)).
"""
from __future__ import annotations

from math import factorial
from typing import Any

import scipy.special as sp

from jaxlite import lax

__all__ = ["zeta_derivative_in_x"]

_TERMS = 16
_CORRECTIONS = 8
# B_2j / (2j)! for j = 1 .. M.
_COEFFICIENTS = [float(sp.bernoulli(2 * j)[-1]) / factorial(2 * j)
                 for j in range(1, _CORRECTIONS + 1)]


def _const(x: Any, value: float) -> Any:
    return lax.full_like(x, value)  # keeps x's weak type


def zeta_derivative_in_x(x: Any, q: Any) -> Any:
    """d zeta(x, q) / dx for float arrays x and q of one shape."""
    total = lax.full_like(x, 0)
    for k in range(_TERMS):
        base = lax.add(q, _const(q, k))
        total = lax.sub(total, lax.mul(lax.log(base), lax.pow(base, lax.neg(x))))
    w = lax.add(q, _const(q, _TERMS))
    log_w = lax.log(w)
    x_minus_one = lax.sub(x, _const(x, 1))
    tail = lax.pow(w, lax.neg(x_minus_one))  # w^(1-x)
    total = lax.sub(total, lax.mul(tail, lax.add(lax.div(log_w, x_minus_one),
                                                 lax.integer_pow(x_minus_one, -2))))
    w_neg_x = lax.pow(w, lax.neg(x))
    total = lax.sub(total, lax.mul(_const(x, 0.5), lax.mul(log_w, w_neg_x)))
    # Rising products r = x (x+1) ... (x+2j-2) and their derivatives dr, term by term.
    rising, d_rising = x, lax.full_like(x, 1)
    power = lax.div(w_neg_x, w)  # w^(-x-1)
    inv_w2 = lax.integer_pow(w, -2)
    for j, coefficient in enumerate(_COEFFICIENTS, start=1):
        if j > 1:
            for i in (2 * j - 3, 2 * j - 2):
                shift = lax.add(x, _const(x, i))
                rising, d_rising = lax.mul(rising, shift), lax.add(lax.mul(d_rising, shift),
                                                                   rising)
            power = lax.mul(power, inv_w2)
        # d/dx [c r w^(-x-2j+1)] = c w^(...) (dr - r log w)
        term = lax.mul(power, lax.sub(d_rising, lax.mul(rising, log_w)))
        total = lax.add(total, lax.mul(_const(x, coefficient), term))
    return total

