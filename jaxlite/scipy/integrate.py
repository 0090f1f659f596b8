"""`jaxlite.scipy.integrate`: trapezoid (mirrors `jax.scipy.integrate`)."""
from __future__ import annotations

from typing import Any

import jaxlite.numpy as jnp

__all__ = ["trapezoid"]


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of y along axis by the trapezoidal rule, at sample points x or with
    spacing dx (mirrors `jax.scipy.integrate.trapezoid`; it is `jnp.trapezoid`)."""
    return jnp.trapezoid(y, x, dx, axis)
