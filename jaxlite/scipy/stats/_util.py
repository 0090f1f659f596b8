"""Small helpers shared by the distributions of `jaxlite.scipy.stats`."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.lax.convert import _convert_element_type
from jaxlite.numpy._promotion import promote_args_inexact

__all__ = ["const", "log1mexp", "log_probability", "promote"]


def const(x: Any, value: float) -> Any:
    """`value` as a weakly typed scalar of x's dtype (JAX's `lax._const`): it takes part in
    x's arithmetic without making a weakly typed result strong."""
    return _convert_element_type(value, x.dtype, weak_type=True)


def promote(name: str, *args: Any) -> list[Any]:
    """The arguments promoted to one inexact dtype and broadcast (JAX's
    `promote_args_inexact`)."""
    return promote_args_inexact(name, *args)


def log_probability(p: Any, q: Any) -> Any:
    """log p for a probability p whose complement q = 1 - p is computed separately: log p
    below 1/2 (and where p or q is nan), log1p(-q) above, where log p would lose the
    digits of a p close to 1. JAX takes log p throughout; the two agree to rounding below
    1/2. Each branch sees a harmless value where it is not used, so gradients stay
    finite."""
    use_p = ~(p >= 0.5) | jnp.isnan(q)
    from_p = lax.log(jnp.where(use_p, p, 1))
    from_q = lax.log1p(-jnp.where(use_p, 0, q))
    return jnp.where(use_p, from_p, from_q)


def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) for x >= 0, accurate on both sides of log 2 (Maechler's split)."""
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))
