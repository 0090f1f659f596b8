"""jit under threads and over long runs (issue 11 §4): a signature traced and compiled once
however many threads ask for it at once, failures that reach every waiter without poisoning
the cache, no deadlock through nested or self-calling jits, per-function caches bounded and
dropped with the function (executables and their machine code freed), and a process whose
memory stays flat while it jits and drops thousands of functions."""
from __future__ import annotations

import gc
import itertools
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.backends.registry import get_backend
from jaxlite.runtime import dispatch
from jaxlite.runtime.call_cache import LRUCache, SharedBudget, SingleFlight
from jaxlite.transforms import jit as jit_module

THREADS = 8
# Each test's programs carry constants no other test (nor an earlier run of the same
# process) compiles, so that counting compiles counts this test's.
_UNIQUE = itertools.count(1)


def _unique() -> float:
    return float(next(_UNIQUE)) + (os.getpid() % 1000) / 1024


def _compiles() -> dict[str, int]:
    stats = get_backend().stats
    return {"llvm": stats["llvm_compiles"],
            "all": stats["llvm_compiles"] + stats["memory_hits"] + stats["disk_hits"]}


def _in_threads(call, count: int = THREADS, timeout: float = 120.0) -> list:
    """Run `call()` in `count` threads released together; their results (or exceptions)."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def worker(k: int) -> None:
        barrier.wait()
        try:
            results[k] = call()
        except BaseException as error:  # noqa: BLE001 - reported to the test
            results[k] = error
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a thread is stuck (deadlock?)"
    return results


def test_threads_released_together_compile_each_signature_once():
    x = jnp.arange(8.0, dtype=jnp.float32)
    rounds = 5
    traces = []
    before = _compiles()
    for _ in range(rounds):
        scale = _unique()

        def body(v, scale=scale):
            traces.append(scale)
            return jnp.sin(v) * scale + v.sum()
        f = jaxlite.jit(body)
        want = np.sin(np.arange(8.0, dtype=np.float32)) * np.float32(scale) + np.float32(28)
        for out in _in_threads(lambda: np.asarray(f(x))):
            assert not isinstance(out, BaseException), out
            np.testing.assert_allclose(out, want, rtol=2e-7, atol=8e-6)
    after = _compiles()
    assert len(traces) == rounds
    assert after["all"] - before["all"] == rounds  # the backend was asked once per round
    assert after["llvm"] - before["llvm"] <= rounds


def test_a_slow_trace_is_traced_once_while_the_others_wait():
    traces = []
    scale = _unique()

    def body(v):
        traces.append(threading.get_ident())
        time.sleep(0.3)  # every thread arrives while the first one traces
        return v * scale
    f = jaxlite.jit(body)
    x = jnp.ones((3,), jnp.float32)
    for out in _in_threads(lambda: np.asarray(f(x))):
        np.testing.assert_array_equal(out, np.full(3, scale, np.float32))
    assert len(traces) == 1


def test_an_error_reaches_every_waiter_and_does_not_poison_the_cache():
    failing = [True]
    traces = []

    def body(v):
        traces.append(1)
        time.sleep(0.2)
        if failing[0]:
            raise ValueError("no trace this time")
        return v + 1
    f = jaxlite.jit(body)
    x = jnp.zeros((2,), jnp.int32)
    outs = _in_threads(lambda: f(x))
    assert all(isinstance(o, ValueError) and "no trace this time" in str(o) for o in outs)
    assert len(traces) < THREADS  # waiters got the first failure rather than tracing
    failing[0] = False
    np.testing.assert_array_equal(np.asarray(f(x)), [1, 1])


def test_a_compile_error_reaches_every_waiter_and_is_not_kept(monkeypatch):
    failing = [True]
    compiles = []
    real = dispatch.compiler.backend_compile_and_load

    def flaky(client, module, options):
        compiles.append(1)
        time.sleep(0.2)
        if failing[0]:
            raise RuntimeError("the backend failed this time")
        return real(client, module, options)
    monkeypatch.setattr(dispatch.compiler, "backend_compile_and_load", flaky)
    scale = _unique()
    f = jaxlite.jit(lambda v: v * scale)
    x = jnp.ones((2,), jnp.float32)
    outs = _in_threads(lambda: f(x))
    assert all(isinstance(o, RuntimeError) and "failed this time" in str(o) for o in outs)
    assert len(compiles) < THREADS
    failing[0] = False
    np.testing.assert_array_equal(np.asarray(f(x)), [scale, scale])


def test_an_interrupt_stays_in_its_thread():
    flight = SingleFlight()
    started = threading.Event()

    def interrupted():
        started.set()
        time.sleep(0.2)
        raise KeyboardInterrupt
    results = []
    waiter = threading.Thread(target=lambda: (started.wait(5), results.append(
        flight.run("k", lambda: "computed by the waiter"))))
    waiter.start()
    with pytest.raises(KeyboardInterrupt):
        flight.run("k", interrupted)
    waiter.join(10)
    assert results == ["computed by the waiter"]


def test_nested_and_recursive_jits_in_threads():
    inner = jaxlite.jit(lambda v: jnp.cos(v) + 1.0)
    outer = jaxlite.jit(lambda v: inner(v) * 2.0 + inner(v + 1.0))

    def countdown_body(v, n):
        return v if n == 0 else countdown(v * 2.0, n - 1) + 1.0
    countdown = jaxlite.jit(countdown_body, static_argnums=1)
    x = np.linspace(0, 1, 5, dtype=np.float32)
    want_outer = (np.cos(x) + 1) * 2 + np.cos(x + 1) + 1
    want_countdown = x * 8 + 3

    def call():
        return np.asarray(outer(x)), np.asarray(countdown(x, 3))
    for out in _in_threads(call):
        assert not isinstance(out, BaseException), out
        np.testing.assert_allclose(out[0], want_outer, rtol=1e-6)
        np.testing.assert_allclose(out[1], want_countdown, rtol=1e-6)


def test_a_function_that_calls_itself_from_another_thread_while_tracing():
    # The first trace starts a thread that calls the same function with the same
    # signature and waits for it: waiting for that trace would deadlock.
    spawned = []
    x = jnp.arange(4.0, dtype=jnp.float32)

    def body(v):
        if not spawned:
            spawned.append(None)
            result = []
            t = threading.Thread(target=lambda: result.append(np.asarray(f(x))))
            t.start()
            t.join(60)
            assert not t.is_alive() and result
            np.testing.assert_array_equal(result[0], np.arange(4.0) * 3)
        return v * 3.0
    f = jaxlite.jit(body)
    np.testing.assert_array_equal(np.asarray(f(x)), np.arange(4.0) * 3)


def test_two_threads_tracing_mutually_nested_jits_do_not_deadlock():
    # Thread A traces f, which calls g; thread B traces g, which calls f: each waits for
    # the other's trace. (The depth is per thread, so the traces end; which thread's trace
    # of the inner function each uses depends on timing, so the values do not.)
    depth = threading.local()
    both_tracing = threading.Barrier(2)

    def nested(other, v, extra):
        if getattr(depth, "level", 0):
            return v + extra
        depth.level = 1
        both_tracing.wait(10)
        return other(v) * 0.0 + v + extra
    f = jaxlite.jit(lambda v: nested(g, v, 1.0))
    g = jaxlite.jit(lambda v: nested(f, v, 2.0))
    x = np.arange(3.0, dtype=np.float32)
    results = {}
    threads = [threading.Thread(target=lambda n=n, h=h: results.setdefault(n, np.asarray(h(x))))
               for n, h in (("f", f), ("g", g))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive(), "deadlock"
    np.testing.assert_array_equal(results["f"], x + 1)
    np.testing.assert_array_equal(results["g"], x + 2)


def test_a_trace_blocked_on_a_lock_the_waiter_holds_does_not_deadlock():
    # A traces f and blocks (in C) on a lock that B holds while B calls f: B waits for
    # A's trace until it has not moved for a while, then traces f itself.
    lock = threading.RLock()
    a_tracing, b_holds = threading.Event(), threading.Event()

    def body(v):
        a_tracing.set()
        b_holds.wait(10)
        with lock:
            return v - 1.0
    f = jaxlite.jit(body)
    x = jnp.ones((2,), jnp.float32)
    results = {}

    def b():
        a_tracing.wait(10)
        with lock:
            b_holds.set()
            results["b"] = np.asarray(f(x))
    threads = [threading.Thread(target=lambda: results.setdefault("a", np.asarray(f(x)))),
               threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive(), "deadlock"
    np.testing.assert_array_equal(results["a"], [0, 0])
    np.testing.assert_array_equal(results["b"], [0, 0])


def test_single_flight_shares_results_and_errors_and_forgets_failures():
    flight = SingleFlight()
    calls = []
    gate = threading.Event()

    def compute():
        calls.append(1)
        gate.wait(5)
        return object()
    results = []
    starter = threading.Thread(target=lambda: results.append(flight.run("k", compute)))
    starter.start()
    while not calls:
        time.sleep(0.001)
    waiters = [threading.Thread(target=lambda: results.append(flight.run("k", compute)))
               for _ in range(3)]
    for t in waiters:
        t.start()
    time.sleep(0.05)
    gate.set()
    for t in [starter, *waiters]:
        t.join(10)
    assert len(calls) == 1 and len(results) == 4 and len({id(r) for r in results}) == 1
    assert len(flight) == 0

    def fail():
        raise KeyError("once")
    with pytest.raises(KeyError):
        flight.run("k", fail)
    assert flight.run("k", lambda: 5) == 5  # the failure was not kept
    # A thread asking again for a key it is computing computes it (no self-wait).
    assert flight.run("r", lambda: flight.run("r", lambda: 7) + 1) == 8


def test_single_flight_does_not_share_what_shareable_refuses():
    flight = SingleFlight()
    calls = []

    def compute():
        calls.append(threading.get_ident())
        time.sleep(0.2)
        return object()
    outs = _in_threads(lambda: flight.run("k", compute, shareable=lambda _: False), count=3)
    assert len(calls) == 3 and len({id(o) for o in outs}) == 3


def test_lru_cache_keeps_the_most_recently_used():
    cache = LRUCache(3)
    for k in range(3):
        cache[k] = str(k)
    assert cache.lookup(0) == "0"
    cache[3] = "3"
    assert list(cache) == [2, 0, 3]


def _executable_of(f) -> object:
    (plan,) = f._plans.values()
    return plan[0].executable


def test_a_dropped_jitted_function_frees_its_executable():
    scale = _unique()
    f = jaxlite.jit(lambda v: v * scale - 1.0)
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2))), [scale - 1] * 2)
    executable = _executable_of(f)
    refs = [weakref.ref(executable), weakref.ref(executable._native.engine),
            weakref.ref(next(iter(f._cache.values())).jaxpr)]
    del f, executable
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_per_function_caches_are_bounded(monkeypatch):
    monkeypatch.setattr(jit_module, "MAX_SIGNATURES", 4)
    f = jaxlite.jit(lambda v: v * 2 + 1)
    refs = []
    for n in range(1, 11):
        np.testing.assert_array_equal(np.asarray(f(jnp.arange(n))), np.arange(n) * 2 + 1)
        refs.append(weakref.ref(f._plans[next(reversed(f._plans))][0].executable))
    gc.collect()
    assert len(f._cache) == 4 and len(f._plans) == 4
    assert [r() is None for r in refs] == [True] * 6 + [False] * 4
    # An evicted signature is traced and compiled again, and still right.
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(1))), [1])


def test_all_functions_together_keep_a_bounded_number_of_signatures(monkeypatch):
    monkeypatch.setattr(jit_module, "ALL_TRACES", SharedBudget(4))
    monkeypatch.setattr(jit_module, "ALL_PLANS", SharedBudget(4))
    functions = [jaxlite.jit(lambda v, k=k: v + k) for k in range(3)]
    refs = []
    for f in functions:
        for n in (1, 2, 3):
            np.testing.assert_array_equal(np.asarray(f(jnp.zeros(n, jnp.int32))),
                                          np.full(n, functions.index(f)))
            refs.append(weakref.ref(f._plans[next(reversed(f._plans))][0].executable))
    gc.collect()
    assert sum(len(f._cache) for f in functions) == 4
    assert sum(len(f._plans) for f in functions) == 4
    assert [r() is None for r in refs] == [True] * 5 + [False] * 4
    np.testing.assert_array_equal(np.asarray(functions[0](jnp.zeros(1, jnp.int32))), [0])


def test_a_shared_budget_forgets_dead_caches():
    budget = SharedBudget(3)
    caches = [LRUCache(10) for _ in range(2)]
    for k, cache in enumerate(caches):
        cache[k] = "value"
        budget.use(cache, k)
    del caches[0], cache
    gc.collect()
    assert len(budget) == 1
    for k in range(5):
        caches[0][k] = "value"
        budget.use(caches[0], k)
    assert list(caches[0]) == [2, 3, 4]


def test_grad_of_jit_keeps_its_executable_between_calls():
    scale = _unique()
    g = jaxlite.grad(jaxlite.jit(lambda v: jnp.sum(jnp.sin(v) * scale)))
    x = jnp.linspace(0.0, 1.0, 4)
    g(x)
    before = _compiles()
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(g(x)), np.cos(np.asarray(x)) * scale,
                                   rtol=1e-6)
    assert _compiles()["all"] == before["all"]


_RSS_SCRIPT = textwrap.dedent("""
    import gc, os, sys
    import jaxlite, jaxlite.numpy as jnp
    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    x = jnp.ones((4,), jnp.float32)
    def run(start, count):
        for i in range(start, start + count):
            f = jaxlite.jit(lambda v, i=i: v * float(i) + 1.0)  # a new program each time
            f(x).block_until_ready()
            del f
    run(0, 200)  # warm-up: caches fill, the optimizer worker starts
    gc.collect()
    before = rss_mb()
    run(1000, {count})
    gc.collect()
    print((rss_mb() - before) * 1024 / {count})
