"""Trace captures (`jaxlite.profiler.trace`, `start_trace`, `stop_trace`), the annotations,
the summary table and the device memory profile."""
from __future__ import annotations

import glob
import gzip
import json
import os
import re
import threading

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends.cpu import executable as executable_module
from jaxlite.backends.cpu.codegen.module import emit_module
from jaxlite.config import config
from jaxlite.profiler import (StepTraceAnnotation, TraceAnnotation, annotate_function,
                              start_trace, stop_trace)

# Fields every event of a phase must have (Trace Event Format).
REQUIRED = {"X": {"name", "ph", "ts", "dur", "pid", "tid", "args"},
            "M": {"name", "ph", "pid", "tid", "args"}}


@pytest.fixture
def no_disk_cache():
    """Compiles run the whole pipeline (a persistent-cache hit skips passes and LLVM)."""
    before = config.read("jax_enable_compilation_cache")
    config.update("jax_enable_compilation_cache", False)
    yield
    config.update("jax_enable_compilation_cache", before)


def trace_files(log_dir) -> list[str]:
    return sorted(glob.glob(os.path.join(str(log_dir), "plugins", "profile", "*",
                                         "*.trace.json.gz")))


def load(log_dir) -> dict:
    files = trace_files(log_dir)
    assert len(files) == 1, files
    with gzip.open(files[0], "rt", encoding="utf-8") as file:
        return json.load(file)


def events(trace: dict, cat: str) -> list[dict]:
    return [e for e in trace["traceEvents"] if e.get("cat") == cat]


def inside(inner: dict, outer: dict, slack: float = 0.002) -> bool:
    """Whether `inner` lies within `outer` in time (microseconds; the slack covers the
    rounding of times to nanoseconds)."""
    return (inner["ts"] >= outer["ts"] - slack
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + slack)


def kernels_of(trace: dict, call: dict) -> list[dict]:
    return [k for k in events(trace, "kernel")
            if k["tid"] == call["tid"] and inside(k, call)]


def entry_instructions(hlo_text: str) -> dict[str, str]:
    """Instruction name -> opcode, in the ENTRY computation of an HLO module's text."""
    entry = hlo_text[hlo_text.index("ENTRY"):]
    return dict((m.group(1), m.group(2)) for m in re.finditer(
        r"^\s+(?:ROOT )?%(\S+) = \S+ ([\w-]+)\(", entry, re.M))


def mlp_step(params, x, y):
    def loss(p):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)
    grads = jax.grad(loss)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def mlp_inputs(seed=0, width=56):
    rng = np.random.default_rng(seed)
    params = {"w1": rng.standard_normal((40, width)).astype(np.float32) * 0.1,
              "b1": np.zeros(width, np.float32),
              "w2": rng.standard_normal((width, 8)).astype(np.float32) * 0.1,
              "b2": np.zeros(8, np.float32)}
    x = rng.standard_normal((24, 40)).astype(np.float32)
    y = rng.standard_normal((24, 8)).astype(np.float32)
    return jax.tree_util.tree_map(jnp.asarray, params), jnp.asarray(x), jnp.asarray(y)


