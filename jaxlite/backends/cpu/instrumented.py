"""Instrumented copies of executables, for trace captures (`jaxlite.profiler`; the CPU
backend's counterpart of XLA's CPU profiling of its thunks).

While a capture runs (`start(sink)` to `stop()`), every run of a `CpuExecutable` goes
through `_run_profiled`: the first time, the executable's optimized module is compiled
again with timed kernel calls (`emit_module(profile=True)`, see `codegen/program.py`),
that copy runs in its place, and the sink is handed a `ProfiledCall`: the run's wall time
and one record (site, start, end) per kernel call and control-flow instruction. Normal
executables are never instrumented: they only test once per run whether a capture is on
(`executable.set_profiler`).

The copy's object code is cached in memory under a key of its own (the optimized module,
its options and the word "instrumented"), so profiled and normal code never mix; it is not
stored in the persistent cache. Each copy owns its log, a buffer of int64 words
`[count, capacity, dropped, 0, (site, start, end)...]` whose address its module's global
`jl_profile_log` holds; runs of one copy are serialized so that they do not share it.

Times are nanoseconds of the real-time clock (`CLOCK_REALTIME`, what `time.time_ns` reads),
so the host's own events and the kernels' lie on one time line.
"""
from __future__ import annotations

import ctypes
import functools
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Callable, Sequence

import llvmlite.binding as llvm
import numpy as np

from jaxlite import monitoring
from jaxlite.backends.cpu import compile_cache, executable as executable_module
from jaxlite.backends.cpu.client import OBJECT_CACHE
from jaxlite.backends.cpu.codegen.module import ENTRY, emit_module
from jaxlite.backends.cpu.codegen.program import ProfileSite
from jaxlite.backends.cpu.executable import CpuExecutable
from jaxlite.backends.cpu.native import compile_object, compile_objects, link, load_objects
from jaxlite.xla.compile_progress import PHASE_EVENT
from jaxlite.xla.text import print_module

__all__ = ["ProfiledCall", "start", "stop", "active", "LOG_CAPACITY", "PROFILE_RUNTIME_IR"]

# Records a log holds; a run with more (a long while loop) keeps the first ones and counts
# the others as dropped.
LOG_CAPACITY = 1 << 16
_HEADER = 4  # words before the records: count, capacity, dropped, unused

# CLOCK_REALTIME is 0 on Linux and on macOS; a timespec is two 64-bit words there.
PROFILE_RUNTIME_IR = """
declare i32 @clock_gettime(i32, ptr)

define i64 @jl_profile_clock() nounwind {
entry:
  %ts = alloca [2 x i64], align 8
  %rc = call i32 @clock_gettime(i32 0, ptr %ts)
  %sec = load i64, ptr %ts, align 8
  %nsec.p = getelementptr inbounds i64, ptr %ts, i64 1
  %nsec = load i64, ptr %nsec.p, align 8
  %sec.ns = mul i64 %sec, 1000000000
  %now = add i64 %sec.ns, %nsec
  ret i64 %now
}

define void @jl_profile_record(ptr %log, i64 %site, i64 %start) nounwind {
entry:
  %end = call i64 @jl_profile_clock()
  %none = icmp eq ptr %log, null
  br i1 %none, label %done, label %check
check:
  %count = load i64, ptr %log, align 8
  %capacity.p = getelementptr inbounds i64, ptr %log, i64 1
  %capacity = load i64, ptr %capacity.p, align 8
  %room = icmp ult i64 %count, %capacity
  br i1 %room, label %write, label %drop
write:
  %word = mul i64 %count, 3
  %first = add i64 %word, 4
  %record = getelementptr inbounds i64, ptr %log, i64 %first
  store i64 %site, ptr %record, align 8
  %start.p = getelementptr inbounds i64, ptr %record, i64 1
  store i64 %start, ptr %start.p, align 8
  %end.p = getelementptr inbounds i64, ptr %record, i64 2
  store i64 %end, ptr %end.p, align 8
  %next = add i64 %count, 1
  store i64 %next, ptr %log, align 8
  br label %done
drop:
  %dropped.p = getelementptr inbounds i64, ptr %log, i64 2
  %dropped = load i64, ptr %dropped.p, align 8
  %more = add i64 %dropped, 1
  store i64 %more, ptr %dropped.p, align 8
  br label %done
done:
  ret void
}
"""


@dataclass(frozen=True)
class ProfiledCall:
    """One run of an executable under a capture.

    module : the name of the executable's (optimized) HLO module.
    program : the executable's number in this capture (programs may share a module name:
        two lambdas are both `jit__lambda`).
    start_ns, end_ns : the run's wall time (`time.time_ns`), around the native call.
    thread : the native id of the thread that ran it.
    sites : what each site number of `records` is.
    records : int64 array of rows (site, start_ns, end_ns), in the order the timed calls
        ended (a loop's body sites end before the loop).
    dropped : records that did not fit in the log.
    """

    module: str
    program: int
    start_ns: int
    end_ns: int
    thread: int
    sites: tuple[ProfileSite, ...]
    records: np.ndarray
    dropped: int


Sink = Callable[[ProfiledCall], None]


