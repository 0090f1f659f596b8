"""`jaxlite.experimental.shard_map` (mirrors `jax.experimental.shard_map`).

Its `shard_map(f, mesh, in_specs, out_specs, check_rep=True)` is deprecated in JAX (since
0.8.0) in favour of `jax.shard_map`; as in JAX, reading it warns with a DeprecationWarning.
"""
from __future__ import annotations

import warnings
from typing import Any

from jaxlite.transforms.shard_map import legacy_shard_map

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    if name == "shard_map":
        warnings.warn("jax.experimental.shard_map is deprecated in v0.8.0. Used "
                      "jax.shard_map instead.", DeprecationWarning, stacklevel=2)
        return legacy_shard_map
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
