"""The runtime interface every backend implements (PJRT in spirit).

A backend is a `Client` for one platform. It owns `Device`s, moves host arrays onto them as
`Buffer`s, and compiles an `HloModule` into an `Executable` that maps argument buffers to
result buffers. The rest of jaxlite (`jit`, `device_put`, `jaxlite.devices`) talks to
backends only through these classes, so that the interpreter, the LLVM CPU backend, the GPU
backend and third-party plugins are interchangeable.

Mirrors PJRT's `PjRtClient`, `PjRtDevice`, `PjRtBuffer` and `PjRtLoadedExecutable`, and
JAX's `CompiledMemoryStats`.

Differences from PJRT: one process, no multi-host topology, no asynchronous dispatch API
(readiness is still reported, so that an asynchronous backend can add it later).
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from jaxlite.xla.ir import HloModule

# The stages `Executable.text` knows. A backend prints the ones it has and raises
# `ValueError` for the others ("kernels", "llvm", "cuda" and "asm" belong to code generators).
TEXT_STAGES = ("hlo", "optimized_hlo", "kernels", "llvm", "cuda", "asm")


@dataclass(frozen=True)
class CompileOptions:
    """What `Client.compile` needs besides the module (mirrors `xla::CompileOptions`).

    donated_parameters : indices of the entry parameters whose buffers the caller gives up:
        the executable may write its results into them, and deletes them after running
        (JAX's `donate_argnums`, translated to flat parameter positions).
    dump_dir : folder where the compiler writes the module before and after each pass, or
        None (from `jaxlite_dump_dir` / `JAXLITE_DUMP_DIR`).
    verify : run the HLO verifier on the module after the pass pipeline.
    name : the name of the program, for logs and dumps.
    """

    donated_parameters: tuple[int, ...] = ()
    dump_dir: str | None = None
    verify: bool = False
    name: str = "module"


@dataclass(frozen=True)
class MemoryAnalysis:
    """Sizes in bytes of an executable's memory (mirrors JAX's `CompiledMemoryStats`).

    argument_size_in_bytes : all entry parameters.
    output_size_in_bytes : all results.
    alias_size_in_bytes : results that live in donated argument buffers.
    temp_size_in_bytes : peak temporary memory, from buffer assignment.
    generated_code_size_in_bytes : size of the generated machine code (0 without one).
    """

    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    generated_code_size_in_bytes: int = 0

    @property
    def peak_memory_in_bytes(self) -> int:
        """Arguments, results that do not alias arguments, and temporaries together."""
        return (self.argument_size_in_bytes + self.output_size_in_bytes
                - self.alias_size_in_bytes + self.temp_size_in_bytes)


class Device(abc.ABC):
    """One device of a client (mirrors `jax.Device` / `PjRtDevice`).

    Attributes
    ----------
    id : int, unique within the client.
    platform : str, the client's platform name.
    client : the `Client` that owns the device.
    """

    id: int
    platform: str
    client: "Client"

    @property
    def device_kind(self) -> str:
        """A description of the hardware (`jax.Device.device_kind`)."""
        return self.platform

    @property
    def process_index(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"{self.platform.capitalize()}Device(id={self.id})"

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"


class Buffer(abc.ABC):
    """An array stored on a device (mirrors `PjRtBuffer`).

    A buffer is immutable once ready. After `delete()` (or donation to an executable) every
    access but `is_deleted()` raises `RuntimeError`.
    """

    @property
    @abc.abstractmethod
    def shape(self) -> tuple[int, ...]:
        """The dimensions."""

    @property
    @abc.abstractmethod
    def dtype(self) -> np.dtype:
        """The element type."""

    @property
    @abc.abstractmethod
    def device(self) -> Device:
        """The device holding the data."""

    @abc.abstractmethod
    def to_numpy(self) -> np.ndarray:
        """The contents as a read-only numpy array on the host (may share memory)."""

    @abc.abstractmethod
    def delete(self) -> None:
        """Free the device memory now; later reads raise `RuntimeError`."""

    @abc.abstractmethod
    def is_deleted(self) -> bool:
        """Whether `delete` ran (or the buffer was donated)."""

    def is_ready(self) -> bool:
        """Whether the computation producing this buffer has finished."""
        return True

    def block_until_ready(self) -> "Buffer":
        """Wait until the contents are computed; returns the buffer."""
        return self

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    def __repr__(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        state = " deleted" if self.is_deleted() else ""
        return f"<{type(self).__name__} {np.dtype(self.dtype).name}[{dims}] on " \
               f"{self.device!r}{state}>"


class Executable(abc.ABC):
    """A compiled program, ready to run on one device (mirrors `PjRtLoadedExecutable`).

    Its inputs are the entry computation's parameters in order; its outputs are the entry's
    result, or the elements of the result when that is a tuple.
    """

    @property
    @abc.abstractmethod
    def client(self) -> "Client":
        """The client that compiled it."""

    @abc.abstractmethod
    def execute(self, buffers: Sequence[Buffer]) -> list[Buffer]:
        """Run the program on `buffers` (one per entry parameter) and return the results.

        Buffers of donated parameters are deleted afterwards. Raises `ValueError` when the
        number, shapes or dtypes of the buffers differ from the parameters, and
        `RuntimeError` when one of them is deleted.
        """

    @abc.abstractmethod
    def text(self, stage: str = "optimized_hlo") -> str:
        """The program as text at a stage of compilation.

        "hlo" is the module given to `compile`, "optimized_hlo" the module after the pass
        pipeline; code generators add "kernels", "llvm" or "cuda", and "asm". An unknown or
        unavailable stage raises `ValueError` naming the stages this executable has.
        """

    @abc.abstractmethod
    def cost_analysis(self) -> dict[str, float]:
        """Estimated work: at least 'flops', 'transcendentals' and 'bytes accessed'."""

    @abc.abstractmethod
    def memory_analysis(self) -> MemoryAnalysis:
        """Argument, output, alias and temporary sizes in bytes."""

    @property
    def num_parameters(self) -> int:
        return len(self.hlo_module().entry.parameters)

    @abc.abstractmethod
    def hlo_module(self, optimized: bool = True) -> HloModule:
        """The module after the pass pipeline (or as given, with `optimized=False`)."""


class HostExecutable(Executable):
    """An executable whose buffers are host numpy arrays: it also runs on the arrays
    themselves (`execute_arrays`), which spares `jit` calls wrapping every argument and
    result in a buffer."""

    @abc.abstractmethod
    def execute_arrays(self, arrays: Sequence[np.ndarray],
                       checked: bool = False) -> list[np.ndarray]:
        """`execute` on host arrays, one per entry parameter; returns the results' arrays.

        The arrays of donated parameters may hold results afterwards (they are written
        over): the caller hands over memory nobody else reads. Raises as `execute` does.
        `checked=True`: the caller vouches that each array is a C-contiguous `np.ndarray`
        of its parameter's shape and dtype, and the executable does not check again.
        """


class Client(abc.ABC):
    """A backend: the devices of one platform and a compiler for them (`PjRtClient`).

    Attributes
    ----------
    platform : str, the name users select it by ("interpreter", "cpu", "gpu", ...).
    platform_version : str, a free-form description (library versions, driver).
    """

    platform: str
    platform_version: str

    @abc.abstractmethod
    def devices(self) -> list[Device]:
        """Every device of this client, by id."""

    def local_devices(self) -> list[Device]:
        return self.devices()

    def device_count(self) -> int:
        return len(self.devices())

    @abc.abstractmethod
    def buffer_from_numpy(self, array: np.ndarray, device: Device | None = None) -> Buffer:
        """Copy (or, where memory is shared, wrap) a host array into a buffer on `device`
        (the first device when None). The caller must not write to `array` afterwards."""

    @abc.abstractmethod
    def compile(self, module: HloModule, options: CompileOptions) -> Executable:
        """Optimize and compile `module` for this client's devices."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} platform={self.platform!r}>"


