"""Arranging devices into meshes (mirrors `jax.experimental.mesh_utils`).

JAX orders TPU and GPU devices by their interconnect; jaxlite's devices are CPU devices
with no topology to follow, so a mesh takes them in the order given, as JAX does for CPUs.
`device_kind_handler_dict` maps a `device_kind` to a function that builds meshes of that
kind of device; it starts empty (JAX's entries are for TPU kinds), and a handler added to
it is used as in JAX.
"""
from __future__ import annotations

import collections
import math
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.runtime.device import devices as all_devices

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]

device_kind_handler_dict: dict[str, Callable[..., np.ndarray | None]] = {}


def _axis_sizes(mesh_shape: Sequence[Any]) -> tuple[int, ...] | None:
    try:
        return tuple(int(s) for s in mesh_shape)
    except (TypeError, ValueError):
        return None


def _grid(devices: Sequence[Any], shape: tuple[int, ...]) -> np.ndarray:
    # np.asarray would look into a device that behaves as a sequence; fill slots instead.
    flat = np.empty(len(devices), dtype=object)
    flat[:] = list(devices)
    return flat.reshape(shape)


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """A numpy array of shape `mesh_shape` holding `devices` (default: all of them), for
    `jax.sharding.Mesh` (mirrors `jax.experimental.mesh_utils.create_device_mesh`)."""
    devices = all_devices() if devices is None else list(devices)
    shape = _axis_sizes(mesh_shape)
    if shape is None:
        raise ValueError(f"`mesh_shape` passed to `create_device_mesh` should be a sequence "
                         f"of ints. Got {mesh_shape}")
    if math.prod(shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {shape}")
    handler = device_kind_handler_dict.get(devices[-1].device_kind)
    if handler is not None:
        result = handler(shape, devices, contiguous_submeshes=contiguous_submeshes)
        if result is not None:
            return result
    return _grid(devices, shape)


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> np.ndarray:
    """A mesh of `mesh_shape` within each granule (a slice, or a process when
    `process_is_granule`), the granules laid out as `dcn_mesh_shape` (mirrors
    `jax.experimental.mesh_utils.create_hybrid_device_mesh`); the result's shape is the
    elementwise product of the two."""
    devices = all_devices() if devices is None else list(devices)
    attribute = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attribute):
        raise ValueError(f"Device {devices[0]} does not have attribute {attribute}. See "
                         "`process_is_granule` option.")
    by_key: dict[Any, list[Any]] = collections.defaultdict(list)
    for device in devices:
        by_key[getattr(device, attribute)].append(device)
    keys = sorted(by_key) if should_sort_granules_by_key else list(by_key)
    granules = [by_key[k] for k in keys]
    if math.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(f"Number of slices {len(granules)} must equal the product of "
                         f"dcn_mesh_shape {dcn_mesh_shape}")
    meshes = [create_device_mesh(mesh_shape, granule,
                                 allow_split_physical_axes=allow_split_physical_axes)
              for granule in granules]
    # Granule g's mesh becomes the block at g's place in the dcn grid.
    order = np.arange(len(granules)).reshape(tuple(dcn_mesh_shape))
    blocks = np.empty(order.shape, dtype=object)
    for index, g in np.ndenumerate(order):
        blocks[index] = meshes[g]
    return np.block(blocks.tolist())
