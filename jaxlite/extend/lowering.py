"""`jax.extend.lowering`: the lowering rule context (jaxlite's, from
`jax.interpreters.mlir`); MLIR's context and dialects do not exist in jaxlite."""
from __future__ import annotations

from typing import Any

from jaxlite.interpreters.mlir import LoweringRuleContext

__all__ = ["JaxIrContext", "LoweringRuleContext", "upstream_dialects"]


class JaxIrContext:
    """Not available in jaxlite (mirrors `jax.extend.lowering.JaxIrContext`): an MLIR
    context."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("JaxIrContext is an MLIR context; jaxlite lowers to its own "
                                  "HLO IR and has no MLIR.")


def upstream_dialects(*args: Any, **kwargs: Any) -> Any:
    """Not available in jaxlite: MLIR's dialect registry."""
    raise NotImplementedError("upstream_dialects registers MLIR dialects; jaxlite has no MLIR.")
