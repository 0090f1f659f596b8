"""The exponential distribution (mirrors `jax.scipy.stats.expon`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.stats._util import promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-(x - loc)/scale - log scale, -inf below loc."""
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The exponential density (mirrors `jax.scipy.stats.expon.pdf`)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - exp(-(x - loc)/scale), 0 below loc."""
    x, loc, scale = promote("expon.cdf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), lax.neg(lax.expm1(neg_z)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - sf) (mirrors `jax.scipy.stats.expon.logcdf`)."""
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-(x - loc)/scale, 0 below loc."""
    x, loc, scale = promote("expon.sf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), neg_z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """exp(logsf) (mirrors `jax.scipy.stats.expon.sf`)."""
    return lax.exp(logsf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """loc - scale log(1 - q); nan for q outside [0, 1]."""
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    invalid = jnp.isnan(q) | (q < 0) | (q > 1)
    return jnp.where(invalid, np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))
