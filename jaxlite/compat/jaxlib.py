"""`jaxlib` under the import hook: only its version (libraries read it; jaxlite has no jaxlib)."""
from jaxlite.compat.hook import JAX_VERSION, JAX_VERSION_INFO

__version__ = JAX_VERSION
version = JAX_VERSION
__version_info__ = JAX_VERSION_INFO
