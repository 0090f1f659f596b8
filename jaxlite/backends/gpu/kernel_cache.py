"""Compiled GPU modules in jaxlite's persistent compilation cache (the folder of
`jax_compilation_cache_dir`, shared with the cpu backend's object code), by source hash.

`load_module(cupy, device_id, source, options, scratch)` returns a `cupy.RawModule`
holding every kernel of `source`:
- the entry's key is the SHA-256 of the source, the NVRTC options and what the binary
  depends on besides (jaxlite's and CuPy's versions, NVRTC's version, the device's
  compute capability), so a new toolkit or another GPU makes a new entry;
- a hit is loaded from its bytes (`RawModule(path=...)` on a private copy in `scratch`),
  with no NVRTC run;
- a miss is compiled by NVRTC to a cubin for the device's architecture (PTX where NVRTC
  gives no cubin), stored, then loaded the same way.
The files are the cpu backend's entries (`backends/cpu/disk_cache`: private folder, no
symlinks, checksummed header, atomic writes); the payload starts with its kind ("cubin"
or "ptx") and is checked before loading.

Where any of this fails (no cache folder, an NVRTC binding CuPy lacks, an architecture
this NVRTC does not know), the module comes from `RawModule(code=...)` as before, which
CuPy compiles and keeps in its own cache (~/.cupy/kernel_cache). HIP modules always take
that path: hiprtc's code objects are not stored here. CuPy adds `-ftz=true` to what it
compiles there, so such modules flush float32 subnormals to zero; the modules compiled
here keep them, as XLA's GPU backend does by default (hence the warning).

NVRTC has no system headers: the folder of cuda_fp16.h and cuda_bf16.h is passed with
-I, found as CuPy finds it (`_header_folders`).
"""
from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
from typing import Any

from jaxlite.backends.cpu import disk_cache
from jaxlite.version import __version__

__all__ = ["compile_payload", "load_module", "module_key"]

logger = logging.getLogger("jaxlite")

_KINDS = {b"cubin": ".cubin", b"ptx": ".ptx"}


def _architecture(cupy: Any, device_id: int) -> str:
    return str(cupy.cuda.Device(device_id).compute_capability)


def module_key(cupy: Any, device_id: int, source: str, options: tuple[str, ...]) -> bytes:
    """The 32-byte cache key of `source` compiled with `options` for this device."""
    identity = {"kind": "jaxlite-gpu-module", "jaxlite": __version__,
                "cupy": str(cupy.__version__), "nvrtc": list(cupy.cuda.nvrtc.getVersion()),
                "arch": _architecture(cupy, device_id), "options": list(options)}
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode())
    digest.update(source.encode())
    return digest.digest()


def _check(payload: bytes) -> str:
    """What is wrong with a stored payload ("" when it is a cubin or PTX record)."""
    kind, _, binary = payload.partition(b"\n")
    if kind not in _KINDS or not binary:
        return "not a jaxlite gpu module (unknown kind or empty)"
    if kind == b"cubin" and not binary.startswith(b"\x7fELF"):
        return "its cubin is not an ELF file"
    return ""


def _header_folders(cupy: Any) -> list[str]:
    """Folders that may hold cuda_fp16.h and cuda_bf16.h, which NVRTC does not carry, in
    the order CuPy trusts them: the toolkit CuPy uses, else the CUDA runtime wheel that
    cuda-pathfinder finds (pip's cupy-cuda12x knows no toolkit folder: its NVRTC and
    headers are separate wheels), else CUDA_PATH / CUDA_HOME."""
    get_path = getattr(cupy.cuda, "get_cuda_path", None)
    roots = [get_path() if get_path is not None else None]
    folders = [os.path.join(root, "include") for root in roots if root]
    try:
        found = importlib.import_module("cuda.pathfinder").find_nvidia_header_directory(
            "cudart")
    except Exception:  # noqa: BLE001 - no pathfinder, or it fails: the next folder
        found = None
    if found:
        folders.append(str(getattr(found, "abs_path", found)))
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME")]
    return folders + [os.path.join(root, "include") for root in roots if root]


def _include_options(cupy: Any) -> tuple[str, ...]:
    """NVRTC's -I option for the 16-bit float headers; none where no folder has them
    (NVRTC then fails to open cuda_fp16.h, and CuPy's own compilation is tried: install
    nvidia-cuda-runtime-cu12, or set CUDA_PATH to a CUDA toolkit)."""
    for folder in _header_folders(cupy):
        if os.path.isfile(os.path.join(folder, "cuda_fp16.h")):
            return (f"-I{folder}",)
    return ()


def compile_payload(cupy: Any, source: str, options: tuple[str, ...], arch: str) -> bytes:
    """NVRTC's cubin (else PTX) of `source` for `sm_<arch>`, as a payload record: what a
    cache miss runs (`arch` as CuPy spells compute capabilities, "90" for sm_90)."""
    nvrtc = cupy.cuda.nvrtc
    program = nvrtc.createProgram(source, "jaxlite_kernels.cu", (), ())
    try:
        try:
            nvrtc.compileProgram(program, (*options, *_include_options(cupy),
                                           f"-arch=sm_{arch}"))
        except nvrtc.NVRTCError as error:
            raise RuntimeError(f"NVRTC: {error}\n{nvrtc.getProgramLog(program)}") from error
        try:
            return b"cubin\n" + bytes(nvrtc.getCUBIN(program))
        except (AttributeError, nvrtc.NVRTCError):
            ptx = nvrtc.getPTX(program)
            return b"ptx\n" + (ptx.encode() if isinstance(ptx, str) else bytes(ptx))
    finally:
        nvrtc.destroyProgram(program)


def _load(cupy: Any, payload: bytes, scratch: str, key: bytes) -> Any:
    kind, _, binary = payload.partition(b"\n")
    path = os.path.join(scratch, key.hex() + _KINDS[kind])
    with open(path, "wb") as out:  # (scratch is the launcher's private folder)
        out.write(binary)
    return cupy.RawModule(path=path)


def load_module(cupy: Any, device_id: int, source: str, options: tuple[str, ...],
                scratch: str) -> Any:
    """`source`'s module: from the persistent cache, else compiled and stored there (see
    the module docstring); `scratch` is a private folder for the binaries loaded."""
    folder = disk_cache.cache_folder()
    try:
        key = module_key(cupy, device_id, source, options)
        readable, writable = disk_cache.folder_status(folder) if folder else (False, False)
        payload = disk_cache.read_entry(folder, key, _check) if readable else None
        if payload is None:
            payload = compile_payload(cupy, source, options, _architecture(cupy, device_id))
            if writable:
                disk_cache.write_entry(folder, key, payload)
        return _load(cupy, payload, scratch, key)
    except (AttributeError, TypeError, OSError, RuntimeError) as error:
        logger.warning("jaxlite: gpu module not compiled by jaxlite (%s: %s); CuPy "
                       "compiles it, flushing float32 subnormals to zero",
                       type(error).__name__, error)
        return cupy.RawModule(code=source, options=options)
