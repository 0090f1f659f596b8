"""jit over arrays placed on a mesh of several devices, run as one program per device (JAX's
pjit path: XLA's sharding propagation and SPMD partitioner, then one executable that every
device runs on its own blocks).

A call takes this path when its committed arguments (or its sharding constraints) are on a
mesh of several devices. Its jaxpr is lowered with the mesh
(`lower_jaxpr(spmd_mesh=)`: constraints become `Sharding` custom calls), the entry
parameters are annotated with the arguments' layouts (uncommitted ones and the lowering's
constants replicated) and the root with the results' layouts (`placement.propagate`'s specs,
which give JAX's result shardings), the compiler propagates shardings to every instruction
and partitions the module, and the backend runs the per-partition program on each device's
blocks (partition p is the mesh's p-th device, row-major). The results are assembled from
the blocks into Arrays placed on the mesh, each device keeping its own block.

A mesh may span the processes of an MPI run (`jaxlite.distributed`): each process then
runs only its own devices' partitions (`execute_partitions(partitions=, owners=)`), the
collectives between processes go through MPI (`backends/cpu/spmd_exchange.py`), and the
blocks of split results that other processes computed come through one MPI allgather, so
that every process holds each result's global value, as Arrays over such meshes do.

Programs the partitioner cannot split raise NotImplementedError there, and the call then runs
on the global values as before (`runtime.placement`), with the same numbers; any other
failure of the passes does the same after a RuntimeWarning (a compiler bug must not cost the
user a wrong answer or a crash).
"""
from __future__ import annotations

import importlib
import logging
import warnings
import weakref
from typing import Any, Sequence

import numpy as np

from jaxlite.backends import processes
from jaxlite.backends.base import Client, CompileOptions
from jaxlite.core import dtypes
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.sharding import AxisType, NamedSharding, PartitionSpec, Sharding
from jaxlite.interpreters.lowering import lower_jaxpr
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.placement import constraint_mesh, propagate
from jaxlite.runtime.sharding import SingleDeviceSharding
from jaxlite.tree_util import PyTreeDef, tree_broadcast, tree_leaves, tree_unflatten
from jaxlite.xla.hlo_sharding import HloSharding, from_mesh_spec
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.text import print_module

__all__ = ["spmd_mesh", "spmd_call", "SpmdCall", "flat_out_shardings"]

logger = logging.getLogger("jaxlite.spmd")


def spmd_mesh(closed: ClosedJaxpr, leaves: Sequence[Any]) -> Any:
    """The mesh a jit call on `leaves` is partitioned over, or None (one device, or no
    placed argument or constraint)."""
    placed = [s for s in map(_placement, leaves) if s is not None]
    named = [s for s in placed if isinstance(s, NamedSharding)]
    if len(named) != len(placed):
        return None  # also on single devices: placement's rules check (and raise) as JAX
    mesh = named[0].mesh if named else constraint_mesh(closed.jaxpr)
    if mesh is None or mesh.size == 1 or not hasattr(mesh, "devices"):
        return None
    if any(s.mesh != mesh for s in named):
        return None  # other meshes: placement's rules say what JAX says
    return mesh


def flat_out_shardings(out_shardings: Any, out_tree: PyTreeDef) -> tuple | None:
    """jit's `out_shardings` (a prefix of the results' tree) as one entry per result leaf
    (None: unconstrained), or None when jit was given none."""
    if out_shardings is None:
        return None

    def is_leaf(v: Any) -> bool:
        return v is None or isinstance(v, Sharding)
    results = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    return tuple(tree_leaves(tree_broadcast(out_shardings, results, is_leaf=is_leaf),
                             is_leaf=is_leaf))


def _placement(leaf: Any) -> Any:
    """A committed Array's sharding, or that of a ShapeDtypeStruct given to `lower`."""
    if type(leaf) is ArrayImpl:
        return leaf._sharding
    return getattr(leaf, "sharding", None) if hasattr(leaf, "shape") else None


