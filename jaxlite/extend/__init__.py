"""`jax.extend`: the API for libraries that extend JAX with primitives and backends.

Submodules: `core` (Primitive, jaxprs, trace state), `linear_util`, `source_info_util`,
`backend` (over jaxlite's backend registry), and `lowering`, `mlir`, `sharding`, `xla`,
`pallas`, whose MLIR-, sharding- and Pallas-specific names raise NotImplementedError
saying why. `random` (typed PRNG implementations) is loaded on first access.
"""
import importlib
from typing import Any

from jaxlite.extend import (backend, core, linear_util, lowering, mlir, pallas,  # noqa: F401
                            sharding, source_info_util, xla)

__all__ = ["backend", "core", "linear_util", "lowering", "mlir", "pallas", "random",
           "sharding", "source_info_util", "xla"]


def __getattr__(name: str) -> Any:
    if name == "random":
        try:
            return importlib.import_module("jaxlite.extend.random")
        except ModuleNotFoundError as error:
            if error.name != "jaxlite.extend.random":
                raise
            raise AttributeError("jaxlite.extend.random is not available yet") from error
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
