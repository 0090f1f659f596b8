"""Launchers: how the gpu backend's executables run kernels and hold memory.

A launcher owns an array module `xp` and the stream work goes on. The executable asks it
to `prepare_all` its fusions' kernels once (at compile time), then to `launch` each
fusion's on flat arrays named as the kernels' buffers, and uses `xp` for everything
between kernels.

- `CupyLauncher`: a program's kernels rendered as one CUDA (or HIP) source, compiled by
  NVRTC (hiprtc) in one run, modules cached in memory by the source's hash and, for
  CUDA, in jaxlite's persistent compilation cache (`kernel_cache`: a second process
  loads the cubin without compiling; HIP through `cupy.RawModule`'s own disk cache); memory from CuPy's pool; every kernel and every `xp`
  operation of a call enqueued on one non-blocking stream with no host synchronization
  between them (`scope`); an event recorded after each call is what buffers wait on.
- `InterpreterLauncher`: the kernels run by `kernel_interpreter` on numpy arrays, thread
  by thread, with its checks for races and undefined behaviour. Slow; what CI runs.

CuPy has no bfloat16: on CuPy, bfloat16 arrays are stored as their uint16 bits (kernels
take raw pointers, and layout changes only move elements); `to_host` views them back.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import shutil
import tempfile
import weakref
from typing import Any, Iterator

import ml_dtypes
import numpy as np

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import BuildOptions, FusionKernels
from jaxlite.backends.gpu.kernel_cache import load_module
from jaxlite.backends.gpu.kernel_interpreter import run_kernel
from jaxlite.backends.gpu.render import render_many

__all__ = ["CupyLauncher", "InterpreterLauncher", "INTERPRETER_OPTIONS"]

# Small launches, so that the interpreter's thread-by-thread runs stay quick and loops
# still go round.
INTERPRETER_OPTIONS = BuildOptions(block=64, row_block=64, max_blocks=4)
_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_OPTIONS = ("-std=c++17",)  # NVRTC's / hiprtc's


def _scalar_parameters(kernels: FusionKernels) -> list[str]:
    return [p.name for k in kernels.kernels for p in k.params if isinstance(p, ir.Var)]


class InterpreterLauncher:
    """Kernels run by the numpy kernel interpreter; memory is numpy arrays."""

    name = "interpreter"
    dialect = "cuda"  # the interpreter keeps CUDA's 32-lane warps
    ffi_platform = None  # host memory: no CUDA handler may run on it (see `ffi_calls`)

    def __init__(self, options: BuildOptions = INTERPRETER_OPTIONS) -> None:
        self.xp = np
        self.build_options = options

    def describe(self) -> str:
        return f"jaxlite gpu kernels in the numpy kernel interpreter (numpy {np.__version__})"

    def device_kind(self) -> str:
        return "kernel interpreter (numpy)"

    def prepare_all(self, fusions: list[FusionKernels]) -> list[FusionKernels]:
        """The fusions' kernels as they are: the interpreter runs the IR."""
        for kernels in fusions:
            if _scalar_parameters(kernels):
                raise TypeError(f"{kernels.name}: kernels with scalar parameters need a "
                                "launcher that passes them")
        return list(fusions)

    def launch(self, prepared: FusionKernels, memory: dict[str, Any]) -> None:
        for kernel in prepared.kernels:
            run_kernel(kernel, {b.name: memory[b.name] for b in kernel.buffers})

    def to_device(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, order="C")

    def to_host(self, array: Any, dtype: np.dtype) -> np.ndarray:
        return np.array(array, dtype=dtype, order="C")

    def empty(self, size: int, dtype: np.dtype) -> np.ndarray:
        return np.empty(size, dtype)

    def storage_dtype(self, dtype: np.dtype) -> np.dtype:
        return np.dtype(dtype)

    def pointer(self, array: np.ndarray) -> int:
        """The host address of an array's first element."""
        return int(array.ctypes.data)

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        yield

    def record(self) -> None:
        return None

    def event_done(self, event: Any) -> bool:
        return True

    def wait(self, event: Any) -> None:
        return None


