"""The abstract side of shardings: partition specs, abstract meshes, `NamedSharding` and
the `Sharding` base class (mirrors those of `jax.sharding`).

These types describe a placement without naming devices, so avals can carry one
(`ShapedArray.sharding`); meshes of real devices (`Mesh`) and single-device shardings live
in `jaxlite.runtime.sharding`. A `NamedSharding` over a mesh of devices also says which
block of an array each device holds (`devices_indices_map`, `shard_shape`).
"""
from __future__ import annotations

import collections
import contextvars
import dataclasses
import enum
import functools
import math
from typing import Any, Iterator, Sequence

import numpy as np


class AxisType(enum.Enum):
    """How a mesh axis shards values (mirrors `jax.sharding.AxisType`)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


class _Unconstrained:
    """`PartitionSpec.UNCONSTRAINED`: a dimension whose sharding the compiler may choose."""

    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class PartitionSpec:
    """Which mesh axes each array dimension is split over (mirrors
    `jax.sharding.PartitionSpec`, also `jax.P`): one entry per dimension, each None (not
    split), an axis name, or a tuple of axis names."""

    __slots__ = ("_partitions", "unreduced", "reduced")

    def __init__(self, *partitions: Any, unreduced: Any = frozenset(),
                 reduced: Any = frozenset()) -> None:
        self._partitions = tuple(tuple(p) if isinstance(p, list) else p for p in partitions)
        self.unreduced = frozenset(unreduced)
        self.reduced = frozenset(reduced)

    UNCONSTRAINED = _Unconstrained()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._partitions)

    def __len__(self) -> int:
        return len(self._partitions)

    def __getitem__(self, index: Any) -> Any:
        return self._partitions[index]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PartitionSpec) and self._partitions == other._partitions
                and self.unreduced == other.unreduced and self.reduced == other.reduced)

    def __hash__(self) -> int:
        return hash((self._partitions, self.unreduced, self.reduced))

    def __repr__(self) -> str:
        body = ", ".join(repr(p) for p in self._partitions)
        if len(self._partitions) == 1:
            body += ","
        return f"P({body})"

    def axis_names(self) -> set[str]:
        names: set[str] = set()
        for entry in self._partitions:
            if isinstance(entry, tuple):
                names.update(entry)
            elif entry is not None and entry is not PartitionSpec.UNCONSTRAINED:
                names.add(entry)
        return names


def _axis_types(axis_types: Any, count: int, default: AxisType) -> tuple[AxisType, ...]:
    if axis_types is None:
        return (default,) * count
    if isinstance(axis_types, AxisType):
        return (axis_types,) * count
    return tuple(axis_types)


@dataclasses.dataclass(frozen=True)
class AbstractDevice:
    """A kind of device without a device (mirrors `jax.sharding.AbstractDevice`)."""

    device_kind: str
    num_cores: int | None
    platform: str


@dataclasses.dataclass(frozen=True)
class ManualAxisType:
    """How a value inside `shard_map` relates to the manual mesh axes (mirrors
    `jax.sharding.ManualAxisType`): the axes it varies over (its blocks differ from device
    to device), and those over which it is an unreduced or reduced partial sum."""

    varying: frozenset = frozenset()
    unreduced: frozenset = frozenset()
    reduced: frozenset = frozenset()

    def text(self, order: Sequence[str] = ()) -> str:
        """The suffix JAX prints after an aval's dimensions: `{V:x}`, `{V:(x,y)}`."""
        if not self.varying:
            return ""
        names = sorted(self.varying, key=lambda n: (list(order).index(n)
                                                    if n in order else len(order), str(n)))
        shown = names[0] if len(names) == 1 else f"({','.join(map(str, names))})"
        return f"{{V:{shown}}}"


NO_MANUAL_AXES = ManualAxisType()


