"""A third-party backend for jaxlite, shipped only with the tests.

It proves that a package can add a backend without touching jaxlite: it implements the
runtime interface of `jaxlite.backends.base` on its own, and its entry points (group
`jaxlite.backends`, see pyproject.toml) are found by the registry. Its "device memory" is
a private copy of the bytes, as a real accelerator's would be; it compiles by verifying the
module (no passes) and runs it with jaxlite's HLO evaluator.

Two hooks show both forms of the entry point contract: `initialize` registers the backend
"testplugin" itself (with a low priority, so that it never becomes the default by
accident), and `factory_hook` returns a factory, which the registry registers under the
entry point's name ("testplugin_factory") with the plugin priority.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxlite.backends import analysis
from jaxlite.backends.base import (Buffer, Client, CompileOptions, Device, Executable,
                                   MemoryAnalysis, check_arguments, entry_result_shapes,
                                   unknown_stage)
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import print_module
from jaxlite.xla.verifier import verify_module

PRIORITY = -10
CALLS = {"factory": 0, "execute": 0}


class PluginDevice(Device):
    def __init__(self, client: "PluginClient") -> None:
        self.client = client
        self.id = 0
        self.platform = client.platform


class PluginBuffer(Buffer):
    """Bytes in "device memory": a private copy, read back on `to_numpy`."""

    def __init__(self, array: np.ndarray, device: PluginDevice) -> None:
        self._bytes: bytes | None = np.ascontiguousarray(array).tobytes()
        self._shape = tuple(array.shape)
        self._dtype = array.dtype
        self._device = device

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> PluginDevice:
        return self._device

    def to_numpy(self) -> np.ndarray:
        if self._bytes is None:
            raise RuntimeError("testplugin: buffer deleted")
        array = np.frombuffer(self._bytes, self._dtype).reshape(self._shape)
        return array

    def delete(self) -> None:
        self._bytes = None

    def is_deleted(self) -> bool:
        return self._bytes is None


class PluginExecutable(Executable):
    def __init__(self, client: "PluginClient", module: HloModule,
                 options: CompileOptions) -> None:
        self._client = client
        self._module = module
        self.options = options

    @property
    def client(self) -> Client:
        return self._client

    def hlo_module(self, optimized: bool = True) -> HloModule:
        return self._module

    def execute(self, buffers: Sequence[Buffer]) -> list[Buffer]:
        check_arguments(self, buffers)
        CALLS["execute"] += 1
        with np.errstate(all="ignore"):
            result = evaluate_module(self._module, [b.to_numpy() for b in buffers])
        values = list(result) if self._module.entry.root.shape.is_tuple else [result]
        shapes = entry_result_shapes(self._module)
        device = self._client.devices()[0]
        outs = [PluginBuffer(np.asarray(v, s.dtype), device) for v, s in zip(values, shapes)]
        for i in self.options.donated_parameters:
            buffers[i].delete()
        return outs

    def text(self, stage: str = "optimized_hlo") -> str:
        if stage not in ("hlo", "optimized_hlo"):
            raise unknown_stage(stage, ("hlo", "optimized_hlo"), self._client.platform)
        return print_module(self._module)

    def cost_analysis(self) -> dict[str, float]:
        return analysis.cost_analysis(self._module)

    def memory_analysis(self) -> MemoryAnalysis:
        return analysis.memory_analysis(self._module, self.options.donated_parameters)


class PluginClient(Client):
    def __init__(self, platform: str = "testplugin") -> None:
        self.platform = platform
        self.platform_version = "testplugin 0.1"
        self._devices = [PluginDevice(self)]

    def devices(self) -> list[Device]:
        return list(self._devices)

    def buffer_from_numpy(self, array: np.ndarray, device: Device | None = None) -> Buffer:
        return PluginBuffer(np.asarray(array), self._devices[0])

    def compile(self, module: HloModule, options: CompileOptions) -> Executable:
        verify_module(module)
        return PluginExecutable(self, module, options)


def make_client(platform: str = "testplugin") -> PluginClient:
    CALLS["factory"] += 1
    return PluginClient(platform)


def initialize(registry) -> None:
    """Entry point `testplugin`: registers the backend itself."""
    registry.register("testplugin", make_client, priority=PRIORITY)


def factory_hook(registry):
    """Entry point `testplugin_factory`: returns a factory for the registry to register."""
    return lambda: make_client("testplugin_factory")
