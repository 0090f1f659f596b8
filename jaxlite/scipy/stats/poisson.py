"""The Poisson distribution (mirrors `jax.scipy.stats.poisson`).

`entropy` sums -p log p over a window of +-12 standard deviations around mu (2500 terms,
enough up to mu = 10**4; the tails beyond are below 1e-30) and uses the asymptotic
expansion 1/2 log(2 pi e mu) - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3) above, whose
relative error there is below 1e-17. JAX uses only the first two terms from mu = 100 on
(relative error 1e-6 at mu = 100); jaxlite is accurate to float64.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.numpy._promotion import promote_dtypes_inexact
from jaxlite.scipy.special import gammaincc, gammaln, xlogy
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpmf", "pmf", "cdf", "entropy"]

_WINDOW = 2500
_ASYMPTOTIC_FROM = 1e4


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """x log mu - log x! - mu at x = k - loc; -inf for x < 0 or non-integer k."""
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    outside = jnp.logical_or(lax.lt(x, const(k, 0)), lax.ne(jnp.round(k), k))
    return jnp.where(outside, -np.inf, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """P(k) = exp(logpmf) (mirrors `jax.scipy.stats.poisson.pmf`)."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Q(floor(x + 1), mu) at x = k - loc; 0 below 0."""
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    return jnp.where(lax.lt(x, const(k, 0)), const(k, 0), gammaincc(jnp.floor(1 + x), mu))


def _entropy_by_sum(mu: Any) -> Any:
    start = jnp.maximum(jnp.floor(mu - 12 * jnp.sqrt(jnp.maximum(mu, 0)) - 20), 0)
    k = start[..., None] + jnp.arange(_WINDOW, dtype=mu.dtype)
    log_p = xlogy(k, mu[..., None]) - gammaln(k + 1) - mu[..., None]
    p = jnp.exp(log_p)
    return jnp.sum(jnp.where(p > 0, -p * log_p, 0), axis=-1)


def _entropy_asymptotic(mu: Any) -> Any:
    return (0.5 * jnp.log(2 * np.pi * np.e * mu) - 1 / (12 * mu) - 1 / (24 * mu ** 2)
            - 19 / (360 * mu ** 3))


def entropy(mu: Any, loc: Any = 0) -> Any:
    """The entropy -sum_k p(k) log p(k), 0 at mu = 0, of the shape of mu and loc broadcast
    (loc does not change it)."""
    mu, loc = promote_dtypes_inexact(jnp.asarray(mu), jnp.asarray(loc))
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    large = mu >= _ASYMPTOTIC_FROM
    summed = _entropy_by_sum(jnp.where(large, 1, mu))
    result = jnp.where(large, _entropy_asymptotic(jnp.where(large, mu, 1)), summed)
    return jnp.broadcast_to(jnp.where(mu == 0, 0, result), shape)
