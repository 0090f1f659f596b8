"""Profiling (mirrors `jax.profiler`).

`trace(log_dir)` (or `start_trace` / `stop_trace`) captures a trace of what the process
does: every run of a compiled program, and inside it each kernel and custom call with its
own time (the CPU backend runs timed copies of its programs while a trace is captured: see
`jaxlite.backends.cpu.instrumented`), each compile phase (tracing, lowering, every HLO
pass, LLVM, linking), and the host regions that `TraceAnnotation`, `StepTraceAnnotation`
and `annotate_function` mark. It is written as a Chrome trace (JSON in the Trace Event
Format, which Perfetto and chrome://tracing open) where JAX writes its traces:
`log_dir/plugins/profile/<run>/<host>.trace.json.gz`. `summary(log_dir)` makes a table
of it: the kernels that took the most time, with their HLO names.

With no trace being captured the annotations cost one test each, and compiled programs
run unchanged. `device_memory_profile` gives the live arrays as a pprof profile, grouped
by dtype and shape (jaxlite does not record where arrays were made). The profiler server
and `ProfileData` (XLA's XSpace protos) are not built.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import time
from typing import Any, Callable, Iterator

from jaxlite.backends.registry import get_backend
from jaxlite.profiling import capture, memory
from jaxlite.profiling.summary import load_trace, summary_text
from jaxlite.runtime.environment import live_arrays

__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane",
           "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "summary", "trace"]

_NO_SERVER = ("jaxlite has no profiler server (TensorBoard's live capture); capture "
              "traces in the program with jaxlite.profiler.trace(log_dir) or "
              "start_trace/stop_trace.")
_NO_XSPACE = ("jaxlite writes traces as Chrome trace JSON, not XLA's XSpace protos; load "
              "one with json (gzip) or jaxlite.profiler.summary(log_dir).")


class TraceAnnotation:
    """Name a region of host code in a captured trace (mirrors
    `jax.profiler.TraceAnnotation`); the keyword arguments become the event's arguments.
    Costs one test while no trace is captured."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.name = name
        self.metadata = kwargs
        self._start: int | None = None

    def __enter__(self) -> "TraceAnnotation":
        self._start = time.time_ns() if capture.CURRENT is not None else None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._start is not None:
            capture.annotation(self.name, self._start, self.metadata)


class StepTraceAnnotation(TraceAnnotation):
    """Mark one training step (`step_num=` in the metadata), as
    `jax.profiler.StepTraceAnnotation`."""


def annotate_function(func: Callable, name: str | None = None,
                      **decorator_kwargs: Any) -> Callable:
    """Wrap `func` in a `TraceAnnotation` named after it (mirrors
    `jax.profiler.annotate_function`)."""
    label = name or getattr(func, "__qualname__", getattr(func, "__name__", "function"))

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if capture.CURRENT is None:
            return func(*args, **kwargs)
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


@dataclasses.dataclass
class ProfileOptions:
    """Options of a trace capture (mirrors `jax.profiler.ProfileOptions`); accepted, and
    none changes what jaxlite records."""

    host_tracer_level: int = 2
    python_tracer_level: int = 0
    enable_hlo_proto: bool = True
    include_dataset_ops: bool = True
    duration_ms: int = 0
    start_timestamp_ns: int = 0
    session_id: str = ""
    repository_path: str = ""
    raise_error_on_start_failure: bool = False
    advanced_configuration: dict = dataclasses.field(default_factory=dict)


class ProfileData:
    """A captured profile as XLA's XSpace (mirrors `jax.profiler.ProfileData`); jaxlite
    writes Chrome traces instead, so this raises `NotImplementedError`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_NO_XSPACE)

    @classmethod
    def from_file(cls, path: str) -> "ProfileData":
        raise NotImplementedError(_NO_XSPACE)

    @classmethod
    def from_serialized_xspace(cls, data: bytes) -> "ProfileData":
        raise NotImplementedError(_NO_XSPACE)


class ProfilePlane(ProfileData):
    """One plane (a device or the host) of a captured profile."""


class ProfileEvent(ProfileData):
    """One event of a captured profile."""


# Whether the running capture was asked for a Perfetto link (printed when it stops).
_PERFETTO_LINK: list[bool] = [False]


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Start capturing a trace into `log_dir` (mirrors `jax.profiler.start_trace`).

    Only one trace may be captured at a time: a second start raises `RuntimeError`, as in
    JAX. `create_perfetto_trace` also writes `perfetto_trace.json.gz`; so does
    `create_perfetto_link`, which then prints how to open it in ui.perfetto.dev (JAX serves
    the file and waits for the browser; jaxlite does not block).
    """
    capture.start(os.fspath(log_dir), create_perfetto_trace or create_perfetto_link)
    _PERFETTO_LINK[0] = create_perfetto_link


def stop_trace() -> None:
    """Stop the trace `start_trace` began and write it (mirrors `jax.profiler.stop_trace`;
    `RuntimeError` when none was started)."""
    path = capture.stop()
    if _PERFETTO_LINK[0]:
        perfetto = os.path.join(os.path.dirname(path), "perfetto_trace.json.gz")
        print(f"Perfetto trace written to {perfetto}; open https://ui.perfetto.dev and "
              "choose 'Open trace file' to view it.")


@contextlib.contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False,
          profiler_options: ProfileOptions | None = None) -> Iterator[None]:
    """Capture a trace of the block into `log_dir` (mirrors `jax.profiler.trace`)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


def summary(trace: Any = None, top: int = 20) -> str:
    """A table of a captured trace (jaxlite's own; JAX shows such tables in TensorBoard):
    the compiled calls, the `top` kernels by total time with their HLO op (the fusion's
    name in the optimized module), module, role, fusion kind, call count, total and mean
    time and share of kernel time, and the time of each compile phase.

    `trace`: a log directory (its latest capture), a `.trace.json(.gz)` file, a loaded
    trace, or None for the latest capture of this process. Print the result to read it.
    """
    if trace is None:
        last = capture.last_trace()
        if last is None:
            raise RuntimeError("summary: no trace was captured in this process; pass a log "
                               "directory or a trace file.")
        trace = last[0]
    return summary_text(load_trace(trace), top)


def start_server(port: int, requires_backend: bool = True) -> Any:
    """Serve profiles to TensorBoard on `port` (mirrors `jax.profiler.start_server`)."""
    raise NotImplementedError(_NO_SERVER)


def stop_server() -> None:
    """Stop the profiler server (mirrors `jax.profiler.stop_server`)."""
    raise NotImplementedError(_NO_SERVER)


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Include a subprocess's profiler server in captures (mirrors
    `jax.profiler.register_subprocess`)."""
    raise NotImplementedError(_NO_SERVER)


def device_memory_profile(backend: str | None = None) -> bytes:
    """The device memory in use, as a gzipped pprof profile (mirrors
    `jax.profiler.device_memory_profile`): the live arrays, one sample per dtype and
    shape (count and bytes), labelled `kind=buffer` and the device, as JAX labels them.
    JAX's samples are the Python stacks that made each buffer; jaxlite does not record
    those (see `jaxlite.profiling.memory`)."""
    client = get_backend(backend)
    device = f"{client.platform}:{client.devices()[0].id}"
    return memory.memory_profile((a._value for a in live_arrays(client.platform)), device)


def save_device_memory_profile(filename: os.PathLike | str,
                               backend: str | None = None) -> None:
    """Write `device_memory_profile(backend)` to `filename` (mirrors
    `jax.profiler.save_device_memory_profile`)."""
    with open(filename, "wb") as file:
        file.write(device_memory_profile(backend))
