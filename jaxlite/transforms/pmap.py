"""`jaxlite.pmap`: map a function over devices (mirrors `jax.pmap`).

JAX 0.10.2 runs pmap as `jit` of `shard_map` over a one-axis mesh of `devices[:size]`. Here
it is the same shape on jaxlite's pieces: `jit` of `vmap` with the axis name bound (the
layout shard_map gives a mesh axis, one member per device), and the results placed on the
mesh's devices as JAX places them (`NamedSharding(Mesh(devices, (axis_name,)), P(...))`,
split along each output's mapped axis). The mapped axis must fit the devices, as in JAX:
every mapped argument is split into one block per device, and each device's block must
have size 1 along the mapped axis (JAX squeezes it out).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from jaxlite.lax.slicing import index_in_dim
from jaxlite.lax.broadcast import moveaxis
from jaxlite.core.sharding import NamedSharding, PartitionSpec as P
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.device import device_put, devices as backend_devices
from jaxlite.backends import processes
from jaxlite.runtime.environment import process_count, process_index
from jaxlite.runtime.sharding import Mesh
from jaxlite.transforms import api_util as _api_util
from jaxlite.transforms.jit import jit
from jaxlite.transforms.vmap import check_axes_spec, vmap, _axes_per_leaf
from jaxlite.tree_util import tree_flatten, tree_unflatten

# JAX's name for the axis of a pmap called without axis_name.
DEFAULT_AXIS_NAME = "_internal_pmap_axis_name"


def _index_tuple(nums: int | Iterable[int]) -> tuple[int, ...]:
    return (nums,) if isinstance(nums, int) else tuple(nums)


def pmap(fun: Callable[..., Any], axis_name: Any = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: int | Iterable[int] = (),
         devices: Sequence[Any] | None = None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums: int | Iterable[int] = ()) -> Any:
    """Run `fun` once per device, each on its slice of the mapped axis (mirrors `jax.pmap`).

    The mapped size is the size of the first mapped argument's axis, and it must match the
    devices: `devices[:size]` (or the backend's devices) hold one block each, of size 1 along
    the mapped axis. Collectives over `axis_name` work as under `vmap`. An output with
    `out_axes=None` is the first device's value. Static arguments are passed unchanged to
    every device and must be hashable.
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if devices is not None:
        if not devices:
            raise ValueError("'devices' argument to pmap must be non-empty, or None.")
        devices = tuple(devices)
    name = DEFAULT_AXIS_NAME if axis_name is None else axis_name
    statics = _index_tuple(static_broadcasted_argnums)
    donated = _index_tuple(donate_argnums)
    in_axes = check_axes_spec(in_axes, out_axes, "pmap")
    compiled: dict[Any, Any] = {}

    def prepare(args: tuple, kwargs: dict) -> tuple[Any, tuple, list, dict]:
        dyn_at, static_values = _split_statics(args, statics, fun)
        dyn_args = [args[i] for i in dyn_at]
        dyn_in_axes = _dynamic_in_axes(in_axes, dyn_at, len(args))
        leaves, _ = tree_flatten((tuple(dyn_args), kwargs))
        axes = _axes_per_leaf(dyn_in_axes, tuple(dyn_args), "in_axes")
        axes += [0] * (len(leaves) - len(axes))
        axes = [None if a is None else a % max(np.ndim(x), 1) for a, x in zip(axes, leaves)]
        mesh = _mesh_devices(devices, backend, _mapped_size(leaves, axes, axis_size))
        _check_blocks(leaves, axes, len(mesh))
        axes_key = tree_flatten(dyn_in_axes, is_leaf=lambda a: a is None)
        key = (static_values, tuple(axes_key[0]), axes_key[1], len(args), mesh)
        if key not in compiled:
            body = functools.partial(_per_device_program, fun, name, dyn_in_axes, out_axes,
                                     static_values, mesh)
            functools.update_wrapper(body, fun)
            donate = tuple(dyn_at.index(n % len(args)) for n in donated
                           if args and n % len(args) in dyn_at)
            # Over several devices the mapped axes are constrained to the devices, so that
            # jit partitions the program: each device computes its own member.
            compiled[key] = jit(body, donate_argnums=donate,
                                device=mesh[0] if len(mesh) == 1 else None)
        return compiled[key], mesh, dyn_args, kwargs

    @functools.wraps(fun)
    def pmapped(*args: Any, **kwargs: Any) -> Any:
        if process_count() > 1:
            args, kwargs = _joined_over_processes(args, kwargs, in_axes, statics)
        call, mesh, dyn_args, kwargs = prepare(args, kwargs)
        out = _placed_on(mesh, name, call(*dyn_args, **kwargs), out_axes)
        return _this_process_part(out, out_axes, mesh, name) if process_count() > 1 else out

    def lower(*args: Any, **kwargs: Any) -> Any:
        call, _, dyn_args, kwargs = prepare(args, kwargs)
        return call.lower(*dyn_args, **kwargs)
    pmapped.lower = lower  # type: ignore[attr-defined]
    return pmapped


def _per_device_program(fun: Callable[..., Any], name: Any, in_axes: Any, out_axes: Any,
                        static_values: tuple, devices: tuple, *dyn_args: Any,
                        **kwargs: Any) -> Any:
    """What the devices run together: `fun` vmapped over the named axis, its outputs moved
    to `out_axes` (None: the first device's value). Over several devices each mapped axis
    is constrained to lie along them (the SPMD partitioner then gives each device its
    member, and the collectives become the devices' own)."""
    def with_statics(*args: Any, **kw: Any) -> Any:
        full = list(args)
        for i, static in static_values:
            full.insert(i, static.value)
        return fun(*full, **kw)
    if len(devices) > 1:
        dyn_args, kwargs = _along_devices((tuple(dyn_args), kwargs),
                                          _axes_per_leaf(in_axes, tuple(dyn_args), "in_axes"),
                                          devices, name)
    out = vmap(with_statics, in_axes=in_axes, out_axes=0, axis_name=name)(*dyn_args, **kwargs)
    leaves, tree = tree_flatten(out)
    dests = _axes_per_leaf(out_axes, out, "out_axes")
    moved = [index_in_dim(x, 0, 0, keepdims=False) if d is None
             else moveaxis(x, 0, d % np.ndim(x)) for x, d in zip(leaves, dests)]
    if len(devices) > 1:
        moved = _along_devices(moved, dests, devices, name)
    return tree_unflatten(tree, moved)


def _along_devices(tree: Any, axes: list, devices: tuple, name: Any) -> Any:
    """Each array leaf of `tree` constrained to be split along its mapped axis (`axes`,
    one per leaf; kwargs' leaves map over axis 0) over a one-axis mesh of `devices`."""
    mesh = Mesh(np.array(devices, dtype=object), (name,))
    leaves, treedef = tree_flatten(tree)
    axes = list(axes) + [0] * (len(leaves) - len(axes))
    out = []
    for leaf, axis in zip(leaves, axes):
        if axis is not None and np.ndim(leaf) > 0:
            spec = P(*[None] * (axis % np.ndim(leaf)), name)
            leaf = device_put(leaf, NamedSharding(mesh, spec))
        out.append(leaf)
    return tree_unflatten(treedef, out)


def _placed_on(devices: tuple, name: Any, out: Any, out_axes: Any) -> Any:
    """pmap's results on its devices, as JAX's: split along each output's mapped axis
    over a one-axis mesh named after the pmap's axis (replicated for out_axes None), also
    on one device."""
    mesh = Mesh(np.array(devices, dtype=object), (name,))
    leaves, tree = tree_flatten(out)
    dests = _axes_per_leaf(out_axes, out, "out_axes")
    placed = []
    for leaf, dest in zip(leaves, dests):
        if isinstance(leaf, ArrayImpl):
            spec = P() if dest is None else P(*[None] * (dest % leaf.ndim), name)
            leaf = device_put(leaf, NamedSharding(mesh, spec))
        placed.append(leaf)
    return tree_unflatten(tree, placed)


def _joined_over_processes(args: tuple, kwargs: dict, in_axes: Any,
                           statics: tuple[int, ...]) -> tuple[tuple, dict]:
    """pmap in a run of several processes maps over every process's devices, each process
    giving its own devices' members (as in JAX): each mapped leaf becomes every process's
    leaves joined along its mapped axis (one MPI allgather; every process then holds the
    global value, as jaxlite's Arrays over meshes spanning processes do)."""
    dyn_at, _ = _split_statics(args, statics, lambda: None)
    dyn_args = tuple(args[i] for i in dyn_at)
    axes = _axes_per_leaf(_dynamic_in_axes(in_axes, dyn_at, len(args)), dyn_args, "in_axes")
    leaves, tree = tree_flatten((dyn_args, kwargs))
    axes = list(axes) + [0] * (len(leaves) - len(axes))
    joined = []
    for leaf, axis in zip(leaves, axes):
        if axis is not None and np.ndim(leaf) > 0:
            every = processes.allgather(np.asarray(leaf))
            leaf = np.concatenate(list(every), axis=axis % np.ndim(leaf))
        joined.append(leaf)
    new_dyn, kwargs = tree_unflatten(tree, joined)
    full = list(args)
    for i, value in zip(dyn_at, new_dyn):
        full[i] = value
    return tuple(full), kwargs


def _this_process_part(out: Any, out_axes: Any, devices: tuple, name: Any) -> Any:
    """The members of this process's devices of pmap's results (JAX's pmap in a run of
    several processes returns each process its own devices' part), placed on them."""
    here = [k for k, d in enumerate(devices) if d.process_index == process_index()]
    mine = tuple(devices[k] for k in here)
    leaves, tree = tree_flatten(out)
    dests = _axes_per_leaf(out_axes, out, "out_axes")
    mesh = Mesh(np.array(mine, dtype=object), (name,))
    parts = []
    for leaf, dest in zip(leaves, dests):
        if isinstance(leaf, ArrayImpl):
            spec = P() if dest is None else P(*[None] * (dest % leaf.ndim), name)
            value = np.asarray(leaf) if dest is None else \
                np.take(np.asarray(leaf), here, axis=dest % leaf.ndim)
            leaf = device_put(value, NamedSharding(mesh, spec))
        parts.append(leaf)
    return tree_unflatten(tree, parts)


def _split_statics(args: tuple, statics: tuple[int, ...], fun: Callable[..., Any]
                   ) -> tuple[list[int], tuple]:
    """Positions of the mapped (dynamic) arguments, and (position, value) of the static
    ones."""
    static_at = {n % len(args) for n in statics} if args else set()
    dyn_at = [i for i in range(len(args)) if i not in static_at]
    return dyn_at, tuple((i, _hashable(args[i], i, fun)) for i in sorted(static_at))


def _dynamic_in_axes(in_axes: Any, dyn_at: list[int], num_args: int) -> Any:
    """in_axes for the dynamic arguments only (a tuple gives one entry per argument)."""
    if not isinstance(in_axes, tuple):
        return in_axes
    if len(in_axes) != num_args:
        raise ValueError(_in_axes_length_message(len(in_axes), num_args))
    return tuple(in_axes[i] for i in dyn_at)


class _Static:
    """A static argument with its value (hashable, so that it can key the compile cache)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Static) and bool(self.value == other.value)


def _hashable(value: Any, index: int, fun: Callable[..., Any]) -> _Static:
    try:
        hash(value)
    except TypeError:
        raise ValueError(
            "Non-hashable static arguments are not supported, as this can lead to unexpected "
            f"cache-misses. Static argument (index {index}) of type {type(value)} for "
            f"function {_api_util.function_name(fun)} is non-hashable.") from None
    return _Static(value)


def _in_axes_length_message(given: int, passed: int) -> str:
    return ("pytree structure error: different lengths of tuple at key path\n    pmap in_axes\n"
            f"pmap in_axes has a tuple of length {given}, but the pmapped function was passed "
            f"{passed} positional arguments; in_axes must be a tree prefix of that tuple.")


def _mapped_size(leaves: list, axes: list, axis_size: int | None) -> int:
    """The size of the first mapped argument's axis (JAX's rule), checked against
    `axis_size`."""
    size = next((np.shape(x)[a] for x, a in zip(leaves, axes)
                 if a is not None and np.ndim(x) > 0), None)
    if size is None:
        raise ValueError("pmap requires at least one argument with a mapped axis.")
    if axis_size is not None and axis_size != size:
        raise ValueError(f"Specified axis_size {axis_size} doesn't match received axis_size "
                         f"{size}.")
    return int(size)


def _mesh_devices(devices: tuple | None, backend: str | None, size: int) -> tuple:
    """The devices the mapped axis is laid over: the first `size` of those available."""
    if size == 0:
        raise ValueError("One of in_shardings leaf specifications got an empty NamedSharding "
                         "which is not allowed: pmap over an axis of size 0 has no devices to "
                         "run on.")
    if process_count() > 1 and devices is not None:
        raise NotImplementedError(
            "pmap with devices= in a run of several processes (jaxlite.distributed): "
            "jaxlite maps over every process's devices only (devices=None); use shard_map "
            "or jit over a mesh of the devices you want.")
    available = devices if devices is not None else tuple(backend_devices(backend))
    return tuple(available[:size])


def _check_blocks(leaves: list, axes: list, num_devices: int) -> None:
    """Each device gets one block per mapped argument; the block's mapped axis must have
    size 1 (JAX squeezes it out, with this ValueError when it cannot)."""
    for leaf, axis in zip(leaves, axes):
        if axis is None or np.ndim(leaf) == 0:
            continue  # vmap explains a rank that is too small
        shape = list(np.shape(leaf))
        if shape[axis] % num_devices:
            raise ValueError(
                f"pmap: the mapped axis of an argument of shape {tuple(shape)} (size "
                f"{shape[axis]}) does not split evenly over {num_devices} devices.")
        shape[axis] //= num_devices
        if shape[axis] != 1:
            raise ValueError(
                "cannot select an axis to squeeze out which has size not equal to one, got "
                f"shape={tuple(shape)} and dimensions=({axis},) (pmap over an axis of size "
                f"{np.shape(leaf)[axis]} needs that many devices; {num_devices} are "
                "available here. vmap maps any size on one device.)")
