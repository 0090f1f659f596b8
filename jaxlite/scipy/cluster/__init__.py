"""`jaxlite.scipy.cluster` (mirrors `jax.scipy.cluster`): the `vq` submodule."""
from jaxlite.scipy.cluster import vq  # noqa: F401

__all__ = ["vq"]
