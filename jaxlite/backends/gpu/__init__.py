"""The gpu backend (issue 16): fusions become GPU kernels, launched through CuPy.

Platform "gpu" (devices `CudaDevice(id=0)`, or `RocmDevice` on AMD): registered with every
registry above the cpu backend (`PRIORITY`), so `jit` runs on the GPU by default where it
starts, as JAX prefers a GPU; `JAXLITE_PLATFORMS=gpu` asks for it alone. It starts only
when CuPy imports and sees a device; elsewhere the registry records why (see
`jaxlite.backends.registry.backend_errors()`) and the cpu backend takes over. Importing
this package is cheap: CuPy and the compiler load when the client starts.

Platform "gpu-interpreter": the same compiler and executables with the numpy kernel
interpreter as launcher, registered only by `register_interpreter(registry)` (the gpu
tests' conftest does) at a priority below the interpreter's, so it is never a default.

The pieces:
- `kernel_ir`: a typed IR of one kernel (threads, blocks, shared memory, barriers, warp
  shuffles, vector accesses, atomics); `kernel_interpreter` runs it in numpy, phase by
  phase between barriers, checking races and divergence;
- `render` (+ `render_header`): CUDA C and HIP C from one source;
- `build`: the kernels of each fusion of an optimized module, by `fusion_kernels` (loop
  fusions), `transpose_kernels` (transposed reads through shared-memory tiles) and
  `reduction_kernels` (row kernels, two-stage trees), multi-output fusions and nested
  reductions in pieces (`fusion_split`), on `hlo_elemental` (fused instructions at an
  index; `hlo_indexing` for gathers, dynamic slices and updates, total-order compares)
  and `index_math`;
- kernels of single instructions: `update_kernels` (dynamic-update-slice and scatter in
  place, with atomics or compare-and-swap loops; gather and dynamic-slice as loop
  kernels), `sort_kernels` (bitonic sort per row, or CuPy's sort), `convolution` (im2col
  and a GEMM);
- `reference_run`: a fusion's kernels run by the interpreter on numpy arrays;
- the backend: `client`, `executable`, `buffer`, `program` (the module's computations
  walked in schedule order), `ownership` (which values may be written in place, which
  results may take a donated argument's memory), `device_ops` (dots and layout changes
  with `xp`), `dot_epilogue` (output fusions split into a dot or convolution and a
  loop-fusion epilogue), `gemm_kernels` (a tiled GEMM for small dots), `library_calls`
  (linear algebra and FFT custom calls through cuSOLVER / cuBLAS / cuFFT via CuPy),
  `ffi_calls` (typed FFI handlers for CUDA / ROCm on device buffers and the stream),
  `host_fallback` (the HLO evaluator for what has no kernel), `launchers` (CuPy, or the
  kernel interpreter) and `kernel_cache` (compiled modules in the persistent cache).

Eager mode on the GPU (`jaxlite.runtime.device_eager`): Arrays put on the gpu device hold
device memory (`runtime.device_values.DeviceValue`); eager primitives with a rule over
`xp` run there with CuPy (`runtime.device_rules`), the others on host copies, one
transfer each way; a `jit` call for this backend takes such Arrays' memory as it is and
leaves its results on the device. Under the kernel interpreter memory is the host's.
"""
from __future__ import annotations

import importlib
from typing import Any

PLATFORM = "gpu"
INTERPRETER_PLATFORM = "gpu-interpreter"
# Above the cpu backend (100): a GPU that starts is the default, as in JAX; below plugins.
PRIORITY = 200
# Below the HLO interpreter (0): only chosen by name.
INTERPRETER_PRIORITY = -10

__all__ = ["INTERPRETER_PLATFORM", "PLATFORM", "PRIORITY", "make_client",
           "make_interpreter_client", "register", "register_interpreter"]


def make_client() -> Any:
    """Start the backend on CuPy's device 0 (`RuntimeError` with the reason otherwise)."""
    return importlib.import_module("jaxlite.backends.gpu.client").make_client()


def make_interpreter_client() -> Any:
    """The gpu backend with kernels run by the numpy kernel interpreter."""
    return importlib.import_module("jaxlite.backends.gpu.client").make_interpreter_client()


def register(registry: Any) -> None:
    """Register "gpu" in `registry` (a `BackendRegistry`), unless it already is."""
    if PLATFORM not in registry.registered():
        registry.register(PLATFORM, make_client, priority=PRIORITY)


def register_interpreter(registry: Any) -> None:
    """Register "gpu-interpreter" in `registry`, unless it already is."""
    if INTERPRETER_PLATFORM not in registry.registered():
        registry.register(INTERPRETER_PLATFORM, make_interpreter_client,
                          priority=INTERPRETER_PRIORITY)
