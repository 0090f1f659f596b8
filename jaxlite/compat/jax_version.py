"""`jax.version` under the import hook: the JAX release whose API jaxlite matches."""
from jaxlite.compat.hook import JAX_VERSION, JAX_VERSION_INFO

__version__ = JAX_VERSION
__version_info__ = JAX_VERSION_INFO
_version = JAX_VERSION
_minimum_jaxlib_version = JAX_VERSION
