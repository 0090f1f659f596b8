"""The multinomial distribution (mirrors `jax.scipy.stats.multinomial`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import promote_args_inexact, promote_dtypes_numeric
from jaxlite.scipy.special import gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """log n! + sum_i (x_i log p_i - log x_i!) over the last axis; -inf unless sum(x) == n.

    x and n must be integer arrays (ValueError otherwise, as in JAX).
    """
    (p,) = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_dtypes_numeric(x, n)
    if x.ndim and n.ndim and x.ndim != n.ndim:  # JAX equalizes ranks, scalars stay
        rank = max(x.ndim, n.ndim)
        x, n = (v.reshape((1,) * (rank - v.ndim) + v.shape) for v in (x, n))
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    # JAX compares the total over every axis with n.
    return jnp.where(jnp.equal(jnp.sum(x), n), log_probs, -np.inf)


def pmf(x: Any, n: Any, p: Any) -> Any:
    """exp(logpmf) (mirrors `jax.scipy.stats.multinomial.pmf`)."""
    return lax.exp(logpmf(x, n, p))
