"""The normal distribution: pdf, logpdf, cdf, logcdf, sf, logsf, ppf, isf (mirrors
`jax.scipy.stats.norm`).

Each function takes `loc` (default 0) and `scale` (default 1), promotes its arguments to an
inexact dtype and broadcasts them, and uses JAX's formulas.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import promote_args_inexact
from jaxlite.scipy import special
from jaxlite.scipy.stats._util import const

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the normal density: -((x - loc)^2 / scale^2 + log(2 pi scale^2)) / 2."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(lax.mul(const(x, 2 * np.pi), scale_sqrd))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
    return lax.div(lax.add(log_normalizer, quadratic), const(x, -2))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal density (mirrors `jax.scipy.stats.norm.pdf`): exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal distribution function: ndtr((x - loc) / scale)."""
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log of the normal distribution function, accurate in the lower tail."""
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr(lax.div(lax.sub(x, loc), scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal quantile function: ndtri(q) * scale + loc, in the default float type.

    Mirrors `jax.scipy.stats.norm.ppf`.
    """
    return jnp.asarray(special.ndtri(q) * scale + loc, dtypes.default_float_dtype())


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - cdf), as logcdf(-x, -loc, scale) (mirrors `jax.scipy.stats.norm.logsf`)."""
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - cdf, as cdf(-x, -loc, scale) (mirrors `jax.scipy.stats.norm.sf`)."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function ppf(1 - q) (mirrors `jax.scipy.stats.norm.isf`)."""
    q = jnp.asarray(q)
    return ppf(lax.sub(const(q, 1), q), loc, scale)