class AbstractMesh:
    """A mesh's axis names, sizes and types without devices (mirrors
    `jax.sharding.AbstractMesh`); `abstract_device` names the kind of devices when the
    mesh was made from a mesh of devices (`Mesh.abstract_mesh`)."""

    def __init__(self, axis_sizes: tuple[int, ...], axis_names: tuple[str, ...],
                 axis_types: Any = None, *, abstract_device: Any = None) -> None:
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = _axis_types(axis_types, len(self.axis_names), AxisType.Auto)
        self.abstract_device = abstract_device

    @property
    def explicit_axes(self) -> tuple[str, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types)
                     if t == AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple[str, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types)
                     if t == AxisType.Manual)

    @property
    def shape(self) -> collections.OrderedDict:
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractMesh) and self.shape_tuple == other.shape_tuple \
            and self.axis_types == other.axis_types

    def __hash__(self) -> int:
        return hash((self.shape_tuple, self.axis_types))

    def __repr__(self) -> str:
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        device = self.abstract_device
        if device is None:
            return f"AbstractMesh({_axes_text(self)})"
        return (f"AbstractMesh({_axes_text(self)}, device_kind={device.device_kind}, "
                f"num_cores={device.num_cores}, platform={device.platform})")


def _axes_text(mesh: AbstractMesh) -> str:
    axes = ", ".join(f"'{n}': {s}" for n, s in mesh.shape_tuple)
    types = ", ".join(repr(t) for t in mesh.axis_types)
    return f"{axes}, axis_types=({types}{',' if len(mesh.axis_types) == 1 else ''})"


class Sharding:
    """The base class of shardings (mirrors `jax.sharding.Sharding`)."""

    memory_kind = "device"

    @property
    def device_set(self) -> set[Any]:
        raise NotImplementedError

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def addressable_devices(self) -> set[Any]:
        return self.device_set

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        # Every sharding jaxlite builds puts the whole array on each of its (one) device.
        return True

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple]:
        return {d: (slice(None),) * len(global_shape) for d in self.device_set}

    def addressable_devices_indices_map(self, global_shape: Sequence[int]) -> dict:
        return self.devices_indices_map(global_shape)

    def is_equivalent_to(self, other: "Sharding", ndim: int) -> bool:
        return self.device_set == other.device_set

    def with_memory_kind(self, kind: str) -> "Sharding":
        if kind != "device":
            raise ValueError(f"jaxlite has device memory only, not memory_kind={kind!r}.")
        return self


class IndivisibleError(ValueError):
    """An array dimension does not split evenly over its mesh axes (as JAX's error of that
    name)."""


class DuplicateSpecError(Exception):
    """A PartitionSpec names one mesh axis for two dimensions (as JAX's error of that name)."""


def _check_no_duplicate_axes(spec: PartitionSpec) -> None:
    seen: set[str] = set()
    for entry in spec:
        for name in entry if isinstance(entry, tuple) else (entry,):
            if name is None or name is PartitionSpec.UNCONSTRAINED:
                continue
            if name in seen:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh axis to at "
                    f"most one positional dimension, but {spec!r} has duplicate entries for "
                    f"`{name}`")
            seen.add(name)


