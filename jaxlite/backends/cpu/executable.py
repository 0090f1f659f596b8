"""The cpu backend's executable: machine code for the whole module, run by one foreign call
(mirrors PJRT's CPU `LoadedExecutable`).

A run hands the entry function tables of pointers (parameters, result destinations,
constants), the temporary arena and the thread count, through the runtime's `jl_invoke` and
a frame of those words kept per executable (`runtime.invoke_frame`); the call releases the
GIL. The only Python work per call is checking the arguments, allocating the result arrays,
writing their addresses into the frame, and (`execute`, not `execute_arrays`) wrapping
arrays as buffers. The arena and the frame are kept between calls and reused (a concurrent
call on another thread gets fresh ones).

Donated parameters: buffer assignment may return a result in a donated parameter's memory
(and place temporaries there after its last read); that result's array is then the
parameter's array, written in place.
"""
from __future__ import annotations

import ctypes
import math
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from jaxlite.backends import analysis
from jaxlite.backends.base import (Buffer, Client, CompileOptions, HostExecutable,
                                   MemoryAnalysis, check_arguments, entry_result_shapes,
                                   unknown_stage)
from jaxlite.backends.cpu import interrupt, runtime
from jaxlite.backends.cpu.buffer import CpuBuffer, CpuDevice
from jaxlite.backends.cpu.codegen.control_flow import control_computations
from jaxlite.backends.cpu.codegen.custom_call import raise_pending_error
from jaxlite.backends.cpu.codegen.module import ModuleInfo, emit_module
from jaxlite.backends.cpu.native import NativeModule, assembly
from jaxlite.config import config
from jaxlite.xla.ir import HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.text import print_module

__all__ = ["CpuExecutable", "PreparedRun", "STAGES"]

STAGES = ("hlo", "optimized_hlo", "llvm", "asm")
_ARENA_ALIGNMENT = 64
_THREADS = config.reader("jaxlite_cpu_threads")

# While a trace is captured (`instrumented.start`), the function that runs executables in
# their place: (executable, arrays, checked) -> results. Else None, tested once per run.
_profiler: Callable[["CpuExecutable", Sequence[np.ndarray], bool], list[np.ndarray]] | None \
    = None


def set_profiler(run: Callable[["CpuExecutable", Sequence[np.ndarray], bool],
                               list[np.ndarray]] | None) -> None:
    """Send every run of an executable (not an instrumented one) to `run`; None: stop."""
    global _profiler
    _profiler = run


@dataclass
class PreparedRun:
    """One run's frame (at `address`), arena, arguments and result arrays (`prepared_run`):
    what must stay alive until the run has ended."""

    frame: ctypes.Array
    address: int
    arena: np.ndarray | None
    arguments: list[np.ndarray]
    results: list[np.ndarray]

    @property
    def extra(self) -> int:
        """The address of the run's `extra` area."""
        return self.frame[5] or 0


