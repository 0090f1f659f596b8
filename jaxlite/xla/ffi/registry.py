"""The FFI targets registered in this process (mirrors XLA's custom-call registry behind
`jax.ffi.register_ffi_target`).

A target is a name and a handler bundle: the addresses of its stage functions (`execute`
required; `instantiate`, `prepare`, `initialize` optional). `register_ffi_target` accepts,
as JAX does, a PyCapsule holding the execute handler's address (what `jax.ffi.pycapsule`
makes from a ctypes function, and what nanobind/pybind11 modules export), a dict from
stage names to capsules, and also a ctypes function or a plain address.

Registering a typed handler asks it for its metadata first (the C API version it was
built for), as XLA does, and refuses one built for a version jaxlite's table cannot serve.

Each target owns a table of four function pointers (its *slots*, one per stage); code the
cpu backend generates reads the handler from there, so registering a name again with
another function takes effect in programs already compiled.
"""
from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass, field
from typing import Any

from jaxlite.errors import JaxRuntimeError
from jaxlite.xla.ffi import api_table, c_api

__all__ = ["FfiTarget", "register", "lookup", "is_registered", "function_address",
           "CPU_PLATFORMS", "GPU_PLATFORMS", "registered_anywhere"]

CPU_PLATFORMS = ("cpu", "host")
# The platforms the gpu backend calls handlers of (CUDA devices, ROCm devices).
GPU_PLATFORMS = ("cuda", "rocm")

_LOCK = threading.Lock()
_HANDLER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_TARGETS: dict[tuple[str, str], "FfiTarget"] = {}   # (platform, name) -> target


@dataclass
class FfiTarget:
    """A registered handler bundle; `slots[i]` is stage `c_api.STAGES[i]`'s address or 0."""

    name: str
    platform: str
    api_version: int
    slots: Any = field(default_factory=lambda: (ctypes.c_void_p * len(c_api.STAGES))())

    def stage(self, name: str) -> int:
        """The address of the handler of stage `name`, 0 when the bundle lacks it."""
        return self.slots[c_api.STAGES.index(name)] or 0

    def slots_address(self) -> int:
        return ctypes.addressof(self.slots)


_CAPSULE_NAME = ctypes.pythonapi.PyCapsule_GetName
_CAPSULE_NAME.restype, _CAPSULE_NAME.argtypes = ctypes.c_char_p, [ctypes.py_object]
_CAPSULE_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_CAPSULE_POINTER.restype = ctypes.c_void_p
_CAPSULE_POINTER.argtypes = [ctypes.py_object, ctypes.c_char_p]


def function_address(fn: Any) -> int:
    """The address a PyCapsule, a ctypes function or an int holds."""
    if isinstance(fn, int):
        return fn
    if isinstance(fn, ctypes._CFuncPtr):  # noqa: SLF001 (ctypes' public base has no name)
        return ctypes.cast(fn, ctypes.c_void_p).value or 0
    if type(fn).__name__ == "PyCapsule":
        return _CAPSULE_POINTER(fn, _CAPSULE_NAME(fn)) or 0
    raise TypeError(f"an FFI handler must be a PyCapsule (see jax.ffi.pycapsule), a ctypes "
                    f"function or an address, got {type(fn).__name__}")


def _check_metadata(name: str, platform: str, handler: int) -> None:
    """Ask the handler which C API version it was built for, as XLA does when it registers
    one (a frame carrying the metadata extension), and refuse what XLA refuses."""
    metadata = c_api.Metadata(struct_size=c_api.struct_size(c_api.Metadata, "traits"))
    extension = c_api.MetadataExtension(metadata=ctypes.addressof(metadata))
    extension.extension_base.struct_size = c_api.struct_size(c_api.MetadataExtension,
                                                              "metadata")
    extension.extension_base.type = c_api.EXTENSION_METADATA
    frame = c_api.CallFrame(struct_size=c_api.struct_size(c_api.CallFrame, "attrs"),
                            extension_start=ctypes.addressof(extension),
                            api=api_table.api_address(), stage=c_api.EXECUTE)
    error = _HANDLER(handler)(ctypes.addressof(frame))
    if error:
        message = api_table.error_message(error)
        api_table.destroy_error(error)
        raise JaxRuntimeError(f"{message}\n(asking the FFI handler of {name!r} for its "
                              "metadata)")
    version = (metadata.api_version.major_version, metadata.api_version.minor_version)
    if version[0] != c_api.API_MAJOR or not 1 <= version[1] <= c_api.API_MINOR:
        host = "Host (canonical host)" if platform == "cpu" else platform
        raise JaxRuntimeError(
            f"INVALID_ARGUMENT: XLA FFI handler registration for {name} on platform {host} "
            f"failed because the handler's API version ({version[0]}.{version[1]}) is "
            f"incompatible with the framework's API version ({c_api.API_MAJOR}."
            f"{c_api.API_MINOR}). Minimum supported API version is (0.1).")


def _platform(platform: str) -> str:
    platform = platform.lower()
    return "cpu" if platform in CPU_PLATFORMS else platform


def register(name: str, fn: Any, platform: str = "cpu", api_version: int = 1) -> FfiTarget:
    """Register (or replace) the handler bundle of target `name` on `platform`."""
    bundle = fn if isinstance(fn, dict) else {"execute": fn}
    unknown = sorted(set(bundle) - set(c_api.STAGES))
    if unknown:
        raise ValueError(f"Unknown FFI handler stage(s) {unknown} for target {name!r}; the "
                         f"stages are {list(c_api.STAGES)}")
    if "execute" not in bundle:
        raise ValueError(f"The FFI handler bundle of {name!r} needs an 'execute' handler")
    if api_version not in (0, 1):
        raise ValueError(f"Unsupported custom call API version {api_version} for target "
                         f"{name!r}: 1 (typed FFI) or 0 (the earlier custom calls)")
    key = (_platform(platform), name)
    if key[0] in ("cpu", *GPU_PLATFORMS) and api_version == 1:
        _check_metadata(name, key[0], function_address(bundle["execute"]))
    with _LOCK:
        target = _TARGETS.get(key)
        if target is None:
            target = _TARGETS[key] = FfiTarget(name, key[0], api_version)
        target.api_version = api_version
        for i, stage in enumerate(c_api.STAGES):
            target.slots[i] = function_address(bundle[stage]) if stage in bundle else None
    return target


def is_registered(name: str, platform: str = "cpu") -> bool:
    return (_platform(platform), name) in _TARGETS


def registered_anywhere(name: str) -> bool:
    """Whether `name` has a handler on some platform (what lowering checks: the backend
    that compiles the call looks for its own platform's)."""
    return any(registered == name for _platform_name, registered in _TARGETS)


def lookup(name: str, platform: str = "cpu") -> FfiTarget:
    """The target registered as `name`; JAX's JaxRuntimeError when there is none."""
    target = _TARGETS.get((_platform(platform), name))
    if target is None:
        host = "Host (canonical host)" if _platform(platform) == "cpu" else platform
        raise JaxRuntimeError(
            f"NOT_FOUND: No FFI handler registered for {name} on a platform {host}\n"
            "(register one with jax.ffi.register_ffi_target(name, handler, platform=...))")
    return target
