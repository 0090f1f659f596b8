"""The truncated normal distribution on [a, b] in standard units (mirrors
`jax.scipy.stats.truncnorm`).

Probabilities are handled in log space: the mass of [a, b] under the standard normal is
log(Phi(b) - Phi(a)), computed from log_ndtr in the tail where both ends lie (mirrored to
the lower tail when a > 0), where the difference of tiny numbers would underflow, and as
log1p(-Phi(a) - Phi(-b)) when the interval holds 0. Every function is nan for a >= b.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import log_ndtr, logsumexp, ndtr
from jaxlite.scipy.stats import norm
from jaxlite.scipy.stats._util import promote

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"]


def _log_difference(log_x: Any, log_y: Any) -> Any:
    """log(x - y) from log x and log y."""
    return logsumexp(jnp.array([log_x, log_y]),
                     b=jnp.array([jnp.ones_like(log_x), -jnp.ones_like(log_y)]), axis=0)


def _log_mass(a: Any, b: Any) -> Any:
    """log(Phi(b) - Phi(a)) for a <= b."""
    a, b = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(b))
    lower_tail, upper_tail = b <= 0, a > 0
    low = jnp.where(upper_tail, -b, a)
    high = jnp.where(upper_tail, -a, b)
    in_tail = _log_difference(log_ndtr(high), log_ndtr(low))
    central = jnp.log1p(-ndtr(a) - ndtr(-b))
    return jnp.where(lower_tail | upper_tail, in_tail, central)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal log density minus log of the interval's mass; -inf outside [a, b]."""
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    value = lax.sub(norm.logpdf(x, loc, scale), _log_mass(a, b))
    z = lax.div(lax.sub(x, loc), scale)
    value = jnp.where((z < a) | (z > b), -np.inf, value)
    return jnp.where(a >= b, np.nan, value)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density (mirrors `jax.scipy.stats.truncnorm.pdf`)."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the mass of [a, z] over that of [a, b] (from the upper part when it is close
    to 0); 0 above b, -inf below a."""
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = lax.div(lax.sub(x, loc), scale)
    total = _log_mass(a, b)
    log_cdf = _log_mass(a, z) - total
    log_sf = _log_mass(z, b) - total
    result = jnp.select([z >= b, z <= a, log_cdf > -0.1, z > a],
                        [0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf])
    return jnp.where(a >= b, np.nan, result)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """exp(logcdf) (mirrors `jax.scipy.stats.truncnorm.cdf`)."""
    return lax.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - cdf), as the logcdf of the mirrored distribution."""
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """exp(logsf) (mirrors `jax.scipy.stats.truncnorm.sf`)."""
    return lax.exp(logsf(x, a, b, loc, scale))
