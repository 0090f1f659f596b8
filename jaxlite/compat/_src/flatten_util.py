"""`jax._src.flatten_util` under the hook. Needed by blackjax (smc tuning)."""
from jaxlite.flatten_util import ravel_pytree

__all__ = ["ravel_pytree"]
