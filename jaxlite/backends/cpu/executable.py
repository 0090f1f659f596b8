"""The cpu backend's executable: machine code for the whole module, run by one foreign call
(mirrors PJRT's CPU `LoadedExecutable`).

`execute` hands the entry function tables of pointers (parameters, result destinations,
constants), the temporary arena and the thread count; the call releases the GIL. The only
Python work per call is checking the arguments, allocating the result arrays and wrapping
them as buffers. The arena is kept between calls and reused (a concurrent call on another
thread gets a fresh one).
"""
from __future__ import annotations

import ctypes
import threading
from typing import Sequence

import numpy as np

from jaxlite.backends import analysis
from jaxlite.backends.base import (Buffer, Client, CompileOptions, Executable, MemoryAnalysis,
                                   check_arguments, entry_result_shapes, unknown_stage)
from jaxlite.backends.cpu.buffer import CpuBuffer, CpuDevice
from jaxlite.backends.cpu.codegen.module import ModuleInfo, emit_module
from jaxlite.backends.cpu.native import NativeModule, assembly
from jaxlite.config import config
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import print_module

__all__ = ["CpuExecutable", "STAGES"]

STAGES = ("hlo", "optimized_hlo", "llvm", "asm")
_ARENA_ALIGNMENT = 64


class CpuExecutable(Executable):
    """A module compiled to machine code.

    Parameters
    ----------
    client, device : where it runs.
    module, optimized : the module as given and after the pass pipeline.
    options : the compile options (donated parameters among them).
    info : buffer layout and constant table of the generated code.
    native : the linked machine code.
    llvm_ir : the generated LLVM IR (the main module, then the modules it links), when it
        was generated in this process (else it is generated again when asked for).
    threads : the threads kernels with scratch memory were compiled for.
    """

    def __init__(self, client: Client, device: CpuDevice, module: HloModule,
                 optimized: HloModule, options: CompileOptions, info: ModuleInfo,
                 native: NativeModule, llvm_ir: list[str] | None, threads: int) -> None:
        self._client = client
        self._device = device
        self._module = module
        self._optimized = optimized
        self.options = options
        self._info = info
        self._native = native
        self._entry = native.entry
        self._ir = llvm_ir
        self._threads = threads
        self._texts: dict[str, str] = {}
        self._donated = tuple(options.donated_parameters)
        plan = info.plan
        kinds = {a.index: a.kind for a in plan.assignment.allocations}
        shapes = entry_result_shapes(optimized)
        # Per result leaf: ("new", k) for the k-th fresh array, ("param", i) for donated
        # parameter i, whose memory holds it. Leaves that are views of one value (a result
        # and its reshape) share an array, each seen under its own dimensions.
        self._leaves: list[tuple[str, int]] = []
        self._dims = [s.dims for s in shapes]
        self._fresh: list[tuple[tuple[int, ...], np.dtype]] = []
        fresh_of: dict[int, int] = {}
        for leaf, dest in enumerate(plan.dests):
            if kinds[dest.allocation] == "parameter":
                self._leaves.append(("param", plan.param_allocations.index(dest.allocation)))
                continue
            if dest.allocation not in fresh_of:
                fresh_of[dest.allocation] = len(self._fresh)
                self._fresh.append((shapes[leaf].dims, shapes[leaf].dtype))
            self._leaves.append(("new", fresh_of[dest.allocation]))
        self._constants = info.constants
        self._const_table = (ctypes.c_void_p * max(1, len(info.constants)))(
            *[c.ctypes.data for c in info.constants])
        self._temp_bytes = -(-info.arena_bytes // _ARENA_ALIGNMENT) * _ARENA_ALIGNMENT
        self._arena_bytes = self._temp_bytes + info.extra_bytes
        self._arena: np.ndarray | None = None
        self._param_table = ctypes.c_void_p * max(1, len(optimized.entry.parameters))
        self._out_table = ctypes.c_void_p * max(1, len(self._leaves))
        self._arena_lock = threading.Lock()
        self._num_params = len(optimized.entry.parameters)
        self._param_specs = [(p.shape.dims, p.shape.dtype) for p in optimized.entry.parameters]
        # Whether some result leaf shares its array with another of other dimensions.
        self._reshaped = any(shapes[leaf].dims != self._fresh[k][0]
                             for leaf, (kind, k) in enumerate(self._leaves) if kind == "new")

    @property
    def client(self) -> Client:
        return self._client

    def hlo_module(self, optimized: bool = True) -> HloModule:
        return self._optimized if optimized else self._module

    # ------------------------------------------------------------------ running
    def _new_arena(self) -> tuple[np.ndarray, int]:
        raw = np.empty(self._arena_bytes + _ARENA_ALIGNMENT, np.uint8)
        address = raw.ctypes.data
        return raw, address + (-address % _ARENA_ALIGNMENT)

    @property
    def arena_bytes(self) -> int:
        """Bytes of temporary memory one run needs (the arena, while-loop regions included)."""
        return self._arena_bytes

    @property
    def result_memory(self) -> tuple[list[tuple[str, int]], list[tuple[tuple[int, ...],
                                                                      np.dtype]]]:
        """Where results live: per leaf ("new", k) for the k-th fresh array (dimensions and
        dtype in the second list) or ("param", i) for donated parameter i."""
        return list(self._leaves), list(self._fresh)

    def run_raw(self, params: Sequence[int], outs: Sequence[int], arena: int | None) -> None:
        """Run on raw addresses: each parameter's and each result leaf's memory, and an
        arena of `arena_bytes` (64-byte aligned). For tests that place buffers themselves."""
        param_table = self._param_table(*params)
        out_table = self._out_table(*outs)
        self._entry(param_table, out_table, arena or None, self._const_table,
                    (arena + self._temp_bytes) if arena else None,
                    config.read("jaxlite_cpu_threads"))

    def _arrays(self, buffers: Sequence[Buffer]) -> list[np.ndarray]:
        """The arguments' arrays, checked (the common case without building messages)."""
        if len(buffers) != len(self._param_specs):
            check_arguments(self, buffers)
        arrays = []
        for buffer, (dims, dtype) in zip(buffers, self._param_specs):
            if buffer.is_deleted():
                check_arguments(self, buffers)
            array = buffer.to_numpy()
            if array.shape != dims or array.dtype != dtype or not array.flags.c_contiguous:
                check_arguments(self, buffers)
                array = np.ascontiguousarray(array)
            arrays.append(array)
        return arrays

    def execute(self, buffers: Sequence[Buffer]) -> list[Buffer]:
        arrays = self._arrays(buffers)
        fresh = [np.empty(dims, dtype) for dims, dtype in self._fresh]
        results = [fresh[k] if kind == "new" else arrays[k] for kind, k in self._leaves]
        if self._reshaped:
            results = [r if r.shape == dims else r.reshape(dims)
                       for r, dims in zip(results, self._dims)]
        params = [a.ctypes.data for a in arrays]
        outs = [r.ctypes.data for r in results]
        owned = self._arena_bytes and self._arena_lock.acquire(blocking=False)
        try:
            if not self._arena_bytes:
                arena = 0
            elif owned:
                if self._arena is None:
                    self._arena = self._new_arena()  # type: ignore[assignment]
                arena = self._arena[1]  # type: ignore[index]
            else:
                keep = self._new_arena()
                arena = keep[1]
            self.run_raw(params, outs, arena)
        finally:
            if owned:
                self._arena_lock.release()
        outputs = [CpuBuffer(r, self._device) for r in results]
        for i in self._donated:
            buffers[i].delete()
        return outputs

    # ------------------------------------------------------------------- reports
    def text(self, stage: str = "optimized_hlo") -> str:
        if stage not in STAGES:
            raise unknown_stage(stage, STAGES, self._client.platform)
        if stage not in self._texts:
            if stage == "hlo":
                self._texts[stage] = print_module(self._module)
            elif stage == "optimized_hlo":
                self._texts[stage] = print_module(self._optimized)
            elif stage == "llvm":
                self._texts[stage] = "\n".join(self._llvm_modules())
            else:
                self._texts[stage] = assembly(self._llvm_modules())
        return self._texts[stage]

    def _llvm_modules(self) -> list[str]:
        if self._ir is None:
            self._ir = emit_module(self._optimized, (), self._threads)[0]
        return self._ir

    def cost_analysis(self) -> dict[str, float]:
        """Estimated work of the optimized module (see `jaxlite.backends.analysis`)."""
        return analysis.cost_analysis(self._optimized)

    def memory_analysis(self) -> MemoryAnalysis:
        """Sizes of arguments, results and donated results; the arena the code uses as
        temporary memory; the size of its machine code."""
        return analysis.memory_analysis(self._optimized, self._donated,
                                        temp_size_in_bytes=self._arena_bytes,
                                        generated_code_size_in_bytes=self._native.code_size)

    def __repr__(self) -> str:
        return f"<CpuExecutable {self._optimized.name}>"
