"""The beta distribution (mirrors `jax.scipy.stats.beta`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import betainc, betaln, xlog1py, xlogy
from jaxlite.scipy.stats._util import const, log_probability, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log density: (a-1) log y + (b-1) log(1-y) - log B(a, b) - log scale, y = (x-loc)/scale.

    -inf outside [loc, loc + scale]; nan for a <= 0, b <= 0 or scale <= 0.
    """
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    one = const(x, 1)
    y = lax.div(lax.sub(x, loc), scale)
    log_kernel = lax.add(xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.sub(log_kernel, betaln(a, b)), lax.log(scale))
    outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    result = jnp.where(outside, -np.inf, log_probs)
    zero = const(a, 0)
    invalid = jnp.logical_or(jnp.logical_or(lax.le(a, zero), lax.le(b, zero)),
                             lax.le(scale, zero))
    return jnp.where(invalid, np.nan, result)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta density (mirrors `jax.scipy.stats.beta.pdf`)."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def _unit(x: Any, loc: Any, scale: Any) -> Any:
    return lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, 1))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """I_y(a, b) with y = (x - loc) / scale clamped to [0, 1]."""
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, _unit(x, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log cdf, accurate where cdf is close to 1 (mirrors `jax.scipy.stats.beta.logcdf`)."""
    return log_probability(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - cdf, as I_(1-y)(b, a) (mirrors `jax.scipy.stats.beta.sf`)."""
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - _unit(x, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log sf, accurate where sf is close to 1 (mirrors `jax.scipy.stats.beta.logsf`)."""
    return log_probability(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))
