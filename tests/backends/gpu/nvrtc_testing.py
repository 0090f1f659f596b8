"""NVRTC for the gpu backend tests, with no GPU: NVRTC turns source into PTX and cubin
without a device, so the compiler jaxlite runs at run time can check every rendered
kernel here.

`find_nvrtc()` gives the NVRTC functions under CuPy's names (`cupy.cuda.nvrtc`'s
createProgram, compileProgram, getPTX, getCUBIN, getProgramLog, destroyProgram,
getVersion, NVRTCError): CuPy's own binding where CuPy imports and its NVRTC loads, else
a small ctypes binding of the library of the nvidia-cuda-nvrtc wheel (CUDA 12's
nvidia/cuda_nvrtc/lib or CUDA 13's nvidia/cu13/lib) or of the system. `cuda_headers()`
is a folder holding cuda_fp16.h and cuda_bf16.h, which NVRTC does not carry.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib
import importlib.util
import os
import shutil
from types import SimpleNamespace
from typing import Any


class NVRTCError(RuntimeError):
    """An NVRTC call that did not return NVRTC_SUCCESS (the ctypes binding's)."""


class CtypesNvrtc:
    """libnvrtc through ctypes, with `cupy.cuda.nvrtc`'s function names and signatures."""

    NVRTCError = NVRTCError

    def __init__(self, path: str) -> None:
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def _check(self, status: int) -> None:
        if status != 0:
            raise NVRTCError(self.lib.nvrtcGetErrorString(status).decode() + f" ({status})")

    def getVersion(self) -> tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)))
        return major.value, minor.value

    def createProgram(self, source: str, name: str, headers, include_names) -> Any:
        if headers or include_names:
            raise NotImplementedError("the tests pass no in-memory headers")
        program = ctypes.c_void_p()
        self._check(self.lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(),
                                                name.encode(), 0, None, None))
        return program

    def compileProgram(self, program: Any, options) -> None:
        encoded = [o.encode() for o in options]
        self._check(self.lib.nvrtcCompileProgram(
            program, len(encoded), (ctypes.c_char_p * len(encoded))(*encoded)))

    def _text(self, program: Any, what: str) -> bytes:
        size = ctypes.c_size_t()
        self._check(getattr(self.lib, f"nvrtcGet{what}Size")(program, ctypes.byref(size)))
        buffer = ctypes.create_string_buffer(size.value)
        self._check(getattr(self.lib, f"nvrtcGet{what}")(program, buffer))
        return buffer.raw[:size.value]

    def getProgramLog(self, program: Any) -> str:
        return self._text(program, "ProgramLog").rstrip(b"\0").decode()

    def getPTX(self, program: Any) -> str:
        return self._text(program, "PTX").rstrip(b"\0").decode()

    def getCUBIN(self, program: Any) -> bytes:
        return self._text(program, "CUBIN")

    def destroyProgram(self, program: Any) -> None:
        self._check(self.lib.nvrtcDestroyProgram(ctypes.byref(program)))


def _wheel_folders() -> list[str]:
    """The nvidia-cuda-nvrtc / nvidia-cuda-runtime wheels' folders (CUDA 12, then 13)."""
    folders = []
    for name in ("nvidia.cuda_nvrtc", "nvidia.cuda_runtime", "nvidia.cu13"):
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            spec = None
        if spec is not None and spec.submodule_search_locations:
            folders += list(spec.submodule_search_locations)
    return folders


def _toolkit_folders() -> list[str]:
    folders = [os.environ.get(v) for v in ("CUDA_PATH", "CUDA_HOME")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        folders.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    return [f for f in folders + ["/usr/local/cuda"] if f and os.path.isdir(f)]


def _cupy_nvrtc() -> tuple[Any, str] | None:
    try:
        cupy = importlib.import_module("cupy")
        nvrtc = cupy.cuda.nvrtc
        nvrtc.getVersion()  # loads the library: fails where CuPy finds none
    except Exception:  # noqa: BLE001 - any failure means: not through CuPy
        return None
    return nvrtc, f"CuPy {cupy.__version__}'s NVRTC"


def _library_paths() -> list[str]:
    paths = []
    for folder in _wheel_folders() + _toolkit_folders():
        for sub in ("lib", "lib64"):
            paths += sorted(glob.glob(os.path.join(folder, sub, "libnvrtc.so*")))
    system = ctypes.util.find_library("nvrtc")
    return [p for p in paths if "builtins" not in p and ".alt." not in p] + (
        [system] if system else [])


def find_nvrtc() -> tuple[Any | None, str]:
    """(the NVRTC binding, what it is) or (None, why there is none)."""
    found = _cupy_nvrtc()
    if found is not None:
        return found
    for path in _library_paths():
        try:
            binding = CtypesNvrtc(path)
            return binding, f"libnvrtc {binding.getVersion()} at {path} (ctypes)"
        except (OSError, AttributeError, NVRTCError):
            continue
    return None, ("no NVRTC library: CuPy does not import or loads none, and neither the "
                  "nvidia-cuda-nvrtc wheel nor a CUDA toolkit's libnvrtc is installed")


def cuda_headers() -> str | None:
    """A folder with cuda_fp16.h and cuda_bf16.h: the CUDA runtime wheel's, else a
    toolkit's."""
    for folder in _wheel_folders() + _toolkit_folders():
        include = os.path.join(folder, "include")
        if all(os.path.isfile(os.path.join(include, h)) for h in ("cuda_fp16.h",
                                                                 "cuda_bf16.h")):
            return include
    return None


def cupy_like(nvrtc: Any, cuda_path: str | None) -> SimpleNamespace:
    """What `kernel_cache` reads of the `cupy` module to compile: `cuda.nvrtc` and
    `cuda.get_cuda_path()` (the toolkit folder whose include/ has the headers)."""
    return SimpleNamespace(cuda=SimpleNamespace(nvrtc=nvrtc,
                                                get_cuda_path=lambda: cuda_path))
