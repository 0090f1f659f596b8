"""Sharding rules of the primitives that move dimensions about: reshape, gather, and
jnp's static indexing (see `jaxlite.core.sharding_rules` for sharding in types)."""
from __future__ import annotations

from typing import Any, Sequence

from jaxlite.core.sharding import AbstractMesh
from jaxlite.core.sharding_rules import (ShardingTypeError, _requested, register, spec_of,
                                         types_active)

__all__ = ["check_static_index", "size_groups"]


# ------------------------------------------------------------------ reshape

def _reshape_error(aval: Any, new_sizes: Sequence[int]) -> ShardingTypeError:
    return ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        "`out_sharding` argument of jax.lax.reshape. Got operand type: "
        f"{aval}, new sizes: {tuple(new_sizes)}")


def size_groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list, list]]:
    """Runs of dimensions (positions in `old`, in `new`) whose sizes have equal products."""
    groups, i, j = [], 0, 0
    while i < len(old) and j < len(new):
        olds, news, a, b = [i], [j], old[i], new[j]
        while a != b:
            if a < b:
                i += 1
                olds.append(i)
                a *= old[i]
            else:
                j += 1
                news.append(j)
                b *= new[j]
        groups.append((olds, news))
        i, j = i + 1, j + 1
    return groups


def _axes_over(names: Sequence[str], sizes: Sequence[int], mesh: AbstractMesh,
               error: ShardingTypeError) -> list[Any]:
    """Mesh axes `names` (major first) laid over dimensions of `sizes`: each dimension
    takes axes while it has room, and each must divide it."""
    left, out = list(names), []
    for size in sizes:
        taken = []
        while size > 1 and left:
            size, remainder = divmod(size, mesh.shape[left[0]])
            if remainder:
                raise error
            taken.append(left.pop(0))
        out.append(tuple(taken))
    if left:
        raise error
    return out


@register("reshape")
def _reshape(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    """Splits move with their dimensions when the reshape only adds or drops dimensions of
    size 1, splits one dimension into several or merges several into one; any other
    reshape of a split array is refused (JAX's rule)."""
    requested = _requested(params, outs[0])
    if requested is not None:
        return [requested]
    spec, aval, new = specs[0], avals[0], tuple(params["new_sizes"])
    out: list[Any] = [None] * len(new)
    if all(e is None for e in spec):
        return [tuple(out)]
    error = _reshape_error(aval, new)
    old_dims = [d for d, s in enumerate(aval.shape) if s != 1]
    new_dims = [d for d, s in enumerate(new) if s != 1]
    try:
        groups = size_groups([aval.shape[d] for d in old_dims], [new[d] for d in new_dims])
    except IndexError:  # (sizes with zeros)
        raise error from None
    reshaped = [(o, n) for o, n in groups if len(o) > 1 or len(n) > 1]
    if len(reshaped) > 1 or reshaped and len(reshaped[0][0]) > 1 and len(reshaped[0][1]) > 1:
        raise error
    mesh = aval.sharding.mesh
    for olds, news in groups:
        entries = [spec[old_dims[k]] for k in olds]
        targets = [new_dims[k] for k in news]
        if all(e is None for e in entries):
            continue
        if len(olds) == 1 and len(targets) == 1:
            out[targets[0]] = entries[0]
            continue
        if params.get("dimensions") is not None:
            raise error
        names = _flattened(entries, error)
        for target, axes in zip(targets, _axes_over(names, [new[t] for t in targets],
                                                    mesh, error)):
            out[target] = axes
    return [tuple(out)]


def _flattened(entries: Sequence[Any], error: ShardingTypeError) -> list[str]:
    """The mesh axes of merged dimensions, major first; an unsplit dimension before a
    split one cannot merge."""
    while entries and entries[-1] is None:
        entries = entries[:-1]
    if any(e is None for e in entries):
        raise error
    return [n for e in entries for n in (e if isinstance(e, tuple) else (e,))]


# ------------------------------------------------------------------ indexing

def _gather_error(operand: Any, indices: Any) -> ShardingTypeError:
    return ShardingTypeError(
        "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
        "indexing as out sharding could not be resolved unambiguously (or would require "
        f"collectives on inputs). Got operand={operand!r}, indices={indices!r}")


@register("gather")
def _gather(specs: list, avals: list, outs: list, params: dict, name: str) -> list:
    """Gathering from a split dimension is refused; the kept (offset) dimensions keep
    their splits, the indices' dimensions are unsplit."""
    operand, indices = avals[0], avals[1]
    spec = specs[0]
    sizes = params["slice_sizes"]
    if any(e is not None and sizes[d] != operand.shape[d] for d, e in enumerate(spec)):
        raise _gather_error(operand, indices)
    dnums = params["dimension_numbers"]
    dropped = set(dnums.collapsed_slice_dims) | set(dnums.operand_batching_dims)
    kept = iter(e for d, e in enumerate(spec) if d not in dropped)
    out = [next(kept) if d in dnums.offset_dims else None for d in range(len(outs[0].shape))]
    return [tuple(out)]


def check_static_index(operand: Any, starts: Sequence[int], limits: Sequence[int]) -> None:
    """`x[...]` with static integers and slices on an explicitly split array: JAX reads a
    split dimension through a gather, whose rule refuses it (and says so)."""
    aval = getattr(operand, "aval", None)
    sharding = getattr(aval, "sharding", None)
    if sharding is None or not sharding.mesh.axis_names or not types_active():
        return
    partial = [d for d, (lo, hi) in enumerate(zip(starts, limits))
               if (lo, hi) != (0, aval.shape[d])]
    if any(spec_of(aval)[d] is not None for d in partial):
        indices = type(aval)((len(partial),), "int32")
        raise _gather_error(aval, indices)
