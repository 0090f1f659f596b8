"""The right-skewed Gumbel distribution (mirrors `jax.scipy.stats.gumbel_r`).

With z = (x - loc)/scale: log pdf = -(z + e^-z) - log scale, log cdf = -e^-z,
sf = 1 - exp(-e^-z); every function is nan for scale <= 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import xlogy
from jaxlite.scipy.stats._util import const, log1mexp, promote

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "ppf", "sf", "logsf"]


def _z(name: str, x: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any]:
    x, loc, scale = promote(name, x, loc, scale)
    return lax.div(lax.sub(x, loc), scale), scale, lax.gt(scale, const(scale, 0))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-(z + e^-z) - log scale (mirrors `jax.scipy.stats.gumbel_r.logpdf`)."""
    z, scale, valid = _z("gumbel_r.logpdf", x, loc, scale)
    log_pdf = lax.add(xlogy(-1, scale), lax.neg(lax.add(z, lax.exp(lax.neg(z)))))
    return jnp.where(valid, log_pdf, np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density (mirrors `jax.scipy.stats.gumbel_r.pdf`)."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-e^-z (mirrors `jax.scipy.stats.gumbel_r.logcdf`)."""
    z, _, valid = _z("gumbel_r.logcdf", x, loc, scale)
    return jnp.where(valid, lax.neg(lax.exp(lax.neg(z))), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """exp(logcdf) (mirrors `jax.scipy.stats.gumbel_r.cdf`)."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """loc - scale log(-log p); nan outside (0, 1)."""
    p, loc, scale = promote("gumbel_r.ppf", p, loc, scale)
    inside = lax.bitwise_and(lax.gt(p, const(p, 0)), lax.lt(p, const(p, 1)))
    quantile = lax.sub(loc, lax.mul(scale, lax.log(xlogy(-1, p))))
    return jnp.where(inside, quantile, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - exp(-e^-z) (mirrors `jax.scipy.stats.gumbel_r.sf`)."""
    x, loc, scale = promote("gumbel_r.sf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    survival = lax.sub(const(x, 1), lax.exp(lax.neg(lax.exp(neg_z))))
    return jnp.where(lax.gt(scale, const(scale, 0)), survival, np.nan)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - exp(-e^-z)) (mirrors `jax.scipy.stats.gumbel_r.logsf`)."""
    x, loc, scale = promote("gumbel_r.logsf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.gt(scale, const(scale, 0)), log1mexp(lax.exp(neg_z)), np.nan)
