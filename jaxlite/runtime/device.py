"""Devices and host transfers (mirrors `jax.devices`, `jax.default_backend`, `jax.device_put`,
`jax.device_get`, `jax.block_until_ready`).

Devices come from the backend registry (`jaxlite.backends.registry`): `devices()` lists the
default backend's, `devices("interpreter")` a named one's, and a backend that is unknown or
failed to start raises `RuntimeError` with the reason.

The default backend is the LLVM CPU backend ("cpu", as in JAX). Differences from JAX: on a
host where llvmlite cannot start, the default falls back to the HLO interpreter, whose
platform is honestly called "interpreter" (its device prints as `InterpreterDevice(id=0)`).
`Array`s keep their values in host memory, except on a GPU (CuPy): `device_put` to one
device marks the Array as there (moving it into a GPU's memory: `device_values`),
`device_put` to a sharding over several devices also keeps a copy of each device's block
(`Array.addressable_shards`), and compiled calls move values into the backend's buffers
(without a copy for the interpreter, or for Arrays already in the GPU's memory).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.device_dlpack import import_device
from jaxlite.runtime.device_eager import put_on_default_device
from jaxlite.runtime.device_values import default_client, memory_device_of, memory_launcher
from jaxlite.backends.base import Device
from jaxlite.backends.registry import get_backend
from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval, is_array_like
from jaxlite.core.basearray import Array
from jaxlite.core.sharding import NamedSharding
from jaxlite.core.trace import Tracer
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.sharding_constraint import sharding_constraint_p
from jaxlite import tree_util
from jaxlite.runtime.sharding import (PartitionSpec, Sharding, SingleDeviceSharding,
                                      resolve)
from jaxlite.tree_util import tree_map

__all__ = ["Device", "block_until_ready", "default_backend", "device_count", "device_get",
           "device_put", "devices", "from_gpu_dlpack", "local_device_count",
           "local_devices"]


def devices(backend: str | None = None) -> list[Device]:
    """The devices of `backend`, or of the default backend (mirrors `jax.devices`).

    Raises `RuntimeError` when the backend is unknown, not allowed by `jax_platforms`, or
    failed to initialize (the message gives the recorded reason).
    """
    return get_backend(backend).devices()


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list[Device]:
    """The devices of process `process_index` (this process when None; mirrors
    `jax.local_devices`)."""
    index = process_index if process_index is not None else host_id
    client = get_backend(backend)
    if index is None:
        return client.local_devices()
    return [device for device in client.devices() if device.process_index == index]


def device_count(backend: str | None = None) -> int:
    """The number of devices of a backend, over every process (mirrors
    `jax.device_count`)."""
    return get_backend(backend).device_count()


def local_device_count(backend: str | None = None) -> int:
    """The number of this process's devices (mirrors `jax.local_device_count`)."""
    return len(local_devices(backend=backend))


def default_backend() -> str:
    """The platform of the default backend (mirrors `jax.default_backend`).

    "cpu" (the LLVM backend) unless `jax_platforms` says otherwise. Differences from JAX:
    "interpreter" on a host where llvmlite cannot start (the reason is in
    `jaxlite.backends.registry.backend_errors()`).
    """
    return get_backend().platform


def _placement(target: Any, ndim: int) -> Sharding | None:
    """The sharding `device_put` gives a leaf for `target` (a Device, a Sharding, a
    PartitionSpec over the current mesh, or None for "wherever it is")."""
    if target is None:
        return None
    if isinstance(target, Device):
        if target not in target.client.devices():
            raise ValueError(f"device_put: {target!r} is not a device of its backend "
                             f"{target.client.platform!r}.")
        return SingleDeviceSharding(target)
    if isinstance(target, (Sharding, PartitionSpec)):
        try:
            sharding = resolve(target, ndim)
        except ValueError as error:
            if not isinstance(target, Sharding) or "only valid for values of rank" not in \
                    str(error):
                raise
            raise ValueError(f"One of device_put args is incompatible with its sharding "
                             f"annotation {target!r}: {error}") from None
        known = set(get_backend().devices())
        if not sharding.device_set <= known:
            raise ValueError(f"device_put: {sharding!r} uses devices jaxlite's default "
                             f"backend does not have ({sorted(map(repr, known))}).")
        return sharding
    raise TypeError(f"device_put: expected a Device, a Sharding or a PartitionSpec (or a "
                    f"pytree of them matching x), got {target!r} of type "
                    f"{type(target).__name__}.")


_BACKEND_STARTED = False


def start_default_backend() -> None:
    """Start the default backend (once) when the first array is made from host data, as
    JAX creates its client then: the backend's start-up (for cpu: llvmlite, the code
    generators, the runtime's object code) is not paid inside the first `jit` call."""
    global _BACKEND_STARTED
    if not _BACKEND_STARTED:
        _BACKEND_STARTED = True
        try:
            get_backend()
        except RuntimeError:
            pass  # said again, with the reasons, by the first call that needs a backend


