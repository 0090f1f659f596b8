"""The cpu backend's client: the pass pipeline, code generation, LLVM, and the caches of
compiled code (mirrors PJRT's CPU client and XLA's CpuCompiler).

`compile` first looks the lowered module up in the persistent cache (on by default, in a
per-user folder; see `disk_cache.cache_folder`): a hit skips the HLO passes and LLVM. Otherwise it
optimizes the module (the shared pipeline), looks for its object code in the process's
memory cache, and only on a miss generates LLVM IR and runs LLVM; the program is then stored
in the persistent cache. A module with `num_partitions = N > 1` (an SPMD program) is compiled
once, its kernels for `jaxlite_cpu_threads // N` threads, into an executable that runs it
once per partition (`spmd_executable`). `stats` counts what happened (optimizations, llvm_compiles,
memory_hits, disk_hits), for tests and reports.
"""
from __future__ import annotations

import collections
import logging

import llvmlite.binding as llvm
import numpy as np

from jaxlite.backends.base import Client, CompileOptions, Device
from jaxlite.backends import processes
from jaxlite.backends.cpu import compile_cache, disk_cache, llvm_target
from jaxlite.backends.cpu.buffer import CpuBuffer, CpuDevice
from jaxlite.backends.cpu.codegen.custom_call import install_custom_calls
from jaxlite.backends.cpu.codegen.module import ENTRY, ModuleInfo, emit_module, module_info
from jaxlite.backends.cpu.dumps import write_program_dumps
from jaxlite.backends.cpu.executable import CpuExecutable
from jaxlite.backends.cpu.native import compile_objects, install_runtime, load_objects
from jaxlite.backends.cpu.spmd_executable import SpmdCpuExecutable, partition_threads
from jaxlite.config import config
from jaxlite.config import start_cpu_devices as config_start_cpu_devices
from jaxlite.xla.compile_progress import phase
from jaxlite.xla.ir import HloModule
from jaxlite.xla.pipeline import dump_folder, optimize
from jaxlite.xla.text import print_module

__all__ = ["CpuClient", "make_client", "OBJECT_CACHE"]

logger = logging.getLogger("jaxlite")

# The custom-call target of host callbacks (`jaxlite.lax.callbacks`).
_HOST_CALLBACK = 'custom_call_target="jaxlite_host_callback"'

# The span of device ids each process of a multi-process run owns (JAX's CPU client's).
_IDS_PER_PROCESS = 2048

# Object code compiled in this process, by cache key (shared by every client).
OBJECT_CACHE = compile_cache.MemoryCache()


