"""Helpers for runs of several processes (mirrors `jax.experimental.multihost_utils`).

The data moves through MPI (`jaxlite.backends.processes`: mpi4py's buffer-based Allgather,
Allreduce and Bcast on numpy arrays). In a run of one process every helper returns at once.

How jaxlite's global arrays differ from JAX's: an Array placed over a mesh that spans
processes holds its *global* value in every process (jaxlite keeps values in host memory),
so `host_local_array_to_global_array` gathers every process's block into each process, and
computations on global arrays run whole, redundantly, in each process. The helpers' results
are JAX's; only the memory and the work are not divided.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from jaxlite import tree_util
from jaxlite.backends import processes
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.device import device_put
from jaxlite.runtime.environment import process_count, process_index
from jaxlite.runtime.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["assert_equal", "broadcast_one_to_all", "global_array_to_host_local_array",
           "host_local_array_to_global_array", "process_allgather",
           "reached_preemption_sync_point", "sync_global_devices"]


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """The source process's leaves, as numpy arrays, in every process (mirrors
    `jax.experimental.multihost_utils.broadcast_one_to_all`).

    The source is process 0 unless `is_source` says otherwise; as in JAX (which sums the
    sources' values with zeros elsewhere), several sources give the sum of their values.
    """
    if process_count() == 1:
        return tree_util.tree_map(np.asarray, in_tree)
    if is_source is None:
        is_source = process_index() == 0
    sources = np.flatnonzero(processes.allgather(np.int8(bool(is_source))))

    def share(leaf: Any) -> np.ndarray:
        value = np.asarray(leaf)
        if len(sources) == 1:
            return processes.broadcast(value, root=int(sources[0]))
        return processes.allreduce_sum(value if is_source else np.zeros_like(value))

    return tree_util.tree_map(share, in_tree)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's leaves, gathered into numpy arrays (mirrors
    `jax.experimental.multihost_utils.process_allgather`).

    A leaf held by this process alone (numpy, scalars, fully addressable Arrays) is
    stacked on a new leading axis in process order (scalars always), or concatenated along
    its first axis with `tiled=True`. A global Array (spanning processes) gives its
    global value, and only with `tiled=True`, as in JAX.
    """
    return tree_util.tree_map(lambda leaf: _allgather_leaf(leaf, tiled), in_tree)


def _allgather_leaf(leaf: Any, tiled: bool) -> np.ndarray:
    if isinstance(leaf, ArrayImpl) and not leaf.is_fully_addressable:
        if not tiled:
            raise ValueError("Gathering global non-fully-addressable arrays only supports "
                             "tiled=True")
        return np.asarray(leaf)
    value = np.asarray(leaf)
    if process_count() == 1:
        return value if tiled else value[None]
    stacked = processes.allgather(value)
    if tiled and value.ndim > 0:
        return stacked.reshape((-1,) + value.shape[1:])
    return stacked


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Raise AssertionError unless every process holds the same leaves (mirrors
    `jax.experimental.multihost_utils.assert_equal`)."""
    gathered = process_allgather(in_tree, tiled=True)

    def expected(leaf: Any) -> np.ndarray:
        if isinstance(leaf, ArrayImpl) and not leaf.is_fully_addressable:
            return np.asarray(leaf)
        value = np.atleast_1d(np.asarray(leaf))
        return np.concatenate([value] * process_count())

    same = tree_util.tree_map(lambda want, got: bool(np.all(np.equal(want, got))),
                              tree_util.tree_map(expected, in_tree), gathered)
    if not all(tree_util.tree_leaves(same)):
        raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """Wait until every process has called this with the same `name` (mirrors
    `jax.experimental.multihost_utils.sync_global_devices`); different names raise
    AssertionError, as in JAX."""
    assert_equal(np.uint32(zlib.crc32(name.encode())),
                 f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether every process reached the step at which to save before a preemption
    (mirrors `jax.experimental.multihost_utils.reached_preemption_sync_point`): jaxlite's
    MPI runs get no preemption notices, so never."""
    return False


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh,
                                     pspecs: Any) -> Any:
    """Global Arrays over `global_mesh` made of each process's local blocks (mirrors
    `jax.experimental.multihost_utils.host_local_array_to_global_array`).

    A dimension that `pspecs` splits over mesh axes spanning k processes grows k times
    (the processes' blocks in mesh order, e.g. each process's half of a batch); a
    replicated one keeps its size (every process must hold the same values). This
    process's devices must form a sub-grid of the mesh, as in JAX.
    """
    return _map_with_specs(_to_global, local_inputs, global_mesh, pspecs)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh,
                                     pspecs: Any) -> Any:
    """This process's blocks of global Arrays, as Arrays over its own devices (mirrors
    `jax.experimental.multihost_utils.global_array_to_host_local_array`)."""
    return _map_with_specs(_to_host_local, global_inputs, global_mesh, pspecs)


