"""Exponential and trigonometric integrals and the dilogarithm: expi, exp1, expn, sici, spence.

Primitives computed by float64 kernels (scipy.special's functions; see
`jaxlite.lax.special_kernel`), with closed-form derivatives:

    Ei'(x) = e^x / x        E_n'(x) = -E_(n-1)(x), E_0'(x) = -e^-x (1 + x) / x^2
    Si'(x) = sin(x) / x     Ci'(x) = cos(x) / x     spence'(x) = log(x) / (1 - x)  (-1 at 1)

Edges follow JAX's conventions: expi is nan at 0 and +-inf; expn is nan for n < 0, x < 0
and x = inf, inf at x = 0 for n < 2 (n < 0 included); spence is nan for x < 0 and rejects
dtypes other than float32 and float64 (TypeError). For an order n that is not a whole
number, expn is the generalized exponential integral E_n(x) = int_1^inf e^(-xt) t^(-n) dt
for x > 1 (computed by its continued fraction, as JAX does) and nan for x <= 1 (as in
JAX; scipy truncates n). Differences from JAX: E_n(0) = 1/(n - 1) for n >= 2 (JAX gives
1/n); expn(n < 0, x > 1) and expn(n >= 5000, x < 0) are nan (JAX's overlapping branches
give finite values there).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sp

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.lax.special_kernel import kernel_jvp, kernel_primitive
from jaxlite.numpy._promotion import promote_args_inexact
from jaxlite.scipy._special_error import reject_complex, strong

__all__ = ["expi", "exp1", "expn", "sici", "spence"]

_EPS = np.finfo(np.float64).eps


def _generalized_expn(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """E_n(x) for real n and x > 1, by the continued fraction
    E_n(x) = e^-x / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...))),
    evaluated with the modified Lentz method."""
    b = x + n
    f = b.copy()
    c, d = f.copy(), np.zeros_like(x)
    active = np.ones(x.shape, bool)
    for k in range(1, 5000):
        if not active.any():
            break
        b = b + 2.0
        numerator = -k * (n + k - 1.0)
        d = 1.0 / np.where(b + numerator * d == 0, 1e-300, b + numerator * d)
        c = b + numerator / c
        c = np.where(c == 0, 1e-300, c)
        delta = c * d
        f = np.where(active, f * delta, f)
        active &= np.abs(delta - 1.0) > _EPS
    return np.exp(-x) / f


def _expn_kernel(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    whole = n == np.floor(n)
    at_zero = np.where(n < 2, np.inf, 1.0 / np.where(n < 2, 1.0, n - 1.0))
    order = np.clip(np.where(whole, n, 0.0), -1, 2**31 - 1).astype(np.int64)
    out = np.where(whole, sp.expn(order, x), np.nan)
    fractional = ~whole & (x > 1) & np.isfinite(x)
    if fractional.any():
        out[fractional] = _generalized_expn(n[fractional], x[fractional])
    out = np.where((n < 0) | (x < 0) | np.isnan(n) | np.isnan(x) | (x == np.inf), np.nan, out)
    # JAX's conditions overlap and the later one wins: n < 0 at x = 0 gives inf.
    return np.where((x == 0) & ~np.isnan(n), at_zero, out)


def _spence_kernel(x: np.ndarray) -> np.ndarray:
    return np.where(x < 0, np.nan, sp.spence(x))


def _expi_kernel(x: np.ndarray) -> np.ndarray:
    # JAX's piecewise approximation is nan at 0 and at +-inf.
    return np.where((x == 0) | np.isinf(x), np.nan, sp.expi(x))


expi_p = kernel_primitive("expi", _expi_kernel)
expn_p = kernel_primitive("expn", _expn_kernel, num_args=2)
si_p = kernel_primitive("sici_si", lambda x: sp.sici(x)[0])
ci_p = kernel_primitive("sici_ci", lambda x: sp.sici(x)[1])
spence_p = kernel_primitive("spence", _spence_kernel)


def _expn_not_in_n(t: Any, n: Any, x: Any) -> Any:
    raise TypeError("expn is not differentiable with respect to its order n (JAX "
                    "declares n a non-differentiable argument).")


def _spence_derivative(t: Any, x: Any) -> Any:
    one = lax.full_like(x, 1)
    at_one = lax.eq(x, one)
    safe = lax.select(at_one, lax.full_like(x, 2), x)
    slope = lax.div(lax.log(safe), lax.sub(one, safe))
    return lax.mul(t, lax.select(at_one, lax.full_like(x, -1), slope))


kernel_jvp(expi_p, lambda t, x: lax.mul(t, lax.div(lax.exp(x), x)))
def _expn_dx(t: Any, n: Any, x: Any) -> Any:
    # E_n' = -E_(n-1); for n = 0 that is E_(-1)(x) = e^-x (1 + x) / x^2, outside expn's
    # domain (JAX's rule gives nan there). The unused branch takes order 1 where n = 0, so
    # that the derivative of this rule has no nan to multiply by select's zero.
    zeroth = lax.eq(n, lax.full_like(n, 0))
    below = expn_p.bind(lax.sub(lax.select(zeroth, lax.full_like(n, 1), n),
                                lax.full_like(n, 1)), x)
    e_minus_one = lax.div(lax.mul(lax.exp(lax.neg(x)), lax.add(lax.full_like(x, 1), x)),
                          lax.square(x))
    return lax.neg(lax.mul(t, lax.select(zeroth, e_minus_one, below)))


kernel_jvp(expn_p, _expn_not_in_n, _expn_dx)
kernel_jvp(si_p, lambda t, x: lax.mul(t, lax.div(lax.sin(x), x)))
kernel_jvp(ci_p, lambda t, x: lax.mul(t, lax.div(lax.cos(x), x)))
kernel_jvp(spence_p, _spence_derivative)


def expi(x: Any) -> Any:
    """The exponential integral Ei(x) (mirrors `jax.scipy.special.expi`)."""
    (x,) = promote_args_inexact("expi", x)
    reject_complex("expi", x)
    return strong(expi_p.bind(x))


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral E_n(x) (mirrors `jax.scipy.special.expn`)."""
    n, x = promote_args_inexact("expn", n, x)
    reject_complex("expn", x)
    return strong(expn_p.bind(n, x))


def exp1(x: Any) -> Any:
    """The exponential integral E_1(x) (mirrors `jax.scipy.special.exp1`)."""
    (x,) = promote_args_inexact("exp1", x)
    reject_complex("exp1", x)
    return strong(expn_p.bind(lax.full_like(x, 1), x))


def sici(x: Any) -> tuple[Any, Any]:
    """The sine and cosine integrals (Si(x), Ci(x)) (mirrors `jax.scipy.special.sici`)."""
    (x,) = promote_args_inexact("sici", x)
    reject_complex("sici", x, f"Argument `x` to sici must be real-valued. Got dtype "
                              f"{x.dtype}.")
    return strong(si_p.bind(x)), strong(ci_p.bind(x))


def spence(x: Any) -> Any:
    """Spence's function (the dilogarithm Li2(1 - x)) for x >= 0.

    Mirrors `jax.scipy.special.spence`: float32 and float64 only (TypeError otherwise),
    nan for x < 0.
    """
    x = jnp.asarray(x)
    if np.dtype(x.dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"x.dtype={np.dtype(x.dtype)} is not supported, see docstring for "
                        "supported types.")
    return strong(spence_p.bind(x))
