"""The beta-binomial distribution (mirrors `jax.scipy.stats.betabinom`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import betaln
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """log P(k) = log C(n, y) + log B(y + a, n - y + b) - log B(a, b), y = floor(k) - loc.

    -inf for y < -loc, y > n or y + a <= 0; nan for n < 0, a <= 0 or b <= 0; 0 at y = n = 0.
    """
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one, zero = const(y, 1), const(y, 0)
    log_choose = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one),
                                                      lax.add(y, one))))
    log_beta_ratio = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(log_choose, log_beta_ratio)
    log_probs = jnp.where(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0., log_probs)
    outside = jnp.logical_or(jnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)),
                             lax.le(lax.add(y, a), zero))
    log_probs = jnp.where(outside, -np.inf, log_probs)
    invalid = jnp.logical_or(jnp.logical_or(lax.lt(n, zero), lax.le(a, zero)),
                             lax.le(b, zero))
    return jnp.where(invalid, np.nan, log_probs)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """P(k) = exp(logpmf) (mirrors `jax.scipy.stats.betabinom.pmf`)."""
    return lax.exp(logpmf(k, n, a, b, loc))
