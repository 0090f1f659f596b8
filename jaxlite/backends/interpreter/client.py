"""The interpreter's client: one host device, numpy buffers, compilation = the pass pipeline."""
from __future__ import annotations

import numpy as np

from jaxlite.backends.base import Client, CompileOptions, Device
from jaxlite.backends.interpreter.buffer import InterpreterBuffer, InterpreterDevice
from jaxlite.backends.interpreter.executable import InterpreterExecutable
from jaxlite.xla.ir import HloModule
from jaxlite.xla.pipeline import optimize


class InterpreterClient(Client):
    """The interpreter backend (platform "interpreter").

    `compile` runs the shared pass pipeline (`jaxlite.xla.pipeline.optimize`, verifying
    after every pass when the options ask for it) and keeps both modules; executing
    evaluates the optimized module with `jaxlite.xla.evaluator`.
    """

    def __init__(self, platform: str = "interpreter") -> None:
        self.platform = platform
        self.platform_version = f"jaxlite HLO evaluator (numpy {np.__version__})"
        self._devices = [InterpreterDevice(self, 0)]

    def devices(self) -> list[Device]:
        return list(self._devices)

    def buffer_from_numpy(self, array: np.ndarray,
                          device: Device | None = None) -> InterpreterBuffer:
        target = self._own_device(device)
        return InterpreterBuffer(np.asarray(array), target)

    def compile(self, module: HloModule, options: CompileOptions) -> InterpreterExecutable:
        num_params = len(module.entry.parameters)
        bad = [i for i in options.donated_parameters if not 0 <= i < num_params]
        if bad:
            raise ValueError(f"compile: donated parameters {bad} of {module.name} are out of "
                             f"range; the entry has {num_params} parameters.")
        # The pipeline reads `verify` (the verifier on the input and after every pass) and
        # `dump_dir` (the module after every pass) from the options.
        optimized = optimize(module, options)
        return InterpreterExecutable(self, self._devices[0], module, optimized, options)

    def _own_device(self, device: Device | None) -> InterpreterDevice:
        if device is None:
            return self._devices[0]
        if device not in self._devices:
            raise ValueError(f"buffer_from_numpy: {device!r} does not belong to the "
                             f"{self.platform} backend; its devices are {self._devices}.")
        return device  # type: ignore[return-value]


def make_client() -> InterpreterClient:
    """The factory the registry calls (lazily, once)."""
    return InterpreterClient()
