"""`jaxlite.scipy.special`: special functions on arrays (mirrors `jax.scipy.special`).

All 53 of JAX 0.10.2's names. Every function promotes its arguments to an inexact dtype
as JAX does and works under jit, grad and vmap. Functions JAX composes from a few lax
operations are composed the same way here (xlogy, entr, rel_entr, boxcox, softmax, ...);
functions that need series, continued fractions or recurrences (the incomplete gamma and
beta functions, zeta, polygamma, the exponential integrals, erfcx, dawsn, fresnel, wofz,
owens_t, the hypergeometric functions, gamma, beta, poch, Bessel J) are primitives
computed by float64 kernels (scipy.special's functions, see `jaxlite.lax.special_kernel`),
so that values are scipy's, correctly rounded to the dtype, with JAX's values at the
edges of the domains; the private modules beside this one say where JAX's own
approximations differ. scipy is the oracle of the tests, with JAX 0.10.2's recorded
outputs for dtypes, weak types, edge values and errors.

Where JAX defines a derivative by hand (custom_jvp), this module gets the same derivative
without that top-level tool: `xlogy`, `xlog1py` and `entr` add `F - stop_gradient(F)` (zero
in value, F's derivatives) at x == 0, where their value is pinned to 0, so that
d xlogy / dx = log(y) there, as in JAX.

Differences from JAX: `betaln` is lgamma(a) + lgamma(b) - lgamma(a + b) (JAX uses a
correction series for large arguments); `ndtri` uses AS241 rather than Cephes; `log_ndtr`
and `logit` are differentiated through their formulas (JAX: pdf / cdf and 1 / (x (1 - x)),
equal to rounding). At points where JAX's hand-written derivatives are infinite or NaN
(xlogy at x = y = 0), these give 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import canonicalize_axes, promote_args_inexact
from jaxlite.scipy import _bessel
from jaxlite.scipy._bessel import bessel_jn
from jaxlite.scipy._normal_functions import log_ndtr, ndtr, ndtri
from jaxlite.scipy._special_error import dawsn, erfcx, fresnel, owens_t, reject_complex, wofz
from jaxlite.scipy._special_expint import exp1, expi, expn, sici, spence
from jaxlite.scipy._special_gamma import (bernoulli, beta, comb, factorial, gamma, gammasgn,
                                          loggamma, multigammaln, poch, polygamma, zeta)
from jaxlite.scipy._special_hypergeometric import hyp1f1, hyp2f1
from jaxlite.scipy._spherical import sph_harm_y

__all__ = [
    "bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb",
    "dawsn", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit",
    "expn", "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn",
    "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax",
    "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t", "poch",
    "polygamma", "rel_entr", "sici", "softmax", "spence", "sph_harm_y", "wofz", "xlog1py",
    "xlogy", "zeta",
]


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
    return lax.log(lax.div(x, lax.sub(lax.full_like(x, 1), x)))


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


def i0(x: Any) -> Any:
    """The modified Bessel function of order 0, exp(|x|) i0e(x) (`jax.scipy.special.i0`)."""
    (x,) = promote_args_inexact("i0", x)
    return _bessel.i0(x)


def i1(x: Any) -> Any:
    """The modified Bessel function of order 1, exp(|x|) i1e(x) (`jax.scipy.special.i1`)."""
    (x,) = promote_args_inexact("i1", x)
    return _bessel.i1(x)


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x).

    Mirrors `jax.scipy.special.gammainc` (differentiable in both arguments).
    """
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    Mirrors `jax.scipy.special.gammaincc`.
    """
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (`jax.scipy.special.betainc`).

    Differentiable in x only, as in JAX.
    """
    a, b, x = promote_args_inexact("betainc", a, b, x)
    reject_complex("betainc", a)
    return lax.betainc(a, b, x)


def rel_entr(p: Any, q: Any) -> Any:
    """The elementwise relative entropy p log(p / q) (`jax.scipy.special.rel_entr`).

    0 where p == 0 and q >= 0; inf where either is negative, or q == 0 < p (and, as in
    JAX's formula, where either is nan).
    """
    p, q = promote_args_inexact("rel_entr", p, q)
    reject_complex("rel_entr", p)
    zero = lax.full_like(p, 0)
    both_positive = jnp.logical_and(lax.gt(p, zero), lax.gt(q, zero))
    zero_p = jnp.logical_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p, safe_q = jnp.where(both_positive, p, 1), jnp.where(both_positive, q, 1)
    log_ratio = lax.sub(_x_log_something(safe_p, safe_p, lax.log),
                        _x_log_something(safe_p, safe_q, lax.log))
    return jnp.where(both_positive, log_ratio, jnp.where(zero_p, zero, np.inf))


def kl_div(p: Any, q: Any) -> Any:
    """The elementwise Kullback-Leibler term p log(p / q) - p + q.

    Mirrors `jax.scipy.special.kl_div`.
    """
    p, q = promote_args_inexact("kl_div", p, q)
    reject_complex("kl_div", p)
    return lax.add(lax.sub(rel_entr(p, q), p), q)


def _boxcox_of_log(log_x: Any, lmbda: Any) -> Any:
    lmbda_is_zero = lax.eq(lmbda, lax.full_like(lmbda, 0))
    safe_lmbda = jnp.where(lmbda_is_zero, 1, lmbda)
    power = lax.div(lax.expm1(lax.mul(safe_lmbda, log_x)), safe_lmbda)
    return jnp.where(lmbda_is_zero, log_x, power)


def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transformation (x^lmbda - 1) / lmbda, log(x) at lmbda == 0.

    Mirrors `jax.scipy.special.boxcox`.
    """
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transformation of 1 + x (mirrors `jax.scipy.special.boxcox1p`)."""
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """exp(x) / sum(exp(x)) over `axis` (all axes by default; `jax.scipy.special.softmax`,
    which is `jax.nn.softmax`)."""
    shifted = _shift_by_max(x, axis)
    unnormalized = jnp.exp(shifted)
    return unnormalized / jnp.sum(unnormalized, axis, keepdims=True)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """x - logsumexp(x) over `axis` (all axes by default).

    Mirrors `jax.scipy.special.log_softmax` (which is `jax.nn.log_softmax`).
    """
    shifted = _shift_by_max(x, axis)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, keepdims=True))


def _shift_by_max(x: Any, axis: Any) -> Any:
    """x minus its maximum over `axis` (a constant to differentiation), in a float dtype."""
    (x,) = promote_args_inexact("softmax", x)
    x_max = jnp.max(x, axis, initial=-np.inf, keepdims=True)
    return x - lax.stop_gradient(x_max)
