"""`jaxlite.scipy.special`: special functions on arrays (mirrors `jax.scipy.special`).

Every function promotes its arguments to an inexact dtype as JAX does, is written with lax
and jaxlite.numpy (so it works under jit, grad and vmap), and follows JAX's formulas; scipy
is the oracle of the tests.

Where JAX defines a derivative by hand (custom_jvp), this module gets the same derivative
without that top-level tool: `xlogy`, `xlog1py` and `entr` add `F - stop_gradient(F)` (zero
in value, F's derivatives) at x == 0, where their value is pinned to 0, so that
d xlogy / dx = log(y) there, as in JAX.

Differences from JAX: `betaln` is lgamma(a) + lgamma(b) - lgamma(a + b) (JAX uses a
correction series for large arguments); `ndtri` uses AS241 rather than Cephes; `log_ndtr`
and `logit` are differentiated through their formulas (JAX: pdf / cdf and 1 / (x (1 - x)),
equal to rounding); `i0e`/`i1e` are lax compositions (see `_bessel.py`). At points where JAX's
hand-written derivatives are infinite or NaN (xlogy at x = y = 0), these give 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import canonicalize_axes, promote_args_inexact
from jaxlite.scipy import _bessel
from jaxlite.scipy._normal_functions import log_ndtr, ndtr, ndtri

__all__ = ["logsumexp", "expit", "logit", "erf", "erfc", "erfinv", "gammaln", "digamma",
           "xlogy", "xlog1py", "entr", "betaln", "ndtr", "ndtri", "log_ndtr", "i0e", "i1e"]


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """log(sum(b * exp(a))) over `axis`, computed stably (`jax.scipy.special.logsumexp`).

    Parameters
    ----------
    a : the input array.
    axis : int, tuple of ints or None (all axes).
    b : scale factors broadcast against `a` (entries with b == 0 are left out).
    keepdims : keep the reduced axes with size 1.
    return_sign : return (log|sum|, sign(sum)) instead of NaN for negative sums.
    where : a mask of the entries to include.
    """
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact("logsumexp", a, b)
        a_arr = jnp.where(b_arr != 0, a_arr, -np.inf)
    else:
        (a_arr,) = promote_args_inexact("logsumexp", a)
        b_arr = None
    dims = tuple(range(a_arr.ndim)) if axis is None else canonicalize_axes(axis, a_arr.ndim)
    amax = jnp.max(jnp.real(a_arr), axis=dims, keepdims=keepdims, where=where,
                   initial=-np.inf)
    # The shift is a constant to differentiation; a non-finite maximum shifts by 0.
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_with_dims.astype(a_arr.dtype)))
    if b_arr is not None:
        exp_a = exp_a * b_arr
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not dtypes.issubdtype(sumexp.dtype, np.complexfloating):
        sumexp = jnp.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not dtypes.issubdtype(out.dtype, np.complexfloating):
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out


def expit(x: Any) -> Any:
    """The logistic sigmoid 1 / (1 + exp(-x)) (mirrors `jax.scipy.special.expit`)."""
    (x,) = promote_args_inexact("expit", x)
    return lax.logistic(x)


def logit(x: Any) -> Any:
    """log(x / (1 - x)), the inverse of `expit` (mirrors `jax.scipy.special.logit`)."""
    (x,) = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(lax.full((), 1, x.dtype), x)))


def erf(x: Any) -> Any:
    """The error function (mirrors `jax.scipy.special.erf`)."""
    (x,) = promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    """The complementary error function 1 - erf(x) (mirrors `jax.scipy.special.erfc`)."""
    (x,) = promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse error function on (-1, 1) (mirrors `jax.scipy.special.erfinv`)."""
    (x,) = promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


def gammaln(x: Any) -> Any:
    """log|Gamma(x)| (mirrors `jax.scipy.special.gammaln`)."""
    (x,) = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


def digamma(x: Any) -> Any:
    """The logarithmic derivative of Gamma (mirrors `jax.scipy.special.digamma`)."""
    (x,) = promote_args_inexact("digamma", x)
    return lax.digamma(x)


def betaln(a: Any, b: Any) -> Any:
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b) (`jax.scipy.special.betaln`)."""
    a, b = promote_args_inexact("betaln", a, b)
    return lax.sub(lax.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(lax.add(a, b)))


def _zero_with_derivatives_of(f: Any) -> Any:
    """0 in value with the derivatives of `f` (where f is finite; 0 elsewhere)."""
    finite = jnp.isfinite(lax.stop_gradient(f))
    safe = jnp.where(finite, f, 0)
    return safe - lax.stop_gradient(safe)


def _x_log_something(x: Any, y: Any, log_fun: Any) -> Any:
    product = lax.mul(x, log_fun(y))
    x_ok = jnp.logical_or(x != 0, jnp.isnan(y))
    # JAX pins x == 0 to 0 and differentiates x * log(y) there by hand (d/dx = log y).
    return jnp.where(x_ok, product, _zero_with_derivatives_of(product))


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), 0 where x == 0 (mirrors `jax.scipy.special.xlogy`).

    The derivative at x == 0 is JAX's: log(y) with respect to x, x / y with respect to y.
    """
    x, y = promote_args_inexact("xlogy", x, y)
    return _x_log_something(x, y, lax.log)


def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), 0 where x == 0 (mirrors `jax.scipy.special.xlog1py`)."""
    x, y = promote_args_inexact("xlog1py", x, y)
    return _x_log_something(x, y, lax.log1p)


def entr(x: Any) -> Any:
    """The elementwise entropy -x log(x), 0 at 0 and -inf below (`jax.scipy.special.entr`)."""
    (x,) = promote_args_inexact("entr", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, lax.full_like(x, 0)), lax.full_like(x, -np.inf),
                      lax.neg(_x_log_something(x, x, lax.log)))


def i0e(x: Any) -> Any:
    """exp(-|x|) I0(x), the scaled modified Bessel function of order 0.

    Mirrors `jax.scipy.special.i0e`.
    """
    (x,) = promote_args_inexact("i0e", x)
    return _bessel.i0e(x)


def i1e(x: Any) -> Any:
    """exp(-|x|) I1(x), the scaled modified Bessel function of order 1.

    Mirrors `jax.scipy.special.i1e`.
    """
    (x,) = promote_args_inexact("i1e", x)
    return _bessel.i1e(x)
