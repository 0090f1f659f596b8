"""The Dirichlet distribution (mirrors `jax.scipy.stats.dirichlet`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.numpy._promotion import promote_dtypes_inexact
from jaxlite.scipy.special import gammaln, xlogy
from jaxlite.scipy.stats._util import const

__all__ = ["logpdf", "pdf"]


def _on_simplex(x: Any) -> Any:
    # JAX's test: positive entries summing to 1 within 1e-6.
    return jnp.all(x > 0, axis=0) & (abs(jnp.sum(x, axis=0) - 1) < 1e-6)


def logpdf(x: Any, alpha: Any) -> Any:
    """sum (alpha_i - 1) log x_i - log B(alpha) over the first axis of x (x may omit the
    last coordinate, which is then 1 - sum x); -inf off the simplex."""
    x, alpha = promote_dtypes_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    one = const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, lax.sub(one, jnp.sum(x, 0, keepdims=True))], axis=0)
    log_beta = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = lax.sub(jnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), log_beta)
    return jnp.where(_on_simplex(x), log_probs, -np.inf)


def pdf(x: Any, alpha: Any) -> Any:
    """The Dirichlet density (mirrors `jax.scipy.stats.dirichlet.pdf`)."""
    return lax.exp(logpdf(x, alpha))