def test_mlp_step_trace_holds_calls_kernels_compile_phases_and_annotations(
        tmp_path, no_disk_cache):
    step = jax.jit(mlp_step)
    params, x, y = mlp_inputs(width=57)  # a shape no other test compiles
    expected = jax.tree_util.tree_map(np.asarray, mlp_step(params, x, y))
    with jax.profiler.trace(tmp_path):
        for i in range(3):
            with StepTraceAnnotation("train", step_num=i):
                new = step(params, x, y)
    trace = load(tmp_path)
    # Profiled runs compute what normal ones do (the same kernels, timed).
    for name, value in new.items():
        np.testing.assert_allclose(np.asarray(value), expected[name], rtol=1e-5, atol=1e-6)

    for event in trace["traceEvents"]:
        assert REQUIRED[event["ph"]] <= set(event), event
        if event["ph"] == "X":
            assert event["dur"] >= 0 and event["ts"] >= 0
    steps = [e for e in events(trace, "annotation") if e["name"] == "train"]
    assert [e["args"]["step_num"] for e in steps] == ["0", "1", "2"]
    calls = [e for e in events(trace, "call") if e["name"] == "jit_mlp_step"]
    assert len(calls) == 3
    names = entry_instructions(step.lower(params, x, y).compile().as_text())
    fusions = {n for n, op in names.items() if op == "fusion"}
    assert fusions
    for annotation, call in zip(steps, calls):
        assert inside(call, annotation)
        kernels = kernels_of(trace, call)
        assert kernels and call["args"]["kernels"] == len(kernels)
        # Kernels are named after the optimized module's instructions, every fusion among
        # them, and run one after another inside the call.
        assert {k["args"]["hlo_op"] for k in kernels} <= set(names)
        assert fusions <= {k["name"] for k in kernels}
        assert all(k["args"]["hlo_module"] == "jit_mlp_step" for k in kernels)
        assert sum(k["dur"] for k in kernels) <= call["dur"]
        ends = [k["ts"] + k["dur"] for k in kernels]
        assert all(b["ts"] >= a - 0.002 for a, b in zip(ends, kernels[1:]))
    # The first step compiled: its phases nest inside the annotation, the passes inside
    # the pipeline, the pipeline and LLVM inside the backend compile.
    compile_events = events(trace, "compile")
    phases = {e["args"]["phase"] for e in compile_events}
    assert {"tracing", "lowering", "backend compile", "HLO passes", "pass",
            "LLVM IR emission", "LLVM compilation", "linking", "instrumenting"} <= phases
    backend = next(e for e in compile_events if e["args"]["phase"] == "backend compile")
    pipeline = next(e for e in compile_events if e["args"]["phase"] == "HLO passes")
    passes = [e for e in compile_events if e["args"]["phase"] == "pass"
              and e["args"]["module"] == "jit_mlp_step"]
    assert {"fuse", "schedule", "simplify_algebra"} <= {p["args"]["pass_name"] for p in passes}
    assert inside(backend, steps[0]) and inside(pipeline, backend)
    assert all(inside(p, pipeline) for p in passes)
    llvm = next(e for e in compile_events if e["args"]["phase"] == "LLVM compilation")
    assert inside(llvm, backend)


def test_second_trace_in_one_process_holds_only_its_own_calls(tmp_path):
    f = jax.jit(lambda a: jnp.sin(a) * 2.0 + 1.0)
    a = jnp.arange(12.0)
    f(a)
    with jax.profiler.trace(tmp_path / "one"):
        f(a)
    with jax.profiler.trace(tmp_path / "two"):
        out = f(a)
        f(a)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(12.0)) * 2 + 1, rtol=1e-6)
    assert len(events(load(tmp_path / "one"), "call")) == 1
    second = load(tmp_path / "two")
    assert len(events(second, "call")) == 2
    # The instrumented copy's object code was kept: the second capture only linked it.
    assert not [e for e in events(second, "compile")
                if e["args"]["phase"] == "LLVM compilation"]


def test_programs_sharing_a_name_are_told_apart(tmp_path):
    first = jax.jit(lambda a: jnp.exp(a) + 1.0)
    second = jax.jit(lambda a: jnp.log1p(a) * 3.0)
    a = jnp.linspace(0.5, 2.0, 15)
    with jax.profiler.trace(tmp_path):
        first(a), second(a), first(a)
    trace = load(tmp_path)
    calls = events(trace, "call")
    assert [c["name"] for c in calls] == ["jit__lambda"] * 3
    assert [c["args"]["program"] for c in calls] == [0, 1, 0]
    modules = {row.split()[2] for row in jax.profiler.summary(trace).splitlines()[2:-1]}
    assert modules == {"jit__lambda#0", "jit__lambda#1"}


