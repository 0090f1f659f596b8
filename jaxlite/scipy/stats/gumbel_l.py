"""The left-skewed Gumbel distribution (mirrors `jax.scipy.stats.gumbel_l`).

With z = (x - loc)/scale: log pdf = z - e^z - log scale, log cdf = log(1 - exp(-e^z)),
log sf = -e^z; every function is nan for scale <= 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import xlog1py, xlogy
from jaxlite.scipy.stats._util import const, log1mexp, promote

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "ppf", "sf", "logsf"]


def _z(name: str, x: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any]:
    x, loc, scale = promote(name, x, loc, scale)
    return lax.div(lax.sub(x, loc), scale), scale, lax.gt(scale, const(scale, 0))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """z - e^z - log scale (mirrors `jax.scipy.stats.gumbel_l.logpdf`)."""
    z, scale, valid = _z("gumbel_l.logpdf", x, loc, scale)
    return jnp.where(valid, lax.add(xlogy(-1, scale), lax.sub(z, lax.exp(z))), np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density (mirrors `jax.scipy.stats.gumbel_l.pdf`)."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - exp(-e^z)), accurate on both sides of e^z = log 2 (JAX takes
    log(-expm1(-e^z)), which loses the digits of a cdf close to 1)."""
    z, _, valid = _z("gumbel_l.logcdf", x, loc, scale)
    return jnp.where(valid, log1mexp(lax.exp(z)), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """exp(logcdf) (mirrors `jax.scipy.stats.gumbel_l.cdf`)."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """loc + scale log(-log(1 - p)); nan outside (0, 1)."""
    p, loc, scale = promote("gumbel_l.ppf", p, loc, scale)
    inside = lax.bitwise_and(lax.gt(p, const(p, 0)), lax.lt(p, const(p, 1)))
    quantile = lax.add(loc, lax.mul(scale, lax.log(xlog1py(-1, lax.neg(p)))))
    return jnp.where(inside, quantile, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """exp(logsf) (mirrors `jax.scipy.stats.gumbel_l.sf`)."""
    return jnp.exp(logsf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-e^z (mirrors `jax.scipy.stats.gumbel_l.logsf`)."""
    z, _, valid = _z("gumbel_l.logsf", x, loc, scale)
    return jnp.where(valid, lax.neg(lax.exp(z)), np.nan)
