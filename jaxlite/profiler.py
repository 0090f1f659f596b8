"""Profiling (mirrors `jax.profiler`).

The annotations (`TraceAnnotation`, `StepTraceAnnotation`, `annotate_function`) mark
regions of a program for a profiler; with no trace being captured they do nothing, as in
JAX, so programs that annotate their training loops run unchanged. Capturing a trace
(`start_trace`, `trace`, the profiler server) and device memory profiles are not built yet
(the debugging-tools issue): they raise `NotImplementedError` rather than write nothing.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import Any, Callable, Iterator

__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane",
           "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "trace"]

_NOT_BUILT = ("jaxlite cannot capture profiles yet (planned with the debugging-tools "
              "issue); the annotations work and cost nothing.")


class TraceAnnotation:
    """Name a region of host code in a captured trace (mirrors
    `jax.profiler.TraceAnnotation`); a no-op while no trace is captured."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.name = name
        self.metadata = kwargs

    def __enter__(self) -> "TraceAnnotation":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


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
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


@dataclasses.dataclass
class ProfileOptions:
    """Options of a trace capture (mirrors `jax.profiler.ProfileOptions`)."""

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
    """A captured profile (mirrors `jax.profiler.ProfileData`); jaxlite captures none."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_NOT_BUILT)

    @classmethod
    def from_file(cls, path: str) -> "ProfileData":
        raise NotImplementedError(_NOT_BUILT)

    @classmethod
    def from_serialized_xspace(cls, data: bytes) -> "ProfileData":
        raise NotImplementedError(_NOT_BUILT)


class ProfilePlane(ProfileData):
    """One plane (a device or the host) of a captured profile."""


class ProfileEvent(ProfileData):
    """One event of a captured profile."""


def start_trace(log_dir: Any, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Start capturing a trace into `log_dir` (mirrors `jax.profiler.start_trace`)."""
    raise NotImplementedError(_NOT_BUILT)


def stop_trace() -> None:
    """Stop the trace `start_trace` began (mirrors `jax.profiler.stop_trace`)."""
    raise NotImplementedError(_NOT_BUILT)


@contextlib.contextmanager
def trace(log_dir: Any, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
          profiler_options: ProfileOptions | None = None) -> Iterator[None]:
    """Capture a trace of the block into `log_dir` (mirrors `jax.profiler.trace`)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    yield


def start_server(port: int, requires_backend: bool = True) -> Any:
    """Serve profiles to TensorBoard on `port` (mirrors `jax.profiler.start_server`)."""
    raise NotImplementedError(_NOT_BUILT)


def stop_server() -> None:
    """Stop the profiler server (mirrors `jax.profiler.stop_server`)."""
    raise NotImplementedError(_NOT_BUILT)


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Include a subprocess's profiler server in captures."""
    raise NotImplementedError(_NOT_BUILT)


def device_memory_profile(backend: str | None = None) -> bytes:
    """The device memory in use, as a pprof profile (mirrors
    `jax.profiler.device_memory_profile`)."""
    raise NotImplementedError(_NOT_BUILT)


def save_device_memory_profile(filename: Any, backend: str | None = None) -> None:
    """Write `device_memory_profile()` to `filename`."""
    raise NotImplementedError(_NOT_BUILT)