def _map_with_specs(convert: Any, tree: Any, mesh: Mesh, pspecs: Any) -> Any:
    leaves, treedef = tree_util.tree_flatten(tree)
    specs = treedef.flatten_up_to(tree_util.tree_broadcast(
        pspecs, tree, is_leaf=lambda s: s is None or isinstance(s, PartitionSpec)))
    return tree_util.tree_unflatten(treedef, [convert(leaf, mesh, spec)
                                              for leaf, spec in zip(leaves, specs)])


def _check_spec(spec: Any) -> None:
    if spec is None:
        raise ValueError("`None` is not a valid input to the pspecs argument. Please use "
                         "jax.sharding.PartitionSpec() if you wanted to replicate your "
                         "input.")


def _to_global(leaf: Any, mesh: Mesh, spec: PartitionSpec) -> Any:
    _check_spec(spec)
    if isinstance(leaf, ArrayImpl) and not leaf.is_fully_addressable:
        return leaf
    local = np.asarray(leaf)
    local_mesh = _local_mesh(mesh)
    entries = tuple(spec) + (None,) * (local.ndim - len(spec))
    global_shape = tuple(size * _processes_along(mesh, local_mesh, entry)
                         for size, entry in zip(local.shape, entries))
    sharding = NamedSharding(mesh, spec)
    starts = np.array([part.start for part in _region(sharding, global_shape)], np.int64)
    blocks, corners = processes.allgather(local), processes.allgather(starts)
    value = np.empty(global_shape, local.dtype)
    for block, corner in zip(blocks, corners):
        value[tuple(slice(s, s + n) for s, n in zip(corner, local.shape))] = block
    return device_put(value, sharding)


def _to_host_local(leaf: Any, mesh: Mesh, spec: PartitionSpec) -> Any:
    _check_spec(spec)
    if isinstance(leaf, ArrayImpl) and leaf.is_fully_addressable:
        return leaf
    value = np.asarray(leaf)
    block = value[_region(NamedSharding(mesh, spec), value.shape)]
    return device_put(block, NamedSharding(_local_mesh(mesh), spec))


def _local_mesh(mesh: Mesh) -> Mesh:
    """The sub-grid of `mesh` holding this process's devices (JAX's `Mesh.local_mesh`)."""
    here = process_index()
    mine = np.vectorize(lambda d: d.process_index == here, otypes=[bool])(mesh.devices)
    rows = [np.unique(coords) for coords in np.nonzero(mine)]
    grid = mesh.devices[np.ix_(*rows)]
    if grid.size != mine.sum():
        raise ValueError(f"The devices of process {here} do not form a sub-grid of the "
                         f"mesh {mesh}: the mesh must be contiguous per process.")
    return Mesh(grid, mesh.axis_names)


def _processes_along(mesh: Mesh, local_mesh: Mesh, entry: Any) -> int:
    """How many processes' blocks a dimension split over mesh axes `entry` has."""
    axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
    local_sizes = dict(zip(local_mesh.axis_names, local_mesh.devices.shape))
    count = 1
    for axis in axes:
        count *= sizes[axis] // local_sizes[axis]
    return count


def _region(sharding: NamedSharding, shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The part of an array of `shape` that this process's devices hold together."""
    here = process_index()
    indices = [index for device, index in sharding.devices_indices_map(shape).items()
               if device.process_index == here]
    region = []
    for dim, size in enumerate(shape):
        spans = [index[dim].indices(size)[:2] for index in indices]
        region.append(slice(min(s for s, _ in spans), max(e for _, e in spans)))
    return tuple(region)
