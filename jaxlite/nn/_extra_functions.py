"""`log1mexp`, `logmeanexp` and `tanh` (mirrors `jax.nn`'s functions of those names).

log1mexp(x) = log(1 - exp(-x)) for x >= 0, computed as log(-expm1(-x)) below log 2 and as
log1p(-exp(-x)) above, where each is accurate; its derivative is JAX's, 1 / expm1(x).
logmeanexp is logsumexp minus the log of the number of entries reduced (those `where`
selects).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import numpy as jnp
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.scipy.special import logsumexp

__all__ = ["log1mexp", "logmeanexp", "tanh"]


@custom_jvp
def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)), accurate for small and large x (mirrors `jax.nn.log1mexp`)."""
    x = jnp.asarray(x)
    return jnp.where(x < jnp.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


@log1mexp.defjvp
def _log1mexp_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return log1mexp(x), t / jnp.expm1(x)


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """log(mean(exp(x))) over `axis`, of the entries `where` selects
    (mirrors `jax.nn.logmeanexp`)."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    shape = np.shape(x)
    mask = jnp.ones(shape, bool) if where is None else jnp.broadcast_to(where, shape)
    count = jnp.sum(mask, axis=axis, keepdims=keepdims, dtype=lse.dtype)
    return lse - jnp.log(count)


def tanh(x: Any, /) -> Any:
    """The hyperbolic tangent (mirrors `jax.nn.tanh`, which is `jax.numpy.tanh`)."""
    return jnp.tanh(x)
