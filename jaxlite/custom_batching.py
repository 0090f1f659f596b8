"""`jax.custom_batching`: functions with their own batching rule (implemented in
`jaxlite.lax.custom_batching`)."""
from jaxlite.lax.custom_batching import custom_vmap, sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]
