"""Pytree functions under short names (mirrors `jax.tree`).

`jaxlite.tree.map(f, tree)` is `jaxlite.tree_util.tree_map(f, tree)`, and so on: the same
functions, named as JAX's `jax.tree` module names them, plus `static` for dataclass fields.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from jaxlite import tree_util

all = tree_util.tree_all  # noqa: A001  (JAX's name)
broadcast = tree_util.tree_broadcast
flatten = tree_util.tree_flatten
flatten_with_path = tree_util.tree_flatten_with_path
leaves = tree_util.tree_leaves
leaves_with_path = tree_util.tree_leaves_with_path
map = tree_util.tree_map  # noqa: A001  (JAX's name)
map_with_path = tree_util.tree_map_with_path
reduce = tree_util.tree_reduce
reduce_associative = tree_util.tree_reduce_associative
structure = tree_util.tree_structure
transpose = tree_util.tree_transpose
unflatten = tree_util.tree_unflatten


def static(**kwargs: Any) -> Any:
    """A dataclass field marked static for `register_dataclass` (mirrors `jax.tree.static`).

    Takes `dataclasses.field`'s arguments; the field goes into the treedef instead of the
    leaves, so it is part of `jit`'s cache key rather than traced.
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]