class CupyLauncher:
    """Kernels compiled with NVRTC / hiprtc through CuPy and launched on one stream.

    Parameters
    ----------
    cupy : the imported `cupy` module.
    device_id : the CUDA (ROCm) device ordinal.
    """

    name = "cupy"

    def __init__(self, cupy: Any, device_id: int = 0) -> None:
        self.xp = cupy
        self.device_id = device_id
        hip = bool(getattr(cupy.cuda.runtime, "is_hip", False))
        self.dialect = "hip" if hip else "cuda"
        self.ffi_platform = "rocm" if hip else "cuda"  # whose FFI handlers run here
        # the device's warp: 32 on NVIDIA, 64 on CDNA (Instinct), 32 on RDNA in wave32
        properties = cupy.cuda.runtime.getDeviceProperties(device_id)
        warp = int(properties.get("warpSize", 64 if hip else 32))
        self.build_options = BuildOptions(warp_size=warp, block=256, row_block=4 * warp,
                                          max_blocks=4096)
        with cupy.cuda.Device(device_id):
            self.stream = cupy.cuda.Stream(non_blocking=True)
        self._modules: dict[str, Any] = {}
        self._scratch_folder: str | None = None

    def describe(self) -> str:
        runtime = self.xp.cuda.runtime
        return (f"jaxlite gpu kernels through CuPy {self.xp.__version__} ({self.dialect}, "
                f"runtime {runtime.runtimeGetVersion()}, driver {runtime.driverGetVersion()})")

    def device_kind(self) -> str:
        properties = self.xp.cuda.runtime.getDeviceProperties(self.device_id)
        name = properties.get("name", b"gpu")
        return name.decode() if isinstance(name, bytes) else str(name)

    def prepare_all(self, fusions: list[FusionKernels]) -> list[list[tuple[Any, Any]]]:
        """Compile (or find in the cache) one module holding every kernel of `fusions`;
        per fusion, its kernels' functions with their launch records."""
        kernels = [k for fk in fusions for k in fk.kernels]
        for fk in fusions:
            if _scalar_parameters(fk):
                raise TypeError(f"{fk.name}: kernels with scalar parameters are not "
                                "launched yet")
        if len({k.name for k in kernels}) != len(kernels):
            raise ValueError("prepare_all: two kernels of one program share a name")
        if not kernels:
            return [[] for _ in fusions]
        module = self._module(render_many(kernels, self.dialect))
        return [[(module.get_function(k.name), k) for k in fk.kernels] for fk in fusions]

    def _module(self, source: str) -> Any:
        digest = hashlib.sha256(source.encode()).hexdigest()
        module = self._modules.get(digest)
        if module is None:
            with self.xp.cuda.Device(self.device_id):
                if self.dialect == "cuda":  # through the persistent cache
                    module = load_module(self.xp, self.device_id, source, _OPTIONS,
                                         self._scratch())
                else:
                    module = self.xp.RawModule(code=source, options=_OPTIONS)
            self._modules[digest] = module
        return module

    def _scratch(self) -> str:
        """A private folder for the binaries modules are loaded from, removed with the
        launcher."""
        if self._scratch_folder is None:
            self._scratch_folder = tempfile.mkdtemp(prefix="jaxlite_gpu_")
            weakref.finalize(self, shutil.rmtree, self._scratch_folder, True)
        return self._scratch_folder

    def launch(self, prepared: list[tuple[Any, Any]], memory: dict[str, Any]) -> None:
        """Enqueue the kernels on the current stream: the executable calls this inside
        `scope`, where that is the launcher's stream."""
        for function, kernel in prepared:
            args = tuple(memory[b.name] for b in kernel.params)
            function((kernel.grid,), (kernel.block,), args)

    def stream_pointer(self) -> int:
        """The stream's `cudaStream_t` (`hipStream_t`) address, for FFI handlers."""
        return int(self.stream.ptr)

    def pointer(self, array: Any) -> int:
        """The device address of an array's first element, for FFI handlers (host memory,
        as tests' numpy stand-in for CuPy holds, gives its host address)."""
        memory = array.data
        return int(memory.ptr) if hasattr(memory, "ptr") else int(array.ctypes.data)

    def storage_dtype(self, dtype: np.dtype) -> np.dtype:
        dtype = np.dtype(dtype)
        return np.dtype(np.uint16) if dtype == _BFLOAT16 else dtype

    def to_device(self, array: np.ndarray) -> Any:
        array = np.asarray(array)
        if not array.flags.c_contiguous:  # (ascontiguousarray would make scalars 1-d)
            array = np.ascontiguousarray(array)
        if array.dtype == _BFLOAT16:
            array = array.view(np.uint16)
        with self.xp.cuda.Device(self.device_id):
            return self.xp.asarray(array)  # on the current stream: `scope` when in a call

    def to_host(self, array: Any, dtype: np.dtype) -> np.ndarray:
        host = self.xp.asnumpy(array, stream=self.stream)
        self.stream.synchronize()
        return host.view(dtype) if np.dtype(dtype) == _BFLOAT16 else host.astype(dtype)

    def empty(self, size: int, dtype: np.dtype) -> Any:
        return self.xp.empty(size, self.storage_dtype(dtype))

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        with self.xp.cuda.Device(self.device_id), self.stream:
            yield

    def record(self) -> Any:
        return self.stream.record()

    def event_done(self, event: Any) -> bool:
        return bool(event.done)

    def wait(self, event: Any) -> None:
        event.synchronize()


def start_cupy(device_id: int = 0) -> CupyLauncher:
    """A `CupyLauncher`; `ImportError` without CuPy, `RuntimeError` when it sees no GPU."""
    try:
        cupy = importlib.import_module("cupy")
    except ImportError as error:
        raise ImportError(f"cupy is not installed ({error}); install cupy-cuda12x, "
                          "cupy-cuda13x or cupy-rocm-7-0 (the 'cuda' extra)") from error
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy without a driver raises its own runtime errors
        raise RuntimeError(f"CuPy sees no GPU: {type(error).__name__}: {error}") from error
    if count <= device_id:
        raise RuntimeError(f"CuPy sees {count} GPU(s), no device {device_id}")
    return CupyLauncher(cupy, device_id)
