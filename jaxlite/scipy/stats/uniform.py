"""The uniform distribution on [loc, loc + scale] (mirrors `jax.scipy.stats.uniform`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.stats._util import promote

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-log scale inside [loc, loc + scale], -inf outside."""
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    return jnp.where(outside, -np.inf, lax.neg(lax.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The uniform density (mirrors `jax.scipy.stats.uniform.pdf`)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """0 below loc, (x - loc)/scale inside, 1 above (0 where x is nan)."""
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    zero, one = jnp.array(0, x.dtype), jnp.array(1, x.dtype)
    upper = lax.add(loc, scale)
    inside = lax.ge(x, loc) & lax.le(x, upper)
    return jnp.select([lax.lt(x, loc), lax.gt(x, upper), inside],
                      [zero, one, lax.div(lax.sub(x, loc), scale)])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """loc + scale q; nan for q outside [0, 1]."""
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan,
                     lax.add(loc, lax.mul(scale, q)))
