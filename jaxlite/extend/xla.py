"""`jax.extend.xla`: hooks into XLA's HLO pass pipeline. jaxlite's compiler has its own
pipeline (`jaxlite.xla.pipeline`) with no user hooks, so registering one is refused."""
from __future__ import annotations

import enum
from typing import Any

__all__ = ["PipelineStage", "clear_hlo_module_transformation",
           "register_hlo_module_transformation"]


class PipelineStage(enum.Enum):
    """Where in XLA's pipeline a transformation would run (mirrors JAX's)."""

    BEFORE_OPTIMIZATION = 0
    AFTER_OPTIMIZATION = 1


def register_hlo_module_transformation(*args: Any, **kwargs: Any) -> None:
    """Not available in jaxlite (mirrors `register_hlo_module_transformation`)."""
    raise NotImplementedError(
        "register_hlo_module_transformation hooks into XLA's pipeline; jaxlite's compiler "
        "(jaxlite.xla) has its own pass pipeline without user hooks.")


def clear_hlo_module_transformation(*args: Any, **kwargs: Any) -> None:
    """Not available in jaxlite: nothing can be registered (see above)."""
    raise NotImplementedError("clear_hlo_module_transformation: jaxlite registers no HLO "
                              "module transformations.")
