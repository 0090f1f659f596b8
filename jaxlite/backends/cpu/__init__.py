"""The cpu backend: HLO compiled to native code through LLVM (llvmlite), the counterpart of
XLA's CPU compiler and PJRT's CPU client.

Its platform is "cpu". Importing this package is cheap (llvmlite loads only when the client
starts): `make_client` is the registry's factory, `register(registry)` adds the backend to
a registry (idempotent) above the interpreter's priority (`PRIORITY`): it is the default
backend wherever llvmlite starts (elsewhere the registry records why and the interpreter
takes over). Select it explicitly with `jaxlite.config.update("jax_platforms", "cpu")` or
`jit(f, backend="cpu")`.

The pieces: `codegen/` (HLO to LLVM IR text: kernels per fusion, program functions running
the schedule), `native` (IR to object code to a callable), `runtime` (the thread pool
generated code calls), `compile_cache` (keys and object code in memory), `disk_cache` and
`object_file` (the persistent cache's files, checked before linking), `client`,
`executable`, `buffer`; `vecmath/` and `gemm*` generate the math library and matrix products.
"""
from __future__ import annotations

import importlib
from typing import Any

PLATFORM = "cpu"
# Above the interpreter (0), so that `jit` compiles to native code by default; below a GPU
# backend and plugins.
PRIORITY = 100

__all__ = ["PLATFORM", "PRIORITY", "make_client", "register", "start_profiling",
           "stop_profiling"]


def make_client() -> Any:
    """Start the backend: load llvmlite and the code generators, return a `CpuClient`."""
    return importlib.import_module("jaxlite.backends.cpu.client").make_client()


def start_profiling(sink: Any) -> None:
    """Run every executable through a timed copy, handing each run's kernel times to `sink`
    until `stop_profiling()` (a trace capture: `jaxlite.profiler`; see `instrumented`)."""
    importlib.import_module("jaxlite.backends.cpu.instrumented").start(sink)


def stop_profiling() -> None:
    """Run executables as they are again."""
    importlib.import_module("jaxlite.backends.cpu.instrumented").stop()


def register(registry: Any) -> None:
    """Register the backend in `registry` (a `BackendRegistry`), unless it already is."""
    if PLATFORM not in registry.registered():
        registry.register(PLATFORM, make_client, priority=PRIORITY)
