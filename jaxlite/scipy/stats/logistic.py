"""The logistic distribution (mirrors `jax.scipy.stats.logistic`)."""
from __future__ import annotations

from typing import Any

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import expit, logit
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpdf", "pdf", "ppf", "sf", "isf", "cdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-2 logaddexp(z/2, -z/2) - log scale, z = (x - loc)/scale."""
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    half_z = lax.div(z, const(z, 2))
    return lax.sub(lax.mul(const(z, -2), jnp.logaddexp(half_z, lax.neg(half_z))),
                   lax.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic density (mirrors `jax.scipy.stats.logistic.pdf`)."""
    return lax.exp(logpdf(x, loc, scale))


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """loc + scale logit(q) (mirrors `jax.scipy.stats.logistic.ppf`)."""
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """expit(-z) (mirrors `jax.scipy.stats.logistic.sf`)."""
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """loc - scale logit(q) (mirrors `jax.scipy.stats.logistic.isf`)."""
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """expit(z) (mirrors `jax.scipy.stats.logistic.cdf`)."""
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))
