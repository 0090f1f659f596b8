"""`jax._src.util` under the hook. Needed by JAX's own examples/optimizers.py (and the
programs copied from it), which import `safe_zip`, `safe_map` and `unzip2` from here."""
from jaxlite.core.util import safe_map, safe_zip, unzip2, weakref_lru_cache

__all__ = ["safe_map", "safe_zip", "unzip2", "weakref_lru_cache"]