class CpuExecutable(HostExecutable):
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
        self._param_table = ctypes.c_void_p * max(1, len(optimized.entry.parameters))
        self._out_table = ctypes.c_void_p * max(1, len(self._leaves))
        self._param_specs = [(p.shape.dims, p.shape.dtype) for p in optimized.entry.parameters]
        # The frame (and arena) calls use when no other thread is running this executable.
        self._lock = threading.Lock()
        count = len(self._param_specs) + len(self._leaves)
        self._by_object = bool(runtime.ARRAY_DATA_OFFSET)
        first = runtime.FRAME_HEADER + (0 if self._by_object else count)
        self._words = slice(first, first + count)
        self._frame, self._frame_address, self._arena = self._new_frame()
        self._invoke = runtime.invoker()
        self._invoke_interruptible = runtime.invoker(interruptible=True)
        # Whether some result leaf shares its array with another of other dimensions.
        self._reshaped = any(shapes[leaf].dims != self._fresh[k][0]
                             for leaf, (kind, k) in enumerate(self._leaves) if kind == "new")
        # Whether Ctrl-C may stop the code (see `interrupt`): it has while loops or kernels
        # large enough to run in parallel, which it polls after.
        self._polls = _polls(optimized)
        # Set on the timed copies a trace capture makes (see `instrumented`).
        self.instrumented = False

    @property
    def client(self) -> Client:
        return self._client

    def hlo_module(self, optimized: bool = True) -> HloModule:
        return self._optimized if optimized else self._module

    # ------------------------------------------------------------------ running
    def _new_frame(self) -> tuple[ctypes.Array, int, np.ndarray | None]:
        """A `jl_invoke` frame for this executable, with an arena of its own (kept alive
        by the array returned with it)."""
        count = len(self._param_specs) + len(self._leaves)
        frame = runtime.invoke_frame(self._native.address, ctypes.addressof(self._const_table),
                                     len(self._param_specs), len(self._leaves))
        frame[7] = count if runtime.ARRAY_DATA_OFFSET else 0
        arena = None
        if self._arena_bytes:
            arena = np.empty(self._arena_bytes + _ARENA_ALIGNMENT, np.uint8)
            start = arena.ctypes.data
            start += -start % _ARENA_ALIGNMENT
            frame[3], frame[5] = start, start + self._temp_bytes
        return frame, ctypes.addressof(frame), arena

    @property
    def threads(self) -> int:
        """The threads its kernels with scratch memory were compiled for."""
        return self._threads

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
        raise_pending_error()  # what a custom-call target raised inside the call

    def _arrays(self, buffers: Sequence[Buffer]) -> list[np.ndarray]:
        """The arguments' arrays (deleted buffers raise)."""
        if len(buffers) != len(self._param_specs):
            check_arguments(self, buffers)
        arrays = []
        for buffer in buffers:
            if buffer.is_deleted():
                check_arguments(self, buffers)
            arrays.append(buffer.to_numpy())
        return arrays

    def _checked(self, arrays: Sequence[np.ndarray]) -> Sequence[np.ndarray]:
        """The arguments, checked (the common case without building messages), made
        C-contiguous numpy arrays (`jl_invoke` reads the data pointer out of the array
        object: a numpy scalar, which has shape and dtype too, would crash it)."""
        if len(arrays) != len(self._param_specs):
            check_arguments(self, arrays)
        for k, (array, (dims, dtype)) in enumerate(zip(arrays, self._param_specs)):
            if type(array) is not np.ndarray or array.shape != dims or array.dtype != dtype \
                    or not array.flags.c_contiguous:
                check_arguments(self, arrays)
                arrays = list(arrays)
                arrays[k] = np.asarray(array, order="C")  # (ascontiguousarray makes 0-d 1-d)
        return arrays

    def execute_arrays(self, arrays: Sequence[np.ndarray],
                       checked: bool = False) -> list[np.ndarray]:
        if _profiler is not None and not self.instrumented:  # a trace is being captured
            return _profiler(self, arrays, checked)
        if not checked:
            arrays = self._checked(arrays)
        results, words = self._results_and_words(arrays)
        threads = _THREADS()
        # Ctrl-C stops the loops and large kernels of a run from the main thread.
        interruptible = self._polls and interrupt.enter()
        invoke = self._invoke_interruptible if interruptible else self._invoke
        if self._lock.acquire(False):  # (positional: a keyword costs ~0.2 us per call)
            try:
                self._frame[6] = threads
                self._frame[self._words] = words
                invoke(self._frame_address)
            finally:
                self._lock.release()
        else:  # another thread is running this executable: a frame and arena of its own
            frame, address, arena = self._new_frame()
            frame[6] = threads
            frame[self._words] = words
            invoke(address)
        raise_pending_error()  # what a custom-call target raised inside the call
        if interruptible:
            interrupt.leave()  # KeyboardInterrupt, the partial results dropped
        return results  # `arrays` and `results` lived until here: the code used their memory

    def _results_and_words(self, arrays: Sequence[np.ndarray]
                           ) -> tuple[list[np.ndarray], list[int]]:
        """The result arrays of a run on `arrays` (checked), and the words of its frame."""
        fresh = [np.empty(dims, dtype) for dims, dtype in self._fresh]
        results = [fresh[k] if kind == "new" else arrays[k] for kind, k in self._leaves]
        if self._reshaped:
            results = [r if r.shape == dims else r.reshape(dims)
                       for r, dims in zip(results, self._dims)]
        if self._by_object:  # the arrays' objects, whose data pointers jl_invoke reads
            words = list(map(id, arrays))
            words += map(id, results)
        else:
            words = [a.ctypes.data for a in arrays]
            words += [r.ctypes.data for r in results]
        return results, words

    def prepared_run(self, arrays: Sequence[np.ndarray], threads: int,
                     frame: tuple[ctypes.Array, int, np.ndarray | None] | None = None
                     ) -> PreparedRun:
        """A run on `arrays` in `frame` (a frame, its address and its arena from
        `_new_frame`, used by nothing else meanwhile; by default a new one), ready to be
        invoked (from any thread) with `runtime.invoker()`; what SPMD executables run once
        per partition."""
        arrays = self._checked(arrays)
        results, words = self._results_and_words(arrays)
        frame, address, arena = frame or self._new_frame()
        frame[6] = threads
        frame[self._words] = words
        return PreparedRun(frame, address, arena, list(arrays), results)

    def execute_partitions(self, args: Sequence[Sequence[np.ndarray]]
                           ) -> list[list[np.ndarray]]:
        """`execute_arrays` of a program on one partition, in the form of SPMD executables'
        (`spmd_executable.SpmdCpuExecutable.execute_partitions`): `args[0]` in, [results]
        out."""
        if len(args) != 1:
            raise ValueError(f"execute_partitions: {self._optimized.name} runs on 1 "
                             f"partition, got arguments for {len(args)}.")
        return [self.execute_arrays(args[0])]

    def execute(self, buffers: Sequence[Buffer]) -> list[Buffer]:
        try:
            results = self.execute_arrays(self._arrays(buffers))
        except KeyboardInterrupt:  # a donated buffer may hold part of an update
            for i in self._donated:
                buffers[i].delete()
            raise
        for i in self._donated:
            buffers[i].delete()
        return [CpuBuffer(r, self._device) for r in results]

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