@functools.lru_cache(maxsize=None)
def _install_runtime() -> None:
    """Compile the two profiling functions (once per process, on the first capture) and make
    them known to the JIT linker, with the C library's clock."""
    libc = ctypes.CDLL(None)
    llvm.add_symbol("clock_gettime",
                    ctypes.cast(libc.clock_gettime, ctypes.c_void_p).value)
    engine = link(compile_object(PROFILE_RUNTIME_IR))
    for name in ("jl_profile_clock", "jl_profile_record"):
        llvm.add_symbol(name, engine.get_function_address(name))
    _ENGINES.append(engine)  # the code lives as long as its engine


_ENGINES: list[llvm.ExecutionEngine] = []


class _Instrumented:
    """An executable's instrumented copy, its log and the lock its runs take."""

    def __init__(self, copy: CpuExecutable, sites: tuple[ProfileSite, ...],
                 log_address: int) -> None:
        copy.instrumented = True  # its runs are not sent through the capture again
        self.executable = copy
        self.sites = sites
        self.number = 0  # in the capture (`_Capture.copy_of`)
        self.log = np.zeros(_HEADER + 3 * LOG_CAPACITY, np.int64)
        self.log[1] = LOG_CAPACITY
        ctypes.c_void_p.from_address(log_address).value = self.log.ctypes.data
        self.lock = threading.Lock()


def _compile_instrumented(original: CpuExecutable) -> _Instrumented:
    """The instrumented copy of `original` (object code from the memory cache when an
    earlier capture compiled it)."""
    _install_runtime()
    optimized = original.hlo_module()
    donated = tuple(sorted(set(original.options.donated_parameters)))
    threads = original.threads
    ir_texts, info = emit_module(optimized, donated, threads, profile=True)
    key = compile_cache.cache_key(print_module(optimized, metadata=False),
                                  (donated, threads, "instrumented"))
    payload = OBJECT_CACHE.get(key)
    if payload is None:
        ir_texts[0] += compile_cache.key_global(key)
        start = time.time()
        payload = compile_cache.pack_objects(compile_objects(ir_texts))
        monitoring.record_event_time_span(PHASE_EVENT, start, time.time(),
                                          phase="LLVM compilation", program=optimized.name)
        OBJECT_CACHE.put(key, payload)
    objects = compile_cache.unpack_objects(payload)
    assert objects is not None
    native = load_objects(objects, ENTRY)
    copy = CpuExecutable(original.client, original.client.devices()[0],
                         original.hlo_module(optimized=False), optimized, original.options,
                         info, native, ir_texts, threads)
    return _Instrumented(copy, info.sites,
                         native.engine.get_global_value_address("jl_profile_log"))


class _Capture:
    """The sink of the capture in progress and the instrumented copies made for it."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.copies: weakref.WeakKeyDictionary[CpuExecutable, _Instrumented] = \
            weakref.WeakKeyDictionary()
        self.lock = threading.Lock()
        self.made = 0  # copies made so far: the number of the next

    def copy_of(self, original: CpuExecutable) -> _Instrumented:
        with self.lock:
            found = self.copies.get(original)
        if found is None:
            start = time.time()
            found = _compile_instrumented(original)
            monitoring.record_event_time_span(PHASE_EVENT, start, time.time(),
                                              phase="instrumenting",
                                              program=original.hlo_module().name)
            with self.lock:
                if original not in self.copies:
                    found.number = self.made
                    self.made += 1
                found = self.copies.setdefault(original, found)
        return found


_CAPTURE: list[_Capture] = []


def _run_profiled(original: CpuExecutable, arrays: Sequence[np.ndarray],
                  checked: bool) -> list[np.ndarray]:
    """Run `original`'s instrumented copy on `arrays` and hand the sink what it timed."""
    if not _CAPTURE:  # the capture stopped while this run was on its way here
        return original.execute_arrays(arrays, checked)
    capture = _CAPTURE[0]
    copy = capture.copy_of(original)
    with copy.lock:
        copy.log[0] = copy.log[2] = 0
        start = time.time_ns()
        try:
            return copy.executable.execute_arrays(arrays, checked)
        finally:
            end = time.time_ns()
            count = int(copy.log[0])
            records = copy.log[_HEADER:_HEADER + 3 * count].reshape(count, 3).copy()
            capture.sink(ProfiledCall(original.hlo_module().name, copy.number, start, end,
                                      threading.get_native_id(), copy.sites,
                                      records, int(copy.log[2])))


def start(sink: Sink) -> None:
    """Send every run of a CPU executable through its instrumented copy, and what each
    run timed to `sink`, until `stop()`."""
    if _CAPTURE:
        raise RuntimeError("instrumented.start: a capture is already running")
    _install_runtime()
    _CAPTURE.append(_Capture(sink))
    executable_module.set_profiler(_run_profiled)


def stop() -> None:
    """Run executables as they are again; the instrumented copies are dropped (their object
    code stays in the memory cache, so a later capture only links it again)."""
    executable_module.set_profiler(None)
    _CAPTURE.clear()


def active() -> bool:
    """Whether a capture is running."""
    return bool(_CAPTURE)

