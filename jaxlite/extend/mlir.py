"""`jax.extend.mlir`: StableHLO serialization helpers. jaxlite lowers to its own HLO and has
no MLIR, so each raises NotImplementedError saying so."""
from __future__ import annotations

from typing import Any

__all__ = ["deserialize_portable_artifact", "hlo_to_stablehlo", "lower_with_sharding_in_types",
           "refine_polymorphic_shapes", "serialize_portable_artifact"]


def _no_mlir(name: str) -> Any:
    def unsupported(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"jax.extend.mlir.{name} works on StableHLO (MLIR) modules; jaxlite lowers to its "
            "own HLO IR (Lowered.as_text() prints it) and has no MLIR.")
    unsupported.__name__ = name
    unsupported.__doc__ = f"Not available in jaxlite (mirrors `jax.extend.mlir.{name}`)."
    return unsupported


deserialize_portable_artifact = _no_mlir("deserialize_portable_artifact")
hlo_to_stablehlo = _no_mlir("hlo_to_stablehlo")
refine_polymorphic_shapes = _no_mlir("refine_polymorphic_shapes")
serialize_portable_artifact = _no_mlir("serialize_portable_artifact")


def lower_with_sharding_in_types(ctx: Any, op: Any, aval: Any) -> Any:
    """Not available in jaxlite (mirrors `jax.extend.mlir.lower_with_sharding_in_types`):
    it annotates an MLIR operation with a sharding."""
    return _no_mlir("lower_with_sharding_in_types")(ctx, op, aval)
