"""The generalized normal distribution (mirrors `jax.scipy.stats.gennorm`)."""
from __future__ import annotations

from typing import Any

from jaxlite import lax
from jaxlite.scipy.stats._util import promote

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: Any, beta: Any) -> Any:
    """log(beta / 2) - lgamma(1/beta) - |x|^beta."""
    x, beta = promote("gennorm.logpdf", x, beta)
    return lax.log(.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x: Any, beta: Any) -> Any:
    """(1 + sign(x) P(1/beta, |x|^beta)) / 2."""
    x, beta = promote("gennorm.cdf", x, beta)
    return .5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x: Any, beta: Any) -> Any:
    """The generalized normal density (mirrors `jax.scipy.stats.gennorm.pdf`)."""
    return lax.exp(logpdf(x, beta))
