"""The import hook behind `jaxlite.install_as_jax()`: `import jax...` resolves to jaxlite."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import sys
import types
from typing import Any

import jaxlite
from jaxlite.version import JAX_API_VERSION, JAX_API_VERSION_INFO

# The JAX release whose public API jaxlite matches; what `jax.__version__` says under the hook.
JAX_VERSION, JAX_VERSION_INFO = JAX_API_VERSION, JAX_API_VERSION_INFO

# Names under `jax` whose jaxlite module is not at the same path (the longest prefix wins).
_RENAMED = {
    "jax._src": "jaxlite.compat._src",
    # chex patches its compile functions: the module dispatch calls them through.
    "jax._src.compiler": "jaxlite.runtime.compiler",
    "jax.version": "jaxlite.compat.jax_version",
    "jaxlib": "jaxlite.compat.jaxlib",
}


def _target_of(fullname: str) -> str | None:
    """The jaxlite module that stands for `fullname`, or None when the name is not JAX's."""
    for prefix in sorted(_RENAMED, key=len, reverse=True):
        if fullname == prefix or fullname.startswith(prefix + "."):
            return _RENAMED[prefix] + fullname[len(prefix):]
    if fullname.startswith("jax."):
        return "jaxlite." + fullname[len("jax."):]
    return None


class _JaxModule(types.ModuleType):
    """`jax` under the hook: jaxlite's namespace, with JAX's version."""

    def __getattr__(self, name: str) -> Any:
        if name == "_src":
            # Real `import jax` loads jax._src, and libraries read it as an attribute
            # (chex's set_n_cpu_devices: `jax._src.xla_bridge._backends`).
            return importlib.import_module("jax._src")
        try:
            return getattr(jaxlite, name)
        except AttributeError:
            raise AttributeError(
                f"module 'jax' has no attribute {name!r} (under jaxlite's import hook, `jax` "
                f"is jaxlite {jaxlite.__version__}, which matches JAX {JAX_VERSION}'s public "
                f"API; jaxlite has no {name!r})") from None

    def __dir__(self) -> list[str]:
        return sorted(set(dir(jaxlite)) | set(self.__dict__))


def _make_jax_module() -> types.ModuleType:
    module = _JaxModule("jax", jaxlite.__doc__)
    module.__version__ = JAX_VERSION
    module.__version_info__ = JAX_VERSION_INFO
    module.__file__ = jaxlite.__file__
    module.__path__ = list(jaxlite.__path__)
    module.__jaxlite__ = True  # how code (and our tests) tell the stand-in from real JAX
    module.version = importlib.import_module("jaxlite.compat.jax_version")
    return module


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias by handing back the (already imported) jaxlite module it stands for."""

    def __init__(self, target: str | None) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if self.target is None:
            return _make_jax_module()
        return importlib.import_module(self.target)

    def exec_module(self, module: types.ModuleType) -> None:
        pass  # the jaxlite module ran when it was first imported


class _JaxVersionDistribution(importlib.metadata.Distribution):
    """What `importlib.metadata.version("jax")` reads under the hook (libraries check it)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def read_text(self, filename: str) -> str | None:
        if filename == "METADATA":
            return f"Metadata-Version: 2.1\nName: {self._name}\nVersion: {JAX_VERSION}\n"
        return None

    def locate_file(self, path: Any) -> Any:
        return path


class JaxAliasFinder(importlib.abc.MetaPathFinder):
    """Answers imports of `jax`, `jax.*` and `jaxlib*` with jaxlite's modules."""

    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "jax":
            return importlib.machinery.ModuleSpec("jax", _AliasLoader(None), is_package=True)
        aliased = _target_of(fullname)
        if aliased is None:
            return None
        if importlib.util.find_spec(aliased) is None:
            private = fullname.startswith("jax._src")
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: under jaxlite's import hook it would be "
                f"{aliased!r}, which does not exist. "
                + ("Of JAX's private modules, jaxlite has only the few that libraries "
                   "import (jaxlite.compat._src)." if private else
                   f"jaxlite matches JAX {JAX_VERSION}'s public modules; this one is "
                   "missing."), name=fullname)
        module = importlib.import_module(aliased)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(aliased),
                                              is_package=hasattr(module, "__path__"))

    def find_distributions(self, context: Any = importlib.metadata.DistributionFinder.Context()
                           ) -> list[importlib.metadata.Distribution]:
        if context.name in ("jax", "jaxlib"):
            return [_JaxVersionDistribution(context.name)]
        return []


_FINDER = JaxAliasFinder()


def install_as_jax() -> None:
    """Make `import jax` (and `jax.numpy`, `jax.X.Y`, `jaxlib`) resolve to jaxlite.

    Call it before importing code written for JAX. It is idempotent. Raises `RuntimeError`
    if the real `jax` was imported already: two frameworks under one name would mix arrays.
    """
    if is_installed():
        return
    loaded = sys.modules.get("jax")
    if loaded is not None and not getattr(loaded, "__jaxlite__", False):
        raise RuntimeError(
            "install_as_jax() was called after the real `jax` was imported; call it first "
            "(or run the program with `python -m jaxlite.run`).")
    sys.meta_path.insert(0, _FINDER)


def is_installed() -> bool:
    """Whether `install_as_jax()` is in effect."""
    return _FINDER in sys.meta_path


def uninstall() -> None:
    """Remove the hook and forget the `jax` aliases it made (jaxlite's modules stay)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == "jax" or n.startswith(("jax.", "jaxlib"))]:
        if _is_alias(sys.modules[name], name):
            del sys.modules[name]


def _is_alias(module: Any, name: str) -> bool:
    return getattr(module, "__jaxlite__", False) or (
        getattr(module, "__name__", "").startswith("jaxlite") and name != module.__name__)
