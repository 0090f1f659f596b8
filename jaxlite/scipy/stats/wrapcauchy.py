"""The wrapped Cauchy distribution on [0, 2 pi] (mirrors `jax.scipy.stats.wrapcauchy`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any) -> Any:
    """log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos x) on [0, 2 pi], -inf outside;
    nan unless 0 < c < 1."""
    x, c = promote("wrapcauchy.logpdf", x, c)
    log_probs = (jnp.log(1 - c * c) - jnp.log(2 * np.pi)
                 - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
    on_circle = lax.ge(x, const(x, 0)) & lax.le(x, const(x, np.pi * 2))
    valid = lax.gt(c, const(c, 0)) & lax.lt(c, const(c, 1))
    return jnp.where(valid, jnp.where(on_circle, log_probs, -np.inf), np.nan)


def pdf(x: Any, c: Any) -> Any:
    """The wrapped Cauchy density (mirrors `jax.scipy.stats.wrapcauchy.pdf`)."""
    return lax.exp(logpdf(x, c))