class CpuClient(Client):
    """The LLVM CPU backend (platform "cpu")."""

    def __init__(self, platform: str = "cpu") -> None:
        self.platform = platform
        cpu, _ = llvm_target.host_cpu()
        version = ".".join(map(str, llvm.llvm_version_info))
        self.platform_version = f"jaxlite LLVM {version} for {cpu} (numpy {np.__version__})"
        # N devices in each process (jax_num_cpu_devices / XLA_FLAGS' forced host device
        # count), all in host memory: an array's shards are numpy blocks, one per device.
        # In a run of several processes (jaxlite.distributed), process p owns the ids
        # p * 2048 + k, k < N, as JAX 0.10.2's CPU client numbers them.
        group, count = processes.current(), config_start_cpu_devices()
        self._all_devices = [CpuDevice(self, p * _IDS_PER_PROCESS + k, p)
                             for p in range(group.count) for k in range(count)]
        self._devices = self._all_devices[group.index * count:(group.index + 1) * count]
        self.stats: collections.Counter[str] = collections.Counter()
        # What every first compile needs, done at start-up (as PJRT's client starts its
        # runtime): the runtime's object code linked, the compiler's digest for cache keys.
        install_runtime()
        if disk_cache.cache_folder() is not None:
            compile_cache.codegen_fingerprint()

    def devices(self) -> list[Device]:
        return list(self._all_devices)

    def local_devices(self) -> list[Device]:
        return list(self._devices)

    def buffer_from_numpy(self, array: np.ndarray, device: Device | None = None) -> CpuBuffer:
        # Another process's device is accepted too: a placed array keeps every device's
        # block in host memory (each process computes the global values).
        if device is not None and device not in self._all_devices:
            raise ValueError(f"buffer_from_numpy: {device!r} does not belong to the "
                             f"{self.platform} backend; its devices are {self._all_devices}.")
        return CpuBuffer(np.asarray(array), self._devices[0] if device is None else device)

    def compile(self, module: HloModule, options: CompileOptions) -> CpuExecutable:
        num_params = len(module.entry.parameters)
        bad = [i for i in options.donated_parameters if not 0 <= i < num_params]
        if bad:
            raise ValueError(f"compile: donated parameters {bad} of {module.name} are out of "
                             f"range; the entry has {num_params} parameters.")
        # Results may be returned in donated parameters' memory (`jit` deletes a donated
        # Array and hands the executable memory nobody else reads).
        donated = tuple(sorted(set(options.donated_parameters)))
        # The most threads a kernel with scratch memory (a GEMM) may use in this executable;
        # an SPMD program's partitions run at once, and share them.
        partitions = module.num_partitions
        threads = partition_threads(config.read("jaxlite_cpu_threads"), partitions)
        # (A key part only where it is not 1: the keys of other programs stay as they were.)
        spmd_key = (("partitions", partitions),) if partitions > 1 else ()
        folder = disk_cache.cache_folder() if not _dumping(options) else None
        entry_key = None
        lowered_text = print_module(module) if folder is not None else ""
        # A host callback's module names the callback by a key unique to this process: such
        # a program is never found again, so it is not stored.
        if folder is not None and _HOST_CALLBACK not in lowered_text:
            entry_key = compile_cache.cache_key(lowered_text,
                                                ("lowered", donated, threads, options.verify,
                                                 *spmd_key),
                                                keep_name=True)
            hit = self._cached_program(folder, entry_key, module.name)
            if hit is not None:
                optimized, info, code_key, objects = hit
                install_custom_calls(optimized)
                return self._load(module, optimized, options, info, objects, code_key,
                                  None, threads)
        with phase("HLO passes", module.name):
            optimized = optimize(module, options)
        self.stats["optimizations"] += 1
        install_custom_calls(optimized)  # their symbols must exist before linking
        # Metadata does not change the code: the same program traced from other lines shares it.
        key = compile_cache.cache_key(print_module(optimized, metadata=False),
                                      (donated, threads, *spmd_key))
        ir_texts, info, payload = None, None, OBJECT_CACHE.get(key)
        if payload is not None:
            self.stats["memory_hits"] += 1
        else:
            with phase("LLVM IR emission", module.name):
                ir_texts, info = emit_module(optimized, donated, threads)
            ir_texts[0] += compile_cache.key_global(key)
            with phase("LLVM compilation", module.name):
                payload = compile_cache.pack_objects(compile_objects(ir_texts))
            self.stats["llvm_compiles"] += 1
        OBJECT_CACHE.put(key, payload)
        if info is None:
            info = module_info(optimized, donated, threads)
        objects = compile_cache.unpack_objects(payload)
        assert objects is not None
        if entry_key is not None:
            self._store_program(folder, entry_key, key, optimized, info, objects)
        dump_to = dump_folder(options)
        if dump_to:
            with phase("writing dumps", module.name):
                if ir_texts is None:  # the object code came from the memory cache
                    ir_texts, info = emit_module(optimized, donated, threads)
                write_program_dumps(dump_to, module.name, optimized, info, ir_texts)
        with phase("linking", module.name):
            return self._load(module, optimized, options, info, objects, key, ir_texts,
                              threads)

    def _load(self, module: HloModule, optimized: HloModule, options: CompileOptions,
              info: ModuleInfo, objects: list[bytes], key: bytes,
              ir_texts: list[str] | None, threads: int) -> CpuExecutable:
        """Link the object code and wrap it as an executable, once it is seen to carry
        `key`."""
        native = load_objects(objects, ENTRY)
        key_address = native.engine.get_global_value_address(compile_cache.KEY_SYMBOL)
        if not compile_cache.linked_key_matches(key_address, key):
            raise RuntimeError(f"compile: the object code linked for {module.name} was "
                               "compiled for another program; please report this.")
        kind = SpmdCpuExecutable if optimized.num_partitions > 1 else CpuExecutable
        return kind(self, self._devices[0], module, optimized, options, info, native,
                    ir_texts, threads)

    def _cached_program(self, folder: str, key: bytes, name: str
                        ) -> tuple[HloModule, ModuleInfo, bytes, list[bytes]] | None:
        """(optimized module, its ModuleInfo, code key, object files) of the lowered module
        with `key`, from a valid entry of the persistent cache, or None."""
        if not disk_cache.folder_status(folder)[0]:
            return None
        found: list[tuple[HloModule, ModuleInfo, bytes, list[bytes]]] = []

        def check(payload: bytes) -> str:
            problem = compile_cache.entry_problem(payload, key)
            if problem:
                return problem
            _, code_key, blob, objects = compile_cache.unpack_entry(payload)  # type: ignore[misc]
            try:
                optimized, info = compile_cache.load_program(blob)  # type: ignore[misc]
            except Exception as error:  # a blob from an older jaxlite, or damaged
                return f"its program cannot be read ({type(error).__name__}: {error})"
            if not isinstance(optimized, HloModule) or not isinstance(info, ModuleInfo):
                return "its program is not a compiled module"
            found.append((optimized, info, code_key, objects))
            return ""

        if disk_cache.read_entry(folder, key, check) is None:
            return None
        self.stats["disk_hits"] += 1
        level = logging.WARNING if config.read("jax_log_compiles") else logging.DEBUG
        logger.log(level, "Persistent compilation cache hit for '%s' (%s)", name,
                   disk_cache.entry_path(folder, key))
        return found[0]

    def _store_program(self, folder: str, key: bytes, code_key: bytes, optimized: HloModule,
                       info: ModuleInfo, objects: list[bytes]) -> None:
        if not disk_cache.folder_status(folder)[1]:
            return
        payload = compile_cache.pack_entry(key, code_key, (optimized, info), objects)
        if payload is not None:
            disk_cache.write_entry(folder, key, payload)


def _dumping(options: CompileOptions) -> bool:
    """Whether the compiler writes dumps (then it runs, cache or not)."""
    return dump_folder(options) is not None


def make_client() -> CpuClient:
    """The factory the registry calls (lazily, once)."""
    return CpuClient()
