"""Devices and host transfers (mirrors `jax.devices`, `jax.device_put`, `jax.device_get`).

Until the backends land, the only device is the host CPU, and arrays live in host memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxlite.array import Array
from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval, is_array_like
from jaxlite.tree_util import tree_map


@dataclass(frozen=True)
class Device:
    """One device (mirrors `jax.Device`)."""

    id: int
    platform: str

    @property
    def device_kind(self) -> str:
        return self.platform

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"


_HOST = Device(0, "cpu")


def devices(backend: str | None = None) -> list[Device]:
    """The devices of a backend (mirrors `jax.devices`)."""
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend {backend!r}: the available backend is 'cpu'.")
    return [_HOST]


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
    return devices(backend)


def device_count(backend: str | None = None) -> int:
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    return len(devices(backend))


def default_backend() -> str:
    """The name of the default backend (mirrors `jax.default_backend`)."""
    return "cpu"


def _put_leaf(x: Any) -> Any:
    if isinstance(x, Array) or not is_array_like(x):
        return x
    if hasattr(x, "aval"):  # a tracer: already on the device as far as tracing is concerned
        return x
    aval = get_aval(x)
    return Array(np.array(x, dtype=aval.dtype), aval.weak_type)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: Any = None) -> Any:
    """Move a pytree of arrays to the device as `Array`s (mirrors `jax.device_put`)."""
    return tree_map(_put_leaf, x)


def device_get(x: Any) -> Any:
    """A pytree of arrays as numpy arrays on the host (mirrors `jax.device_get`)."""
    return tree_map(lambda a: np.asarray(a) if type(a) is Array else a, x)


def block_until_ready(x: Any) -> Any:
    """Wait for every array in a pytree (mirrors `jax.block_until_ready`)."""
    return tree_map(lambda a: a.block_until_ready() if type(a) is Array else a, x)


def canonical_dtype_of(x: Any) -> np.dtype:
    return dtypes.canonicalize_dtype(get_aval(x).dtype)