def _spec(leaf: Any, mesh: Any) -> tuple | None:
    sharding = _placement(leaf)
    if isinstance(sharding, NamedSharding) and sharding.mesh == mesh:
        ndim = len(leaf.shape)
        return tuple(sharding.spec) + (None,) * (ndim - len(sharding.spec))
    return None


def _layout(spec: tuple | None, mesh: Any, ndim: int) -> HloSharding:
    if spec is None:
        return HloSharding.replicate()
    entries = [None if e is PartitionSpec.UNCONSTRAINED else e for e in spec]
    return from_mesh_spec(mesh.axis_sizes, mesh.axis_names, entries, ndim)


def _result_sharding(spec: tuple | None, mesh: Any, shape: Sequence[int]) -> NamedSharding:
    """JAX's result sharding for a propagated spec (replicated where it does not divide)."""
    entries = [None if e is PartitionSpec.UNCONSTRAINED else e for e in spec or ()]
    if AxisType.Explicit in mesh.axis_types:
        # typed results name every dimension, as JAX's (P('x', None))
        entries += [None] * (len(shape) - len(entries))
    else:
        while entries and entries[-1] is None:
            entries.pop()  # JAX's result specs stop at the last split dimension
    sharding = NamedSharding(mesh, PartitionSpec(*entries))
    try:
        sharding.shard_shape(shape)
    except ValueError:
        sharding = NamedSharding(mesh, PartitionSpec())
    return sharding


def _annotated(module: HloModule, params: Sequence[HloSharding],
               results: Sequence[HloSharding]) -> HloModule:
    """`module` with its entry parameters and root carrying these shardings (a returned
    parameter gets a copy, so that its own layout and the result's can differ)."""
    entry = module.entry
    new_of: dict[int, HloInstruction] = {}
    instructions: list[HloInstruction] = []
    for inst in entry.instructions:
        new = inst
        if inst.opcode is Opcode.PARAMETER:
            new = inst.replace(attrs={**inst.attrs, "sharding": params[inst.attr("number")]})
        operands = tuple(new_of.get(id(o), o) for o in new.operands)
        if operands != new.operands:
            new = new.replace(operands=operands)
        new_of[id(inst)] = new
        instructions.append(new)
    root = new_of[id(entry.root)]
    tupled = entry.root.opcode is Opcode.TUPLE and len(results) != 1 or \
        entry.root.shape.is_tuple
    if root.opcode is Opcode.PARAMETER:
        root = HloInstruction(f"{root.name}.result", Opcode.COPY, root.shape, (root,))
        instructions.append(root)
    layout = HloSharding.tuple_of(results) if tupled else results[0]
    at = next(i for i, inst in enumerate(instructions) if inst is root)
    instructions[at] = root = root.replace(attrs={**root.attrs, "sharding": layout})
    comp = HloComputation(entry.name, tuple(instructions), root)
    return HloModule(module.name, comp, num_partitions=module.num_partitions)


def _pass(module: str, name: str) -> Any:
    try:
        return getattr(importlib.import_module(f"jaxlite.xla.passes.{module}"), name)
    except (ImportError, AttributeError) as error:
        raise NotImplementedError(f"the SPMD pass {module}.{name} is missing") from error


