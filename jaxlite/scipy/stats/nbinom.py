"""The negative binomial distribution (mirrors `jax.scipy.stats.nbinom`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.special import gammaln, xlogy
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """log C(y + n - 1, y) + n log p + y log(1 - p), y = k - loc; -inf below loc."""
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1)
    y = lax.sub(k, loc)
    log_choose = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)),
                         gammaln(lax.add(y, one)))
    log_linear = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    return jnp.where(lax.lt(k, loc), -np.inf, lax.add(log_choose, log_linear))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """P(k) = exp(logpmf) (mirrors `jax.scipy.stats.nbinom.pmf`)."""
    return lax.exp(logpmf(k, n, p, loc))
