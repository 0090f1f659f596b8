"""Devices and host transfers (mirrors `jax.devices`, `jax.default_backend`, `jax.device_put`,
`jax.device_get`, `jax.block_until_ready`).

Devices come from the backend registry (`jaxlite.backends.registry`): `devices()` lists the
default backend's, `devices("interpreter")` a named one's, and a backend that is unknown or
failed to start raises `RuntimeError` with the reason.

The default backend is the LLVM CPU backend ("cpu", as in JAX). Differences from JAX: on a
host where llvmlite cannot start, the default falls back to the HLO interpreter, whose
platform is honestly called "interpreter" (its device prints as `InterpreterDevice(id=0)`).
`Array`s keep their values in host memory whatever the device, so `device_put` checks the
device and makes `Array`s, and compiled calls move values into the backend's buffers
(without a copy for the interpreter).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.runtime.array import ArrayImpl
from jaxlite.backends.base import Device
from jaxlite.backends.registry import get_backend
from jaxlite.core.avals import get_aval, is_array_like
from jaxlite.core.basearray import Array
from jaxlite.tree_util import tree_map

__all__ = ["Device", "block_until_ready", "default_backend", "device_count", "device_get",
           "device_put", "devices", "local_device_count", "local_devices"]


def devices(backend: str | None = None) -> list[Device]:
    """The devices of `backend`, or of the default backend (mirrors `jax.devices`).

    Raises `RuntimeError` when the backend is unknown, not allowed by `jax_platforms`, or
    failed to initialize (the message gives the recorded reason).
    """
    return get_backend(backend).devices()


def local_devices(process_index: int | None = None,
                  backend: str | None = None) -> list[Device]:
    """The devices of this process (all of them: jaxlite runs in one process)."""
    return get_backend(backend).local_devices()


def device_count(backend: str | None = None) -> int:
    """The number of devices of a backend (mirrors `jax.device_count`)."""
    return get_backend(backend).device_count()


def local_device_count(backend: str | None = None) -> int:
    return len(local_devices(backend=backend))


def default_backend() -> str:
    """The platform of the default backend (mirrors `jax.default_backend`).

    "cpu" (the LLVM backend) unless `jax_platforms` says otherwise. Differences from JAX:
    "interpreter" on a host where llvmlite cannot start (the reason is in
    `jaxlite.backends.registry.backend_errors()`).
    """
    return get_backend().platform


def _check_device(device: Any) -> None:
    if device is None:
        return
    if not isinstance(device, Device):
        raise TypeError(f"device_put: device must be a jaxlite Device (from "
                        f"jaxlite.devices()) or None, got {device!r} of type "
                        f"{type(device).__name__}. Shardings are not supported.")
    if device not in device.client.devices():
        raise ValueError(f"device_put: {device!r} is not a device of its backend "
                         f"{device.client.platform!r}.")


def _put_leaf(x: Any) -> Any:
    if isinstance(x, Array) or not is_array_like(x):
        # Arrays are already placed; tracers are on the device as far as tracing goes.
        return x
    aval = get_aval(x)
    return ArrayImpl(np.array(x, dtype=aval.dtype), aval.weak_type)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: Any = None) -> Any:
    """Make each array leaf of a pytree an `Array` on `device` (mirrors `jax.device_put`).

    Differences from JAX: values stay in host memory, whatever the device; only a single
    `Device` (or None, the default backend's first device) is accepted, not a sharding.
    """
    _check_device(device)
    return tree_map(_put_leaf, x)


def device_get(x: Any) -> Any:
    """A pytree of arrays as numpy arrays on the host (mirrors `jax.device_get`)."""
    return tree_map(lambda a: np.asarray(a) if type(a) is ArrayImpl else a, x)


def block_until_ready(x: Any) -> Any:
    """Wait for every array in a pytree (mirrors `jax.block_until_ready`)."""
    return tree_map(lambda a: a.block_until_ready() if type(a) is ArrayImpl else a, x)
