"""`jax._src` under the import hook: the private names popular libraries import.

JAX's private modules are not an API; libraries reach into them anyway. Each module here
holds only names some library needs, each marked with that library, built on jaxlite's
public modules. A private module or name that is not here raises the usual ImportError.
"""
import importlib
import importlib.util
from typing import Any

from jaxlite.compat.hook import _target_of


def __getattr__(name: str) -> Any:
    # `from jax._src import compiler` looks the module up as an attribute of this package;
    # the modules the hook maps elsewhere (jax._src.compiler is jaxlite.runtime.compiler,
    # which chex imports this way) are found here.
    # Real `import jax` loads its private modules, so `jax._src.xla_bridge` is an attribute
    # without an import (chex's set_n_cpu_devices reads it so); ours load on first lookup.
    target = _target_of(f"jax._src.{name}")
    if target is not None and importlib.util.find_spec(target) is not None:
        return importlib.import_module(target)
    raise AttributeError(f"module 'jax._src' has no attribute {name!r}")