def test_start_twice_and_stop_without_start_raise_as_jax(tmp_path):
    start_trace(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="Profile has already been started"):
            start_trace(tmp_path / "other")
    finally:
        stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        stop_trace()
    assert len(trace_files(tmp_path)) == 1
    assert not os.path.exists(tmp_path / "other")


def test_trace_stops_when_the_block_raises(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with jax.profiler.trace(tmp_path):
            1 / 0
    assert len(trace_files(tmp_path)) == 1
    start_trace(tmp_path)  # nothing left running
    stop_trace()


def test_executables_are_unchanged_without_a_trace(tmp_path):
    def f(a, b):
        return jnp.tanh(a @ b).sum(axis=0)
    a, b = jnp.ones((12, 20)), jnp.ones((20, 28))
    with jax.profiler.trace(tmp_path):
        during = jax.jit(f)(a, b)  # compiled while the trace runs
    assert executable_module._profiler is None  # runs test one None again
    compiled = jax.jit(f).lower(a, b).compile()  # the executable the traced call compiled
    assert not compiled.runtime_executable().instrumented
    text = compiled.as_text("llvm")
    assert "jl_profile" not in text
    jax.clear_caches()
    again = jax.jit(f).lower(a, b).compile()
    assert again.runtime_executable() is not compiled.runtime_executable()
    assert again.as_text("llvm") == text
    np.testing.assert_array_equal(np.asarray(during), np.asarray(again(a, b)))
    assert len(events(load(tmp_path), "call")) == 1


def test_profiled_code_differs_only_by_its_timing_calls():
    f = jax.jit(lambda a: jax.lax.fori_loop(0, 3, lambda i, v: jnp.sin(v) @ v, a))
    optimized = f.lower(jnp.ones((6, 6))).compile().runtime_executable().hlo_module()
    plain, plain_info = emit_module(optimized)
    timed, timed_info = emit_module(optimized, profile=True)
    assert plain_info.sites == () and "jl_profile" not in plain[0]
    sites = timed_info.sites
    assert timed[0].count("call void @jl_profile_record(") == len(sites)
    assert timed[0].count("call i64 @jl_profile_clock()") == len(sites)
    assert {s.role for s in sites} >= {"while", "kernel"}
    assert {s.instruction for s in sites} <= {i.name for c in optimized.computations
                                              for i in c.instructions}
    # Without the timing calls and declarations, the code is the same.
    untimed = "\n".join(line for line in timed[0].splitlines()
                        if "jl_profile" not in line and "%clock" not in line)
    assert _without_numbers(untimed) == _without_numbers(plain[0].rstrip("\n"))
    assert timed[1:] == plain[1:]


def _without_numbers(ir: str) -> str:
    """LLVM IR with the numbers in its names blanked (timing calls shift the numbering of
    values and labels)."""
    return re.sub(r"([A-Za-z_.])\d+\b", r"\1#", ir)


def test_vmap_and_grad_of_jitted_code_are_traced(tmp_path):
    f = jax.jit(lambda w, v: jnp.tanh(v @ w).sum())
    w = jnp.asarray(np.random.default_rng(1).standard_normal((16, 6)), jnp.float32)
    xs = jnp.asarray(np.random.default_rng(2).standard_normal((5, 16)), jnp.float32)
    batched = jax.vmap(f, in_axes=(None, 0))
    gradient = jax.grad(lambda w: f(w, xs[0]))
    want_batched, want_gradient = np.asarray(batched(w, xs)), np.asarray(gradient(w))
    with jax.profiler.trace(tmp_path):
        got_batched = batched(w, xs)
        got_gradient = gradient(w)
    np.testing.assert_array_equal(np.asarray(got_batched), want_batched)
    np.testing.assert_array_equal(np.asarray(got_gradient), want_gradient)
    trace = load(tmp_path)
    calls = events(trace, "call")
    assert len(calls) >= 2
    for call in calls:
        kernels = kernels_of(trace, call)
        assert len(kernels) == call["args"]["kernels"]
        assert sum(k["dur"] for k in kernels) <= call["dur"]
    assert any(kernels_of(trace, call) for call in calls)


def test_loop_bodies_kernels_nest_in_the_loop(tmp_path):
    @jax.jit
    def loop(a):
        return jax.lax.fori_loop(0, 7, lambda i, v: jnp.cos(v) * 0.5 + a, a)
    a = jnp.linspace(0.0, 1.0, 33)
    want = np.asarray(loop(a))
    with jax.profiler.trace(tmp_path):
        got = loop(a)
    np.testing.assert_array_equal(np.asarray(got), want)
    trace = load(tmp_path)
    (call,) = events(trace, "call")
    (whole,) = [e for e in events(trace, "control_flow") if e["args"]["role"] == "while"]
    assert inside(whole, call)
    body = [k for k in kernels_of(trace, call) if k["args"]["computation"] != "main"]
    assert body and all(inside(k, whole) for k in body)
    # Each of the body's kernels ran once per iteration, the condition's once more.
    condition = whole["args"]["computation"]  # (the while's own computation: main)
    runs = {}
    for k in body:
        key = (k["args"]["computation"], k["args"]["hlo_op"])
        runs[key] = runs.get(key, 0) + 1
    assert condition == "main"
    assert sorted(set(runs.values())) == [7, 8]
    assert all((n == 8) == ("condition" in comp) for (comp, _), n in runs.items())
    assert call["args"]["dropped_records"] == 0


def test_custom_calls_are_timed_as_such(tmp_path):
    def host(v):
        return np.asarray(v) * 3
    f = jax.jit(lambda v: jax.pure_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype),
                                            v + 1) - 1)
    v = jnp.arange(6.0)
    with jax.profiler.trace(tmp_path):
        out = f(v)
    np.testing.assert_array_equal(np.asarray(out), (np.arange(6.0) + 1) * 3 - 1)
    trace = load(tmp_path)
    (call,) = events(trace, "call")
    roles = [k["args"]["role"] for k in kernels_of(trace, call)]
    assert roles.count("custom-call") == 1