def check_arguments(executable: Executable, buffers: Sequence[Buffer | np.ndarray]) -> None:
    """Raise the errors `Executable.execute` promises for ill-fitting argument buffers (or
    arrays, for `HostExecutable.execute_arrays`)."""
    params = executable.hlo_module().entry.parameters
    if len(buffers) != len(params):
        raise ValueError(f"execute: the program takes {len(params)} arguments, got "
                         f"{len(buffers)} buffers.")
    for i, (buffer, param) in enumerate(zip(buffers, params)):
        if isinstance(buffer, Buffer) and buffer.is_deleted():
            raise RuntimeError(f"execute: argument {i} is a deleted buffer (deleted or "
                               "donated to an earlier call); pass a live buffer.")
        if tuple(buffer.shape) != param.shape.dims or np.dtype(buffer.dtype) != \
                param.shape.dtype:
            dims = ",".join(str(d) for d in buffer.shape)
            raise ValueError(f"execute: argument {i} ({param.name}) expects {param.shape}, "
                             f"got a buffer of {np.dtype(buffer.dtype).name}[{dims}].")


def describe_stages(available: Sequence[str]) -> str:
    return ", ".join(repr(s) for s in available)


def unknown_stage(stage: str, available: Sequence[str], platform: str) -> ValueError:
    """The error for `Executable.text` asked for a stage this executable lacks."""
    known = "" if stage in TEXT_STAGES else " (not a known stage)"
    return ValueError(f"text: the {platform} backend has no stage {stage!r}{known}; "
                      f"available: {describe_stages(available)}.")


def entry_result_shapes(module: HloModule) -> list[Any]:
    """The shapes of the executable's outputs: the root's, or its tuple elements'."""
    root = module.entry.root.shape
    return list(root.tuple_shapes) if root.is_tuple else [root]


class HostDevice(Device):
    """A device that is the host itself: the device of backends that run on the CPU."""

    def __init__(self, client: "Client", id: int = 0, process_index: int = 0) -> None:
        self.client = client
        self.id = id
        self.platform = client.platform
        self._process_index = process_index

    @property
    def process_index(self) -> int:
        """The index of the process that owns the device (`jax.Device.process_index`)."""
        return self._process_index


class HostBuffer(Buffer):
    """A read-only numpy array in host memory: the buffer of backends that run on the host.

    Parameters
    ----------
    array : the contents; the buffer marks it read-only and keeps it without copying, so
        the caller must hand over an array nobody writes to again.
    device : the device it belongs to.
    """

    def __init__(self, array: np.ndarray, device: Device) -> None:
        array = np.asarray(array)
        if array.flags.writeable:
            array.flags.writeable = False
        self._array: np.ndarray | None = array
        self._device = device
        self._shape = tuple(array.shape)
        self._dtype = array.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    def to_numpy(self) -> np.ndarray:
        if self._array is None:
            raise RuntimeError(f"{self!r}: the buffer was deleted (or donated to a call); its "
                               "contents are gone. Keep a copy before donating it.")
        return self._array

    def delete(self) -> None:
        self._array = None

    def is_deleted(self) -> bool:
        return self._array is None

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = self.to_numpy()
        return array if dtype is None else array.astype(dtype)
