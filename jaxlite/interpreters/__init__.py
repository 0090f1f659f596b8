"""Interpreters: staging, differentiation, transposition, batching and lowering.

Under the import hook this package is `jax.interpreters`. Its public modules (`ad`,
`batching`, `mlir`, `partial_eval`, `pxla`, `xla`) are attributes of the package, loaded
on first access: `mlir` and the other public faces sit above the layers that import this
package, so importing them here, eagerly, would be a cycle.
"""
import importlib
from typing import Any

_PUBLIC_MODULES = ("ad", "batching", "mlir", "partial_eval", "pxla", "xla")


def __getattr__(name: str) -> Any:
    if name in _PUBLIC_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC_MODULES))
