"""jaxlite's version, and the version of JAX whose public API it matches.

`jaxlite.__version__` is jaxlite's own release. Code written for JAX reads
`jax.__version__`, which under the import hook is `JAX_API_VERSION`.
"""
__version__ = "0.1.0"
__version_info__ = tuple(int(part) for part in __version__.split("."))

JAX_API_VERSION = "0.10.2"
JAX_API_VERSION_INFO = tuple(int(part) for part in JAX_API_VERSION.split("."))
