"""A stand-in for CuPy on numpy, so that `CupyLauncher` runs on machines without a GPU:
arrays are numpy arrays, streams and events do nothing, and `RawModule` finds each
kernel's IR by name (recorded when the launcher renders it) and runs it in the kernel
interpreter on the raw memory the launcher passes, after checking that the source
declares the kernel and that the launch matches it. bfloat16 has no CuPy dtype, so the
launcher's uint16 storage is viewed as bfloat16 here, as a kernel's pointer would be.
`cuda.nvrtc` compiles to a fake cubin (the source behind an ELF magic) that
`RawModule(path=...)` loads. `linalg` and `fft` are numpy's behind CuPy's names (cuSOLVER and cuFFT there), each call
recorded in LIBRARY_CALLS; `SCIPY_LINALG` stands for `cupyx.scipy.linalg` (tests put it
in sys.modules under that name).

Device arrays are `ndarray`, a numpy subclass that marks memory as the device's (views,
ufuncs and numpy's functions on them keep the class): `asarray` of host data and
`asnumpy` are the transfers, each recorded in TRANSFERS as (direction, elements), so
tests can count round trips through the host."""
from __future__ import annotations

import types

import numpy as np
import scipy.linalg

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.kernel_interpreter import run_kernel

__version__ = "fake"
KERNELS: dict[str, ir.Kernel] = {}  # name -> IR, filled by the test's render wrapper
LAUNCHES: list[str] = []
SOURCES: list[str] = []
LIBRARY_CALLS: list[str] = []
STREAMS: list = []
TRANSFERS: list[tuple[str, int]] = []  # ("to_device" | "to_host", number of elements)
COMPILED: list[str] = []  # sources the fake NVRTC compiled
LOADED: list[str] = []    # binaries RawModule loaded from a file
_ELF = b"\x7fELF"
SCIPY_LINALG = scipy.linalg


def __getattr__(name):  # everything else of the array API: numpy's, on device arrays
    found = getattr(np, name)
    if not callable(found) or isinstance(found, (type, np.ufunc)):
        return found  # (types; ufuncs keep the device class themselves)

    def on_device(*args, **kwargs):
        return _as_device(found(*args, **kwargs))
    return on_device


def _as_device(result):
    """numpy's results as device arrays (CuPy's functions return CuPy arrays)."""
    if isinstance(result, tuple):
        return tuple(_as_device(r) for r in result)
    if type(result) is np.ndarray:
        return result.view(ndarray)
    return result


class ndarray(np.ndarray):
    """An array in the fake device's memory."""

    def __dlpack_device__(self):
        return (2, 0)  # (kDLCUDA, device 0), as CuPy's arrays say


class _HostSide:
    """A fake device tensor as numpy's DLPack import may read it: its memory is the
    host's (the capsule numpy's export makes says so), so only the device it names is
    told differently."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, **request):
        request.pop("dl_device", None)
        return self.tensor.__dlpack__(**request)

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(array, *, device=None, copy=None):
    """DLPack import of a tensor in the fake device's memory (no transfer: it stays
    there), with CuPy's parameters."""
    if tuple(array.__dlpack_device__()) != (2, 0):
        raise BufferError("fake_cupy.from_dlpack: not a tensor on fake CUDA device 0")
    return np.from_dlpack(_HostSide(array), copy=copy).view(ndarray)


def asarray(a, dtype=None, order=None):
    """Device memory: a device array as it is (or converted on the device); host data
    copied over (a recorded transfer). (Parameters as CuPy names them: see
    test_gpu_cupy_api.)"""
    if isinstance(a, ndarray):
        return a if dtype is None else a.astype(dtype)
    host = np.asarray(a, dtype=dtype, order=order)
    TRANSFERS.append(("to_device", host.size))
    return np.array(host).view(ndarray)


def asnumpy(a, stream=None):
    TRANSFERS.append(("to_host", int(np.size(a))))
    return np.array(a)


class _Recorded:
    """A numpy submodule whose function calls are recorded as "<prefix>.<name>"."""

    def __init__(self, module, prefix: str) -> None:
        self._module, self._prefix = module, prefix

    def __getattr__(self, name: str):
        function = getattr(self._module, name)

        def recorded(*args, **kwargs):
            LIBRARY_CALLS.append(f"{self._prefix}.{name}")
            return function(*args, **kwargs)
        return recorded


linalg = _Recorded(np.linalg, "linalg")
fft = _Recorded(np.fft, "fft")


class _Context:
    def __init__(self, *args, **kwargs) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


class _Event:
    done = True

    def synchronize(self) -> None:
        return None


class _Stream(_Context):
    """A stream whose `ptr` is a made-up address, distinct per stream (what FFI handlers
    are given as their `cudaStream_t`)."""

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None) -> None:
        STREAMS.append(self)
        self.ptr = 0x5EED0000 + 0x100 * len(STREAMS)

    def record(self) -> _Event:
        return _Event()

    def synchronize(self) -> None:
        return None


class _Function:
    def __init__(self, name: str, code: str) -> None:
        self.kernel = KERNELS[name]
        assert f" {name}(" in code, f"the module's source does not declare {name}"

    def __call__(self, grid, block, args) -> None:
        kernel = self.kernel
        assert grid == (kernel.grid,) and block == (kernel.block,)
        assert len(args) == len(kernel.params)
        memory = {}
        for param, array in zip(kernel.params, args):
            assert array.ndim == 1 and array.flags.c_contiguous
            memory[param.name] = array.view(ir.dtype_of(param.dtype))
        run_kernel(kernel, memory)
        LAUNCHES.append(kernel.name)


class RawModule:
    """From `code` (a compilation, recorded in SOURCES) or from `path`, a file the fake
    NVRTC below wrote: the ELF magic and then the source."""

    def __init__(self, code: str | None = None, *, path: str | None = None,
                 options=()) -> None:
        if path is not None:
            with open(path, "rb") as binary:
                data = binary.read()
            assert data.startswith(_ELF), f"{path} is not a fake cubin"
            code = data[len(_ELF):].decode()
            LOADED.append(path)
        SOURCES.append(code)  # every module's source, compiled here or loaded
        self.code = code

    def get_function(self, name: str) -> _Function:
        return _Function(name, self.code)


class _Nvrtc:
    """NVRTC's bindings as CuPy names them (`cupy.cuda.nvrtc`): a "cubin" is the ELF magic
    followed by the source; each compilation is recorded in COMPILED."""

    class NVRTCError(RuntimeError):
        pass

    @staticmethod
    def getVersion():
        return (12, 4)

    @staticmethod
    def createProgram(src, name, headers, include_names):
        return {"source": src}

    @staticmethod
    def compileProgram(prog, options):
        assert any(o.startswith("-arch=sm_") for o in options), options
        COMPILED.append(prog["source"])

    @staticmethod
    def getCUBIN(prog):
        return _ELF + prog["source"].encode()

    @staticmethod
    def destroyProgram(prog):
        return None


_runtime = types.SimpleNamespace(
    is_hip=False, getDeviceCount=lambda: 1, runtimeGetVersion=lambda: 12040,
    driverGetVersion=lambda: 12040,
    getDeviceProperties=lambda i: {"name": b"Fake GPU (numpy)"})
class _Device(_Context):
    compute_capability = "90"

    def __init__(self, device=None) -> None:
        self.id = 0 if device is None else int(device)


cuda = types.SimpleNamespace(runtime=_runtime, Device=_Device, Stream=_Stream, nvrtc=_Nvrtc)
