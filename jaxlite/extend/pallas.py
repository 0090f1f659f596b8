"""`jax.extend.pallas`: Pallas kernel lowering. jaxlite has no Pallas, so these raise
NotImplementedError saying so."""
from __future__ import annotations

from typing import Any

__all__ = ["GridMapping", "register_lowering_rule"]


class GridMapping:
    """Not available in jaxlite (mirrors `jax.extend.pallas.GridMapping`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("Pallas is not available in jaxlite.")


def register_lowering_rule(*args: Any, **kwargs: Any) -> Any:
    """Not available in jaxlite (mirrors `jax.extend.pallas.register_lowering_rule`)."""
    raise NotImplementedError("Pallas is not available in jaxlite: there are no Pallas "
                              "kernels to lower.")
