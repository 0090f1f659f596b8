"""`jax.experimental.shard_alike`: ask the partitioner to give two values one sharding.

On jaxlite's one CPU device every value has the same (single-device) sharding already, so
`shard_alike` only makes JAX's checks and returns its arguments: it stays out of jaxprs and
is transparent to jit, grad and vmap.
"""
from __future__ import annotations

from typing import Any

from jaxlite import numpy as jnp
from jaxlite.core.avals import get_aval
from jaxlite.tree_util import tree_flatten, tree_map

__all__ = ["shard_alike"]


def shard_alike(x: Any, y: Any) -> tuple[Any, Any]:
    """Shard `x` and `y` alike (mirrors `jax.experimental.shard_alike.shard_alike`).

    Both must be pytrees of one structure whose leaves have equal shapes; the result is
    `(x, y)` with Python scalars and numpy arrays made jaxlite arrays, as JAX returns them.
    """
    x_leaves, x_tree = tree_flatten(x)
    y_leaves, y_tree = tree_flatten(y)
    if x_tree != y_tree:
        raise ValueError(f"Trees should be equal. Got x_tree: {x_tree}, y_tree: {y_tree}")
    for x_leaf, y_leaf in zip(x_leaves, y_leaves):
        x_shape, y_shape = get_aval(x_leaf).shape, get_aval(y_leaf).shape
        if x_shape != y_shape:
            raise ValueError(
                "The leaves shapes of `x` and `y` should match. Got `x` leaf shape: "
                f"{x_shape} and `y` leaf shape: {y_shape}.")
    return tree_map(jnp.asarray, x), tree_map(jnp.asarray, y)
