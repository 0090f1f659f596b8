"""The summary table of a captured trace: where the compiled code spent its time, kernel by
kernel, and what compiling cost (`jaxlite.profiler.summary`; JAX has no counterpart, its
TensorBoard plugin shows such tables).
"""
from __future__ import annotations

import collections
import glob
import gzip
import json
import os
from typing import Any

__all__ = ["load_trace", "summary_text", "kernel_table"]

# Compile phases in the order they run, as the table lists them.
_PHASE_ORDER = ("tracing", "lowering", "backend compile", "HLO passes", "LLVM IR emission",
                "LLVM compilation", "writing dumps", "linking", "instrumenting")


def load_trace(source: Any) -> dict:
    """A Chrome trace from a loaded trace (a dict), a `.trace.json(.gz)` file, or a log
    directory (its latest capture: `plugins/profile/<run>/*.trace.json.gz`)."""
    if isinstance(source, dict):
        return source
    path = os.fspath(source)
    if os.path.isdir(path):
        found = glob.glob(os.path.join(path, "plugins", "profile", "*", "*.trace.json.gz"))
        if not found:
            raise FileNotFoundError(f"summary: no trace under {path} (looked for "
                                    "plugins/profile/<run>/<host>.trace.json.gz)")
        path = max(found, key=os.path.getmtime)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as file:
        return json.load(file)


def kernel_table(trace: dict) -> list[dict[str, Any]]:
    """One row per kernel (program, HLO op, role), the most total time first: `hlo_module`
    (with `#<program>` after it where programs of one name ran), `hlo_op`, `role`, `kind`
    (a fusion's kind, a custom call's target, else the opcode), `calls`, `total_us`, and
    where the op came from: `op_name` (its name stack) and `source` (file:line)."""
    rows: dict[tuple, dict[str, Any]] = {}
    programs = collections.defaultdict(set)
    for event in trace["traceEvents"]:
        if event.get("cat") != "kernel":
            continue
        args = event["args"]
        programs[args["hlo_module"]].add(args["program"])
        key = (args["hlo_module"], args["program"], args["hlo_op"], args["role"])
        row = rows.setdefault(key, {"hlo_module": key[0], "hlo_op": key[2], "role": key[3],
                                    "kind": args.get("kind") or args["opcode"], "calls": 0,
                                    "total_us": 0.0, "op_name": args.get("op_name", ""),
                                    "source": args.get("source", "")})
        row["calls"] += 1
        row["total_us"] += event["dur"]
    for (module, program, _, _), row in rows.items():
        if len(programs[module]) > 1:
            row["hlo_module"] = f"{module}#{program}"
    return sorted(rows.values(), key=lambda r: -r["total_us"])


def _calls_line(trace: dict, kernel_us: float) -> str:
    calls = collections.Counter()
    call_us = 0.0
    for event in trace["traceEvents"]:
        if event.get("cat") == "call":
            calls[event["name"]] += 1
            call_us += event["dur"]
    programs = ", ".join(f"{name} x{count}" for name, count in calls.most_common())
    share = f" ({100 * kernel_us / call_us:.1f}%)" if call_us else ""
    return (f"{sum(calls.values())} compiled calls ({programs or 'none'}): "
            f"{call_us / 1e3:.3f} ms, of which kernels {kernel_us / 1e3:.3f} ms{share}")


def _compile_line(trace: dict) -> str:
    totals: dict[str, float] = collections.defaultdict(float)
    for event in trace["traceEvents"]:
        if event.get("cat") == "compile" and event["args"].get("phase") != "pass":
            totals[event["args"]["phase"]] += event["dur"]
    if not totals:
        return "compile: nothing compiled during the trace"
    order = [p for p in _PHASE_ORDER if p in totals] + sorted(set(totals) - set(_PHASE_ORDER))
    return "compile: " + ", ".join(f"{p} {totals[p] / 1e3:.1f} ms" for p in order)


def _origin(row: dict[str, Any]) -> str:
    """`op_name (file:line)` of a kernel's row, with the file shortened to its name."""
    source = row.get("source", "")
    if source:
        file, _, line = source.rpartition(":")
        source = f"({os.path.basename(file)}:{line})"
    return " ".join(part for part in (row.get("op_name", ""), source) if part)


def summary_text(trace: dict, top: int = 20) -> str:
    """The summary of `trace`: its compiled calls, the `top` kernels by total time (HLO op,
    module, role, fusion kind, calls, total and mean time, share of all kernel time, and the
    user's operation it came from), and the time of each compile phase."""
    rows = kernel_table(trace)
    kernel_us = sum(r["total_us"] for r in rows)
    lines = [_calls_line(trace, kernel_us)]
    if rows:
        names = [f"{r['hlo_op']}" for r in rows[:top]]
        width = max(len("HLO op"), *map(len, names))
        module_width = max(len("module"), *(len(r["hlo_module"]) for r in rows[:top]))
        lines.append(f"{'#':>3}  {'HLO op':<{width}}  {'module':<{module_width}}  "
                     f"{'role':<8}  {'kind':<10}  {'calls':>6}  {'total ms':>9}  "
                     f"{'mean us':>9}  {'%':>5}  from")
        for rank, (row, name) in enumerate(zip(rows, names), 1):
            share = 100 * row["total_us"] / kernel_us if kernel_us else 0.0
            lines.append(
                f"{rank:>3}  {name:<{width}}  {row['hlo_module']:<{module_width}}  "
                f"{row['role']:<8}  {row['kind'][:10]:<10}  {row['calls']:>6}  "
                f"{row['total_us'] / 1e3:>9.3f}  {row['total_us'] / row['calls']:>9.1f}  "
                f"{share:>5.1f}  {_origin(row)}")
        if len(rows) > top:
            rest = sum(r["total_us"] for r in rows[top:])
            lines.append(f"     ... {len(rows) - top} more kernels: {rest / 1e3:.3f} ms")
    lines.append(_compile_line(trace))
    return "\n".join(lines)
