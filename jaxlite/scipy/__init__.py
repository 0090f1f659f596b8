"""`jaxlite.scipy`: scipy functions on jaxlite arrays (mirrors `jax.scipy`).

`special` (special functions) and `stats.norm`, written with lax and jaxlite.numpy.
Also `linalg`, `optimize`, `sparse` (`sparse.linalg`), `fft`, `signal`, `integrate`,
`interpolate`, `ndimage`, `cluster` (`cluster.vq`) and `spatial` (`spatial.transform`).
"""
from jaxlite.scipy import special, stats  # noqa: F401
from jaxlite.scipy import (cluster, fft, integrate, interpolate, linalg,  # noqa: F401
                           ndimage, optimize, signal, sparse, spatial)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "spatial", "special", "stats"]
