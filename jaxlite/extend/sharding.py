"""`jax.extend.sharding`: XLA's sharding protos. jaxlite runs on one device and has no
HloSharding or OpSharding protos, so these raise NotImplementedError saying so."""
from __future__ import annotations

from typing import Any

__all__ = ["GSPMDSharding", "get_hlo_sharding_from_serialized_proto",
           "get_op_sharding_from_serialized_proto", "get_serialized_proto_from_hlo_sharding"]

_WHY = ("jaxlite runs on one device and has no XLA sharding protos (HloSharding, OpSharding); "
        "its shardings are the single-device ones of jax.sharding.")


class GSPMDSharding:
    """Not available in jaxlite (mirrors `jax.extend.sharding.GSPMDSharding`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"GSPMDSharding: {_WHY}")


def get_hlo_sharding_from_serialized_proto(sharding: bytes) -> Any:
    """Not available in jaxlite (mirrors JAX's)."""
    raise NotImplementedError(f"get_hlo_sharding_from_serialized_proto: {_WHY}")


def get_op_sharding_from_serialized_proto(sharding: bytes) -> Any:
    """Not available in jaxlite (mirrors JAX's)."""
    raise NotImplementedError(f"get_op_sharding_from_serialized_proto: {_WHY}")


def get_serialized_proto_from_hlo_sharding(sharding: Any) -> bytes:
    """Not available in jaxlite (mirrors JAX's)."""
    raise NotImplementedError(f"get_serialized_proto_from_hlo_sharding: {_WHY}")
