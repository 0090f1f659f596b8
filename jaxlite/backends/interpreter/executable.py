"""The interpreter's executable: the optimized module, run by the HLO evaluator (an SPMD
module, once per partition, by the SPMD evaluator: `execute_partitions`)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxlite.backends import analysis
from jaxlite.backends.base import (Buffer, Client, CompileOptions, Executable, MemoryAnalysis,
                                   check_arguments, entry_result_shapes, unknown_stage)
from jaxlite.backends.interpreter.buffer import InterpreterBuffer, InterpreterDevice
from jaxlite.xla.buffer_assignment import assign_buffers
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.evaluator_spmd import evaluate_spmd
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import print_module

STAGES = ("hlo", "optimized_hlo")


class InterpreterExecutable(Executable):
    """A module and its optimized form; `execute` evaluates the optimized one with numpy.

    Parameters
    ----------
    client : the interpreter client that compiled it.
    device : where its results live.
    module : the module as given to `compile` (the "hlo" stage).
    optimized : the module after the pass pipeline (the "optimized_hlo" stage).
    options : the compile options (donated parameters among them).
    """

    def __init__(self, client: Client, device: InterpreterDevice, module: HloModule,
                 optimized: HloModule, options: CompileOptions) -> None:
        self._client = client
        self._device = device
        self._module = module
        self._optimized = optimized
        self.options = options
        self._texts: dict[str, str] = {}
        self._result_shapes = entry_result_shapes(optimized)
        self._tuple_result = optimized.entry.root.shape.is_tuple

    @property
    def client(self) -> Client:
        return self._client

    def hlo_module(self, optimized: bool = True) -> HloModule:
        return self._optimized if optimized else self._module

    def execute(self, buffers: Sequence[Buffer]) -> list[Buffer]:
        check_arguments(self, buffers)
        args = [np.asarray(b.to_numpy()) for b in buffers]
        # Overflow, 0/0 and friends give inf/nan as XLA does; numpy's warnings are noise.
        with np.errstate(all="ignore"):
            result = evaluate_module(self._optimized, args)
        values = list(result) if self._tuple_result else [result]
        if len(values) != len(self._result_shapes):
            raise AssertionError(f"the evaluator returned {len(values)} results for "
                                 f"{len(self._result_shapes)} outputs of "
                                 f"{self._optimized.name}")
        outs = [InterpreterBuffer(self._checked(i, value), self._device)
                for i, value in enumerate(values)]
        for i in self.options.donated_parameters:
            buffers[i].delete()
        return outs

    def execute_partitions(self, args: Sequence[Sequence[np.ndarray]]
                           ) -> list[list[np.ndarray]]:
        """Run an SPMD program (`num_partitions = N`) once per partition, partition p on
        `args[p]`, with `evaluate_spmd` (the role of XLA's `ExecuteSharded`); returns each
        partition's results. The reference the cpu backend's SPMD executables are checked
        against."""
        count = self._optimized.num_partitions
        if len(args) != count:
            raise ValueError(f"execute_partitions: {self._optimized.name} runs on {count} "
                             f"partitions, got arguments for {len(args)}.")
        for arrays in args:
            check_arguments(self, arrays)
        with np.errstate(all="ignore"):
            results = evaluate_spmd(self._optimized, [[np.asarray(a) for a in arrays]
                                                      for arrays in args], count)
        return [[self._checked(i, value) for i, value in enumerate(
            list(result) if self._tuple_result else [result])] for result in results]

    def _checked(self, index: int, value: object) -> np.ndarray:
        """The evaluator's result `index` as an array of the module's declared type."""
        array = np.asarray(value)
        shape = self._result_shapes[index]
        if array.shape != shape.dims or array.dtype != shape.dtype:
            raise AssertionError(
                f"the evaluator produced {array.dtype.name}{list(array.shape)} for output "
                f"{index} of {self._optimized.name}, declared {shape}")
        return array

    def text(self, stage: str = "optimized_hlo") -> str:
        if stage not in STAGES:
            raise unknown_stage(stage, STAGES, self._client.platform)
        if stage not in self._texts:
            module = self._module if stage == "hlo" else self._optimized
            self._texts[stage] = print_module(module)
        return self._texts[stage]

    def cost_analysis(self) -> dict[str, float]:
        """Estimated work of the optimized module (see `jaxlite.backends.analysis`)."""
        return analysis.cost_analysis(self._optimized)

    def memory_analysis(self) -> MemoryAnalysis:
        """Sizes of arguments, results and donated results of the optimized module.

        `temp_size_in_bytes` is the peak of buffer assignment's arena for the scheduled
        module: what a backend that follows the assignment needs. (The interpreter itself
        keeps every intermediate as a separate numpy array.)
        """
        donated = self.options.donated_parameters
        temp = assign_buffers(self._optimized, donated).temp_size_in_bytes
        return analysis.memory_analysis(self._optimized, donated, temp_size_in_bytes=temp)

    def __repr__(self) -> str:
        return f"<InterpreterExecutable {self._optimized.name}>"
