"""`jaxlite.scipy`: scipy functions on jaxlite arrays (mirrors `jax.scipy`).

`special` (special functions) and `stats.norm`, written with lax and jaxlite.numpy.
"""
from jaxlite.scipy import special, stats  # noqa: F401
from jaxlite.scipy import (cluster, fft, integrate, interpolate, linalg,  # noqa: F401
                           ndimage, optimize, signal, sparse, spatial)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "spatial", "special", "stats"]