def test_annotations_nest_and_cost_nothing_without_a_trace(tmp_path):
    seen = []

    @annotate_function
    def work(n):
        seen.append(n)
        with TraceAnnotation("inner", size=n):
            return n * 2

    assert work(3) == 6  # no trace: runs, records nothing
    with jax.profiler.trace(tmp_path):
        with TraceAnnotation("outer"):
            assert work(4) == 8
    trace = load(tmp_path)
    by_name = {e["name"]: e for e in events(trace, "annotation")}
    assert set(by_name) == {"outer", "inner", work.__wrapped__.__qualname__}
    assert by_name["inner"]["args"] == {"size": "4"}
    assert inside(by_name["inner"], by_name[work.__wrapped__.__qualname__])
    assert inside(by_name[work.__wrapped__.__qualname__], by_name["outer"])
    assert seen == [3, 4]


def test_calls_from_another_thread_are_on_its_track(tmp_path):
    f = jax.jit(lambda a: a * 2.0)
    a = jnp.ones(9)
    f(a)
    with jax.profiler.trace(tmp_path):
        worker = threading.Thread(target=f, args=(a,), name="worker-7")
        worker.start()
        worker.join()
        f(a)
    trace = load(tmp_path)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    calls = events(trace, "call")
    assert sorted(names[c["tid"]] for c in calls) == ["MainThread", "worker-7"]


def test_donated_arguments_under_a_trace(tmp_path):
    f = jax.jit(lambda a: a + 1.0, donate_argnums=0)
    with jax.profiler.trace(tmp_path):
        a = jnp.arange(5.0)
        out = f(a)
    np.testing.assert_array_equal(np.asarray(out), np.arange(5.0) + 1)
    assert a.is_deleted()