def _put_leaf(x: Any, target: Any) -> Any:
    if not isinstance(x, Array) and not is_array_like(x):
        raise TypeError(f"device_put: {x!r} of type {type(x).__name__} is not a valid "
                        "array value.")
    if isinstance(x, Array) and type(x) is not ArrayImpl:
        # A tracer, or an array of an extended dtype (typed PRNG keys): a traced value
        # placed on a mesh is constrained there (jit then places its result so, and on
        # Explicit axes its type changes); otherwise the placement can only be checked.
        sharding = _placement(target, x.ndim)
        if isinstance(x, Tracer) and isinstance(sharding, NamedSharding) and \
                hasattr(sharding.mesh, "devices"):
            return constrained(x, sharding)
        return x
    if type(x) is not ArrayImpl:
        start_default_backend()
        aval = get_aval(x)
        x = ArrayImpl(np.array(x, dtype=aval.dtype), aval.weak_type)
    sharding = _placement(target, x.ndim)
    if sharding is None:
        return put_on_default_device(x)
    if sharding == x._sharding:
        return x
    sharding.shard_shape(x.shape)  # a dimension that does not split evenly raises
    return x.with_sharding(sharding)


def constrained(x: Any, sharding: NamedSharding) -> Any:
    """A traced value constrained to `sharding` (a sharding constraint in the jaxpr)."""
    return sharding_constraint_p.bind(x, sharding=sharding, layout=None,
                                      context_mesh=sharding.mesh.abstract_mesh,
                                      unconstrained_dims=frozenset())


def _is_placement(value: Any) -> bool:
    return value is None or isinstance(value, (Device, Sharding, PartitionSpec))


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: Any = None) -> Any:
    """Put each array leaf of a pytree on `device` (mirrors `jax.device_put`).

    `device` is a Device, a Sharding, a PartitionSpec (over the mesh `set_mesh` made
    current), or a pytree of those that is a prefix of `x`. The result is committed to that
    placement (`Array.committed`); without one it is uncommitted, on the default device
    (in its memory when that is a GPU's). Differences from JAX: values stay in host
    memory, except on a GPU (a sharded Array holds its global value and a copy of each
    device's block).
    """
    if _is_placement(device):
        return tree_map(lambda leaf: _put_leaf(leaf, device), x)
    leaves, treedef = tree_util.tree_flatten(x)
    targets = treedef.flatten_up_to(
        tree_util.tree_broadcast(device, x, is_leaf=_is_placement))
    return tree_util.tree_unflatten(treedef, [_put_leaf(leaf, target)
                                              for leaf, target in zip(leaves, targets)])


def from_gpu_dlpack(external: Any, device: Any, copy: bool | None) -> ArrayImpl:
    """An Array over a DLPack tensor in GPU memory (`from_dlpack`'s GPU side, see
    `device_dlpack`): on `device` (a Device or one-device Sharding) when given, committed;
    else on the default device when that is a GPU, uncommitted; else on the gpu backend's
    device, committed. 64-bit data with x64 off is narrowed on the device, as in JAX."""
    target = device
    if isinstance(device, Sharding):
        [target] = device.device_set
    if target is None:
        target = memory_device_of(default_client())
    if target is None:
        try:
            target = get_backend("gpu").devices()[0]
        except RuntimeError as error:
            raise BufferError(f"from_dlpack: the tensor is in GPU memory, and jaxlite's "
                              f"gpu backend is not available: {error}") from None
    launcher = memory_launcher(target)
    if launcher is None:
        raise BufferError(f"from_dlpack: the tensor is in GPU memory, and {target} keeps "
                          "its arrays in host memory; copy the tensor to the host first, "
                          "or pass a GPU device.")
    out = ArrayImpl(import_device(external, target, launcher, copy))
    canonical = dtypes.canonicalize_dtype(out.dtype)
    if canonical != out.dtype:
        out = convert_element_type(out, canonical)
    committed = device is not None or target is not memory_device_of(default_client())
    return _put_leaf(out, target) if committed else out


def device_get(x: Any) -> Any:
    """A pytree of arrays as numpy arrays on the host (mirrors `jax.device_get`)."""
    return tree_map(lambda a: np.asarray(a) if type(a) is ArrayImpl else a, x)


def block_until_ready(x: Any) -> Any:
    """Wait for every array in a pytree (mirrors `jax.block_until_ready`)."""
    return tree_map(lambda a: a.block_until_ready() if type(a) is ArrayImpl else a, x)


def copy_to_host_async(x: Any) -> Any:
    """Start copying every array of a pytree to the host (mirrors
    `jax.copy_to_host_async`); jaxlite's arrays are in host memory already."""
    return tree_map(lambda a: a.copy_to_host_async() if type(a) is ArrayImpl else None, x)
