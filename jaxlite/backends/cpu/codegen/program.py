"""Program functions: one LLVM function per computation that runs its schedule over the
buffers buffer assignment laid out (mirrors XLA's CPU IrEmitter for the entry computation
and its `BufferAllocations`).

A program function is `void @<name>(ptr %params, ptr %outs, ptr %arena, ptr %consts,
ptr %extra, i64 %threads)`: tables of pointers to the computation's parameter arrays (one
per array leaf, in order) and to where each result leaf must end up, the temporary arena
(buffer assignment's `temp` allocation), the table of the module's array constants, the
region where while loops keep their bodies' results (`control_flow`), and the number of
threads kernels may use. Each allocation of the assignment gets a base pointer from
these; each value lives at its slice's offset from its allocation's base.

The body visits the schedule: tuples, get-tuple-elements, parameters, constants and
instructions that move no data are views and emit nothing; fusions and the other array
instructions call their kernels (split over threads through `jl_parallel_for` when large);
while, conditional and call run their computations' program functions (`control_flow`). At
the end each result leaf is copied to the memory its caller handed over for it when it does
not already live there (a parameter or a constant returned, a result computed before its
donated buffer was free, one value returned twice: a called computation gets memory of its
own for each result leaf, see `plan_computation`).

Profiled programs (`ProgramEmitter(profile=True)`, for a trace capture: `jaxlite.profiler`)
also time each kernel call and each control-flow instruction: the clock is read before it
(`jl_profile_clock`) and a record (site, start, end) appended to the module's log after it
(`jl_profile_record`, see `runtime.py`); `ProgramEmitter.sites` says what each site is.
Programs emitted without `profile` are unchanged, so normal executables pay nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from jaxlite.backends.cpu import interrupt
from jaxlite.backends.cpu.codegen.kernel import Kernel
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder
from jaxlite.xla.buffer_assignment import BufferAssignment, BufferSlice, assign_buffers
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.passes.layout_assignment import moves_no_data
from jaxlite.xla.shape import Shape

__all__ = ["ProgramEmitter", "ComputationPlan", "plan_computation", "with_tuple_root",
           "PARALLEL_WORK", "disjoint", "result_moves", "ProfileSite", "PROFILE_DECLARATIONS"]

_O = Opcode
_VIEWS = (_O.PARAMETER, _O.CONSTANT, _O.TUPLE, _O.GET_TUPLE_ELEMENT)
# Kernels with less work (elements times operations per element, see
# `kernel.element_cost`) run on one thread: starting a thread costs tens of microseconds
# (measured: about 60), what a core needs for about this much work.
PARALLEL_WORK = 1 << 22


def with_tuple_root(comp: HloComputation) -> HloComputation:
    """`comp` with its root wrapped in a one-element tuple when it is not a tuple, so that
    buffer assignment reports where the result is computed (the root's own slices are
    where it is returned)."""
    if comp.root.opcode is _O.TUPLE:
        return comp
    root = HloInstruction(f"{comp.root.name}.result", _O.TUPLE,
                          Shape.tuple([comp.root.shape]), (comp.root,))
    return HloComputation(comp.name, comp.instructions + (root,), root)


# A region of memory as a program function sees it: ("param", k) for the k-th entry of its
# parameter table, ("out", k) for the k-th of its result table, ("alloc", a) for
# allocation a (temporaries, constants); then offset and size.
Region = tuple[tuple[str, int], int, int]


@dataclass
class ComputationPlan:
    """A computation (tuple-rooted), its buffer assignment, and where its caller wants the
    results: `targets[leaf]` is the memory the caller hands over as the leaf's result
    (`%outs` entry), which the program function must fill (`result_moves`)."""

    comp: HloComputation
    assignment: BufferAssignment
    param_allocations: list[int]
    homes: list[BufferSlice]        # where each result leaf is computed
    dests: list[BufferSlice]        # where buffer assignment returns it
    targets: list[Region] = field(default_factory=list)
    constants: dict[int, str] = field(default_factory=dict)  # allocation -> instruction name

    def region(self, s: BufferSlice) -> Region:
        """The memory of slice `s`. A result allocation's base is the result table's entry of
        the first leaf buffer assignment returns in it (`ProgramState.base`)."""
        kind = self.assignment.allocations[s.allocation - 1].kind
        if kind == "parameter":
            return ("param", self.param_allocations.index(s.allocation)), s.offset, s.size
        if kind == "output":
            key, offset, _ = self.targets[self.first_leaf(s.allocation)]
            return key, offset + s.offset, s.size
        return ("alloc", s.allocation), s.offset, s.size

    def first_leaf(self, allocation: int) -> int:
        """The first result leaf buffer assignment returns in `allocation`."""
        return next(leaf for leaf, d in enumerate(self.dests) if d.allocation == allocation)


def plan_computation(comp: HloComputation, donated: tuple[int, ...] = (),
                     entry: bool = False,
                     scratch: Callable[[HloInstruction], int] | None = None
                     ) -> ComputationPlan:
    """The plan of `comp`, whose caller hands it result memory in one of two ways.

    entry=True (the module's entry, called by the executable): as buffer assignment returns
    the results, leaves returned in one buffer sharing one array, a leaf returned in a
    donated parameter getting the parameter's memory. entry=False (a while body, a branch, a
    called computation): each leaf gets memory of its own, except that a leaf matched with a
    donated parameter gets the parameter's memory (a flat while body: the loop state).
    Buffer assignment may compute two leaves in one buffer (one value returned twice) or
    return a leaf where a parameter already is; the program copies each leaf to its memory.
    `scratch`: bytes of working memory an instruction's kernels need (all threads), which
    buffer assignment reserves during its step (see `assign_buffers`).
    """
    comp = with_tuple_root(comp)
    assignment = assign_buffers(HloModule(comp.name, comp), donated, scratch=scratch)
    kinds = {a.index: a.kind for a in assignment.allocations}
    params = [a.index for a in assignment.allocations if a.kind == "parameter"]
    homes = [s for o in comp.root.operands for s in assignment.slices[o.name]]
    dests = list(assignment.slices[comp.root.name])
    constants = {}
    for inst in comp.instructions:
        if inst.opcode is _O.CONSTANT:
            constants[assignment.slices[inst.name][0].allocation] = inst.name
    plan = ComputationPlan(comp, assignment, params, homes, dests, [], constants)
    by_number = {p.attr("number"): p for p in comp.parameters}
    for leaf, dest in enumerate(dests):
        number = assignment.donated_outputs.get(leaf)
        if entry and kinds[dest.allocation] == "parameter":
            key = ("param", params.index(dest.allocation))
        elif entry:
            key = ("out", plan.first_leaf(dest.allocation))
        elif number is not None and not by_number[number].shape.is_tuple:
            own = assignment.slices[by_number[number].name][0].allocation
            key = ("param", params.index(own))
        else:
            key = ("out", leaf)
        plan.targets.append((key, 0, dest.size))
    return plan


# The kernel calls that compute an instruction, given its input and output slices: each a
# kernel and the slices its pointer parameters get (inputs, then outputs).
Call = tuple[Kernel, list[BufferSlice]]
CallMaker = Callable[[HloInstruction, list[BufferSlice], list[BufferSlice]], list[Call]]


class ProgramEmitter:
    """Emits program functions; kernels and constants go to the module through callbacks.

    kernel_name : registers a kernel's text (deduplicated) and returns its function name.
    task_name : the name of the parallel task wrapper of a kernel function.
    constant_index : the position in the constant table of a constant instruction.
    make_calls : the kernel calls of an instruction.
    scratch_threads : threads the scratch region (at the start of `extra`) has room for.
    profile : time every kernel call and control-flow instruction (see `ProfileSite`).
    """

    def __init__(self, kernel_name: Callable[[Kernel], str], task_name: Callable[[str, Kernel],
                                                                                 str],
                 constant_index: Callable[[HloInstruction], int], make_calls: CallMaker,
                 control_flow: Callable[["ProgramState", HloInstruction], None],
                 scratch_threads: int = 1, profile: bool = False,
                 collective: Callable[["ProgramState", HloInstruction], None] | None = None
                 ) -> None:
        self.profile = profile
        self.sites: list[ProfileSite] = []  # by site number, when profiling
        self.kernel_name = kernel_name
        self.task_name = task_name
        self.constant_index = constant_index
        self.make_calls = make_calls
        self.scratch_threads = scratch_threads
        self.control_flow = control_flow
        self.collective = collective
        self.functions: list[str] = []
        self._names: dict[int, str] = {}

    def emit(self, plan: ComputationPlan, name: str, linkage: str = "internal",
             attrs: str = "nounwind") -> str:
        """Emit the program function of `plan` under `name` (with function attributes
        `attrs`); returns the name."""
        fb = FunctionBuilder(name, [("ptr", "params"), ("ptr", "outs"), ("ptr", "arena"),
                                    ("ptr", "consts"), ("ptr", "extra"), ("i64", "threads")],
                             linkage=linkage, attrs=attrs)
        state = ProgramState(self, fb, plan)
        for inst in plan.comp.instructions:
            state.run(inst)
        state.copy_results()
        fb.ret_void()
        self.functions.append(fb.text())
        return name


class ProgramState:
    """One program function being emitted: allocation bases and slice pointers."""

    def __init__(self, emitter: ProgramEmitter, fb: FunctionBuilder,
                 plan: ComputationPlan) -> None:
        self.emitter = emitter
        self.fb = fb
        self.plan = plan
        self._bases: dict[int, str] = {}
        self._ptrs: dict[tuple[str, int, int], str] = {}
        self._out_leaf: dict[int, int] = {}
        for leaf, dest in enumerate(plan.dests):
            self._out_leaf.setdefault(dest.allocation, leaf)
        # Every allocation's base in the entry block, which dominates every later use.
        for allocation in plan.assignment.allocations:
            if allocation.kind != "output" or allocation.index in self._out_leaf:
                self.base(allocation.index)

    def table(self, table: str, index: int) -> str:
        slot = self.fb.op(f"getelementptr inbounds ptr, ptr %{table}, i64 {index}", "tp")
        return self.fb.op(f"load ptr, ptr {slot}, align 8", "tb")

    def base(self, allocation: int) -> str:
        if allocation not in self._bases:
            kind = self.plan.assignment.allocations[allocation - 1].kind
            if kind == "temp":
                ref = "%arena"
            elif kind == "parameter":
                ref = self.table("params", self.plan.param_allocations.index(allocation))
            elif kind == "output":
                ref = self.table("outs", self._out_leaf[allocation])
            else:
                name = self.plan.constants[allocation]
                inst = next(i for i in self.plan.comp.instructions if i.name == name)
                ref = self.table("consts", self.emitter.constant_index(inst))
            self._bases[allocation] = ref
        return self._bases[allocation]

    def ptr(self, s: BufferSlice) -> str:
        # Memoized per block: a pointer made inside one branch does not dominate another.
        key = (self.fb.block, s.allocation, s.offset)
        if key not in self._ptrs:
            base = self.base(s.allocation)
            self._ptrs[key] = base if s.offset == 0 else self.fb.op(
                f"getelementptr inbounds i8, ptr {base}, i64 {s.offset}", "bp")
        return self._ptrs[key]

    def slices(self, inst: HloInstruction) -> tuple[BufferSlice, ...]:
        return self.plan.assignment.slices[inst.name]

    # ------------------------------------------------------------------ schedule
    def run(self, inst: HloInstruction) -> None:
        if inst.opcode in _VIEWS or moves_no_data(inst):
            return
        if inst.opcode in (_O.WHILE, _O.CONDITIONAL, _O.CALL):
            mark = self.profile_begin(inst, inst.opcode.text)
            self.emitter.control_flow(self, inst)
            self.profile_end(mark)
            return
        if inst.opcode.kind is Kind.COLLECTIVE and self.emitter.collective is not None:
            self.emitter.collective(self, inst)  # among partitions: `collectives`
            return
        if inst.shape.is_tuple and inst.opcode not in (_O.FUSION, _O.SCATTER, _O.REDUCE_WINDOW,
                                                        _O.REDUCE, _O.SORT, _O.CUSTOM_CALL):
            raise NotImplementedError(f"the cpu backend cannot compile the tuple-shaped "
                                      f"{inst.opcode.text} ({inst.name}) yet")
        outputs = list(self.slices(inst))
        # Nothing to compute, but a custom-call may act (a host callback without results).
        if all(s.size == 0 for s in outputs) and inst.opcode is not _O.CUSTOM_CALL:
            return
        inputs = [s for o in inst.operands for s in self.slices(o)]
        reserved = self.plan.assignment.scratch.get(inst.name)
        calls = self.emitter.make_calls(inst, inputs, outputs)
        for k, (kernel, slices) in enumerate(calls):
            role = _call_role(inst, kernel, k, len(calls))
            self.call_kernel(kernel, [self.ptr(s) for s in slices], reserved, (inst, role))

    def call_kernel(self, kernel: Kernel, pointers: list[str],
                    reserved: BufferSlice | None = None,
                    site: tuple[HloInstruction, str] | None = None) -> None:
        """Call `kernel`; its scratch is the space buffer assignment `reserved` for the
        instruction (the entry's GEMMs and convolutions), else the scratch region. `site`:
        the instruction the call computes and the call's role, timed when profiling."""
        fb = self.fb
        name = self.emitter.kernel_name(kernel)
        mark = None if site is None else self.profile_begin(site[0], site[1], name)
        if kernel.scratch and reserved is not None:
            assert reserved.size >= kernel.scratch * self.emitter.scratch_threads, (
                reserved, kernel.scratch)
            pointers = pointers + [self.ptr(reserved)]
        elif kernel.scratch:
            pointers = pointers + ["%extra"]  # the scratch region starts the extra area
        if kernel.units > 1 and kernel.work >= PARALLEL_WORK:
            task = self.emitter.task_name(name, kernel)
            ctx = fb.alloca(f"[{len(pointers)} x ptr]", 8, "ctx")
            for k, p in enumerate(pointers):
                slot = fb.op(f"getelementptr inbounds ptr, ptr {ctx}, i64 {k}", "cs")
                fb.do(f"store ptr {p}, ptr {slot}, align 8")
            threads = "%threads"
            if kernel.scratch:  # no more threads than the scratch region has room for
                threads = fb.op(f"call i64 @llvm.umin.i64(i64 %threads, "
                                f"i64 {self.emitter.scratch_threads})", "th")
            fb.do(f"call void @jl_parallel_for(ptr @{task}, ptr {ctx}, i64 {kernel.units}, "
                  f"i64 {kernel.grain}, i64 {threads})")
            self.profile_end(mark)
            # After a large kernel, Ctrl-C ends the run (`interrupt`; a loop around it
            # leaves at its next test): one load and a branch per large kernel.
            stop, go = fb.label("interrupted"), fb.label("go")
            interrupt.poll_head(fb, stop, go)
            fb.start(stop)
            fb.ret_void()
            fb.start(go)
            return
        args = ", ".join(f"ptr {p}" for p in pointers)
        fb.do(f"call void @{name}({args}, i64 0, i64 {kernel.units})")
        self.profile_end(mark)

    def copy(self, dest: str, src: str, size: int, check: bool = True) -> None:
        """memcpy, skipped at run time when both are the same memory."""
        if size == 0:
            return
        fb = self.fb
        if not check:
            fb.do(f"call void @llvm.memmove.p0.p0.i64(ptr {dest}, ptr {src}, i64 {size}, "
                  f"i1 false)")
            return
        differ = fb.op(f"icmp ne ptr {dest}, {src}", "ne")
        with fb.if_then(differ, "copy"):
            fb.do(f"call void @llvm.memmove.p0.p0.i64(ptr {dest}, ptr {src}, i64 {size}, "
                  f"i1 false)")

    def copy_results(self) -> None:
        """Copy each result leaf to the memory its caller handed over for it, in an order
        that reads every value before its memory is written (see `result_moves`)."""
        moves = result_moves(self.plan)
        if moves is None:
            raise AssertionError(f"{self.plan.comp.name}: its results cannot be moved to "
                                 "their parameters without a temporary")
        for leaf, home in moves:
            self.copy(self.table("outs", leaf), self.ptr(home), home.size)

    # ------------------------------------------------------------------ profiling
    def profile_begin(self, inst: HloInstruction, role: str, kernel: str = ""
                      ) -> tuple[int, str] | None:
        """When profiling: a new site for `inst` and the clock read before it runs."""
        if not self.emitter.profile:
            return None
        kind = inst.attr("kind") or inst.attr("target") or ""
        meta = inst.metadata
        source = f"{meta.source_file}:{meta.source_line}" if meta and meta.source_file else ""
        self.emitter.sites.append(ProfileSite(inst.name, inst.opcode.text, role, kernel,
                                              self.plan.comp.name, str(kind),
                                              meta.op_name if meta else "", source))
        start = self.fb.op("call i64 @jl_profile_clock()", "clock")
        return len(self.emitter.sites) - 1, start

    def profile_end(self, mark: tuple[int, str] | None) -> None:
        """Append the record of the site `profile_begin` started to the module's log."""
        if mark is None:
            return
        site, start = mark
        log = self.fb.op("load ptr, ptr @jl_profile_log, align 8", "log")
        self.fb.do(f"call void @jl_profile_record(ptr {log}, i64 {site}, i64 {start})")


@dataclass(frozen=True)
class ProfileSite:
    """What a profiled program timed at one site (records name sites by position).

    instruction, opcode : the HLO instruction (its name in the optimized module).
    role : "kernel", "gemm" (a dot computed by the GEMM library) and "epilogue" (the
        fusion applied to a GEMM's result), "custom-call", or the control-flow opcode
        ("while", "conditional", "call": their bodies' sites nest).
    kernel : the LLVM function called ("" for control flow).
    computation : the computation the instruction belongs to.
    kind : a fusion's kind (kLoop, kInput, kOutput) or a custom call's target.
    op_name, source : from the instruction's metadata: the name stack of the user's
        operation (`jit(f)/layer/mul`) and its line (`file.py:12`); "" when unknown.
    """

    instruction: str
    opcode: str
    role: str
    kernel: str
    computation: str
    kind: str
    op_name: str = ""
    source: str = ""


# What a profiled module declares: its log (a buffer `[count, capacity, dropped, 0,
# records...]` whose address the executable stores here) and the runtime's two functions.
PROFILE_DECLARATIONS = ("@jl_profile_log = global ptr null, align 8",
                        "declare i64 @jl_profile_clock()",
                        "declare void @jl_profile_record(ptr, i64, i64)")


def _call_role(inst: HloInstruction, kernel: Kernel, k: int, count: int) -> str:
    """The role of `kernel`, the k-th of an instruction's `count` kernel calls."""
    if inst.opcode is _O.CUSTOM_CALL:
        return "custom-call"
    if count == 2:  # a GEMM, then the epilogue fusion applied to its result
        return ("gemm", "epilogue")[k]
    if kernel.modules and inst.opcode in (_O.DOT, _O.FUSION):  # calls the GEMM library
        return "gemm"
    return "kernel"


def _overlap(a: Region, b: Region) -> bool:
    return a[0] == b[0] and a[1] < b[1] + b[2] and b[1] < a[1] + a[2] and a[2] > 0 and b[2] > 0


def result_moves(plan: ComputationPlan) -> list[tuple[int, BufferSlice]] | None:
    """The copies (leaf, from) that put each result leaf in the memory its caller handed
    over (`plan.targets`), in order: a copy comes before any copy that writes memory it
    reads. None when the copies form a cycle (results that trade places: a swap would need
    a temporary)."""
    pending = [(leaf, home) for leaf, home in enumerate(plan.homes)
               if home.size and plan.region(home) != plan.targets[leaf]]
    ordered = []
    while pending:
        ready = next((m for m in pending if not any(
            _overlap(plan.targets[m[0]], plan.region(o[1])) for o in pending if o is not m)),
            None)
        if ready is None:
            return None
        ordered.append(ready)
        pending.remove(ready)
    return ordered


def disjoint(inputs: list[BufferSlice], outputs: tuple[BufferSlice, ...]) -> bool:
    """No output overlaps an input or another output (then pointers may be noalias)."""
    def overlap(a: BufferSlice, b: BufferSlice) -> bool:
        return a.allocation == b.allocation and a.offset < b.offset + b.size and \
            b.offset < a.offset + a.size
    for i, out in enumerate(outputs):
        if any(overlap(out, x) for x in inputs if x.size) or any(
                overlap(out, o) for o in outputs[i + 1:] if o.size):
            return False
    return True
