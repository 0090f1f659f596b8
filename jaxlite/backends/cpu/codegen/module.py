"""One LLVM module per executable: kernels, program functions, constants and math (mirrors
XLA's CPU compiler putting a whole HloModule into one llvm::Module).

`emit_module(module, donated)` returns the IR text of the optimized, scheduled `module` and
what the runtime needs to call it (`ModuleInfo`): the entry function `jl_main` (a program
function, see `program.py`) runs the whole schedule, so one call of it is one run of the
module. Kernels with the same text (the same computation on buffers of the same shapes) are
emitted once.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from jaxlite.backends.cpu import interrupt
from jaxlite.backends.cpu.codegen.collectives import (PARTITION_HEADER_BYTES, SpmdLayout,
                                                      emit_collective, poll_abort,
                                                      spmd_layout)
from jaxlite.backends.cpu.codegen.control_flow import (control_computations, emit_control_flow,
                                                       extra_bytes)
from jaxlite.backends.cpu.codegen.input_kernel import emit_input_fusion
from jaxlite.backends.cpu.codegen.kernel import PLACEHOLDER, Kernel, KernelContext
from jaxlite.backends.cpu.codegen.loop_kernel import emit_loop_fusion
from jaxlite.backends.cpu.codegen.conv_kernel import conv_plan, emit_convolution
from jaxlite.backends.cpu.codegen.custom_call import emit_custom_call
from jaxlite.backends.cpu.codegen.dot_kernel import (dot_of, epilogue_fusion, gemm_call,
                                                     gemm_kernel)
from jaxlite.backends.cpu.codegen.llvm_text import loop_metadata
from jaxlite.backends.cpu.codegen.program import (PROFILE_DECLARATIONS, Call, ComputationPlan,
                                                  ProfileSite, ProgramEmitter, disjoint,
                                                  plan_computation)
from jaxlite.backends.cpu.codegen.sort_kernel import emit_sort
from jaxlite.backends.cpu.codegen.update_kernels import (emit_dynamic_update_slice, emit_scatter,
                                                        emit_select_and_scatter)
from jaxlite.xla.buffer_assignment import BufferSlice
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode

__all__ = ["ENTRY", "ModuleInfo", "emit_module", "module_info", "as_fusion"]

ENTRY = "jl_main"
_O = Opcode
# Opcodes a kernel computes elementally when they stand alone in a schedule.
_ELEMENTAL_ALONE = frozenset({
    _O.BROADCAST, _O.RESHAPE, _O.TRANSPOSE, _O.COPY, _O.SLICE, _O.REVERSE, _O.IOTA, _O.PAD,
    _O.CONCATENATE, _O.DYNAMIC_SLICE, _O.BITCAST_CONVERT, _O.BITCAST, _O.REDUCE, _O.DOT,
    _O.GATHER, _O.REDUCE_WINDOW, _O.CONVOLUTION})


@dataclass(frozen=True)
class ModuleInfo:
    """What the runtime needs besides the machine code.

    plan : the entry computation (tuple-rooted) and its buffer assignment.
    constants : the arrays of the constant table, in memory order, by position.
    arena_bytes : the size of the temporary arena.
    extra_bytes : the size of the region while loops keep their bodies' results in (and
        an SPMD module's partition header, see `collectives`).
    sites : what each site of a profiled module times (`ProfileSite`); () when not profiled.
    spmd : where an SPMD module's code finds its run's rendezvous; None for a module run on
        one partition.
    """

    plan: ComputationPlan
    constants: tuple[np.ndarray, ...]
    arena_bytes: int
    extra_bytes: int
    sites: tuple[ProfileSite, ...] = ()
    spmd: SpmdLayout | None = None


def as_fusion(inst: HloInstruction) -> HloInstruction:
    """A lone instruction as a one-instruction fusion (its kernel computes it elementally)."""
    params = [HloInstruction(f"param_{k}", _O.PARAMETER, o.shape, attrs={"number": k})
              for k, o in enumerate(inst.operands)]
    body = inst.replace(operands=tuple(params))
    comp = HloComputation(f"{inst.name}.computation", tuple(params) + (body,), body)
    kind = "kInput" if inst.opcode is _O.REDUCE else "kLoop"
    return HloInstruction(inst.name, _O.FUSION, inst.shape, inst.operands, {"kind": kind},
                          (comp,))


class _ModuleBuilder:
    def __init__(self, threads: int = 1, scratch_region: int = 0, profile: bool = False,
                 spmd: SpmdLayout | None = None) -> None:
        self.ctx = KernelContext()
        self._kernels: dict[str, str] = {}
        self.kernel_texts: list[str] = []
        self._tasks: dict[str, str] = {}
        self.task_texts: list[str] = []
        self.constants: list[np.ndarray] = []
        self._constant_ids: dict[int, int] = {}
        self.modules: list[str] = []
        # External functions the kernels call, each declared once (an ordered set).
        self.declarations: dict[str, None] = {}
        self.program = ProgramEmitter(self.kernel_name, self.task_name, self.constant_index,
                                      self.make_calls, self.control_flow, threads, profile,
                                      self.collective)
        self._counter = 0
        self.programs: dict[int, tuple[str, ComputationPlan]] = {}
        self.spmd = spmd
        self._extra = scratch_region if spmd is None else \
            spmd.header_offset + PARTITION_HEADER_BYTES

    def kernel_name(self, kernel: Kernel) -> str:
        if kernel.text not in self._kernels:
            _check_signature(kernel)
            name = f"kernel.{len(self._kernels)}"
            self._kernels[kernel.text] = name
            text = kernel.text.replace(f"@{PLACEHOLDER}(", f"@{name}(", 1)
            self.kernel_texts.append(size_optimized(text))
            for line in kernel.declarations:
                self.declarations.setdefault(line, None)
            for text in kernel.modules:
                if text not in self.modules:
                    self.modules.append(text)
        return self._kernels[kernel.text]

    def make_calls(self, inst: HloInstruction, inputs: list[BufferSlice],
                   outputs: list[BufferSlice]) -> list[Call]:
        """The kernel calls of `inst`: a GEMM (and the epilogue after it) for a dot that
        maps onto one, else the one kernel that computes it."""
        if inst.opcode is _O.CONVOLUTION and (plan := conv_plan(inst)) is not None:
            return [(emit_convolution(self.ctx, inst, plan, disjoint(inputs, outputs)),
                     inputs + outputs)]
        dot = dot_of(inst)
        call = gemm_call(dot, inst.shape) if dot is not None else None
        if call is not None:
            if inst.opcode is _O.DOT:
                operands = inputs[:2]
            else:
                numbers = [o.attr("number") for o in dot.operands  # type: ignore[union-attr]
                           if o.opcode is _O.PARAMETER]
                operands = [inputs[n] for n in numbers]
            if len(operands) == 2:
                calls: list[Call] = [(gemm_kernel(call), operands + outputs[:1])]
                epilogue = epilogue_fusion(inst) if inst.opcode is _O.FUSION else None
                if epilogue is not None:
                    calls.append((self.make_kernel(epilogue, False),
                                  inputs + outputs[:1] + outputs))
                return calls
        return [(self.make_kernel(inst, disjoint(inputs, outputs)), inputs + outputs)]

    def task_name(self, name: str, kernel: Kernel) -> str:
        """A wrapper `void @<name>.task(ptr %ctx, i64 %lo, i64 %hi, i64 %worker)` for the
        thread pool: `ctx` holds the kernel's pointers (and its scratch region, of which
        each worker takes its own part)."""
        if name not in self._tasks:
            count = kernel.num_inputs + kernel.num_outputs + (1 if kernel.scratch else 0)
            lines = [f"define internal void @{name}.task(ptr %ctx, i64 %lo, i64 %hi, "
                     "i64 %worker) nounwind {"]
            args = []
            for k in range(count):
                lines.append(f"  %s{k} = getelementptr inbounds ptr, ptr %ctx, i64 {k}")
                lines.append(f"  %p{k} = load ptr, ptr %s{k}, align 8")
                args.append(f"ptr %p{k}")
            if kernel.scratch:
                lines.append(f"  %own = mul i64 %worker, {kernel.scratch}")
                lines.append(f"  %mine = getelementptr inbounds i8, ptr %p{count - 1}, "
                             "i64 %own")
                args[-1] = "ptr %mine"
            lines.append(f"  call void @{name}({', '.join(args)}, i64 %lo, i64 %hi)")
            lines += ["  ret void", "}"]
            self._tasks[name] = f"{name}.task"
            self.task_texts.append("\n".join(lines) + "\n")
        return self._tasks[name]

    def constant_index(self, inst: HloInstruction) -> int:
        if id(inst) not in self._constant_ids:
            literal = np.asarray(inst.attr("literal"), dtype=inst.shape.dtype)
            layout = inst.shape.layout
            if layout is not None and literal.ndim:
                literal = literal.transpose(tuple(reversed(layout)))
            self._constant_ids[id(inst)] = len(self.constants)
            self.constants.append(np.ascontiguousarray(literal))
        return self._constant_ids[id(inst)]

    def make_kernel(self, inst: HloInstruction, noalias: bool) -> Kernel:
        if inst.opcode is _O.FUSION:
            if inst.attr("kind") == "kInput":
                return emit_input_fusion(self.ctx, inst, noalias)
            return emit_loop_fusion(self.ctx, inst, noalias)
        if inst.opcode is _O.DYNAMIC_UPDATE_SLICE:
            return emit_dynamic_update_slice(self.ctx, inst, noalias)
        if inst.opcode is _O.SCATTER:
            return emit_scatter(self.ctx, inst, noalias)
        if inst.opcode is _O.SORT:
            return emit_sort(self.ctx, inst, noalias)
        if inst.opcode is _O.SELECT_AND_SCATTER:
            return emit_select_and_scatter(self.ctx, inst, noalias)
        if inst.opcode is _O.CUSTOM_CALL:
            return emit_custom_call(inst)
        if inst.opcode.is_elementwise or inst.opcode in _ELEMENTAL_ALONE:
            return self.make_kernel(as_fusion(inst), noalias)
        raise NotImplementedError(f"the cpu backend cannot compile {inst.opcode.text} "
                                  f"({inst.name}) yet")

    def control_flow(self, state, inst: HloInstruction) -> None:  # type: ignore[no-untyped-def]
        emit_control_flow(self, state, inst)

    def collective(self, state, inst: HloInstruction) -> None:  # type: ignore[no-untyped-def]
        emit_collective(self, state, inst)

    def poll_spmd_abort(self, fb, stop: str, go: str) -> None:  # type: ignore[no-untyped-def]
        poll_abort(self.spmd, fb, stop, go)

    def extra_offset(self, size: int) -> int:
        """A region of `size` bytes of the `extra` area, for one while loop."""
        offset = self._extra
        self._extra += size
        return offset

    def program_name(self, hint: str) -> str:
        self._counter += 1
        return f"program.{self._counter}.{_ident(hint)}"

    def text(self, name: str) -> str:
        parts = [f"; jaxlite cpu module {name}",
                 "declare void @jl_parallel_for(ptr, ptr, i64, i64, i64)",
                 "declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)",
                 # scratch of sort kernels; declared once however many kernels use it
                 "declare ptr @malloc(i64)", "declare void @free(ptr)",
                 *interrupt.declarations()]  # polled by loops and after large kernels
        if self.program.profile:
            parts += PROFILE_DECLARATIONS
        parts += self.ctx.constants.texts
        parts.append(outline_heavy_math(self.ctx.mathlib.definitions(), self.kernel_texts))
        parts += self.declarations
        parts += self.kernel_texts
        parts += self.task_texts
        parts += self.program.functions
        parts += loop_metadata(self.kernel_texts)
        return "\n".join(parts) + "\n"


# Kernels longer than this many lines of IR are marked `optsize`, which keeps LLVM's loop
# unroller from multiplying their (already vectorized) loops: a pre-LN transformer block's
# gradient has a fused kernel of 2,300 lines (its layer-norm reductions) whose unrolled
# copies made up two thirds of the module's -O3 and code-generation time (7.7 s -> 2.4 s
# for the module with this limit; measured with LLVM 15; its steady-state run time did not
# change). LLVM reorders no floating-point operation either way (no fast-math flags), but
# where a multiply and an add are fused (`contract`) depends on the loop structure, so a
# few results of such kernels may differ in the last bit (measured: 1e-7 relative, 1.6e-5
# on a bias gradient summing 1,024 terms with cancellation), as XLA's fusing does.
_OPTSIZE_LINES = 300


def size_optimized(kernel_text: str) -> str:
    """`kernel_text` with `optsize` added to its function when it is longer than
    `_OPTSIZE_LINES` lines."""
    if kernel_text.count("\n") <= _OPTSIZE_LINES:
        return kernel_text
    head, rest = kernel_text.split("\n", 1)
    if ") nounwind {" not in head:
        return kernel_text
    return head.replace(") nounwind {", ") optsize nounwind {", 1) + "\n" + rest


# A math function is called rather than inlined where inlining it at every call site would
# add more than this many lines of IR to the module (and it has at least `_MIN_CALLS` call
# sites). The -O3 pipeline and code generation grow faster than linearly with a function's
# size: a chain of 300 float32 sin/cos/tanh operations compiled in 9.8 s with every call
# inlined and in 1.0 s with sin and cos called (measured with LLVM 15 on the IR of
# benchmarks/compile_latency.py's chain). Small programs (a train step's few tanh) keep
# everything inlined, so their steady-state code is unchanged; the values are the same
# bits either way (the library's operations carry no fast-math flags, so no FMA forms
# across the call boundary).
_INLINE_BUDGET = 3000
_MIN_CALLS = 8


def outline_heavy_math(definitions: str, kernel_texts: list[str]) -> str:
    """`definitions` (the vector math functions of a module) with `alwaysinline` turned into
    `noinline` for each function whose inlined copies would exceed `_INLINE_BUDGET` lines."""
    if not definitions.strip():
        return definitions
    functions = ("\n" + definitions).split("\ndefine ")
    out = [functions[0]]
    for chunk in functions[1:]:
        head = chunk.split("\n", 1)[0]
        name = head.split("@", 1)[1].split("(", 1)[0]
        calls = sum(text.count(f"@{name}(") for text in kernel_texts)
        lines = chunk.count("\n")
        if calls >= _MIN_CALLS and calls * lines > _INLINE_BUDGET:
            chunk = chunk.replace(") alwaysinline nounwind {", ") noinline nounwind {", 1)
        out.append(chunk)
    return "\ndefine ".join(out)[1:]


def _check_signature(kernel: Kernel) -> None:
    """The kernel's function takes the parameters its callers will pass.

    LLVM accepts a call with the wrong number of arguments (with opaque pointers a call
    names its own function type), so a kernel whose text disagrees with its `Kernel` record
    would silently read `lo`/`hi` from the wrong registers and compute garbage.
    """
    head = kernel.text.split(f"@{PLACEHOLDER}(", 1)[1].split(")", 1)[0]
    count = len([p for p in head.split(",") if p.strip()])
    if count != kernel.num_params:
        raise AssertionError(
            f"internal error: a cpu kernel's function has {count} parameters but is called "
            f"with {kernel.num_params} ({kernel.num_inputs} inputs, {kernel.num_outputs} "
            f"outputs, scratch={kernel.scratch}, lo, hi)")


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in text)


def kernel_scratch(inst: HloInstruction) -> int:
    """Scratch bytes per thread of `inst`'s kernel (a GEMM's or convolution's packed
    panels; 0 for none)."""
    if inst.opcode is _O.CONVOLUTION and (plan := conv_plan(inst)) is not None:
        return plan.scratch
    dot = dot_of(inst)
    call = gemm_call(dot, inst.shape) if dot is not None else None
    return call.scratch if call is not None else 0


def scratch_region(module: HloModule, threads: int) -> int:
    """Bytes of the region the kernels of called computations take scratch memory from: the
    largest one's scratch, once per thread. The entry's kernels get theirs from buffer
    assignment (`entry_plan`), in memory no value holds during their step."""
    largest = 0
    for comp in control_computations(module)[1:]:
        for inst in comp.instructions:
            largest = max(largest, kernel_scratch(inst))
    return largest * threads


def entry_plan(module: HloModule, donated: tuple[int, ...], threads: int) -> ComputationPlan:
    """The plan of the entry, each kernel's scratch (for `threads`) placed with the
    temporaries."""
    return plan_computation(module.entry, donated, entry=True,
                            scratch=lambda inst: kernel_scratch(inst) * threads)


def module_info(module: HloModule, donated: tuple[int, ...] = (),
                threads: int = 1) -> ModuleInfo:
    """The runtime's view of `module`, computed without emitting code (what a cached
    object file needs besides itself)."""
    return _info(_builder(module, threads), module, entry_plan(module, donated, threads))


def _builder(module: HloModule, threads: int, profile: bool = False) -> _ModuleBuilder:
    scratch = scratch_region(module, threads)
    return _ModuleBuilder(threads, scratch, profile, spmd_layout(module, scratch))


def _info(builder: _ModuleBuilder, module: HloModule, plan: ComputationPlan) -> ModuleInfo:
    # Every constant of every program, in a fixed order, so that the table is the same
    # whether the code was just emitted or loaded from the cache.
    for comp in control_computations(module):
        for inst in comp.instructions:
            if inst.opcode is _O.CONSTANT:
                builder.constant_index(inst)
    return ModuleInfo(plan, tuple(builder.constants), plan.assignment.temp_size_in_bytes,
                      builder._extra + extra_bytes(module), spmd=builder.spmd)


def emit_module(module: HloModule, donated: tuple[int, ...] = (), threads: int = 1,
                profile: bool = False) -> tuple[list[str], ModuleInfo]:
    """The LLVM IR of `module` (optimized and scheduled) and its `ModuleInfo`: the main
    module's text first, then the modules it links (GEMMs). `threads`: the most threads a
    kernel with scratch memory may run on. `profile`: time each kernel call (the
    instrumented programs of a trace capture; `ModuleInfo.sites` names what is timed)."""
    builder = _builder(module, threads, profile)
    plan = entry_plan(module, donated, threads)
    info = _info(builder, module, plan)
    # The entry runs once per call: a straight line of kernel calls, each followed by an
    # interrupt check (three blocks per kernel). LLVM's -O3 pipeline spent ~7 ms per MLP
    # layer on it (value propagation across those blocks) for no measurable speed, so it
    # is compiled as is (`optnone`); the kernels and loop bodies it calls are optimized.
    builder.program.emit(plan, ENTRY, linkage="", attrs="nounwind optnone noinline")
    assert builder._extra == info.extra_bytes, (builder._extra, info.extra_bytes)
    if profile:
        info = dataclasses.replace(info, sites=tuple(builder.program.sites))
    return [builder.text(module.name)] + builder.modules, info
