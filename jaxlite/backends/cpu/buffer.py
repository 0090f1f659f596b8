"""The cpu backend's device and buffers: host memory holding numpy arrays (mirrors PJRT's CPU
device and buffer).

Generated code reads and writes the arrays' memory directly, so a buffer always holds a
C-contiguous array (row-major: the layout the compiler gives every entry parameter and
result) of its own dtype; results are fresh arrays that become buffers without a copy.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.backends.base import Buffer, Client, Device

__all__ = ["CpuBuffer", "CpuDevice"]


class CpuDevice(Device):
    """The host CPU, running code compiled by LLVM."""

    def __init__(self, client: Client, id: int = 0) -> None:
        self.client = client
        self.id = id
        self.platform = client.platform

    @property
    def device_kind(self) -> str:
        return "cpu"


class CpuBuffer(Buffer):
    """A read-only, C-contiguous numpy array on the host.

    Parameters
    ----------
    array : the contents; kept without copying when already C-contiguous (and marked
        read-only), so the caller must hand over an array nobody writes to again.
    device : the device it belongs to.
    """

    __slots__ = ("_array", "_device", "_shape", "_dtype")

    def __init__(self, array: np.ndarray, device: CpuDevice) -> None:
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)  # (which would make a 0-d array 1-d)
        if array.flags.writeable:
            array.flags.writeable = False
        self._array: np.ndarray | None = array
        self._device = device
        self._shape = array.shape
        self._dtype = array.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> CpuDevice:
        return self._device

    def to_numpy(self) -> np.ndarray:
        if self._array is None:
            raise RuntimeError(f"{self!r}: the buffer was deleted (or donated to a call); its "
                               "contents are gone. Keep a copy before donating it.")
        return self._array

    def delete(self) -> None:
        self._array = None

    def is_deleted(self) -> bool:
        return self._array is None

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = self.to_numpy()
        return array if dtype is None else array.astype(dtype)
