"""The gamma distribution (mirrors `jax.scipy.stats.gamma`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import gammainc, gammaincc, gammaln, xlogy
from jaxlite.scipy.stats._util import const, log_probability, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """(a - 1) log y - y - lgamma(a) - log scale, y = (x - loc)/scale; -inf below loc."""
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    inside = lax.ge(x, loc)
    one = const(x, 1)
    y = jnp.where(inside, lax.div(lax.sub(x, loc), scale), one)
    log_kernel = lax.sub(xlogy(lax.sub(a, one), y), y)
    log_probs = lax.sub(log_kernel, lax.add(gammaln(a), lax.log(scale)))
    return jnp.where(inside, log_probs, -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma density (mirrors `jax.scipy.stats.gamma.pdf`)."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(a, y) with y = (x - loc)/scale clamped at 0."""
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    y = lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, np.inf))
    return gammainc(a, y)


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log cdf, accurate where cdf is close to 1 (mirrors `jax.scipy.stats.gamma.logcdf`)."""
    return log_probability(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Q(a, y), 1 below loc (mirrors `jax.scipy.stats.gamma.sf`)."""
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return jnp.where(lax.lt(y, const(y, 0)), 1, gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log sf, accurate where sf is close to 1 (mirrors `jax.scipy.stats.gamma.logsf`)."""
    return log_probability(sf(x, a, loc, scale), cdf(x, a, loc, scale))