class SpmdCall:
    """One jaxpr compiled for a mesh and its arguments' layouts; call it on the leaves."""

    def __init__(self, closed: ClosedJaxpr, name: str, client: Client, mesh: Any,
                 in_specs: Sequence[tuple | None],
                 out_shardings: Sequence[Any] | None = None) -> None:
        avals = [v.aval for v in (*closed.jaxpr.invars, *closed.jaxpr.outvars)]
        if any(a.dtype == dtypes.float0 or dtypes.is_extended(a.dtype) for a in avals):
            # (stored as their physical data, which blocks of the logical shape are not)
            raise NotImplementedError("typed PRNG keys and float0 values are not partitioned")
        self.mesh = mesh
        self.devices = list(mesh.devices.flat)
        count = len(self.devices)
        lowered = lower_jaxpr(closed, f"jit_{name}", f"jit({name})", spmd_mesh=mesh)
        self.consts = lowered.const_args
        avals = [v.aval for v in closed.jaxpr.invars]
        self.in_dtypes = [a.dtype for a in avals]
        self.in_layouts = [_layout(s, mesh, len(a.shape)) for s, a in zip(in_specs, avals)]
        out_specs = propagate(closed.jaxpr, list(in_specs))
        for k, given in enumerate(out_shardings or ()):
            if isinstance(given, NamedSharding) and given.mesh == mesh:
                out_specs[k] = tuple(given.spec)
        out_avals = [v.aval for v in closed.jaxpr.outvars]
        self.out_avals = out_avals
        self.out_shardings = [_result_sharding(s, mesh, a.shape)
                              for s, a in zip(out_specs, out_avals)]
        out_layouts = [_layout(tuple(s.spec), mesh, len(a.shape))
                       for s, a in zip(self.out_shardings, out_avals)]
        params = [HloSharding.replicate()] * len(self.consts) + self.in_layouts
        module = HloModule(lowered.module.name, lowered.module.entry, num_partitions=count)
        module = _annotated(module, params, out_layouts)
        module = _pass("sharding_propagation", "propagate_shardings")(module, count)
        self.module = _pass("spmd_partitioner", "partition_module")(module, count)
        self.out_layouts = out_layouts
        self.executable = client.compile(self.module, CompileOptions(name=f"jit_{name}"))
        if not hasattr(self.executable, "execute_partitions"):
            raise NotImplementedError(f"the {client.platform} backend runs no partitioned "
                                      "programs")

    def module_text(self) -> str:
        """The partitioned per-device module, in HLO text."""
        return print_module(self.module)

    def __call__(self, leaves: Sequence[Any]) -> list[ArrayImpl]:
        count = len(self.devices)
        owners = [device.process_index for device in self.devices]
        mine = [p for p in range(count) if owners[p] == processes.current().index]
        if set(owners) != set(range(processes.current().count)):
            # A mesh of some processes only: MPI's collectives take every process, so each
            # runs all the partitions itself (the global values, as before processes).
            mine = list(range(count))
        blocks = [_blocks(leaf, layout, mine, self.mesh, dtype)
                  for leaf, layout, dtype in zip(leaves, self.in_layouts, self.in_dtypes)]
        per_partition = [list(self.consts) + [b[i] for b in blocks] for i in range(len(mine))]
        if len(mine) == count:
            outs = self.executable.execute_partitions(per_partition)
        else:  # a mesh spanning processes: this process runs its own partitions
            outs = self._everyones(self.executable.execute_partitions(
                per_partition, partitions=mine, owners=owners), mine, owners)
        return [self._result(k, [outs[p][k] for p in range(count)])
                for k in range(len(self.out_avals))]

    def _everyones(self, outs: list[list[np.ndarray]], mine: list[int],
                   owners: list[int]) -> list[list[np.ndarray]]:
        """Every partition's results from this process's (`outs[i]`, partition mine[i]'s):
        the blocks of split results through one MPI allgather, replicated ones copied."""
        split = [k for k, layout in enumerate(self.out_layouts) if layout.is_tiled]
        everyone: list[list[Any]] = [[None] * len(self.out_avals) for _ in owners]
        for p in range(len(owners)):
            for k in range(len(self.out_avals)):
                if k not in split:
                    everyone[p][k] = outs[0][k]
        if split:
            widest = max(owners.count(q) for q in set(owners))
            local = [np.concatenate([_bytes(out[k]) for k in split]) for out in outs]
            local += [np.zeros_like(local[0])] * (widest - len(local))
            gathered = processes.allgather(np.stack(local))
            for p, owner in enumerate(owners):
                row = gathered[owner][[q for q in range(len(owners))
                                       if owners[q] == owner].index(p)]
                at = 0
                for k in split:
                    like = outs[0][k]
                    everyone[p][k] = row[at:at + like.nbytes].copy().view(
                        like.dtype).reshape(like.shape)  # (copied: aligned)
                    at += like.nbytes
        return everyone

    def _result(self, k: int, blocks: list[np.ndarray]) -> ArrayImpl:
        """Result `k` from its blocks: each device keeps its own block as its shard."""
        aval, layout = self.out_avals[k], self.out_layouts[k]
        if layout.is_tiled:
            value = np.empty(aval.shape, aval.dtype)
            for p, block in enumerate(blocks):
                where = layout.block_slices(aval.shape, p)
                value[where] = block[tuple(slice(0, s.stop - s.start) for s in where)]
        else:
            value = blocks[0]
        out = ArrayImpl(value, aval.weak_type)
        out._sharding = self.out_shardings[k]
        out._shards = tuple(ArrayImpl(block, aval.weak_type).with_sharding(
            SingleDeviceSharding(device)) for device, block in zip(self.devices, blocks))
        return out


