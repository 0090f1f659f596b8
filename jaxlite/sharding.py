"""Meshes, partition specs and shardings (mirrors `jax.sharding`).

Implemented in `jaxlite.runtime.sharding` and `jaxlite.core.sharding`, over the cpu
backend's devices (as many as `jax_num_cpu_devices` / `JAXLITE_NUM_CPU_DEVICES` ask for).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from jaxlite.backends.base import Device
from jaxlite.core.sharding import AbstractDevice, ManualAxisType
from jaxlite.core.sharding_rules import resolved, types_suspended
from jaxlite.runtime.device import device_put
from jaxlite.tree_util import tree_map
from jaxlite.runtime.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding,
                                      PartitionSpec, Sharding, SingleDeviceSharding,
                                      get_abstract_mesh, get_mesh, make_mesh, set_mesh,
                                      use_abstract_mesh)

__all__ = ["AbstractDevice", "AbstractMesh", "AxisType", "ManualAxisType", "Mesh",
           "NamedSharding", "PartitionSpec", "Sharding", "SingleDeviceSharding", "auto_axes",
           "explicit_axes", "get_abstract_mesh", "get_mesh", "make_mesh",
           "make_single_device_sharding", "reshard", "set_mesh", "use_abstract_mesh"]


def make_single_device_sharding(device: Device, *, memory_kind: str | None = None
                                ) -> SingleDeviceSharding:
    """The whole array on `device` (mirrors `jax.sharding.make_single_device_sharding`)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """Give arrays new shardings (mirrors `jax.sharding.reshard`): each device gets its
    block of the new layout; under `jit`, a traced value's type takes the new sharding
    (a sharding constraint)."""
    targets = tree_map(resolved, out_shardings,
                       is_leaf=lambda s: isinstance(s, (PartitionSpec, Sharding)))
    return device_put(xs, targets)


def _with_axis_types(mesh: Mesh, axes: Any, kind: AxisType) -> Mesh:
    """`mesh` with the axes `axes` (default: all) of type `kind`."""
    names = set(mesh.axis_names if axes is None else
                (axes,) if isinstance(axes, str) else axes)
    types = tuple(kind if n in names else t for n, t in zip(mesh.axis_names, mesh.axis_types))
    return Mesh(mesh.devices, mesh.axis_names, types)


def _current_mesh(what: str) -> Mesh:
    mesh = get_mesh()
    if not mesh.devices.size:
        raise ValueError(f"{what} requires a mesh context: use `jax.set_mesh(mesh)`.")
    return mesh


def auto_axes(f: Callable | None = None, /, *, axes: Any = None,
              out_sharding: Any = None) -> Callable:
    """Run `f` with the context mesh's axes `axes` (default: all) in Auto mode, where
    no sharding rule refuses a program, and reshard its results to `out_sharding`
    (mirrors `jax.sharding.auto_axes`)."""
    def decorate(fun: Callable) -> Callable:
        @functools.wraps(fun)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            mesh = _current_mesh("auto_axes")
            with set_mesh(_with_axis_types(mesh, axes, AxisType.Auto)), types_suspended():
                out = fun(*args, **kwargs)
            return out if out_sharding is None else reshard(out, out_sharding)
        return wrapped
    return decorate if f is None else decorate(f)


def explicit_axes(f: Callable | None = None, /, *, axes: Any = None,
                  in_sharding: Any = None) -> Callable:
    """Run `f` with the context mesh's axes `axes` (default: all) in Explicit mode, its
    arguments resharded to `in_sharding` so that their types carry it; the results go
    back to the Auto mesh with the splits they have (mirrors
    `jax.sharding.explicit_axes`)."""
    def decorate(fun: Callable) -> Callable:
        @functools.wraps(fun)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            mesh = _current_mesh("explicit_axes")
            explicit = _with_axis_types(mesh, axes, AxisType.Explicit)
            with set_mesh(explicit):
                if in_sharding is not None:
                    args = reshard(args, tree_map(lambda s: NamedSharding(explicit, s),
                                                  in_sharding, is_leaf=_is_spec))
                out = fun(*args, **kwargs)
            return tree_map(lambda y: _back_to(mesh, y), out)
        return wrapped
    return decorate if f is None else decorate(f)


def _is_spec(value: Any) -> bool:
    return isinstance(value, PartitionSpec)


def _back_to(mesh: Mesh, value: Any) -> Any:
    spec = [e for e in value.aval.sharding.spec]
    while spec and spec[-1] is None:
        spec.pop()
    return device_put(value, NamedSharding(mesh, PartitionSpec(*spec)))