# Arrays of this many elements or more (an operand or a result) may make a kernel large
# enough to run in parallel, after which the code polls for Ctrl-C: such modules are run
# interruptibly (about 0.3 us more per call; where no kernel turns out large enough, that
# is all it changes).
_LARGE_ELEMENTS = 1 << 16


def _polls(module: HloModule) -> bool:
    """Whether the code of `module` may poll for Ctrl-C (`interrupt`): it has while loops
    or kernels large enough to run in parallel. A kernel's work is its output, except where
    it reads more than it writes (reductions, products). A miss would only delay Ctrl-C to
    the end of the call; a false alarm costs the interruptible call path (~2 us), as a
    slice of a large argument did."""
    for comp in control_computations(module):
        for inst in comp.instructions:
            if inst.opcode is Opcode.WHILE:
                return True
            if inst.opcode in _NO_WORK:
                continue
            shapes = [inst.shape]
            if not (inst.opcode is Opcode.FUSION and inst.attr("kind") == "kLoop"
                    or inst.opcode.is_elementwise or inst.opcode in _OUTPUT_SIZED):
                shapes += [o.shape for o in inst.operands]
            if any(not s.is_tuple and math.prod(s.dims) >= _LARGE_ELEMENTS for s in shapes):
                return True
    return False


_NO_WORK = frozenset({Opcode.PARAMETER, Opcode.CONSTANT, Opcode.TUPLE,
                      Opcode.GET_TUPLE_ELEMENT, Opcode.BITCAST})
# Instructions whose cost follows their output, however large their operands.
_OUTPUT_SIZED = frozenset({Opcode.SLICE, Opcode.DYNAMIC_SLICE, Opcode.GATHER,
                           Opcode.BROADCAST, Opcode.RESHAPE, Opcode.TRANSPOSE, Opcode.PAD,
                           Opcode.CONCATENATE, Opcode.IOTA})
