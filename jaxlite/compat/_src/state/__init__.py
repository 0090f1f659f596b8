"""`jax._src.state` under the hook (see `types`)."""
