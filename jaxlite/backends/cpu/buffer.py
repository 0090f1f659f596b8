"""The cpu backend's device and buffers: host memory holding numpy arrays (mirrors PJRT's CPU
device and buffer).

Generated code reads and writes the arrays' memory directly, so a buffer always holds a
C-contiguous array (row-major: the layout the compiler gives every entry parameter and
result) of its own dtype; results are fresh arrays that become buffers without a copy.
"""
from __future__ import annotations


import numpy as np

from jaxlite.backends.base import HostBuffer, HostDevice

__all__ = ["CpuBuffer", "CpuDevice"]


class CpuDevice(HostDevice):
    """The host CPU, running code compiled by LLVM."""

    @property
    def device_kind(self) -> str:
        return "cpu"


class CpuBuffer(HostBuffer):
    """A read-only, C-contiguous numpy array on the host.

    Parameters
    ----------
    array : the contents; kept without copying when already C-contiguous (and marked
        read-only), so the caller must hand over an array nobody writes to again.
    device : the device it belongs to.
    """

    def __init__(self, array: np.ndarray, device: CpuDevice) -> None:
        # Generated code indexes the memory directly, so it must be row-major and dense.
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        super().__init__(array, device)
