"""The Bernoulli distribution (mirrors `jax.scipy.stats.bernoulli`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core.avals import get_aval
from jaxlite.scipy.special import xlog1py, xlogy
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """log P(k): k log p + (1 - k) log(1 - p) at k - loc in {0, 1}, -inf elsewhere."""
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(const(k, 1), x), -p)
    outside = jnp.logical_or(lax.lt(x, const(k, 0)), lax.gt(x, const(k, 1)))
    return jnp.where(outside, -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """P(k) = exp(logpmf) (mirrors `jax.scipy.stats.bernoulli.pmf`)."""
    return jnp.exp(logpmf(k, p, loc))


def _invalid_p(p: Any) -> Any:
    return jnp.isnan(p) | (p < const(p, 0)) | (p > const(p, 1))


def cdf(k: Any, p: Any) -> Any:
    """P(K <= k): 0 below 0, 1 - p on [0, 1), 1 from 1 on; nan for p outside [0, 1]."""
    k, p = promote("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    below_one = jnp.logical_and(lax.ge(k, zero), lax.lt(k, one))
    return jnp.select([jnp.isnan(k) | _invalid_p(p), lax.lt(k, zero), below_one,
                       lax.ge(k, one)], [np.nan, zero, one - p, one])


def ppf(q: Any, p: Any) -> Any:
    """The smallest k with P(K <= k) >= q: 0 for q <= 1 - p, else 1 (nan outside)."""
    q, p = promote("bernoulli.ppf", q, p)
    zero, one = const(q, 0), const(q, 1)
    invalid = jnp.isnan(q) | _invalid_p(p) | (q < zero) | (q > one)
    # JAX's 0 and 1 are Python scalars for a weakly typed scalar q, strongly typed
    # constants otherwise (and so is its result).
    if get_aval(q).weak_type and q.ndim == 0:
        low, high = 0.0, 1.0
    else:
        low, high = np.array(0, q.dtype), np.array(1, q.dtype)
    outcome = jnp.where(lax.le(q, one - p), low, high)
    return jnp.where(invalid, np.nan, outcome)
