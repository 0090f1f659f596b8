"""The standard normal distribution function and its inverse: ndtr, ndtri, log_ndtr.

Written with lax, for `jaxlite.scipy.special` and `jaxlite.scipy.stats.norm`. `ndtr` and
`log_ndtr` follow JAX's formulas (erf near 0, erfc in the tails; an asymptotic series far in
the lower tail). `ndtri` uses Wichura's algorithm AS241 ("The percentage points of the normal
distribution", Applied Statistics 37, 1988), whose rational approximations are accurate to
about 1e-16; JAX uses Cephes' approximation instead, so values agree to rounding.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp

__all__ = ["ndtr", "ndtri", "log_ndtr"]

# AS241 (PPND16) coefficients, lowest degree first: the central region |p - 1/2| <= 0.425 ...
_CENTRAL_NUM = (3.3871328727963666080e+0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
                1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
                3.3430575583588128105e+4, 2.5090809287301226727e+3)
_CENTRAL_DEN = (1.0, 4.2313330701600911252e+1, 6.8718700749205790830e+2,
                5.3941960214247511077e+3, 2.1213794301586595867e+4, 3.9307895800092710610e+4,
                2.8729085735721942674e+4, 5.2264952788528545610e+3)
# ... the intermediate tail, r = sqrt(-log(min(p, 1 - p))) <= 5 ...
_TAIL_NUM = (1.42343711074968357734e+0, 4.63033784615654529590e+0, 5.76949722146069140550e+0,
             3.64784832476320460504e+0, 1.27045825245236838258e+0, 2.41780725177450611770e-1,
             2.27238449892691845833e-2, 7.74545014278341407640e-4)
_TAIL_DEN = (1.0, 2.05319162663775882187e+0, 1.67638483018380384940e+0,
             6.89767334985100004550e-1, 1.48103976427480074590e-1, 1.51986665636164571966e-2,
             5.47593808499534494600e-4, 1.05075007164441684324e-9)
# ... and the far tail, r > 5.
_FAR_NUM = (6.65790464350110377720e+0, 5.46378491116411436990e+0, 1.78482653991729133580e+0,
            2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
            2.71155556874348757815e-5, 2.01033439929228813265e-7)
_FAR_DEN = (1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1,
            1.48753612908506148525e-2, 7.86869131145613259100e-4, 1.84631831751005468180e-5,
            1.42151175831644588870e-7, 2.04426310338993978564e-15)

# Beyond these points log_ndtr switches to -ndtr(-x) above and to the asymptotic series
# below (JAX's segments).
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


def _check_float(name: str, x: Any) -> Any:
    x = jnp.asarray(x)
    if np.dtype(x.dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        # JAX's messages first (log_ndtr's is shorter), then which function it was.
        message = f"x.dtype={np.dtype(x.dtype)} is not supported"
        message += "." if name == "log_ndtr" else ", see docstring for supported types."
        raise TypeError(f"{message} ({name} takes float32 or float64 arrays.)")
    return x


def _const(x: Any, value: float) -> Any:
    return lax.full((), value, x.dtype)


def polynomial(coefficients: Sequence[float], x: Any) -> Any:
    """The polynomial with `coefficients` (lowest degree first) at `x`, by Horner's rule."""
    out = lax.full_like(x, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        out = lax.add(lax.mul(out, x), _const(x, c))
    return out


def _ndtr(x: Any) -> Any:
    half_sqrt_2 = _const(x, 0.5 * np.sqrt(2.0))
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    tails = lax.select(lax.gt(w, _const(w, 0.0)), lax.sub(_const(z, 2.0), lax.erfc(z)),
                       lax.erfc(z))
    y = lax.select(lax.lt(z, half_sqrt_2), lax.add(_const(w, 1.0), lax.erf(w)), tails)
    return lax.mul(_const(y, 0.5), y)


def ndtr(x: Any) -> Any:
    """The standard normal CDF (mirrors `jax.scipy.special.ndtr`; float32/float64 only)."""
    return _ndtr(_check_float("ndtr", x))


def ndtri(p: Any) -> Any:
    """The inverse of `ndtr`: the standard normal quantile of `p` in [0, 1].

    Mirrors `jax.scipy.special.ndtri` (float32/float64 only): -inf at 0, inf at 1, NaN
    outside [0, 1].
    """
    p = _check_float("ndtri", p)
    q = lax.sub(p, _const(p, 0.5))
    central = lax.le(lax.abs(q), _const(q, 0.425))
    r_central = lax.sub(_const(q, 0.180625), lax.mul(q, q))
    x_central = lax.div(lax.mul(q, polynomial(_CENTRAL_NUM, r_central)),
                        polynomial(_CENTRAL_DEN, r_central))
    # The tails: r from the smaller of p and 1 - p (a safe 1/2 where it is not used).
    smaller = lax.select(lax.lt(q, _const(q, 0.0)), p, lax.sub(_const(p, 1.0), p))
    smaller = lax.select(central, lax.full_like(p, 0.5), smaller)
    r = lax.sqrt(lax.neg(lax.log(smaller)))
    near = lax.le(r, _const(r, 5.0))
    r_near = lax.sub(lax.select(near, r, lax.full_like(r, 1.6)), _const(r, 1.6))
    r_far = lax.sub(lax.select(near, lax.full_like(r, 5.0), r), _const(r, 5.0))
    x_near = lax.div(polynomial(_TAIL_NUM, r_near), polynomial(_TAIL_DEN, r_near))
    x_far = lax.div(polynomial(_FAR_NUM, r_far), polynomial(_FAR_DEN, r_far))
    x_tail = lax.select(near, x_near, x_far)
    x_tail = lax.select(lax.lt(q, _const(q, 0.0)), lax.neg(x_tail), x_tail)
    x = lax.select(central, x_central, x_tail)
    x = lax.select(lax.eq(p, _const(p, 0.0)), lax.full_like(p, -np.inf), x)
    x = lax.select(lax.eq(p, _const(p, 1.0)), lax.full_like(p, np.inf), x)
    outside = jnp.logical_or(lax.lt(p, _const(p, 0.0)), lax.gt(p, _const(p, 1.0)))
    return lax.select(outside, lax.full_like(p, np.nan), x)


def _double_factorial(n: int) -> int:
    return int(np.prod(np.arange(n, 1, -2))) if n > 1 else 1


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    """log(ndtr(x)) for x << -1: log(pdf(x) / -x) + log(1 + sum of the asymptotic series)."""
    x_2 = lax.mul(x, x)
    log_scale = lax.sub(lax.sub(lax.mul(_const(x, -0.5), x_2), lax.log(lax.neg(x))),
                        _const(x, 0.5 * np.log(2.0 * np.pi)))
    even_sum, odd_sum = lax.full_like(x, 0.0), lax.full_like(x, 0.0)
    x_2n = x_2
    for n in range(1, series_order + 1):
        term = lax.div(_const(x, _double_factorial(2 * n - 1)), x_2n)
        if n % 2:
            odd_sum = lax.add(odd_sum, term)
        else:
            even_sum = lax.add(even_sum, term)
        x_2n = lax.mul(x_2n, x_2)
    series = lax.sub(lax.add(_const(x, 1.0), even_sum), odd_sum)
    return lax.add(log_scale, lax.log(series))


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """log(ndtr(x)), accurate in both tails (mirrors `jax.scipy.special.log_ndtr`).

    Differences from JAX: the derivative is that of the formula (JAX defines it as
    pdf(x) / ndtr(x)); the two agree to rounding except far in the upper tail.
    """
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if not 0 <= series_order <= 30:
        raise ValueError(f"series_order must be in [0, 30], got {series_order}.")
    x = _check_float("log_ndtr", x)
    lower, upper = _LOG_NDTR_SEGMENTS[np.dtype(x.dtype)]
    above = lax.gt(x, _const(x, upper))
    # Clamped arguments keep the unused branches finite (and their gradients NaN-free).
    ndtr_arg = lax.select(above, lax.neg(x), lax.max(x, _const(x, lower)))
    ndtr_res = _ndtr(ndtr_arg)
    inner = lax.select(lax.gt(x, _const(x, lower)), lax.log(ndtr_res),
                       _log_ndtr_lower(lax.min(x, _const(x, lower)), series_order))
    return lax.select(above, lax.neg(ndtr_res), inner)
