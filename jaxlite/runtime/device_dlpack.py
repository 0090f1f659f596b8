"""DLPack for arrays in a GPU's memory (JAX's `__dlpack__` and `from_dlpack` on a GPU).

Out (`export_device_capsule`, behind `Array.__dlpack__` of an Array holding a device
value): the capsule describes the device memory itself, made by the array module's own
export (CuPy's), which also orders the consumer's `stream` after the launcher's stream,
on which every operation writing the value was queued. A consumer asking for the CPU
(`dl_device=(kDLCPU, 0)`) gets the host copy instead.

In (`import_device`, behind `from_dlpack` of a tensor whose `__dlpack_device__` is a CUDA
or ROCm device): the array module's import (CuPy's `from_dlpack`) on the launcher's
stream gives a view of the producer's memory, or a copy when `copy=True`.

bfloat16, which CuPy lacks, travels as uint16 through CuPy with the capsule's element type
rewritten, as `dlpack_buffers` does for numpy.
"""
from __future__ import annotations

from typing import Any

from jaxlite.core import dtypes
from jaxlite.runtime.device_values import DeviceValue, stores_natively
from jaxlite.runtime.dlpack_buffers import (CPU_DEVICE, KDL_BFLOAT, KDL_UINT,
                                            BFloat16AsUInt16, DLDeviceType, check_exchanged,
                                            export_capsule, retype)

__all__ = ["GPU_DEVICE_TYPES", "device_pair", "export_device_capsule", "import_device"]

GPU_DEVICE_TYPES = (DLDeviceType.kDLCUDA, DLDeviceType.kDLROCM)


def export_device_capsule(value: DeviceValue, *, stream: Any, max_version: Any,
                          dl_device: Any, copy: bool | None) -> Any:
    """A DLPack capsule of `value`'s device memory (C-ordered: a broadcast view is laid
    out first), or of its host copy when the consumer asks for the CPU."""
    check_exchanged(value.dtype)
    if dl_device is not None and tuple(dl_device) == CPU_DEVICE:
        if copy is False:
            raise BufferError("__dlpack__: the array is in GPU memory; exporting it to the "
                              "CPU needs a copy, which copy=False refuses.")
        return export_capsule(value.host(), stream=None, max_version=max_version,
                              dl_device=None, copy=False)
    launcher = value.launcher
    with launcher.scope():
        array = launcher.xp.ascontiguousarray(value.array)
        request = {"stream": stream, "copy": copy}
        if max_version is not None:
            request["max_version"] = tuple(max_version)
        if dl_device is not None:
            request["dl_device"] = tuple(dl_device)
        capsule = array.__dlpack__(**request)
    if not stores_natively(launcher, value.dtype):  # bfloat16 kept as its uint16 bits
        retype(capsule, KDL_UINT, KDL_BFLOAT)
    return capsule


def import_device(external: Any, device: Any, launcher: Any, copy: bool | None
                  ) -> DeviceValue:
    """The memory of a GPU DLPack tensor as a device value on `device` (whose launcher
    is `launcher`): a view of it, or a copy when `copy=True`. BufferError when the
    tensor is on another GPU than `device`."""
    kind, index = external.__dlpack_device__()
    own_kind, own_index = _device_pair(launcher, device)
    if (int(kind), int(index)) != (own_kind, own_index):
        raise BufferError(
            f"from_dlpack: the tensor is on {DLDeviceType(int(kind)).name} device {index}, "
            f"but jaxlite's gpu backend runs on {DLDeviceType(own_kind).name} device "
            f"{own_index}; move the tensor there first.")
    proxy = BFloat16AsUInt16(external)
    with launcher.scope():
        array = launcher.xp.from_dlpack(proxy, copy=copy)
    dtype = dtypes.bfloat16 if proxy.was_bfloat16 else array.dtype
    return DeviceValue(array, dtype, device, launcher)


def device_pair(value: DeviceValue) -> tuple[int, int]:
    """(DLPack device type, device index) of the memory holding `value`."""
    return _device_pair(value.launcher, value.device)


def _device_pair(launcher: Any, device: Any) -> tuple[int, int]:
    """(DLPack device type, device index) of the GPU behind `launcher`."""
    kind = DLDeviceType.kDLROCM if launcher.dialect == "hip" else DLDeviceType.kDLCUDA
    return int(kind), int(getattr(launcher, "device_id", device.id))
