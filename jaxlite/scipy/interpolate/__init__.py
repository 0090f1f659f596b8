"""`jaxlite.scipy.interpolate`: RegularGridInterpolator (mirrors
`jax.scipy.interpolate`)."""
from jaxlite.scipy.interpolate._regular_grid import RegularGridInterpolator  # noqa: F401

__all__ = ["RegularGridInterpolator"]
