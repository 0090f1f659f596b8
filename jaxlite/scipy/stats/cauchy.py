"""The Cauchy distribution (mirrors `jax.scipy.stats.cauchy`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "isf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-log(pi scale) - log(1 + z^2), z = (x - loc) / scale."""
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.neg(lax.add(lax.log(lax.mul(const(x, np.pi), scale)),
                           lax.log1p(lax.mul(z, z))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy density (mirrors `jax.scipy.stats.cauchy.pdf`)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1/2 + arctan(z) / pi (mirrors `jax.scipy.stats.cauchy.cdf`)."""
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.add(const(x, 0.5), lax.mul(const(x, 1 / np.pi), lax.atan(z)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log cdf (mirrors `jax.scipy.stats.cauchy.logcdf`)."""
    return lax.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - cdf, as cdf(-x, -loc, scale) (mirrors `jax.scipy.stats.cauchy.sf`)."""
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log sf (mirrors `jax.scipy.stats.cauchy.logsf`)."""
    x, loc, scale = promote("cauchy.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def _quantile(q: Any, loc: Any, scale: Any, upper: bool) -> Any:
    angle = lax.mul(const(q, np.pi), q)
    half_pi = const(q, np.pi / 2)
    turned = lax.sub(half_pi, angle) if upper else lax.sub(angle, half_pi)
    return lax.add(lax.mul(lax.tan(turned), scale), loc)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function loc + scale tan(pi/2 - pi q)."""
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return _quantile(q, loc, scale, upper=True)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function loc + scale tan(pi q - pi/2)."""
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    return _quantile(q, loc, scale, upper=False)
