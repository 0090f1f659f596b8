"""Running code written for `jax` on jaxlite: the import hook and the stand-ins it needs.

`install_as_jax()` (also reachable as `jaxlite.install_as_jax`, and what
`python -m jaxlite.run` calls) puts a finder at the front of `sys.meta_path` that answers
every import of `jax`, `jax.X.Y` and `jaxlib` with jaxlite's modules, so the real JAX is
never loaded. Nothing named `jax` is touched until it is called.

- `jax` is a thin module that forwards every attribute to `jaxlite`, except the version:
  `jax.__version__` and `jax.__version_info__` give the JAX version whose API jaxlite
  matches (libraries branch on it); `jaxlite.__version__` stays jaxlite's own.
- `jax.X.Y` is the module `jaxlite.X.Y` itself (`sys.modules["jax.numpy"] is jaxlite.numpy`).
- `jax._src.X` are JAX's private modules: `jaxlite.compat._src` holds the few names popular
  libraries import from them, each with the library that needs it; any other private
  module raises `ModuleNotFoundError` naming the hook.
"""
from jaxlite.compat.hook import JAX_VERSION, install_as_jax, is_installed, uninstall

__all__ = ["JAX_VERSION", "install_as_jax", "is_installed", "uninstall"]
