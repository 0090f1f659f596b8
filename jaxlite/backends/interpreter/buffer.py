"""The interpreter's device and buffers: host memory, numpy arrays (mirrors PJRT's CPU
device and buffer, without the copy)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.backends.base import Buffer, Client, Device


class InterpreterDevice(Device):
    """The interpreter's one device: the host, evaluating HLO with numpy."""

    def __init__(self, client: Client, id: int = 0) -> None:
        self.client = client
        self.id = id
        self.platform = client.platform

    @property
    def device_kind(self) -> str:
        return "interpreter (numpy on the host)"


class InterpreterBuffer(Buffer):
    """A read-only numpy array on the host.

    Parameters
    ----------
    array : the contents; the buffer marks it read-only and keeps it without copying, so
        the caller must hand over an array nobody writes to again.
    device : the device it belongs to.
    """

    def __init__(self, array: np.ndarray, device: InterpreterDevice) -> None:
        array = np.asarray(array)
        if array.flags.writeable:
            array.flags.writeable = False
        self._array: np.ndarray | None = array
        self._device = device
        self._shape = tuple(array.shape)
        self._dtype = array.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> InterpreterDevice:
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
