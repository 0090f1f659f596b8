"""The gamma function and its relatives: gamma, gammasgn, loggamma, factorial, comb, beta,
poch, multigammaln, bernoulli, polygamma, zeta.

`gamma`, `beta`, `poch` and the binomial coefficient behind `comb` are primitives computed
by float64 kernels (scipy.special's functions, see `jaxlite.lax.special_kernel`), so they
stay accurate where JAX's exp(lgamma ...) formulas lose digits or overflow (poch(200, 5),
beta(3, 50)). At the edges (poles, infinite or nan arguments) they give JAX's values: nan
wherever JAX's formula is nan (gammasgn nan at a pole, or inf - inf among the lgammas).
Complex `gamma` and `loggamma` are kernels too (scipy's principal branch, nan + nanj at the
poles, as in JAX), differentiable once (through the complex digamma kernel).

Derivatives are JAX's: Gamma' = Gamma psi, d B(a, b)/da = B (psi(a) - psi(a + b)),
d poch(z, m) = poch ((psi(z + m) - psi(z)) dz + psi(z + m) dm), and for the binomial
coefficient the digamma differences; zeta is differentiable in x through a derivative of
its Euler-Maclaurin sum (JAX differentiates its own such sum).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np
import scipy.special as sp

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.core.trace_state import concrete_or_error
from jaxlite.lax._declare import COMPLEX, FLOATING, INEXACT
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.lax.special_kernel import kernel_jvp, kernel_primitive
from jaxlite.numpy._promotion import promote_args_inexact
from jaxlite.scipy._special_error import reject_complex, strong
from jaxlite.scipy._zeta_series import zeta_derivative_in_x

__all__ = ["gamma", "gammasgn", "loggamma", "factorial", "comb", "beta", "poch",
           "multigammaln", "bernoulli", "polygamma", "zeta"]


# ------------------------------------------------------------------------------ kernels

def _gammasgn(x: np.ndarray) -> np.ndarray:
    """JAX's sign of Gamma: nan at the poles, -inf and nan; -1 at -0 and where
    floor(x) is odd and negative."""
    pole = ((x < 0) & (x == np.floor(x))) | np.isnan(x)
    negative = ((x < 0) & (np.floor(x) % 2 != 0)) | ((x == 0) & np.signbit(x))
    return np.where(pole, np.nan, np.where(negative, -1.0, 1.0))


def _at_edge(*args: np.ndarray) -> np.ndarray:
    """Arguments that are a pole of Gamma (0, -1, ...), infinite or nan."""
    return np.logical_or.reduce([(a <= 0) & (a == np.floor(a)) | ~np.isfinite(a)
                                 for a in args])


def _jax_gamma(x: np.ndarray) -> np.ndarray:
    return _gammasgn(x) * np.exp(sp.gammaln(x))


def _gamma_kernel(x: np.ndarray) -> np.ndarray:
    if not np.iscomplexobj(x):
        return sp.gamma(x)
    # As JAX: nan + nanj at the poles and where a part is infinite or nan; where Gamma
    # overflows, exp(loggamma) (whose parts may be inf or nan, as JAX's).
    pole = (x.imag == 0) & (x.real <= 0) & (x.real == np.floor(x.real))
    bad = pole | ~np.isfinite(x.real) | ~np.isfinite(x.imag)
    safe = np.where(bad, 1.0, x)
    value = sp.gamma(safe)
    value = np.where(np.isfinite(value), value, np.exp(sp.loggamma(safe)))
    return np.where(bad, complex(np.nan, np.nan), value)


def _loggamma_complex_kernel(z: np.ndarray) -> np.ndarray:
    pole = (z.imag == 0) & (z.real <= 0) & (z.real == np.floor(z.real))
    return np.where(pole | np.isnan(z), complex(np.nan, np.nan), sp.loggamma(z))


def _beta_kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    jax_formula = (_gammasgn(a) * _gammasgn(b) * _gammasgn(a + b)
                   * np.exp(sp.gammaln(a) + sp.gammaln(b) - sp.gammaln(a + b)))
    return np.where(np.isnan(jax_formula), np.nan, sp.beta(a, b))


def _poch_kernel(z: np.ndarray, m: np.ndarray) -> np.ndarray:
    jax_formula = np.where(m == 0, 1.0, _jax_gamma(z + m) / _jax_gamma(z))
    edge = _at_edge(z, z + m)
    return np.where(edge, jax_formula, np.where(m == 0, 1.0, sp.poch(z, m)))


def _binom_kernel(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    # Used only where 0 <= k <= n; JAX's lgamma formula is nan at n = inf.
    return np.where(np.isinf(n), np.nan, sp.binom(n, k))


gamma_p = kernel_primitive("gamma", _gamma_kernel, kinds=INEXACT)
loggamma_complex_p = kernel_primitive("loggamma_complex", _loggamma_complex_kernel,
                                      kinds=(COMPLEX,))
digamma_complex_p = kernel_primitive("digamma_complex", sp.psi, kinds=(COMPLEX,))
beta_p = kernel_primitive("beta", _beta_kernel, num_args=2, kinds=(FLOATING,))
poch_p = kernel_primitive("poch", _poch_kernel, num_args=2, kinds=(FLOATING,))
binom_p = kernel_primitive("binom", _binom_kernel, num_args=2, kinds=(FLOATING,))


def _digamma(x: Any) -> Any:
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return digamma_complex_p.bind(x)
    return lax.digamma(x)


def _no_derivative(name: str) -> Any:
    def rule(t: Any, *args: Any) -> Any:
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented: "
                                  "complex loggamma is differentiable once in jaxlite.")
    return rule


kernel_jvp(gamma_p, lambda t, y, x: lax.mul(t, lax.mul(y, _digamma(x))), with_output=True)
kernel_jvp(loggamma_complex_p, lambda t, z: lax.mul(t, digamma_complex_p.bind(z)))
kernel_jvp(digamma_complex_p, _no_derivative("digamma_complex"))
kernel_jvp(beta_p,
           lambda t, y, a, b: lax.mul(t, lax.mul(y, lax.sub(lax.digamma(a),
                                                            lax.digamma(lax.add(a, b))))),
           lambda t, y, a, b: lax.mul(t, lax.mul(y, lax.sub(lax.digamma(b),
                                                            lax.digamma(lax.add(a, b))))),
           with_output=True)
kernel_jvp(poch_p,
           lambda t, y, z, m: lax.mul(t, lax.mul(y, lax.sub(lax.digamma(lax.add(z, m)),
                                                            lax.digamma(z)))),
           lambda t, y, z, m: lax.mul(t, lax.mul(y, lax.digamma(lax.add(z, m)))),
           with_output=True)


def _binom_dn(t: Any, y: Any, n: Any, k: Any) -> Any:
    one = lax.full_like(n, 1)
    return lax.mul(t, lax.mul(y, lax.sub(lax.digamma(lax.add(n, one)),
                                         lax.digamma(lax.add(lax.sub(n, k), one)))))


def _binom_dk(t: Any, y: Any, n: Any, k: Any) -> Any:
    one = lax.full_like(n, 1)
    return lax.mul(t, lax.mul(y, lax.sub(lax.digamma(lax.add(lax.sub(n, k), one)),
                                         lax.digamma(lax.add(k, one)))))


kernel_jvp(binom_p, _binom_dn, _binom_dk, with_output=True)


# ---------------------------------------------------------------------------- functions

def gammasgn(x: Any) -> Any:
    """The sign of the gamma function (mirrors `jax.scipy.special.gammasgn`).

    nan at the poles (0 excluded), at -inf and nan; -1 at -0.0.
    """
    (x,) = promote_args_inexact("gammasgn", x)
    reject_complex("gammasgn", x)
    floor_x = lax.floor(x)
    negative = lax.lt(x, lax.full_like(x, 0))
    pole = jnp.logical_or(jnp.logical_and(negative, lax.eq(x, floor_x)), jnp.isnan(x))
    odd_floor = lax.ne(jnp.remainder(floor_x, lax.full_like(x, 2)), lax.full_like(x, 0))
    minus = jnp.logical_or(jnp.logical_and(negative, odd_floor),
                           jnp.logical_and(lax.eq(x, lax.full_like(x, 0)), jnp.signbit(x)))
    return strong(lax.select(pole, lax.full_like(x, np.nan),
                             lax.select(minus, lax.full_like(x, -1), lax.full_like(x, 1))))


def gamma(x: Any) -> Any:
    """The gamma function, real or complex (mirrors `jax.scipy.special.gamma`)."""
    (x,) = promote_args_inexact("gamma", x)
    return strong(gamma_p.bind(x))


def loggamma(x: Any) -> Any:
    """The principal branch of log Gamma(x) (mirrors `jax.scipy.special.loggamma`).

    Real arguments give lgamma(x) for x > 0 and nan elsewhere (as JAX does).
    """
    (x,) = promote_args_inexact("loggamma", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return loggamma_complex_p.bind(x)
    return jnp.where(lax.gt(x, lax.full_like(x, 0)), lax.lgamma(x), np.nan)


def factorial(n: Any, exact: bool = False) -> Any:
    """n! = Gamma(n + 1) as a float, 0 for n < 0 (mirrors `jax.scipy.special.factorial`)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_args_inexact("factorial", n)
    return jnp.where(lax.lt(n, lax.full_like(n, 0)), 0,
                     gamma_p.bind(lax.add(n, lax.full_like(n, 1))))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:  # noqa: N803 (JAX's name)
    """The number of combinations of N things taken k at a time, as a float.

    Mirrors `jax.scipy.special.comb`: 0 where N < 0, k < 0 or k > N (without repetition);
    with repetition, comb(N + k - 1, k), and 1 at k = 0 for N >= 0.
    """
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        with_repetition = comb(lax.sub(lax.add(N, k), lax.full_like(N, 1)), k)
        trivial = jnp.logical_and(lax.eq(k, lax.full_like(k, 0)),
                                  lax.ge(N, lax.full_like(N, 0)))
        return jnp.where(trivial, 1.0, with_repetition)
    zero = lax.full_like(N, 0)
    valid = jnp.logical_and(jnp.logical_and(lax.le(k, N), lax.ge(N, zero)), lax.ge(k, zero))
    safe_n, safe_k = jnp.where(valid, N, 0.0), jnp.where(valid, k, 0.0)
    return jnp.where(valid, binom_p.bind(safe_n, safe_k), 0.0)


