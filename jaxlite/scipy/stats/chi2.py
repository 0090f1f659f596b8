"""The chi-squared distribution (mirrors `jax.scipy.stats.chi2`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import gammainc, gammaincc
from jaxlite.scipy.stats._util import const, log_probability, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """(k/2 - 1) log y - y/2 - lgamma(k/2) - k/2 log 2 - log scale, y = (x - loc) / scale;
    -inf below loc."""
    x, df, loc, scale = promote("chi2.logpdf", x, df, loc, scale)
    one, two = const(x, 1), const(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(half_df, one), lax.log(y)), lax.div(y, two))
    normalizer = lax.neg(lax.add(lax.lgamma(half_df),
                                 lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(normalizer, lax.log(scale)), kernel)
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-squared density (mirrors `jax.scipy.stats.chi2.pdf`)."""
    return lax.exp(logpdf(x, df, loc, scale))


def _half_y(x: Any, loc: Any, scale: Any) -> Any:
    half = lax.div(lax.sub(x, loc), lax.mul(scale, const(scale, 2)))
    return lax.clamp(const(x, 0), half, const(x, np.inf))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(df/2, y/2), y clamped at 0 (mirrors `jax.scipy.stats.chi2.cdf`)."""
    x, df, loc, scale = promote("chi2.cdf", x, df, loc, scale)
    return gammainc(lax.div(df, const(scale, 2)), _half_y(x, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log cdf, accurate where cdf is close to 1 (mirrors `jax.scipy.stats.chi2.logcdf`)."""
    return log_probability(cdf(x, df, loc, scale), sf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Q(df/2, y/2), y clamped at 0 (mirrors `jax.scipy.stats.chi2.sf`)."""
    x, df, loc, scale = promote("chi2.sf", x, df, loc, scale)
    return gammaincc(lax.div(df, const(scale, 2)), _half_y(x, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log sf, accurate where sf is close to 1 (mirrors `jax.scipy.stats.chi2.logsf`)."""
    return log_probability(sf(x, df, loc, scale), cdf(x, df, loc, scale))
