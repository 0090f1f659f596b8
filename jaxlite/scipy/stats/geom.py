"""The geometric distribution (mirrors `jax.scipy.stats.geom`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import xlog1py
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """(x - 1) log(1 - p) + log p at x = k - loc >= 1, -inf below."""
    k, p, loc = promote("geom.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, const(k, 1)), -p) + lax.log(p)
    return jnp.where(lax.le(x, const(k, 0)), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """P(k) = exp(logpmf) (mirrors `jax.scipy.stats.geom.pmf`)."""
    return jnp.exp(logpmf(k, p, loc))