def beta(a: Any, b: Any) -> Any:
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b).

    Mirrors `jax.scipy.special.beta`.
    """
    a, b = promote_args_inexact("beta", a, b)
    reject_complex("beta", a)
    return strong(beta_p.bind(a, b))


def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol (rising factorial) Gamma(z + m) / Gamma(z).

    Mirrors `jax.scipy.special.poch`; 1 at m = 0.
    """
    z, m = promote_args_inexact("poch", z, m)
    reject_complex("poch", z, "jnp.poch does not support complex-valued inputs.")
    return strong(poch_p.bind(z, m))


def multigammaln(a: Any, d: Any) -> Any:
    """The log of the multivariate gamma function of dimension d.

    Mirrors `jax.scipy.special.multigammaln`: d must be a concrete integer;
    log Gamma_d(a) = d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2), j = 0 .. d - 1.
    """
    d = concrete_or_error(int, d, "d argument of multigammaln")
    a, d_arr = promote_args_inexact("multigammaln", a, d)
    half_steps = jnp.arange(d, dtype=d_arr.dtype) / 2
    terms = lax.lgamma(jnp.expand_dims(a, -1) - half_steps)
    constant = 0.25 * d_arr * (d_arr - 1) * np.log(np.pi).astype(a.dtype)
    return jnp.sum(terms, axis=-1) + constant


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers B_0 ... B_n, with B_1 = -1/2 (`jax.scipy.special.bernoulli`)."""
    n = concrete_or_error(operator.index, n, "Argument n of bernoulli")
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    return jnp.asarray(sp.bernoulli(n), dtype=dtypes.default_float_dtype())


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma, for an integer array n (`jax.scipy.special.polygamma`)."""
    n_dtype = np.asarray(n).dtype if not hasattr(n, "dtype") else n.dtype
    if not dtypes.issubdtype(n_dtype, np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{np.dtype(n_dtype)}.")
    n_arr, x_arr = promote_args_inexact("polygamma", n, x)
    reject_complex("polygamma", x_arr)
    return lax.polygamma(n_arr, x_arr)


@custom_jvp
def _zeta(x: Any, q: Any) -> Any:
    return lax.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals: Any, tangents: Any) -> Any:
    x, q = (jnp.asarray(p) for p in primals)
    x_dot, q_dot = tangents
    out = _zeta(x, q)
    d_q = lax.neg(lax.mul(x, lax.zeta(lax.add(x, lax.full_like(x, 1)), q)))
    return out, lax.add(lax.mul(zeta_derivative_in_x(x, q), x_dot), lax.mul(d_q, q_dot))


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function sum_k (q + k)^(-x) (mirrors `jax.scipy.special.zeta`).

    q=None (the Riemann zeta function) is not implemented, as in JAX.
    """
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    x, q = promote_args_inexact("zeta", x, q)
    return _zeta(x, q)

