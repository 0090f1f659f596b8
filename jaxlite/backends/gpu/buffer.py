"""The gpu backend's device and buffers (mirrors PJRT's GPU device and `PjRtBuffer`).

A `GpuBuffer` holds a C-contiguous array of the launcher's array module `xp` (CuPy device
memory from CuPy's pool, or numpy for the interpreter launcher) in logical, row-major
order, and the launcher's event recorded when the program that made it was enqueued:
`is_ready` asks the event, `block_until_ready` waits on it, `to_numpy` copies to the host
(waiting first) once and keeps the copy.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.backends.base import Buffer, Client, Device

__all__ = ["GpuBuffer", "GpuDevice"]


class GpuDevice(Device):
    """One GPU (JAX's `CudaDevice` / `RocmDevice`: platform "gpu", `str` "cuda:0").

    Parameters
    ----------
    client : the client owning it.
    id : the device ordinal.
    vendor : "cuda" or "rocm" (what `repr` and `str` name).
    kind : the hardware's name, e.g. "NVIDIA H200" (`device_kind`).
    """

    def __init__(self, client: Client, id: int, vendor: str, kind: str) -> None:
        self.client = client
        self.id = id
        self.platform = client.platform
        self.vendor = vendor
        self._kind = kind

    @property
    def device_kind(self) -> str:
        return self._kind

    def __repr__(self) -> str:
        return f"{self.vendor.capitalize()}Device(id={self.id})"

    def __str__(self) -> str:
        return f"{self.vendor}:{self.id}"


class GpuBuffer(Buffer):
    """An array in device memory, in logical row-major order.

    Parameters
    ----------
    array : the launcher's array (`xp`), C-contiguous, of `dtype`'s storage type (CuPy
        has no bfloat16: such arrays are stored as uint16 bits).
    dtype : the element type the buffer holds.
    device : the device it lives on.
    launcher : moves the array to the host and knows the readiness of `event`.
    event : the launcher's marker for the end of the program that wrote it (None: ready).
    owns_memory : False when the array may share memory with another buffer or a
        program's constant (a result that is an argument, or a view of one): donating
        such a buffer gives the program a copy to write.
    """

    def __init__(self, array: Any, dtype: np.dtype, device: GpuDevice, launcher: Any,
                 event: Any = None, owns_memory: bool = True) -> None:
        self.owns_memory = owns_memory
        self._array = array
        self._dtype = np.dtype(dtype)
        self._shape = tuple(int(d) for d in array.shape)
        self._device = device
        self._launcher = launcher
        self._event = event
        self._host: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    def device_array(self) -> Any:
        """The array in device memory (the launcher's `xp`)."""
        self._check_live()
        return self._array

    def to_numpy(self) -> np.ndarray:
        self._check_live()
        if self._host is None:
            host = self._launcher.to_host(self._array, self._dtype)
            host.flags.writeable = False
            self._host = host
        return self._host

    def delete(self) -> None:
        self._array = None
        self._host = None

    def is_deleted(self) -> bool:
        return self._array is None

    def is_ready(self) -> bool:
        return self._event is None or self._launcher.event_done(self._event)

    def block_until_ready(self) -> "GpuBuffer":
        self._check_live()
        if self._event is not None:
            self._launcher.wait(self._event)
        return self

    def _check_live(self) -> None:
        if self._array is None:
            raise RuntimeError(f"{self!r}: the buffer was deleted (or donated to a call); its "
                               "contents are gone. Keep a copy before donating it.")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = self.to_numpy()
        return array if dtype is None else array.astype(dtype)
