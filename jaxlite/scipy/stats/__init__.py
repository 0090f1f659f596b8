"""`jaxlite.scipy.stats`: statistical distributions (mirrors `jax.scipy.stats`).

Only the normal distribution (`norm`) so far.
"""
from jaxlite.scipy.stats import norm  # noqa: F401

__all__ = ["norm"]