""")


@pytest.mark.slow
def test_memory_stays_flat_while_jitting_and_dropping_functions():
    # Budget: about 20 ms per new function here, 15-25 s in all. Before the fix the growth
    # was about 58 KB per function (llvmlite's pass manager leaking per compile, and
    # executables kept by a process-wide cache).
    count = 800
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(jaxlite.__file__)), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-c", _RSS_SCRIPT.format(count=count)],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    kb_per_function = float(result.stdout.split()[-1])
    assert kb_per_function < 10, f"RSS grew {kb_per_function:.1f} KB per dropped function"


# ------------------------------------------------------- the LLVM optimizer processes
from jaxlite.backends.cpu import llvm_optimize, llvm_target, native  # noqa: E402

_IR = """
define void @scale(ptr noalias %x, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr inbounds float, ptr %x, i64 %i
  %v = load float, ptr %p
  %w = fmul float %v, 3.0
  store float %w, ptr %p
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""


@pytest.fixture
def fresh_pool(monkeypatch):
    """A pool of workers of this test's own, used from the first module on."""
    pool = native._WorkerPool()
    monkeypatch.setattr(native, "_WORKERS", pool)
    monkeypatch.setattr(native, "IN_PROCESS_COMPILES", 0)
    yield pool
    pool.close()


def test_a_worker_gives_the_same_object_code_as_this_process(fresh_pool):
    cpu, features = llvm_target.host_cpu()
    from_worker = native._compile([_IR])
    assert len(fresh_pool._idle) == 1  # it did run in a worker
    assert from_worker == llvm_optimize.object_code([_IR], cpu, features)


def test_a_worker_runs_the_optimizer_source_this_process_loaded(fresh_pool, tmp_path,
                                                               monkeypatch):
    # The file on disk may change under a long run (an upgrade): the worker must speak this
    # process's protocol, so it runs the source read at import, not the file.
    changed = tmp_path / "llvm_optimize.py"
    changed.write_text("raise SystemExit('the changed file was run')\n")
    monkeypatch.setattr(llvm_optimize, "__file__", str(changed))
    cpu, features = llvm_target.host_cpu()
    assert native._compile([_IR]) == llvm_optimize.object_code([_IR], cpu, features)
    assert len(fresh_pool._idle) == 1 and not fresh_pool._broken


def test_llvm_errors_from_a_worker_read_as_in_this_process(fresh_pool):
    with pytest.raises(RuntimeError, match="expected top-level entity"):
        native._compile(["this is not LLVM IR"])
    assert len(fresh_pool._idle) == 1  # the worker lives on
    native._compile([_IR])


def test_a_killed_worker_is_replaced(fresh_pool):
    native._compile([_IR])
    (worker,) = fresh_pool._idle
    worker.process.kill()
    worker.process.wait()
    cpu, features = llvm_target.host_cpu()
    assert native._compile([_IR]) == llvm_optimize.object_code([_IR], cpu, features)
    assert fresh_pool._idle and fresh_pool._idle[0] is not worker


def test_workers_are_replaced_when_used_up(fresh_pool, monkeypatch):
    monkeypatch.setattr(native, "WORKER_COMPILES", 2)
    pids = set()
    for _ in range(4):
        native._compile([_IR])
        pids.add(fresh_pool._idle[0].process.pid if fresh_pool._idle else None)
    assert len(pids - {None}) == 2


def test_without_processes_modules_are_optimized_here(fresh_pool, monkeypatch):
    monkeypatch.setattr(native.sys, "executable", "/bin/false")  # starts, never says ready
    cpu, features = llvm_target.host_cpu()
    assert native._compile([_IR]) == llvm_optimize.object_code([_IR], cpu, features)
    assert fresh_pool._broken and not fresh_pool._idle
