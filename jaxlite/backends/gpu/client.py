"""The gpu backend's client: one device, buffers in the launcher's array module, and
compilation = the pass pipeline, then a `Program` whose fusions become kernels (mirrors
PJRT's GPU client, StreamExecutor-free: CuPy does the driver work).

`make_client()` starts it on CuPy's device 0 (raises `RuntimeError` with the reason where
CuPy is absent or sees no GPU); `make_interpreter_client()` runs the same compiler with
the numpy kernel interpreter as its launcher, for machines without a GPU (tests).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.backends.base import Client, CompileOptions, Device
from jaxlite.backends.gpu.buffer import GpuBuffer, GpuDevice
from jaxlite.backends.gpu.executable import GpuExecutable
from jaxlite.backends.gpu.launchers import InterpreterLauncher, start_cupy
from jaxlite.backends.gpu.program import Program
from jaxlite.xla.ir import HloModule
from jaxlite.xla.pipeline import optimize

__all__ = ["GpuClient", "make_client", "make_interpreter_client"]


class GpuClient(Client):
    """The gpu backend (platform "gpu"; "gpu-interpreter" with the interpreter launcher).

    Parameters
    ----------
    launcher : a `CupyLauncher` or an `InterpreterLauncher`.
    platform : the name the registry knows it by.
    """

    def __init__(self, launcher: object, platform: str = "gpu") -> None:
        self.platform = platform
        self.launcher = launcher
        self.platform_version = launcher.describe()  # type: ignore[attr-defined]
        vendor = "rocm" if launcher.dialect == "hip" else "cuda"  # type: ignore[attr-defined]
        kind = launcher.device_kind()  # type: ignore[attr-defined]
        self._devices = [GpuDevice(self, 0, vendor, kind)]

    def devices(self) -> list[Device]:
        return list(self._devices)

    def buffer_from_numpy(self, array: np.ndarray, device: Device | None = None) -> GpuBuffer:
        if device is not None and device not in self._devices:
            raise ValueError(f"buffer_from_numpy: {device!r} does not belong to the "
                             f"{self.platform} backend; its devices are {self._devices}.")
        array = np.asarray(array)
        with self.launcher.scope():  # type: ignore[attr-defined]
            stored = self.launcher.to_device(array)  # type: ignore[attr-defined]
        return GpuBuffer(stored, array.dtype, self._devices[0], self.launcher)

    def buffer_from_device(self, array: object, dtype: np.dtype) -> GpuBuffer:
        """A buffer over an array already in this device's memory (an eager result): no
        transfer; it may share memory, so a program given it to donate writes a copy. A
        view starting off a 16-byte boundary (an eager slice `x[1:]`) is copied: kernels
        read their operands with vector loads of up to 16 bytes, which a GPU refuses at
        a misaligned address."""
        launcher: Any = self.launcher
        array = launcher.xp.ascontiguousarray(array)
        if launcher.pointer(array) % launcher.build_options.vector_bytes:
            with launcher.scope():  # (on the stream the program's kernels will read it on)
                array = launcher.xp.copy(array)  # fresh memory from the pool is aligned
        return GpuBuffer(array, dtype, self._devices[0], self.launcher, owns_memory=False)

    def compile(self, module: HloModule, options: CompileOptions) -> GpuExecutable:
        num_params = len(module.entry.parameters)
        bad = [i for i in options.donated_parameters if not 0 <= i < num_params]
        if bad:
            raise ValueError(f"compile: donated parameters {bad} of {module.name} are out of "
                             f"range; the entry has {num_params} parameters.")
        optimized = optimize(module, options)
        program = Program(optimized, self.launcher,
                          frozenset(options.donated_parameters))
        return GpuExecutable(self, self._devices[0], module, optimized, options, program)


def make_client() -> GpuClient:
    """The registry's factory for "gpu": CuPy's device 0, or `RuntimeError` saying why not."""
    return GpuClient(start_cupy(0), "gpu")


def make_interpreter_client() -> GpuClient:
    """The registry's factory for "gpu-interpreter": the gpu compiler, kernels run by the
    numpy kernel interpreter (slow; for tests on machines without a GPU)."""
    return GpuClient(InterpreterLauncher(), "gpu-interpreter")
