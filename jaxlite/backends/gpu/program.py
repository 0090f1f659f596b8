"""An optimized module as the gpu backend runs it: its computations walked in schedule
order, each instruction run by generated kernels, by the array module `xp`, or on the host
(the GPU side of XLA's thunk sequence, interpreted from Python).

Every array value is a flat device array in its shape's memory order; tuples are Python
tuples of them. Per instruction of the entry computation and of the computations its
control flow calls:

- fusions a builder of `build` handles: their kernels, through the launcher; output
  fusions of a dot or a convolution and its elementwise epilogue: the product first
  (`xp` dot; `convolution`: im2col kernel and GEMM), then the epilogue's kernels
  (`dot_epilogue`); a loop fusion may write its result into a donated argument
  (`ownership.donated_output`);
- gather, dynamic-slice and reduce-window: a loop kernel each (`update_kernels.as_fusion`;
  `window_reductions`);
  dynamic-update-slice and scatter: an update kernel writing its operand in place where
  `ownership` allows (else into a copy); sort: `sort_kernels` (a bitonic kernel, or
  CuPy's sort for long rows with a plain order); convolution: `convolution`;
- parameters, constants (uploaded once, at compile time), tuples, get-tuple-element: no
  work; bitcast, copy, transpose, reshape and dots (floating-point, complex and integer:
  cuBLAS, or CuPy's integer kernel, with wrap-around sums) with `xp` (`device_ops`),
  small ones other than complex as the tiled GEMM kernel (`gemm_kernels`);
- `while`: the loop runs on the host, the condition's predicate read back each iteration
  (one 1-byte copy and a stream synchronization per iteration), then the body's kernels
  enqueued; state elements the body updates in place are copied once before the first
  iteration (`ownership.loop_owned`). Why not a loop on the device: CuPy launches
  kernels one by one from the host and offers neither CUDA graphs' conditional nodes
  (CUDA 12.4+, not in CuPy's API) nor dynamic parallelism; a persistent kernel running
  the whole body would need a grid-wide barrier between the body's kernels (cooperative
  launch) and would hold the body's dots and sorts, which run as library calls or
  several kernels. For the scans that make most loops the read-back is a few
  microseconds per iteration against the body's launches. `conditional`: the selector
  read back likewise, the branch run; `call`: its computation run;
- custom calls: typed FFI handlers registered for CUDA / ROCm on device memory and the
  stream (`ffi_calls`); linear algebra and FFT with `library_calls` (cuSOLVER, cuBLAS
  and cuFFT through CuPy, on the device);
- everything else, and what a builder declines: `host_fallback` (the HLO evaluator on
  host copies of the operands), listed with the reason in `plan`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from jaxlite.backends.gpu import device_ops
from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.build import UnsupportedFusion, build_fusion
from jaxlite.backends.gpu.convolution import ConvolutionPlan
from jaxlite.backends.gpu.dot_epilogue import split_dot_fusion
from jaxlite.backends.gpu.ffi_calls import ffi_rule
from jaxlite.backends.gpu.fusion_kernels import FusionKernels, kernel_name
from jaxlite.backends.gpu.gemm_kernels import build_tiled_gemm, use_tiled_gemm
from jaxlite.backends.gpu.host_fallback import HostInstruction
from jaxlite.backends.gpu.library_calls import library_rule
from jaxlite.backends.gpu.ownership import donated_output, loop_owned, overwritable
from jaxlite.backends.gpu.render import C_TYPES
from jaxlite.backends.gpu.sort_kernels import build_sort, xp_sort_rule
from jaxlite.backends.gpu.update_kernels import as_fusion, build_dynamic_update, build_scatter
from jaxlite.xla.evaluator_arrays import to_memory_order
from jaxlite.xla.evaluator_reductions import accumulation_dtype
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode

__all__ = ["Program", "Step"]

_O = Opcode
_STRUCTURAL = (_O.PARAMETER, _O.TUPLE, _O.GET_TUPLE_ELEMENT, _O.CONSTANT)


@dataclass(frozen=True)
class Step:
    """How one instruction runs: `where` is "kernel", "xp", "xp+kernel" (a dot, then its
    epilogue's kernels), "ffi" (a typed FFI handler on the stream), "host", "control" or
    "none";
    `why` says why an instruction runs on the host."""
    inst: HloInstruction
    where: str
    run: Callable[[list[Any]], Any]
    why: str = ""


class Program:
    """The steps of every computation of `module` the entry reaches through control flow.

    Parameters
    ----------
    module : the optimized module.
    launcher : a launcher (see `launchers`): build options, `prepare_all`, `launch`, `xp`.
    """

    def __init__(self, module: HloModule, launcher: Any,
                 donated: frozenset[int] = frozenset()) -> None:
        self.module = module
        self.launcher = launcher
        self.xp = launcher.xp
        self.donated = frozenset(donated)
        self.kernels: list[FusionKernels] = []
        self._steps: dict[int, list[Step]] = {}
        # per computation, per step: the values that step uses last (freed after it, so
        # that device memory holds only live values, as buffer assignment would)
        self._last_uses: dict[int, list[tuple[int, ...]]] = {}
        self._loop_owned: dict[int, frozenset[int]] = {}  # while body -> owned elements
        self._overwritable: frozenset[int] = frozenset()  # of the computation prepared
        self._comp: HloComputation = module.entry
        self._prepared: list[Any] = []  # the launcher's handles, one per `kernels` entry
        self._prepare(module.entry)
        # every kernel of the program compiled at once (one NVRTC run, not one per fusion)
        self._prepared = list(launcher.prepare_all(self.kernels))

    # ------------------------------------------------------------------ preparation
    def _prepare(self, comp: HloComputation) -> None:
        if id(comp) in self._steps:
            return
        donated = self.donated if comp is self.module.entry else frozenset()
        self._comp = comp
        self._overwritable = overwritable(comp, self._loop_owned.get(id(comp), frozenset()),
                                          donated)
        self._steps[id(comp)] = [self._step(inst) for inst in comp.instructions]
        self._last_uses[id(comp)] = _last_uses(comp)
        for inst in comp.instructions:
            if inst.opcode in (_O.WHILE, _O.CONDITIONAL, _O.CALL):
                for called in inst.called:
                    self._prepare(called)

    def _step(self, inst: HloInstruction) -> Step:
        op = inst.opcode
        if op in _STRUCTURAL:
            return Step(inst, "none", self._structural(inst))
        if op is _O.FUSION:
            return self._fusion(inst)
        if op in (_O.GATHER, _O.DYNAMIC_SLICE) or (  # a loop kernel, as if fused alone
                op is _O.REDUCE_WINDOW and not inst.shape.is_tuple):
            return replace(self._fusion(as_fusion(inst)), inst=inst)
        if op is _O.DYNAMIC_UPDATE_SLICE:
            return self._update(inst, build_dynamic_update)
        if op is _O.SCATTER:
            return self._update(inst, build_scatter)
        if op is _O.SORT:
            return self._sort(inst)
        if op is _O.CONVOLUTION:
            try:
                convolve = self._product(inst)
            except UnsupportedFusion as error:
                return self._host(inst, str(error))
            return Step(inst, "xp+kernel", lambda ops: convolve(ops[0], ops[1]))
        if op in device_ops.LAYOUT_OPCODES and not inst.shape.is_tuple and (
                inst.shape.dtype == inst.operands[0].shape.dtype):
            return Step(inst, "xp", lambda ops: device_ops.layout_op(self.xp, inst, ops[0]))
        if op is _O.DOT:
            try:
                multiply = self._product(inst)
            except UnsupportedFusion as error:
                return self._host(inst, str(error))
            where = "kernel" if _tiled(inst) else "xp"
            return Step(inst, where, lambda ops: multiply(ops[0], ops[1]))
        if op is _O.WHILE:
            owned = self._loop_owned[id(inst.called[1])] = loop_owned(inst)
            return Step(inst, "control", lambda ops: self._while(inst, ops[0], owned))
        if op is _O.CONDITIONAL:
            return Step(inst, "control", lambda ops: self._conditional(inst, ops))
        if op is _O.CALL:
            return Step(inst, "control", lambda ops: self.run(inst.called[0], ops))
        if op is _O.CUSTOM_CALL:
            return self._custom_call(inst)
        return self._host(inst, f"no gpu kernel or array-module rule for {op.text} yet")

    def _fusion(self, inst: HloInstruction) -> Step:
        """The kernels of a fusion (written into a donated argument where
        `ownership.donated_output` allows); a dot then its epilogue's kernels for an
        output fusion (`dot_epilogue`); the host when neither builds."""
        try:
            launch = self._kernels(inst, donated_output(inst, self._comp, self.donated)
                                   if self._comp is self.module.entry else None)
            return Step(inst, "kernel", lambda ops: launch(ops))
        except UnsupportedFusion as error:
            why = str(error)
        split = split_dot_fusion(inst)
        if split is None:
            return self._host(inst, why)
        try:
            product = self._product(split.dot)
            epilogue = None if split.epilogue is None else self._kernels(split.epilogue)
        except UnsupportedFusion as error:
            return self._host(inst, f"{why}; split at its {split.dot.opcode.text}: {error}")
        lhs, rhs = split.operands

        def run(ops: list[Any]) -> Any:
            value = product(ops[lhs], ops[rhs])
            return value if epilogue is None else epilogue(ops + [value])
        return Step(inst, "xp+kernel", run)

    def _product(self, inst: HloInstruction) -> Callable[[Any, Any], Any]:
        """`(lhs, rhs) -> result` of a dot (`xp`) or a convolution (an im2col kernel and
        a GEMM); `UnsupportedFusion` for types the array module does not take."""
        storage = self.launcher.storage_dtype
        if inst.opcode is _O.DOT:
            if not device_ops.dot_supported(inst, storage):
                raise UnsupportedFusion("a dot of bools, of floats into integers, or of "
                                        "types the array module does not store")
            if _tiled(inst):
                return self._tiled_gemm(inst, *_gemm_sizes(inst))
            return lambda lhs, rhs: device_ops.dot(self.xp, inst, lhs, rhs)
        if any(storage(s.dtype) != s.dtype for s in (inst.shape, inst.operands[1].shape)):
            raise UnsupportedFusion(f"convolution %{inst.name} of types the array module "
                                    "does not store")
        plan = ConvolutionPlan(inst, self.launcher.build_options)
        im2col = self._kernels(inst, build=lambda _, options: plan.kernels)
        return lambda lhs, rhs: plan.run(self.xp, im2col, lhs, rhs)

    def _tiled_gemm(self, inst: HloInstruction, batch: int, m: int, n: int,
                    k: int) -> Callable[[Any, Any], Any]:
        """A small dot as one generated tiled-GEMM kernel (`gemm_kernels`) on its
        operands brought to (batch, m, k) and (batch, k, n) by `xp`."""
        lhs, rhs = (o.shape.dtype for o in inst.operands)
        accumulation = device_ops.summing_dtype(
            accumulation_dtype(lhs, rhs, inst.shape.dtype)).name
        options = self.launcher.build_options
        kernels = build_tiled_gemm(f"{kernel_name(inst, options)}_gemm", batch, m, n, k,
                                   (lhs.name, rhs.name), accumulation,
                                   inst.shape.dtype.name, options)
        launch = self._kernels(inst, build=lambda _, __: kernels)
        xp = self.xp

        def run(lhs_flat: Any, rhs_flat: Any) -> Any:
            a, b = device_ops.canonical_operands(xp, inst, lhs_flat, rhs_flat)
            c = launch([xp.ascontiguousarray(a).reshape(-1), xp.ascontiguousarray(b).reshape(-1)])
            return device_ops.to_memory(xp, c.reshape(inst.shape.dims), inst.shape)
        return run

    def _kernels(self, fusion: HloInstruction, into: int | None = None,
                 build: Callable = build_fusion) -> Callable[[list[Any]], Any]:
        """Build the kernels of `fusion` (prepared with the program's others); a function
        launching them on the fusion's operands, the result written into operand `into`
        when it is given. Raises `UnsupportedFusion` when no builder handles it."""
        kernels = build(fusion, self.launcher.build_options)
        _check_renderable(kernels)
        if into is not None and not (len(kernels.kernels) == 1 and
                                     kernels.kernels[0].notes[0].startswith("loop")):
            into = None  # only a loop kernel reads each element before writing it
        index = len(self.kernels)
        self.kernels.append(kernels)
        return lambda ops: self._launch(fusion, kernels, self._prepared[index], ops, into)

    def _update(self, inst: HloInstruction, build: Callable) -> Step:
        """An update kernel (`update_kernels`): it writes into its first operand, which
        is copied first unless `ownership` says nothing else reads it."""
        try:
            launch = self._kernels(inst, build=build)
        except UnsupportedFusion as error:
            return self._host(inst, str(error))
        in_place = id(inst.operands[0]) in self._overwritable

        def run(ops: list[Any]) -> Any:
            return launch(ops if in_place else [self.xp.copy(ops[0])] + ops[1:])
        return Step(inst, "kernel", run, "" if in_place else "after a copy of its operand")

    def _sort(self, inst: HloInstruction) -> Step:
        """A bitonic-sort kernel where a row fits in shared memory; CuPy's sort for a
        plain order of longer rows; else the host (`sort_kernels`)."""
        try:
            launch = self._kernels(inst, build=build_sort)
            return Step(inst, "kernel", lambda ops: launch(ops))
        except UnsupportedFusion as error:
            why = str(error)
        rule = xp_sort_rule(inst)
        if rule is None or any(self.launcher.storage_dtype(o.shape.dtype) != o.shape.dtype
                               for o in inst.operands):
            return self._host(inst, f"{why}, and its comparator is not a plain order")
        return Step(inst, "xp", lambda ops: rule(self.xp, ops))

    def _custom_call(self, inst: HloInstruction) -> Step:
        """A typed FFI handler of the launcher's platform on device memory and its stream
        (`ffi_calls`); linear algebra and FFT with the array module's libraries
        (cuSOLVER, cuFFT: `library_calls`); else the host."""
        call, why = ffi_rule(inst, self.launcher)
        if call is not None:
            return Step(inst, "ffi", call)
        rule = library_rule(inst, self.xp, self.launcher.storage_dtype)
        if rule is not None:
            return Step(inst, "xp", rule)
        return self._host(inst, why or f"custom call {inst.attr('target')!r}: no device rule")

    def _host(self, inst: HloInstruction, why: str) -> Step:
        runner = HostInstruction(inst, self.launcher.to_host, self.launcher.to_device)
        return Step(inst, "host", runner, why)

    def _structural(self, inst: HloInstruction) -> Callable[[list[Any]], Any]:
        op = inst.opcode
        if op is _O.CONSTANT:
            value = self._upload_constant(inst)
            return lambda ops: value
        if op is _O.TUPLE:
            return tuple
        if op is _O.GET_TUPLE_ELEMENT:
            index = inst.attr("index")
            return lambda ops: ops[0][index]
        return lambda ops: ops  # parameters are bound by `run`

    def _upload_constant(self, inst: HloInstruction) -> Any:
        def upload(value: Any, shape: Any) -> Any:
            if shape.is_tuple:
                return tuple(upload(v, s) for v, s in zip(value, shape.tuple_shapes))
            array = np.asarray(value).astype(shape.dtype, copy=False)
            return self.launcher.to_device(to_memory_order(array, shape))
        return upload(inst.attr("literal"), inst.shape)

    # -------------------------------------------------------------------- running
    def run(self, comp: HloComputation, args: list[Any]) -> Any:
        """The value of `comp` on `args` (device values), its steps run in order."""
        env: dict[int, Any] = {}
        for step, dead in zip(self._steps[id(comp)], self._last_uses[id(comp)]):
            inst = step.inst
            if inst.opcode is _O.PARAMETER:
                env[id(inst)] = args[inst.attr("number")]
            else:
                env[id(inst)] = step.run([env[id(o)] for o in inst.operands])
            for key in dead:
                del env[key]
        return env[id(comp.root)]

    def _launch(self, inst: HloInstruction, kernels: FusionKernels, prepared: Any,
                operands: list[Any], into: int | None = None) -> Any:
        memory = {b.name: x for (b, _), x in zip(kernels.inputs, operands)}
        if into is not None:  # (its single output: see `ownership.donated_output`)
            memory[kernels.outputs[0][0].name] = operands[into]
        for buffer, shape in kernels.outputs:
            if buffer.name not in memory:  # update kernels write their operand, `in0`
                memory[buffer.name] = self.launcher.empty(shape.size, shape.dtype)
        for buffer in kernels.scratch:
            memory[buffer.name] = self.launcher.empty(buffer.size, ir.dtype_of(buffer.dtype))
        self.launcher.launch(prepared, memory)
        outs = [memory[b.name] for b, _ in kernels.outputs]
        return tuple(outs) if inst.shape.is_tuple else outs[0]

    def _predicate(self, value: Any, dtype: Any) -> Any:
        return self.launcher.to_host(value, dtype).reshape(-1)[0]

    def _while(self, inst: HloInstruction, state: Any, owned: frozenset[int]) -> Any:
        condition, body = inst.called
        if owned:  # the loop's own copies of the elements its body updates in place
            state = tuple(self.xp.copy(v) if k in owned else v for k, v in enumerate(state))
        while bool(self._predicate(self.run(condition, [state]), np.bool_)):
            state = self.run(body, [state])
        return state

    def _conditional(self, inst: HloInstruction, ops: list[Any]) -> Any:
        selector_shape = inst.operands[0].shape
        selector = self._predicate(ops[0], selector_shape.dtype)
        branches = inst.called
        if selector_shape.dtype == np.bool_:
            index = 0 if bool(selector) else 1  # branches are (true, false)
        else:
            index = int(selector)
            index = index if 0 <= index < len(branches) else len(branches) - 1
        return self.run(branches[index], [ops[index + 1]])

    # ------------------------------------------------------------------- reporting
    def plan(self) -> list[Step]:
        """Every step of every computation run, in order (for `text("kernels")`)."""
        return [step for steps in self._steps.values() for step in steps]



def _gemm_sizes(dot: HloInstruction) -> tuple[int, int, int, int] | None:
    """(batch, m, n, k) of a dot that `gemm_kernels.use_tiled_gemm` gives the generated
    kernel, else None."""
    lhs, rhs = (o.shape.dims for o in dot.operands)
    lc, rc = dot.attr("lhs_contracting", ()), dot.attr("rhs_contracting", ())
    lb, rb = dot.attr("lhs_batch", ()), dot.attr("rhs_batch", ())

    def size(dims: tuple, axes: Any) -> int:
        return int(np.prod([dims[a] for a in axes], dtype=np.int64))
    free_l = [d for d in range(len(lhs)) if d not in (*lc, *lb)]
    free_r = [d for d in range(len(rhs)) if d not in (*rc, *rb)]
    sizes = (size(lhs, lb), size(lhs, free_l), size(rhs, free_r), size(lhs, lc))
    return sizes if use_tiled_gemm(*sizes[1:]) else None


def _tiled(dot: HloInstruction) -> bool:
    """Whether a dot runs as the generated tiled GEMM: small, and not complex (complex
    products go to cuBLAS through `xp`; the renderer has no complex type)."""
    return _gemm_sizes(dot) is not None and dot.shape.dtype.kind != "c"


def _check_renderable(kernels: FusionKernels) -> None:
    """`UnsupportedFusion` for kernels of element types the renderer has no C type for
    (complex numbers: the builders move them, but CUDA C would need complex arithmetic)."""
    for kernel in kernels.kernels:
        for value in (*kernel.params, *kernel.shared, *kernel.constants):
            if value.dtype not in C_TYPES:
                raise UnsupportedFusion(f"{kernels.name}: no gpu kernel of {value.dtype} "
                                        "elements yet")


def _last_uses(comp: HloComputation) -> list[tuple[int, ...]]:
    """For each instruction of `comp` in order, the ids of the values whose last use it
    is (never the root's; an unused value dies where it is made)."""
    last: dict[int, int] = {}
    for position, inst in enumerate(comp.instructions):
        last[id(inst)] = position
        for operand in inst.operands:
            last[id(operand)] = position
    last.pop(id(comp.root), None)
    dead: list[list[int]] = [[] for _ in comp.instructions]
    for key, position in last.items():
        dead[position].append(key)
    return [tuple(d) for d in dead]
