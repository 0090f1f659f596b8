"""Chrome trace events (the Trace Event Format that Perfetto and chrome://tracing open) of
what a capture collected.

Every timed thing is a complete event (`"ph": "X"`) with `name`, `cat`, `ts` and `dur` in
microseconds after the capture started, `pid`, `tid` and `args`; metadata events
(`"ph": "M"`) name the process and its threads. Categories:

- "annotation": a `TraceAnnotation` (args: its keyword metadata, as strings, as JAX's);
- "compile": a compile phase (args: `phase`, the monitoring `event`, and its metadata,
  e.g. `fun_name`, `module`, `pass_name`);
- "call": one run of a compiled program (name: its HLO module; args: `hlo_module`,
  `program` (its number in the capture: programs may share a module name), `kernels`,
  `dropped_records`);
- "kernel": one kernel or custom call inside it (name: the HLO instruction of the optimized
  module, as `hlo_op`; args also `hlo_module`, `program`, `kernel`, `role`, `kind`,
  `opcode`, `computation`);
- "control_flow": a while, conditional or call instruction, around its bodies' kernels.

Events of one thread nest in time: kernels inside their call, a loop's kernels inside the
loop, passes inside the pipeline inside the backend compile.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxlite.backends.cpu.instrumented import ProfiledCall

__all__ = ["chrome_trace", "PHASES"]

# Monitoring events of compile phases -> (phase, the metadata key naming what ran); the
# phase of `compile_progress` events is in their metadata.
PHASES = {
    "/jax/core/compile/backend_compile_duration": ("backend compile", "fun_name"),
    "/jaxlite/compile/phase": (None, "program"),
    "/jaxlite/compile/hlo_pass": ("pass", "pass_name"),
}
_CONTROL_FLOW = ("while", "conditional", "call")


def _event(name: str, cat: str, start_ns: int, end_ns: int, origin_ns: int, pid: int,
           tid: int, args: dict[str, Any]) -> dict[str, Any]:
    """A complete event; a span that began before the capture starts at its start."""
    start_ns = max(start_ns, origin_ns)
    return {"name": name, "cat": cat, "ph": "X", "ts": round((start_ns - origin_ns) / 1e3, 3),
            "dur": round(max(end_ns - start_ns, 0) / 1e3, 3), "pid": pid, "tid": tid,
            "args": args}


def _span_event(span: tuple, origin_ns: int, pid: int) -> dict[str, Any]:
    event, start, end, tid, metadata = span
    phase, key = PHASES.get(event, (event, ""))
    phase = phase or metadata.get("phase", event)
    what = metadata.get(key, "")
    name = f"{phase} {what}" if what else phase
    args = {"phase": phase, "event": event, **metadata}
    return _event(name, "compile", start, end, origin_ns, pid, tid, args)


def _call_events(call: ProfiledCall, origin_ns: int, pid: int) -> list[dict[str, Any]]:
    """The call's event, then one per record (kernels and control flow)."""
    tid = call.thread
    kernels = 0
    events = []
    for site_number, start, end in call.records.tolist():
        site = call.sites[site_number]
        control = site.role in _CONTROL_FLOW
        kernels += not control
        args = {"hlo_op": site.instruction, "hlo_module": call.module,
                "program": call.program, "role": site.role, "opcode": site.opcode,
                "computation": site.computation, "op_name": site.op_name,
                "source": site.source}
        if not control:
            args.update(kernel=site.kernel, kind=site.kind)
        events.append(_event(site.instruction, "control_flow" if control else "kernel",
                             start, end, origin_ns, pid, tid, args))
    head = _event(call.module, "call", call.start_ns, call.end_ns, origin_ns, pid, tid,
                  {"hlo_module": call.module, "program": call.program, "kernels": kernels,
                   "dropped_records": call.dropped})
    return [head] + events


def _metadata(pid: int, threads: dict[int, str]) -> list[dict[str, Any]]:
    events = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
               "args": {"name": f"jaxlite host (pid {pid})"}}]
    for tid, name in sorted(threads.items()):
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                       "args": {"name": name}})
    return events


def chrome_trace(origin_ns: int, pid: int, threads: dict[int, str],
                 annotations: Iterable[tuple], spans: Iterable[tuple],
                 calls: Sequence[ProfiledCall]) -> dict[str, Any]:
    """The trace: `{"traceEvents": [...], "displayTimeUnit": "ns"}`, events sorted by time
    (an enclosing event before what it encloses)."""
    events = []
    for name, start, end, tid, metadata in annotations:
        args = {key: str(value) for key, value in metadata.items()}
        events.append(_event(name, "annotation", start, end, origin_ns, pid, tid, args))
    events += [_span_event(span, origin_ns, pid) for span in spans]
    for call in calls:
        events += _call_events(call, origin_ns, pid)
    events.sort(key=lambda e: (e["tid"], e["ts"], -e["dur"]))
    return {"displayTimeUnit": "ns", "traceEvents": _metadata(pid, threads) + events}
