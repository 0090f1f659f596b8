"""DLPack at the buffer level: an Array's host buffer out as a capsule, a tensor's memory in.

jaxlite's arrays keep their contents in read-only numpy buffers, so numpy's DLPack support
does the wire format; this module decides what is shared and what is copied.

Out (`export_capsule`, behind `Array.__dlpack__`): the capsule points at the Array's own
buffer, never a copy unless `copy=True` asks for one. A consumer that asks for a versioned
capsule (`max_version >= (1, 0)`, as numpy and PyTorch do) gets it flagged read-only. The
old unversioned capsule cannot carry that flag, and numpy refuses to export a read-only
array through it; JAX exports its immutable buffers through it all the same, trusting the
consumer not to write, and so does jaxlite, through a writable alias of the same memory.

In (`jaxlite.numpy.from_dlpack`): numpy's import gives a view of the producer's memory,
which becomes the Array's buffer when its dtype is canonical.
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

__all__ = ["CPU_DEVICE", "DLDeviceType", "export_capsule"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device kinds that JAX names (mirrors JAX's `DLDeviceType`)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10


CPU_DEVICE = (DLDeviceType.kDLCPU, 0)


class _WritableAlias:
    """Describes `buffer`'s memory as writable to numpy (`__array_interface__`), so that the
    view numpy builds from it can go through the unversioned DLPack export. The view keeps
    this object, and so `buffer`, alive as its `base`."""

    def __init__(self, buffer: np.ndarray) -> None:
        self.buffer = buffer
        interface = dict(buffer.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


def export_capsule(buffer: np.ndarray, *, stream: Any, max_version: Any, dl_device: Any,
                   copy: bool | None) -> Any:
    """A DLPack capsule of the host `buffer` (the protocol of `Array.__dlpack__`).

    `stream` must be None (host memory has no streams); `dl_device`, when given, must be
    the CPU; `copy=True` exports a fresh copy, otherwise the buffer itself.
    """
    if stream is not None:
        raise BufferError(f"__dlpack__: stream={stream!r} was given, but jaxlite arrays "
                          "live in host memory, which has no streams; pass stream=None.")
    if dl_device is not None and tuple(dl_device) != CPU_DEVICE:
        raise BufferError(f"__dlpack__: dl_device={tuple(dl_device)} is not available; "
                          f"jaxlite arrays can be exported to the CPU {CPU_DEVICE} only.")
    if copy:
        buffer = buffer.copy()
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    if not versioned and not buffer.flags.writeable:
        buffer = np.asarray(_WritableAlias(buffer))
    if versioned:
        return buffer.__dlpack__(max_version=max_version, copy=False)
    return buffer.__dlpack__()

