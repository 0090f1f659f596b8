"""The Pareto distribution (mirrors `jax.scipy.stats.pareto`).

With y = (x - loc)/scale, everything below y = 1 (x < loc + scale) is outside the support.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "logsf", "sf", "ppf"]


def _y(x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    return lax.div(lax.sub(x, loc), scale), lax.lt(x, lax.add(loc, scale))


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-log(scale / b) - (b + 1) log y; -inf below the support."""
    x, b, loc, scale = promote("pareto.logpdf", x, b, loc, scale)
    y, below = _y(x, loc, scale)
    log_probs = lax.neg(lax.add(lax.log(lax.div(scale, b)),
                                lax.mul(lax.add(b, const(x, 1)), lax.log(y))))
    return jnp.where(below, -np.inf, log_probs)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Pareto density (mirrors `jax.scipy.stats.pareto.pdf`)."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - y^-b; 0 below the support."""
    x, b, loc, scale = promote("pareto.cdf", x, b, loc, scale)
    y, below = _y(x, loc, scale)
    return jnp.where(below, const(x, 0), lax.sub(const(x, 1), lax.pow(y, lax.neg(b))))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - y^-b); -inf below the support."""
    x, b, loc, scale = promote("pareto.logcdf", x, b, loc, scale)
    y, below = _y(x, loc, scale)
    return jnp.where(below, -np.inf, lax.log1p(lax.neg(lax.pow(y, lax.neg(b)))))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-b log y; 0 below the support."""
    x, b, loc, scale = promote("pareto.logsf", x, b, loc, scale)
    y, below = _y(x, loc, scale)
    return jnp.where(below, const(x, 0), lax.neg(lax.mul(b, lax.log(y))))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """exp(logsf) (mirrors `jax.scipy.stats.pareto.sf`)."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """loc + scale (1 - q)^(-1/b); nan for q outside [0, 1]."""
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    quantile = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, quantile)
