"""Array contents in a device's own memory (a GPU's, through CuPy), and the moves between
it and the host (the memory side of JAX's `device_put` to a GPU).

An `Array` placed on a device whose backend keeps buffers in another memory (the gpu
backend with CuPy: its launcher's array module `xp` is not numpy) holds a `DeviceValue`
in place of its numpy buffer: the device array, its dtype and device, and a host copy
made on first need. Whatever reads the contents as numpy (printing, `np.asarray`,
indexing, a primitive without a device rule) gets that copy: one transfer, kept, since
Arrays never change. Eager primitives with a rule over `xp` (`device_eager`) read and
write device arrays directly, so chains of eager operations on the device stay there.

The gpu backend under the kernel interpreter keeps its buffers in host memory already
(`xp` is numpy): its arrays stay plain numpy.
"""
from __future__ import annotations

import functools
import importlib.machinery
from types import SimpleNamespace
from typing import Any

import numpy as np

from jaxlite.backends.registry import default_registry, get_backend

__all__ = ["DeviceValue", "default_client", "host_value", "memory_device_of",
           "memory_launcher", "place", "upload"]

# What `flags` of a device value answers: not host memory that compiled code could read.
_FLAGS = SimpleNamespace(c_contiguous=False, f_contiguous=False, writeable=False,
                         owndata=False)


class DeviceValue:
    """The contents of an Array in device memory.

    Parameters
    ----------
    array : the launcher's `xp` array (C-ordered or a view; bfloat16 stored as uint16).
    dtype : the element type the Array holds.
    device : the device whose memory holds it.
    launcher : the device's launcher (`xp`, `to_host`, `to_device`, `scope`).
    host : the same contents in host memory (read-only, C-ordered), when the value was
        sent from there: reading it back then costs no transfer.
    """

    __slots__ = ("array", "dtype", "shape", "device", "launcher", "_host")

    def __init__(self, array: Any, dtype: np.dtype, device: Any, launcher: Any,
                 host: np.ndarray | None = None) -> None:
        self.array = array
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(d) for d in array.shape)
        self.device = device
        self.launcher = launcher
        # `host`: the read-only C-ordered contents the array was sent from, if known.
        self._host: np.ndarray | None = host

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    flags = _FLAGS

    def host(self) -> np.ndarray:
        """The contents copied to the host (once; read-only)."""
        if self._host is None:
            host = np.asarray(self.launcher.to_host(self.array, self.dtype))
            host.flags.writeable = False
            self._host = host
        return self._host

    def block_until_ready(self) -> None:
        """Wait until the device has computed the value: every operation runs on the
        launcher's one stream, so a marker recorded now is passed when it is done."""
        with self.launcher.scope():
            marker = self.launcher.record()
        if marker is not None:
            self.launcher.wait(marker)

    def setflags(self, **flags: Any) -> None:
        """Device values are never written (numpy's `setflags`, for `fresh_array`)."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        host = self.host()
        if dtype is not None:
            return host.astype(dtype)
        return host.copy() if copy else host

    def __getattr__(self, name: str) -> Any:
        # Everything else a numpy reader asks of the contents: the host copy's.
        if name.startswith("__") or name == "_host":
            raise AttributeError(name)
        return getattr(self.host(), name)

    def __getitem__(self, index: Any) -> Any:
        return self.host()[index]

    def __len__(self) -> int:
        return len(self.host())

    def __iter__(self) -> Any:
        return iter(self.host())

    def __bool__(self) -> bool:
        return bool(self.host())

    def __int__(self) -> int:
        return int(self.host())

    def __float__(self) -> float:
        return float(self.host())

    def __complex__(self) -> complex:
        return complex(self.host())

    def __index__(self) -> int:
        return self.host().__index__()

    def __str__(self) -> str:
        return str(self.host())

    def __repr__(self) -> str:
        return f"DeviceValue({self.dtype.name}{list(self.shape)} on {self.device})"


def memory_launcher(device: Any) -> Any:
    """The launcher of `device` when its backend keeps buffers outside host memory
    (CuPy's `xp`), else None."""
    launcher = getattr(getattr(device, "client", None), "launcher", None)
    if launcher is None or getattr(launcher, "xp", np) is np:
        return None
    return launcher


def default_client() -> Any:
    """The default backend's client, for eager work: the one a call has chosen, else,
    where CuPy is installed (a GPU may be the default), the default started now; None
    before anything chose one on a machine without CuPy, where eager work runs on the
    host as it would on the cpu backend (starting that costs a third of a second, which
    an eager-only script need not pay)."""
    client = default_registry().started_default()
    if client is None and _cupy_installed():
        try:
            client = get_backend()
        except RuntimeError:  # no backend starts: eager work stays on the host
            return None
    return client


@functools.cache
def _cupy_installed() -> bool:
    # Installed on the path, not only present in `sys.modules` (where tests put a
    # stand-in: starting the gpu backend on it would outlive the test).
    return importlib.machinery.PathFinder.find_spec("cupy") is not None


def memory_device_of(client: Any) -> Any:
    """The first device of `client` when its memory is not the host's, else None."""
    if client is None or getattr(client, "launcher", None) is None:
        return None
    device = client.local_devices()[0]
    return device if memory_launcher(device) is not None else None


def stores_natively(launcher: Any, dtype: np.dtype) -> bool:
    """Whether the device's array module holds `dtype` as itself (CuPy has no bfloat16:
    such arrays are uint16 bits, which only moves and the host can use)."""
    return np.dtype(launcher.storage_dtype(dtype)) == np.dtype(dtype)


def upload(host: Any, device: Any, launcher: Any) -> DeviceValue:
    """Host data as a device value: one host-to-device transfer. A broadcast (zero-stride)
    view sends one copy of what it repeats and is broadcast again on the device."""
    host = np.asarray(host)
    with launcher.scope():
        return DeviceValue(device_operand(launcher, host), host.dtype, device, launcher)


def device_operand(launcher: Any, host: np.ndarray) -> Any:
    """`host` as an `xp` array (inside the launcher's `scope`): its repeated dimensions
    (stride 0) sent once."""
    repeated = tuple(slice(0, 1) if stride == 0 and size > 1 else slice(None)
                     for stride, size in zip(host.strides, host.shape))
    compact = host[repeated]
    array = launcher.to_device(np.ascontiguousarray(compact) if compact.ndim else compact)
    if compact.shape != host.shape:
        array = launcher.xp.broadcast_to(array, host.shape)
    return array


def host_value(value: Any) -> Any:
    """`value` (an Array's contents) in host memory."""
    return value.host() if type(value) is DeviceValue else value


def place(value: Any, devices: Any) -> Any:
    """An Array's contents where a placement on `devices` (a set) keeps them: in the
    device's memory for one device that has its own, else on the host."""
    if len(devices) == 1:
        device = next(iter(devices))
        launcher = memory_launcher(device)
        if launcher is not None:
            if type(value) is DeviceValue and value.device is device:
                return value
            return upload(host_value(value), device, launcher)
    return host_value(value)