def test_summary_lists_kernels_by_time(tmp_path, capsys):
    step = jax.jit(mlp_step)
    params, x, y = mlp_inputs(width=48)
    step(params, x, y)
    with jax.profiler.trace(tmp_path, create_perfetto_link=True):
        for _ in range(4):
            step(params, x, y)
    run = os.path.dirname(trace_files(tmp_path)[0])
    assert os.path.join(run, "perfetto_trace.json.gz") in capsys.readouterr().out
    table = jax.profiler.summary()
    assert table == jax.profiler.summary(tmp_path) == jax.profiler.summary(
        trace_files(tmp_path)[0])
    lines = table.splitlines()
    assert lines[0].startswith("4 compiled calls (jit_mlp_step x4)")
    header = lines[1].split()
    assert header[:4] == ["#", "HLO", "op", "module"]
    rows = [line.split() for line in lines[2:] if line.split()[0].isdigit()]
    names = entry_instructions(step.lower(params, x, y).compile().as_text())
    assert rows and all(row[1] in names and row[2] == "jit_mlp_step" for row in rows)
    # Nine columns, then where the op came from: `jit(mlp_step)/... (file:line)`.
    assert all(row[5] == "4" and row[9].startswith("jit(mlp_step)/") for row in rows)
    assert {row[4] for row in rows} <= {"kLoop", "kInput", "kOutput", "dot"}
    totals = [float(row[6]) for row in rows]
    assert totals == sorted(totals, reverse=True)
    assert abs(sum(float(row[8]) for row in rows) - 100) < 0.5
    with gzip.open(os.path.join(run, "perfetto_trace.json.gz"), "rt") as file:
        assert json.load(file) == load(tmp_path)


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """A protobuf message's (field, value) pairs: varints as ints, the rest as bytes."""
    out, at = [], 0

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value
    while at < len(data):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint()))
        else:
            assert key & 7 == 2, key
            size = varint()
            out.append((key >> 3, data[at:at + size]))
            at += size
    return out


def _packed(data: bytes) -> list[int]:
    values, value, shift = [], 0, 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            values.append(value)
            value = shift = 0
    return values


def test_device_memory_profile_is_a_pprof_of_live_arrays(tmp_path):
    keep = jnp.ones((3, 5, 7), jnp.float32)  # a shape nothing else holds
    profile = _fields(gzip.decompress(jax.profiler.device_memory_profile()))
    strings = [v.decode() for f, v in profile if f == 6]
    assert strings[0] == ""
    types = [dict(_fields(v)) for f, v in profile if f == 1]
    assert [(strings[t[1]], strings[t[2]]) for t in types] == [("allocations", "count"),
                                                               ("space", "bytes")]
    functions = {dict(_fields(v))[1]: strings[dict(_fields(v))[2]]
                 for f, v in profile if f == 5}
    locations = {dict(_fields(v))[1]: dict(_fields(dict(_fields(v))[4]))[1]
                 for f, v in profile if f == 4}
    by_type = {}
    for f, v in profile:
        if f == 2:
            sample = _fields(v)
            (location,) = _packed(dict(sample)[1])
            labels = {strings[dict(_fields(lab))[1]]: strings[dict(_fields(lab))[2]]
                      for k, lab in sample if k == 3}
            assert labels == {"kind": "buffer", "device": "cpu:0"}
            by_type[functions[locations[location]]] = _packed(dict(sample)[2])
    assert by_type["float32[3,5,7]"] == [1, keep.nbytes]
    path = tmp_path / "memory.prof"
    jax.profiler.save_device_memory_profile(path)
    assert gzip.decompress(path.read_bytes())[:2] == gzip.decompress(
        jax.profiler.device_memory_profile())[:2]
