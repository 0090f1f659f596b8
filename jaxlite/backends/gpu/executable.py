"""The gpu backend's executable: an optimized module prepared as a `Program` for one
launcher (mirrors `PjRtLoadedExecutable` on XLA's GPU client).

`execute` enqueues the whole program on the launcher's stream and returns buffers that
are ready when the launcher's event recorded after the program is reached; it waits on
the device only where the program reads a value back (a loop's predicate, a host
fallback). Results may share memory with the arguments. Arguments are never written,
but donated ones: their memory may take a result or an in-place update (see
`ownership`), and they are deleted after the call.
"""
from __future__ import annotations

from typing import Sequence

from jaxlite.backends import analysis
from jaxlite.backends.base import (Buffer, Client, CompileOptions, Executable, MemoryAnalysis,
                                   check_arguments, entry_result_shapes, unknown_stage)
from jaxlite.backends.gpu.buffer import GpuBuffer, GpuDevice
from jaxlite.backends.gpu.device_ops import to_logical, to_memory
from jaxlite.backends.gpu.ownership import fresh
from jaxlite.backends.gpu.program import Program
from jaxlite.backends.gpu.render import render_many
from jaxlite.xla.buffer_assignment import assign_buffers
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.text import print_module

__all__ = ["GpuExecutable"]

STAGES = ("hlo", "optimized_hlo", "kernels", "cuda")


class GpuExecutable(Executable):
    """A module, its optimized form and the program that runs the latter on a GPU.

    Parameters
    ----------
    client : the gpu client that compiled it.
    device : where its results live.
    module, optimized : the module as given to `compile` and after the pass pipeline.
    options : the compile options (donated parameters among them).
    program : the optimized module's steps for the client's launcher.
    """

    def __init__(self, client: Client, device: GpuDevice, module: HloModule,
                 optimized: HloModule, options: CompileOptions, program: Program) -> None:
        self._client = client
        self._device = device
        self._module = module
        self._optimized = optimized
        self.options = options
        self.program = program
        self._launcher = program.launcher
        self._result_shapes = entry_result_shapes(optimized)
        self._tuple_result = optimized.entry.root.shape.is_tuple
        root = optimized.entry.root
        results = root.operands if self._tuple_result and root.opcode is Opcode.TUPLE \
            else (root,) * len(self._result_shapes)
        # results in memory of their own (not an argument's, a constant's or a loop's)
        self._fresh_results = [fresh(r) or _donated_update(r, options) for r in results]

    @property
    def client(self) -> Client:
        return self._client

    def hlo_module(self, optimized: bool = True) -> HloModule:
        return self._optimized if optimized else self._module

    def execute(self, buffers: Sequence[Buffer]) -> list[Buffer]:
        check_arguments(self, buffers)
        xp, launcher = self._launcher.xp, self._launcher
        params = self._optimized.entry.parameters
        with launcher.scope():
            args = [to_memory(xp, self._on_device(b), p.shape) for b, p in zip(buffers, params)]
            args = self._writable_donations(buffers, args)
            result = self.program.run(self._optimized.entry, args)
            values = list(result) if self._tuple_result else [result]
            # (ascontiguousarray makes scalars 1-d: the reshape restores their rank)
            arrays = [xp.ascontiguousarray(to_logical(xp, v, s)).reshape(s.dims)
                      for v, s in zip(values, self._result_shapes)]
            event = launcher.record()
        outs = [GpuBuffer(a, s.dtype, self._device, launcher, event, owns)
                for a, s, owns in zip(arrays, self._result_shapes, self._fresh_results)]
        for i in self.options.donated_parameters:
            buffers[i].delete()
        return outs

    def _writable_donations(self, buffers: Sequence[Buffer], args: list) -> list:
        """`args` with a copy of each donated array the program may not write: one also
        passed in another position, or one whose memory its buffer does not own (a
        buffer of another client was copied here by `_on_device`: that copy is ours)."""
        for i in self.options.donated_parameters:
            shared = any(buffers[i] is b for j, b in enumerate(buffers) if j != i)
            ours = isinstance(buffers[i], GpuBuffer) and \
                buffers[i].device.client is self._client
            if shared or (ours and not buffers[i].owns_memory):
                args[i] = self._launcher.xp.copy(args[i])
        return args

    def _on_device(self, buffer: Buffer) -> object:
        """A buffer's device array; buffers of other clients are copied here."""
        if isinstance(buffer, GpuBuffer) and buffer.device.client is self._client:
            return buffer.device_array()
        return self._launcher.to_device(buffer.to_numpy())

    def text(self, stage: str = "optimized_hlo") -> str:
        """"hlo", "optimized_hlo", "kernels" (how each instruction runs: kernel, xp, host
        and why) or "cuda" (the generated kernels' source, in the launcher's dialect)."""
        if stage not in STAGES:
            raise unknown_stage(stage, STAGES, self._client.platform)
        if stage == "hlo":
            return print_module(self._module)
        if stage == "optimized_hlo":
            return print_module(self._optimized)
        if stage == "cuda":
            kernels = [k for fk in self.program.kernels for k in fk.kernels]
            return render_many(kernels, self._launcher.dialect)
        lines = []
        for step in self.program.plan():
            if step.where == "none":
                continue
            why = f"  ({step.why})" if step.why else ""
            lines.append(f"{step.where:10s}%{step.inst.name} = {step.inst.opcode.text}{why}")
        return "\n".join(lines) + "\n"

    def cost_analysis(self) -> dict[str, float]:
        """Estimated work of the optimized module (see `jaxlite.backends.analysis`)."""
        return analysis.cost_analysis(self._optimized)

    def memory_analysis(self) -> MemoryAnalysis:
        """Sizes of arguments, results and donated results; `temp_size_in_bytes` is buffer
        assignment's peak for the scheduled module (the program itself allocates each
        value from the array module's pool)."""
        donated = self.options.donated_parameters
        temp = assign_buffers(self._optimized, donated).temp_size_in_bytes
        return analysis.memory_analysis(self._optimized, donated, temp_size_in_bytes=temp)

    def __repr__(self) -> str:
        return f"<GpuExecutable {self._optimized.name} on {self._device!r}>"


def _donated_update(result: HloInstruction, options: CompileOptions) -> bool:
    """Whether `result` is an update of a donated parameter (its memory, given up)."""
    return result.opcode in (Opcode.DYNAMIC_UPDATE_SLICE, Opcode.SCATTER) and \
        result.operands[0].opcode is Opcode.PARAMETER and \
        result.operands[0].attr("number") in options.donated_parameters