class NamedSharding(Sharding):
    """An array's dimensions split over named mesh axes (mirrors
    `jax.sharding.NamedSharding`); on jaxlite's one-device meshes, the whole array."""

    def __init__(self, mesh: AbstractMesh, spec: PartitionSpec, *,
                 memory_kind: str | None = None) -> None:
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding expects a PartitionSpec, got {spec!r}.")
        _check_no_duplicate_axes(spec)
        missing = sorted(spec.axis_names() - set(mesh.axis_names))
        if missing:
            raise ValueError(f"Resource axis: {missing[0]} of {spec!r} is not found in mesh: "
                             f"{mesh.axis_names}.")
        self.mesh = mesh
        self.spec = spec

    @property
    def device_set(self) -> set[Any]:
        devices = getattr(self.mesh, "devices", None)
        if devices is None:
            raise ValueError("A NamedSharding over an AbstractMesh has no devices.")
        return set(devices.flat)

    def check_rank(self, ndim: int) -> None:
        if len(self.spec) > ndim:
            raise ValueError(f"Sharding {self!r} is only valid for values of rank at least "
                             f"{len(self.spec)}, but was applied to a value of rank {ndim}.")

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        """The mesh's devices in its row-major order: the order of an array's shards."""
        self.device_set  # (raises for an abstract mesh)
        return tuple(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self) -> bool:
        return all(self._parts(entry) == 1 for entry in self.spec)

    def _parts(self, entry: Any) -> int:
        """How many blocks a dimension with spec `entry` is split into."""
        names = entry if isinstance(entry, tuple) else (entry,)
        return math.prod(self.mesh.shape[n] for n in names
                         if n is not None and n is not PartitionSpec.UNCONSTRAINED)

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """Each device's block shape (mirrors `Sharding.shard_shape`); a dimension that
        does not split evenly raises JAX's IndivisibleError."""
        self.check_rank(len(global_shape))
        parts = [self._parts(e) for e in self.spec] + [1] * (len(global_shape) - len(self.spec))
        if any(size % n for size, n in zip(global_shape, parts)):
            axis = next(i for i, (size, n) in enumerate(zip(global_shape, parts)) if size % n)
            raise IndivisibleError(
                f"Sharding {self!r} implies that array axis {axis} is partitioned "
                f"{parts[axis]} times, but the dimension size is {global_shape[axis]} (full "
                f"shape: {tuple(global_shape)}, per-dimension tiling factors: {parts} should "
                "evenly divide the shape)")
        return tuple(size // n for size, n in zip(global_shape, parts))

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether both place every array of rank `ndim` the same way (mirrors
        `Sharding.is_equivalent_to`): the same devices in the same order, splitting the
        same dimensions over the same mesh axes of size > 1."""
        if not isinstance(other, NamedSharding):
            return other.is_equivalent_to(self, ndim) if self.num_devices == 1 else False
        return self._device_assignment == other._device_assignment and \
            self._splits(ndim) == other._splits(ndim)

    def _splits(self, ndim: int) -> list[tuple]:
        out = []
        for d in range(ndim):
            entry = self.spec[d] if d < len(self.spec) else None
            names = entry if isinstance(entry, tuple) else (entry,)
            out.append(tuple(n for n in names if n is not None and
                             n is not PartitionSpec.UNCONSTRAINED and self.mesh.shape[n] > 1))
        return out

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple]:
        """Each device's block of an array of `global_shape`, as a tuple of slices (mirrors
        `Sharding.devices_indices_map`), in the mesh's device order."""
        block = self.shard_shape(global_shape)
        grid = self.mesh.devices
        indices = {}
        for coords in np.ndindex(*grid.shape):
            at = dict(zip(self.mesh.axis_names, coords))
            index = []
            for dim, size in enumerate(global_shape):
                entry = self.spec[dim] if dim < len(self.spec) else None
                if self._parts(entry) == 1:
                    index.append(slice(None))
                    continue
                number = 0
                for name in entry if isinstance(entry, tuple) else (entry,):
                    number = number * self.mesh.shape[name] + at[name]
                index.append(slice(number * block[dim], (number + 1) * block[dim]))
            indices[grid[coords]] = tuple(index)
        return indices

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedSharding) and other.mesh == self.mesh and \
            other.spec == self.spec

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    def __repr__(self) -> str:
        suffix = ", memory_kind=device" if hasattr(self.mesh, "devices") else ""
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}{suffix})"


# The mesh `jax.set_mesh` made current (a `jaxlite.runtime.sharding.Mesh`) and the abstract
# mesh `use_abstract_mesh` puts in its place; here, below the lax layer, so that lax
# functions taking a bare PartitionSpec (`with_sharding_constraint`) can read them.
CURRENT_MESH: contextvars.ContextVar[Any] = contextvars.ContextVar("mesh", default=None)
ABSTRACT_MESH_OVERRIDE: contextvars.ContextVar[AbstractMesh | None] = contextvars.ContextVar(
    "abstract_mesh", default=None)


@functools.lru_cache(maxsize=None)
def unsharded(ndim: int) -> NamedSharding:
    """The sharding of an aval outside any mesh: no mesh axes, nothing split (one object
    per rank, shared by every aval of that rank)."""
    return NamedSharding(AbstractMesh((), ()), PartitionSpec(*([None] * ndim)))


def dims_text(shape: Sequence[Any], sharding: Any) -> str:
    """An aval's dimensions as JAX prints them, each split one followed by its mesh axes:
    `4@x,4` or `16@(x,y)`."""
    spec = getattr(sharding, "spec", ())
    texts = []
    for d, size in enumerate(shape):
        entry = spec[d] if d < len(spec) else None
        if entry is None or entry is PartitionSpec.UNCONSTRAINED or entry == ():
            texts.append(str(size))
        elif isinstance(entry, tuple) and len(entry) > 1:
            texts.append(f"{size}@({','.join(entry)})")
        else:
            texts.append(f"{size}@{entry[0] if isinstance(entry, tuple) else entry}")
    return ",".join(texts)
