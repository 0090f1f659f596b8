"""Meshes, partition specs and shardings (mirrors `jax.sharding`).

Implemented in `jaxlite.runtime.sharding` and `jaxlite.core.sharding`, over the cpu
backend's devices (as many as `jax_num_cpu_devices` / `JAXLITE_NUM_CPU_DEVICES` ask for).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

from jaxlite.backends.base import Device
from jaxlite.runtime.device import device_put
from jaxlite.runtime.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding,
                                      PartitionSpec, Sharding, SingleDeviceSharding,
                                      get_abstract_mesh, get_mesh, make_mesh, set_mesh,
                                      use_abstract_mesh)

__all__ = ["AbstractDevice", "AbstractMesh", "AxisType", "ManualAxisType", "Mesh",
           "NamedSharding", "PartitionSpec", "Sharding", "SingleDeviceSharding", "auto_axes",
           "explicit_axes", "get_abstract_mesh", "get_mesh", "make_mesh",
           "make_single_device_sharding", "reshard", "set_mesh", "use_abstract_mesh"]


@dataclasses.dataclass(frozen=True)
class AbstractDevice:
    """A kind of device without a device (mirrors `jax.sharding.AbstractDevice`)."""

    device_kind: str
    num_cores: int | None
    platform: str


@dataclasses.dataclass(frozen=True)
class ManualAxisType:
    """How values vary over manual mesh axes (mirrors `jax.sharding.ManualAxisType`)."""

    varying: frozenset = frozenset()
    unreduced: frozenset = frozenset()
    reduced: frozenset = frozenset()


def make_single_device_sharding(device: Device, *, memory_kind: str | None = None
                                ) -> SingleDeviceSharding:
    """The whole array on `device` (mirrors `jax.sharding.make_single_device_sharding`)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """Give arrays new shardings (mirrors `jax.sharding.reshard`): each device gets its
    block of the new layout."""
    return device_put(xs, out_shardings)


def _axes_decorator(f: Callable | None, place: Any) -> Callable:
    def decorate(fun: Callable) -> Callable:
        @functools.wraps(fun)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            out = fun(*args, **kwargs)
            return out if place is None else device_put(out, place)
        return wrapped
    return decorate if f is None else decorate(f)


def auto_axes(f: Callable | None = None, /, *, axes: Any = None,
              out_sharding: Any = None) -> Callable:
    """Run `f` with mesh axes in Auto mode and place its results with `out_sharding`
    (mirrors `jax.sharding.auto_axes`); values are computed whole, so only the results'
    placement changes."""
    return _axes_decorator(f, out_sharding)


def explicit_axes(f: Callable | None = None, /, *, axes: Any = None,
                  in_sharding: Any = None) -> Callable:
    """Run `f` with mesh axes in Explicit mode (mirrors `jax.sharding.explicit_axes`);
    jaxlite's types carry no sharding, so `in_sharding` is not checked."""
    return _axes_decorator(f, None)
