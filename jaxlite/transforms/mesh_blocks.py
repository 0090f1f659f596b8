"""Arrays as stacks of per-device blocks: the layout `shard_map` runs its body on.

A `PartitionSpec` splits array dimensions over mesh axes. `to_blocks` rearranges an array
so that each mesh axis it is split over (of size > 1) becomes a leading axis, in mesh
order, followed by the block: element `[i, j, ...]` is the block of the devices at those
mesh coordinates. The body then runs under one `vmap` per mesh axis, named after it, so
the collectives of `jaxlite.lax` see one member per device. `from_blocks` is the inverse
for a result: the stacked axes a spec names are laid back along their dimensions, the
ones it does not name are dropped (the first device's value) and those it names but the
body did not vary over are tiled.

`check_replication` is check_vma's test of the results: each may vary only over the mesh
axes its out_spec names.

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

__all__ = ["split_names", "to_blocks", "from_blocks", "check_replication"]


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


def check_replication(name: str, mesh: Any, specs: Sequence[PartitionSpec],
                      stacked: Sequence[Sequence[Any]]) -> None:
    """Each result of shard_map's body (`stacked`: the mesh axes each varies over) varies
    only over mesh axes its out_spec names (JAX's check_vma ValueError otherwise: an
    unnamed axis means a replicated result). `name`: the body's function."""
    lines = []
    for spec, varying in zip(specs, stacked):
        named = set(spec.axis_names()) | set(spec.unreduced) | set(spec.reduced)
        unmentioned = [n for n in mesh.axis_names if n not in named]
        if not set(unmentioned) & set(varying):
            continue
        if len(unmentioned) == 1:
            lines.append(f"* out_specs is {spec} which implies that the corresponding output "
                         f"value is replicated across mesh axis '{unmentioned[0]}', but could "
                         "not infer replication over any axes")
            continue
        in_order = lambda names: ",".join(n for n in mesh.axis_names if n in names)  # noqa
        lines.append(f"* out_specs is {spec} which implies that the corresponding output "
                     f"value is only varying across mesh axes {{{in_order(named)}}} and not "
                     f"{{{in_order(set(unmentioned) & set(varying))}}}, but it was inferred "
                     f"to be possibly varying over {{{in_order(varying)}}}")
    if not lines:
        return
    if len(lines) == 1:
        lines = [lines[0][2:]]
    raise ValueError(
        f"shard_map applied to the function '{name}' was given "
        "out_specs which require replication which can't be statically inferred given the "
        f"mesh:\n\nThe mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis "
        f"names {mesh.axis_names}.\n\n" + "\n\n".join(lines) + "\n\nCheck if these output "
        "values are meant to be replicated over those mesh axes. If not, consider revising "
        "the corresponding out_specs entries. If so, consider disabling the check by passing "
        "the check_vma=False argument to `jax.shard_map`.")
