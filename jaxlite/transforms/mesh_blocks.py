"""Arrays as stacks of per-device blocks: the layout `shard_map` runs its body on.

A `PartitionSpec` splits array dimensions over mesh axes. `to_blocks` rearranges an array
so that each mesh axis it is split over (of size > 1) becomes a leading axis, in mesh
order, followed by the block: element `[i, j, ...]` is the block of the devices at those
mesh coordinates. The body then runs under one `vmap` per mesh axis, named after it, so
the collectives of `jaxlite.lax` see one member per device. `from_blocks` is the inverse
for a result: the stacked axes a spec names are laid back along their dimensions, the
ones it does not name are dropped (the first device's value) and those it names but the
body did not vary over are tiled.

Only `reshape`, `transpose`, `broadcast_in_dim` and slicing are used, so the layout works
on tracers too (shard_map under jit, grad and vmap). The SPMD partitioner will replace
this with per-device programs over the same specs.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from jaxlite.core.sharding import PartitionSpec
from jaxlite.lax.broadcast import broadcast_in_dim, reshape, transpose
from jaxlite.lax.slicing import index_in_dim

__all__ = ["split_names", "to_blocks", "from_blocks"]


def split_names(spec: PartitionSpec, ndim: int, sizes: dict[Any, int]) -> list[list[Any]]:
    """For each of `ndim` dimensions, the mesh axes (of size > 1) that `spec` splits it
    over, major first."""
    names = []
    for d in range(ndim):
        entry = spec[d] if d < len(spec) else None
        entry = entry if isinstance(entry, tuple) else (entry,)
        names.append([n for n in entry if n is not None and sizes.get(n, 1) > 1])
    return names


def to_blocks(x: Any, spec: PartitionSpec, sizes: dict[Any, int],
              order: Sequence[Any]) -> tuple[Any, list[Any]]:
    """`x` with a leading axis per mesh axis its spec splits it over (in `order`, the
    mesh's), then its block; and those mesh axes. The caller checked divisibility."""
    shape = tuple(x.shape)
    per_dim = split_names(spec, len(shape), sizes)
    if not any(per_dim):
        return x, []
    split_shape: list[int] = []
    labels: list[Any] = []  # the mesh axis of each split dimension; None for a block's
    for size, names in zip(shape, per_dim):
        split_shape += [sizes[n] for n in names]
        labels += names
        split_shape.append(size // math.prod(sizes[n] for n in names))
        labels.append(None)
    mapped = [n for n in order if n in labels]
    permutation = [labels.index(n) for n in mapped] + \
        [i for i, label in enumerate(labels) if label is None]
    return transpose(reshape(x, split_shape), permutation), mapped


def from_blocks(y: Any, stacked: Sequence[Any], spec: PartitionSpec,
                sizes: dict[Any, int]) -> Any:
    """The global array of a body's result `y`: leading axes `stacked` (mesh axes), then
    a block; laid out along the dimensions as `spec` says."""
    current = list(stacked)
    block_ndim = len(y.shape) - len(current)
    per_dim = split_names(spec, block_ndim, sizes)
    wanted = [n for names in per_dim for n in names]
    for name in [n for n in current if n not in wanted]:
        y = index_in_dim(y, 0, current.index(name), keepdims=False)
        current.remove(name)
    for name in [n for n in wanted if n not in current]:
        # A value the body did not vary over this axis: every device holds a copy.
        shape = (sizes[name], *y.shape)
        y = broadcast_in_dim(y, shape, tuple(range(1, len(shape))))
        current.insert(0, name)
    if not current:
        return y
    k = len(current)
    permutation = []
    for d, names in enumerate(per_dim):
        permutation += [current.index(n) for n in names] + [k + d]
    block = y.shape[k:]
    global_shape = [block[d] * math.prod(sizes[n] for n in names)
                    for d, names in enumerate(per_dim)]
    return reshape(transpose(y, permutation), global_shape)
