"""`jaxlite.scipy.spatial` (mirrors `jax.scipy.spatial`): the `transform` submodule."""
from jaxlite.scipy.spatial import transform  # noqa: F401

__all__ = ["transform"]
