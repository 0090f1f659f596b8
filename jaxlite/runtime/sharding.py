"""Shardings: how an array is laid out over devices (mirrors `jax.sharding`).

The cpu backend has as many devices as `jax_num_cpu_devices` asks for (one by default;
`JAXLITE_NUM_CPU_DEVICES` or XLA_FLAGS' `--xla_force_host_platform_device_count`). A `Mesh`
arranges them in a grid with named axes; a `NamedSharding` splits array dimensions over
mesh axes and gives each device its block (`devices_indices_map`, in the mesh's device
order, as JAX's), a `SingleDeviceSharding` puts the whole array on one device. The
classes have JAX's constructors, attributes, equality and printing; a mesh that needs
more devices than exist, or a dimension that does not split evenly, raises as in JAX.
Arrays placed with them keep one block per device (`jaxlite.runtime.array`); where the
results of computations on them go is `jaxlite.runtime.placement`'s.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite.backends import processes
from jaxlite.backends.base import Device
from jaxlite.backends.registry import get_backend
from jaxlite.core.sharding import (ABSTRACT_MESH_OVERRIDE, CURRENT_MESH, AbstractDevice,
                                   AbstractMesh,
                                   AxisType, NamedSharding, PartitionSpec, Sharding,
                                   _axes_text, _axis_types)


class Mesh(AbstractMesh):
    """Devices arranged in a grid with named axes (mirrors `jax.sharding.Mesh`)."""

    def __init__(self, devices: Any, axis_names: Any, axis_types: Any = None) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        grid = np.asarray(devices, dtype=object)
        if grid.ndim != len(names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to "
                             f"equal the length of its second argument (`axis_names`), but got "
                             f"devices.ndim == {grid.ndim} and len(axis_names) == {len(names)}.")
        self.devices = grid
        super().__init__(grid.shape, names, _axis_types(axis_types, len(names), AxisType.Auto))

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list[Device]:
        """The mesh's devices of this process (all of them outside an MPI run)."""
        here = processes.current().index
        return [d for d in self.devices.flat if d.process_index == here]

    @property
    def abstract_mesh(self) -> AbstractMesh:
        if getattr(self, "_abstract", None) is None:
            first = next(iter(self.devices.flat), None)
            device = None if first is None else AbstractDevice(
                first.device_kind, None, first.platform)
            self._abstract = AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                                          abstract_device=device)
        return self._abstract

    @property
    def is_multi_process(self) -> bool:
        """Whether the mesh holds devices of other processes (an MPI run)."""
        return len(self.local_devices) != self.devices.size

    def __enter__(self) -> "Mesh":
        self._tokens = getattr(self, "_tokens", []) + [_CURRENT_MESH.set(self)]
        return self

    def __exit__(self, *exc: Any) -> None:
        _CURRENT_MESH.reset(self._tokens.pop())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and super().__eq__(other) and \
            [d.id for d in self.devices.flat] == [d.id for d in other.devices.flat]

    def __hash__(self) -> int:
        # (computed once: jit's call plans hash the shardings of placed arguments)
        if getattr(self, "_hash", None) is None:
            self._hash = hash((self.shape_tuple, self.axis_types,
                               tuple(d.id for d in self.devices.flat)))
        return self._hash

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types=({', '.join(map(repr, self.axis_types))}"
                f"{',' if len(self.axis_types) == 1 else ''}))")

    def __str__(self) -> str:
        return "Mesh()" if self.empty else f"Mesh({_axes_text(self)})"


_EMPTY_MESH = Mesh(np.empty((0,), dtype=object), ("_",))
_CURRENT_MESH = CURRENT_MESH
_ABSTRACT_OVERRIDE = ABSTRACT_MESH_OVERRIDE


class SingleDeviceSharding(Sharding):
    """The whole array on one device (mirrors `jax.sharding.SingleDeviceSharding`)."""

    def __init__(self, device: Device, *, memory_kind: str | None = None) -> None:
        self._device = device

    @property
    def device_set(self) -> set[Device]:
        return {self._device}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("single", self._device.id, self._device.platform))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], axis_types: Any = None,
              *, devices: Sequence[Device] | None = None) -> Mesh:
    """A mesh of `devices` (default: all of the default backend's) in the grid
    `axis_shapes` (mirrors `jax.make_mesh`); axes are Explicit unless `axis_types` says."""
    devices = get_backend().devices() if devices is None else list(devices)
    shape = tuple(int(s) for s in axis_shapes)
    if len(devices) < math.prod(shape):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                         f"mesh_shape {shape}")
    grid = np.empty(len(devices), dtype=object)
    grid[:] = list(devices)
    grid = grid[:math.prod(shape)].reshape(shape)
    return Mesh(grid, tuple(axis_names),
                _axis_types(axis_types, len(shape), AxisType.Explicit))


def get_mesh() -> Mesh:
    """The mesh `set_mesh` made current, else an empty one (mirrors
    `jax.sharding.get_mesh`)."""
    mesh = _CURRENT_MESH.get()
    return _EMPTY_MESH if mesh is None else mesh


def get_abstract_mesh() -> AbstractMesh:
    """The current mesh without its devices (mirrors `jax.sharding.get_abstract_mesh`)."""
    override = _ABSTRACT_OVERRIDE.get()
    if override is not None:
        return override
    mesh = _CURRENT_MESH.get()
    return AbstractMesh((), ()) if mesh is None else mesh.abstract_mesh


class set_mesh:  # noqa: N801  (JAX's name; a class, as in JAX)
    """Make `mesh` current: for a `with` block, or (called alone) for the rest of the
    program (mirrors `jax.set_mesh`)."""

    def __init__(self, mesh: Mesh | None) -> None:
        self._token = _CURRENT_MESH.set(mesh)

    def __enter__(self) -> Mesh | None:
        return _CURRENT_MESH.get()

    def __exit__(self, *exc: Any) -> None:
        _CURRENT_MESH.reset(self._token)


class use_abstract_mesh:  # noqa: N801  (JAX's name)
    """Make an abstract mesh current for a block (mirrors
    `jax.sharding.use_abstract_mesh`); it changes what `get_abstract_mesh` returns."""

    def __init__(self, mesh: AbstractMesh) -> None:
        self._mesh = mesh

    def __enter__(self) -> AbstractMesh:
        self._token = _ABSTRACT_OVERRIDE.set(self._mesh)
        return self._mesh

    def __exit__(self, *exc: Any) -> None:
        _ABSTRACT_OVERRIDE.reset(self._token)



def resolve(sharding: Any, ndim: int) -> Sharding:
    """A sharding given as a `Sharding` or a bare `PartitionSpec` (over the current mesh),
    checked against an array's rank."""
    if isinstance(sharding, PartitionSpec):
        mesh = _CURRENT_MESH.get()
        if mesh is None:
            raise ValueError(f"A PartitionSpec ({sharding!r}) was given where a sharding is "
                             "needed, but no mesh is set: use jax.set_mesh(mesh) or pass "
                             "NamedSharding(mesh, spec).")
        sharding = NamedSharding(mesh, sharding)
    if not isinstance(sharding, Sharding):
        raise TypeError(f"Expected a Sharding or a PartitionSpec, got {sharding!r}.")
    if isinstance(sharding, NamedSharding):
        sharding.check_rank(ndim)
    return sharding
