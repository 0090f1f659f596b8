"""`jaxlite.scipy`: scipy functions on jaxlite arrays (mirrors `jax.scipy`).

`special` (special functions) and `stats.norm`, written with lax and jaxlite.numpy.
"""
from jaxlite.scipy import special, stats  # noqa: F401
from jaxlite.scipy import fft, linalg, optimize, signal, sparse  # noqa: F401

__all__ = ["fft", "linalg", "optimize", "signal", "sparse", "special", "stats"]
