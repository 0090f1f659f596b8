"""`jax._src` under the import hook: the private names popular libraries import.

JAX's private modules are not an API; libraries reach into them anyway. Each module here
holds only names some library needs, each marked with that library, built on jaxlite's
public modules. A private module or name that is not here raises the usual ImportError.
"""
