"""The binomial distribution (mirrors `jax.scipy.stats.binom`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import gammaln, xlog1py, xlogy
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """log P(k) = log C(n, y) + y log p + (n - y) log(1 - p), y = k - loc.

    -inf unless loc <= k < loc + n + 1; 0 where y = n = 0 or the log-linear part is 0.
    """
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    one = const(y, 1)
    log_choose = lax.sub(gammaln(lax.add(n, one)),
                         lax.add(gammaln(lax.add(y, one)), gammaln(lax.add(lax.sub(n, y), one))))
    log_linear = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(log_choose, log_linear)
    zero = const(y, 0)
    trivial = jnp.logical_or(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)),
                             lax.eq(log_linear, zero))
    log_probs = jnp.where(trivial, 0., log_probs)
    inside = lax.ge(k, loc) & lax.lt(k, lax.add(lax.add(loc, n), one))
    return jnp.where(inside, log_probs, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """P(k) = exp(logpmf) (mirrors `jax.scipy.stats.binom.pmf`)."""
    return lax.exp(logpmf(k, n, p, loc))
