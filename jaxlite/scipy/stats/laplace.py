"""The Laplace distribution (mirrors `jax.scipy.stats.laplace`)."""
from __future__ import annotations

from typing import Any

from jaxlite import lax
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-|x - loc|/scale - log(2 scale)."""
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    return lax.neg(lax.add(lax.div(lax.abs(lax.sub(x, loc)), scale),
                           lax.log(lax.mul(const(x, 2), scale))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Laplace density (mirrors `jax.scipy.stats.laplace.pdf`)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """e^z / 2 for z = (x - loc)/scale <= 0, 1 - e^-z / 2 above."""
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    half = const(x, 0.5)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.select(lax.le(z, const(x, 0)), lax.mul(half, lax.exp(z)),
                      lax.sub(const(x, 1), lax.mul(half, lax.exp(lax.neg(z)))))
