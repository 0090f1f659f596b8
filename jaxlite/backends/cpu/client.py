"""The cpu backend's client: the pass pipeline, code generation, LLVM, and the caches of
compiled code (mirrors PJRT's CPU client and XLA's CpuCompiler).

`compile` optimizes the module (the shared pipeline), then looks for its object code in the
process's memory cache and in the persistent cache (`jax_compilation_cache_dir`); only on a
miss does it generate LLVM IR and run LLVM. `stats` counts what happened, for tests and
reports.
"""
from __future__ import annotations

import collections

import llvmlite.binding as llvm
import numpy as np

from jaxlite.backends.base import Client, CompileOptions, Device
from jaxlite.backends.cpu import compile_cache, disk_cache, llvm_target
from jaxlite.backends.cpu.buffer import CpuBuffer, CpuDevice
from jaxlite.backends.cpu.codegen.custom_call import install_custom_calls
from jaxlite.backends.cpu.codegen.module import ENTRY, emit_module, module_info
from jaxlite.backends.cpu.executable import CpuExecutable
from jaxlite.backends.cpu.native import compile_objects, load_objects
from jaxlite.config import config
from jaxlite.xla.ir import HloModule
from jaxlite.xla.pipeline import optimize
from jaxlite.xla.text import print_module

__all__ = ["CpuClient", "make_client", "OBJECT_CACHE"]

# Object code compiled in this process, by cache key (shared by every client).
OBJECT_CACHE = compile_cache.MemoryCache()


class CpuClient(Client):
    """The LLVM CPU backend (platform "cpu")."""

    def __init__(self, platform: str = "cpu") -> None:
        self.platform = platform
        cpu, _ = llvm_target.host_cpu()
        version = ".".join(map(str, llvm.llvm_version_info))
        self.platform_version = f"jaxlite LLVM {version} for {cpu} (numpy {np.__version__})"
        self._devices = [CpuDevice(self, 0)]
        self.stats: collections.Counter[str] = collections.Counter()

    def devices(self) -> list[Device]:
        return list(self._devices)

    def buffer_from_numpy(self, array: np.ndarray, device: Device | None = None) -> CpuBuffer:
        if device is not None and device not in self._devices:
            raise ValueError(f"buffer_from_numpy: {device!r} does not belong to the "
                             f"{self.platform} backend; its devices are {self._devices}.")
        return CpuBuffer(np.asarray(array), self._devices[0])

    def compile(self, module: HloModule, options: CompileOptions) -> CpuExecutable:
        num_params = len(module.entry.parameters)
        bad = [i for i in options.donated_parameters if not 0 <= i < num_params]
        if bad:
            raise ValueError(f"compile: donated parameters {bad} of {module.name} are out of "
                             f"range; the entry has {num_params} parameters.")
        optimized = optimize(module, options)
        install_custom_calls(optimized)  # their symbols must exist before linking
        # Results may be returned in donated parameters' memory (`jit` deletes a donated
        # Array and hands the executable memory nobody else reads).
        donated = tuple(sorted(set(options.donated_parameters)))
        # The most threads a kernel with scratch memory (a GEMM) may use in this executable.
        threads = config.read("jaxlite_cpu_threads")
        key = compile_cache.cache_key(print_module(optimized), (donated, threads))
        ir_texts, info, payload = None, None, self._cached_objects(key)
        if payload is None:
            ir_texts, info = emit_module(optimized, donated, threads)
            ir_texts[0] += compile_cache.key_global(key)
            payload = compile_cache.pack_objects(compile_objects(ir_texts))
            self.stats["llvm_compiles"] += 1
            self._store_objects(key, payload)
        OBJECT_CACHE.put(key, payload)
        if info is None:
            info = module_info(optimized, donated, threads)
        objects = compile_cache.unpack_objects(payload)
        assert objects is not None
        native = load_objects(objects, ENTRY)
        key_address = native.engine.get_global_value_address(compile_cache.KEY_SYMBOL)
        if not compile_cache.linked_key_matches(key_address, key):
            raise RuntimeError(f"compile: the object code linked for {module.name} was "
                               "compiled for another program; please report this.")
        return CpuExecutable(self, self._devices[0], module, optimized, options, info, native,
                             ir_texts, threads)

    def _cached_objects(self, key: bytes) -> bytes | None:
        """The object code compiled for `key` earlier in this process or found valid in
        the persistent cache, or None."""
        payload = OBJECT_CACHE.get(key)
        if payload is not None:
            self.stats["memory_hits"] += 1
            return payload
        folder = config.read("jax_compilation_cache_dir")
        if not folder or not disk_cache.folder_status(folder)[0]:
            return None
        payload = disk_cache.read_entry(
            folder, key, lambda data: compile_cache.payload_problem(data, key))
        if payload is not None:
            self.stats["disk_hits"] += 1
        return payload

    def _store_objects(self, key: bytes, payload: bytes) -> None:
        folder = config.read("jax_compilation_cache_dir")
        if folder and disk_cache.folder_status(folder)[1]:
            disk_cache.write_entry(folder, key, payload)


def make_client() -> CpuClient:
    """The factory the registry calls (lazily, once)."""
    return CpuClient()
