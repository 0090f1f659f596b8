"""DLPack at the buffer level: an Array's host buffer out as a capsule, a tensor's memory in.

jaxlite's arrays keep their contents in read-only numpy buffers, so numpy's DLPack support
does the wire format; this module decides what is shared and what is copied.

Out (`export_capsule`, behind `Array.__dlpack__`): the capsule points at the Array's own
buffer, never a copy unless `copy=True` asks for one. A consumer that asks for a versioned
capsule (`max_version >= (1, 0)`, as numpy and PyTorch do) gets it flagged read-only. The
old unversioned capsule cannot carry that flag, and numpy refuses to export a read-only
array through it; JAX exports its immutable buffers through it all the same, trusting the
consumer not to write, and so does jaxlite, through a writable alias of the same memory.

In (`import_host`, behind `from_dlpack`): numpy's import gives a view of the producer's
memory, which becomes the Array's buffer when its dtype is canonical.

numpy's DLPack knows no bfloat16, which JAX (and PyTorch) exchange. Both directions carry
it as uint16 through numpy and rewrite the element type code in the capsule's tensor
description (a C struct whose layout the DLPack standard fixes) on the way.
"""
from __future__ import annotations

import ctypes
import enum
from typing import Any

import numpy as np

from jaxlite.core import dtypes

__all__ = ["BFloat16AsUInt16", "CPU_DEVICE", "DLDeviceType", "EXCHANGED_DTYPES", "KDL_BFLOAT",
           "KDL_UINT", "check_exchanged", "export_capsule", "import_host", "retype"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device kinds that JAX names (mirrors JAX's `DLDeviceType`)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10


CPU_DEVICE = (DLDeviceType.kDLCPU, 0)

# The element types JAX exchanges through DLPack (not the narrow float8/int4 types, which
# numpy 2.5 and later would export).
EXCHANGED_DTYPES = frozenset(np.dtype(t) for t in (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
    dtypes.bfloat16, "float32", "float64", "complex64", "complex128", "bool"))

# DLDataType codes (DLPack's dlpack.h): unsigned integers, and bfloat16.
KDL_UINT, KDL_BFLOAT = 1, 4
# Where the DLTensor starts in the capsule's struct: first in DLManagedTensor; after the
# version, manager context, deleter and flags (8 bytes each) in DLManagedTensorVersioned.
# In a DLTensor, the element type follows the data pointer, the device and ndim.
_TENSOR_OFFSET = {b"dltensor": 0, b"dltensor_versioned": 32}
_DTYPE_OFFSET = 20

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]


def _element_type(capsule: Any) -> ctypes.Array:
    """The (code, bits, lanes low byte, lanes high byte) bytes of the capsule's tensor,
    writable in place."""
    name = _capsule_name(capsule)
    if name not in _TENSOR_OFFSET:
        raise BufferError(f"from_dlpack: a capsule named {name!r} was already consumed "
                          "or is not a DLPack tensor.")
    address = _capsule_pointer(capsule, name) + _TENSOR_OFFSET[name] + _DTYPE_OFFSET
    return (ctypes.c_uint8 * 4).from_address(address)


def retype(capsule: Any, old_code: int, new_code: int) -> bool:
    """Rewrite a 16-bit element type code from `old_code` to `new_code`; whether it was."""
    element = _element_type(capsule)
    if element[0] != old_code or element[1] != 16:
        return False
    element[0] = new_code
    return True


class _WritableAlias:
    """Describes `buffer`'s memory as writable to numpy (`__array_interface__`), so that the
    view numpy builds from it can go through the unversioned DLPack export. The view keeps
    this object, and so `buffer`, alive as its `base`."""

    def __init__(self, buffer: np.ndarray) -> None:
        self.buffer = buffer
        interface = dict(buffer.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


def check_exchanged(dtype: np.dtype) -> None:
    """BufferError unless arrays of `dtype` go through DLPack (as JAX's refuse)."""
    if dtype not in EXCHANGED_DTYPES:
        raise BufferError(f"__dlpack__: arrays of {dtype.name} cannot be exported through "
                          "DLPack (jax.dlpack.is_supported_dtype is False for it); convert "
                          "them to a supported type first.")


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
    check_exchanged(buffer.dtype)
    if copy:
        buffer = buffer.copy()
    bfloat16 = buffer.dtype == dtypes.bfloat16
    if bfloat16:
        buffer = buffer.view(np.uint16)
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    if not versioned and not buffer.flags.writeable:
        buffer = np.asarray(_WritableAlias(buffer))
    if versioned:
        capsule = buffer.__dlpack__(max_version=max_version, copy=False)
    else:
        capsule = buffer.__dlpack__()
    if bfloat16:
        retype(capsule, KDL_UINT, KDL_BFLOAT)
    return capsule


class BFloat16AsUInt16:
    """Stands between numpy's `from_dlpack` and a producer: passes numpy's request on, and
    rewrites a bfloat16 tensor's type to uint16, which numpy can import."""

    def __init__(self, producer: Any) -> None:
        self.producer, self.was_bfloat16 = producer, False

    def __dlpack__(self, **request: Any) -> Any:
        capsule = self.producer.__dlpack__(**request)
        self.was_bfloat16 = retype(capsule, KDL_BFLOAT, KDL_UINT)
        return capsule

    def __dlpack_device__(self) -> Any:
        return self.producer.__dlpack_device__()


def import_host(external: Any, copy: bool | None) -> np.ndarray:
    """The memory of a host DLPack tensor as a numpy array: a view of it, or a copy when
    `copy=True` (numpy negotiates the protocol version and what is copied)."""
    proxy = BFloat16AsUInt16(external)
    host = np.from_dlpack(proxy, copy=copy)
    return host.view(dtypes.bfloat16) if proxy.was_bfloat16 else host

