"""Names a module still gives but JAX has deprecated: reading one warns first (the role of
JAX's internal `deprecation_getattr`)."""
from __future__ import annotations

from typing import Any, Callable

from jaxlite.errors import warn_at_user

__all__ = ["deprecated_names"]


def deprecated_names(module: str, names: dict[str, tuple[str, Any]]) -> Callable[[str], Any]:
    """A module-level `__getattr__` for `module`: each name of `names` maps to (JAX's
    DeprecationWarning message, the value given after warning); other names raise the
    usual AttributeError."""
    def __getattr__(name: str) -> Any:
        if name in names:
            message, value = names[name]
            warn_at_user(message, DeprecationWarning)
            return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__
