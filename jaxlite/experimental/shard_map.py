"""`jaxlite.experimental.shard_map` (mirrors `jax.experimental.shard_map`).

Its `shard_map(f, mesh, in_specs, out_specs, check_rep=True)` is deprecated in JAX (since
0.8.0) in favour of `jax.shard_map`; as in JAX, reading it warns with a DeprecationWarning.
"""
from __future__ import annotations

from jaxlite._deprecations import deprecated_names
from jaxlite.transforms.shard_map import legacy_shard_map

__all__: list[str] = []


__getattr__ = deprecated_names(__name__, {"shard_map": (
    "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead.",
    legacy_shard_map)})