def _blocks(leaf: Any, layout: HloSharding, partitions: Sequence[int], mesh: Any,
            dtype: np.dtype) -> list[np.ndarray]:
    """The block of one argument for each of `partitions`: the devices' own shards of an
    Array placed on the mesh (no copy), else slices of its value (in the program's dtype:
    a float64 numpy argument is float32 without x64)."""
    if type(leaf) is ArrayImpl and leaf._shards is not None and \
            isinstance(leaf._sharding, NamedSharding) and leaf._sharding.mesh == mesh:
        return [leaf._shards[p]._value for p in partitions]
    value = np.asarray(leaf._value if type(leaf) is ArrayImpl else leaf, dtype)
    return [_block(value, layout, p) for p in partitions]


def _bytes(block: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(block).reshape(-1).view(np.uint8)


def _block(value: np.ndarray, layout: HloSharding, partition: int) -> np.ndarray:
    """Partition `partition`'s block of `value`, padded with zeros to the tile shape."""
    if not layout.is_tiled:
        return value
    where = layout.block_slices(value.shape, partition)
    block = value[where]
    tile = layout.tile_shape(value.shape)
    if block.shape != tile:
        padded = np.zeros(tile, value.dtype)
        padded[tuple(slice(0, n) for n in block.shape)] = block
        return padded
    return np.ascontiguousarray(block)


# Compiled SPMD calls per jaxpr (held as long as the jaxpr lives), by client, mesh and the
# arguments' specs; None where the partitioner declined the program.
_CALLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def spmd_call(closed: ClosedJaxpr, name: str, client: Client, mesh: Any,
              leaves: Sequence[Any], out_shardings: Sequence[Any] | None = None
              ) -> SpmdCall | None:
    """The compiled SPMD call of `closed` for these leaves' layouts, or None when the
    partitioner cannot split the program (the caller then computes on global values).
    `out_shardings`: jit's, one per result leaf (None where unconstrained)."""
    specs = tuple(_spec(leaf, mesh) for leaf in leaves)
    calls = _CALLS.setdefault(closed, {})
    key = (id(client), mesh, specs, tuple(out_shardings or ()))
    if key not in calls:
        try:
            calls[key] = SpmdCall(closed, name, client, mesh, specs, out_shardings)
        except NotImplementedError as error:
            logger.info("jit(%s) runs on global values: the SPMD partitioner declined it "
                        "(%s)", name, error)
            calls[key] = None
        except Exception as error:  # noqa: BLE001  (a compiler bug: say so, stay correct)
            warnings.warn(f"jaxlite's SPMD partitioner failed on jit({name}) "
                          f"({type(error).__name__}: {error}); this call computes on "
                          "global values instead (same numbers, no per-device split). "
                          "Please report it with the program.", RuntimeWarning,
                          stacklevel=2)
            calls[key] = None
    return calls[key]
