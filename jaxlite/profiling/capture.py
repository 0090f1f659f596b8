"""A trace capture in progress: what it collects, and the files it writes when it stops
(the machinery behind `jaxlite.profiler.start_trace` / `stop_trace`).

Three kinds of events reach a capture, each stored as it arrives and turned into Chrome
trace events (`trace_events`) only when the capture stops:

- host regions: `TraceAnnotation` and friends call `annotation` on exit;
- compile phases: time spans recorded through `jaxlite.monitoring` (JAX's jaxpr-trace,
  lowering and backend-compile events, and jaxlite's own: each HLO pass, LLVM, linking),
  which the capture listens to while it runs;
- compiled calls: the CPU backend runs instrumented copies of its executables while a
  capture runs and hands over each run with its kernels' times (`backends.cpu.instrumented`).

All times are nanoseconds of the real-time clock (`time.time_ns`), which monitoring's
spans (seconds since the epoch) and the instrumented code's clock read too.
"""
from __future__ import annotations

import datetime
import gzip
import json
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from typing import TYPE_CHECKING

from jaxlite import monitoring
from jaxlite.backends import cpu
from jaxlite.profiling import trace_events

if TYPE_CHECKING:
    from jaxlite.backends.cpu.instrumented import ProfiledCall

__all__ = ["Capture", "CURRENT", "start", "stop", "annotation", "last_trace"]


@dataclass
class Capture:
    """What one capture collected so far.

    log_dir : where `stop` writes the trace.
    perfetto_trace : also write `perfetto_trace.json.gz` beside it (JAX's option).
    origin_ns : when it started; event times are microseconds after it.
    """

    log_dir: str
    perfetto_trace: bool = False
    origin_ns: int = field(default_factory=time.time_ns)
    annotations: list[tuple] = field(default_factory=list)
    spans: list[tuple] = field(default_factory=list)
    calls: list[ProfiledCall] = field(default_factory=list)
    threads: dict[int, str] = field(default_factory=dict)

    def thread(self) -> int:
        """The native id of the calling thread, its name noted for the trace."""
        ident = threading.get_native_id()
        if ident not in self.threads:
            self.threads[ident] = threading.current_thread().name
        return ident

    def on_span(self, event: str, start: float, end: float, **metadata: Any) -> None:
        """A monitoring time span (seconds since the epoch): a compile phase."""
        self.spans.append((event, int(start * 1e9), int(end * 1e9), self.thread(), metadata))

    def on_call(self, call: ProfiledCall) -> None:
        """A compiled call and its kernels' records, from the CPU backend."""
        self.thread()
        self.calls.append(call)

    def trace(self) -> dict:
        """The Chrome trace of what was collected (`trace_events.chrome_trace`)."""
        return trace_events.chrome_trace(self.origin_ns, os.getpid(), self.threads,
                                         self.annotations, self.spans, self.calls)


# The capture in progress (None when none is); read by every annotation.
CURRENT: Capture | None = None
_LOCK = threading.Lock()
# The trace the latest capture wrote: (the trace, the path of its file).
_LAST: list[tuple[dict, str]] = []


def start(log_dir: str, perfetto_trace: bool = False) -> None:
    """Start collecting (RuntimeError, JAX's message, while another capture runs)."""
    global CURRENT
    with _LOCK:
        if CURRENT is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        capture = Capture(log_dir, perfetto_trace)
        monitoring.register_event_time_span_listener(capture.on_span)
        cpu.start_profiling(capture.on_call)  # loads llvmlite only now
        CURRENT = capture


def stop() -> str:
    """Stop collecting and write the trace; returns the path of the `.trace.json.gz` file
    (RuntimeError, JAX's message, when no capture runs)."""
    global CURRENT
    with _LOCK:
        capture = CURRENT
        if capture is None:
            raise RuntimeError("No profile started")
        CURRENT = None
        cpu.stop_profiling()
        monitoring.unregister_event_time_span_listener(capture.on_span)
    trace = capture.trace()
    path = write(trace, capture.log_dir, capture.perfetto_trace)
    _LAST[:] = [(trace, path)]
    return path


def annotation(name: str, start_ns: int, metadata: dict[str, Any]) -> None:
    """A host region that ended now, if a capture is still running."""
    capture = CURRENT
    if capture is not None:
        capture.annotations.append((name, start_ns, time.time_ns(), capture.thread(),
                                    metadata))


def write(trace: dict, log_dir: str, perfetto_trace: bool = False) -> str:
    """Write `trace` where JAX writes its traces:
    `log_dir/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz` (a suffix `_1`,
    `_2`... when that folder exists), and `perfetto_trace.json.gz` beside it when asked.
    Returns the path of the first."""
    base = os.path.join(os.fspath(log_dir), "plugins", "profile",
                        datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S"))
    run, suffix = base, 0
    while os.path.exists(run):
        suffix += 1
        run = f"{base}_{suffix}"
    os.makedirs(run)
    text = json.dumps(trace).encode("utf-8")
    path = os.path.join(run, f"{socket.gethostname()}.trace.json.gz")
    with gzip.open(path, "wb") as out:
        out.write(text)
    if perfetto_trace:
        with gzip.open(os.path.join(run, "perfetto_trace.json.gz"), "wb") as out:
            out.write(text)
    return path


def last_trace() -> tuple[dict, str] | None:
    """(trace, path) of the latest capture in this process, or None."""
    return _LAST[0] if _LAST else None
