"""`jaxlite.experimental.compilation_cache` (mirrors `jax.experimental.compilation_cache`):
the persistent cache of compiled programs, set up through its `compilation_cache` module."""
from jaxlite.experimental.compilation_cache import compilation_cache  # noqa: F401
