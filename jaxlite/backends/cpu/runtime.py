"""The native runtime every compiled module links against (mirrors XLA's CPU runtime library,
reduced to what jaxlite's generated code calls).

`jl_parallel_for(task, ctx, units, grain, threads)` runs `task(ctx, lo, hi, worker)` over
[0, units) split into at most `threads` contiguous ranges whose bounds are multiples of
`grain`: the calling thread takes the first range (worker 0), POSIX threads the others
(workers 1, 2, ...: a task may use the worker number to pick its own scratch memory), and it
returns when all are done. The generated entry function calls it from inside one foreign
call, so a parallel kernel costs no Python at all; with one thread it is a plain call.

`jl_invoke(frame)` calls an entry function with the arguments stored in `frame` (see
`invoke_frame`), first filling its tables of parameter and result addresses from the numpy
arrays' objects. Python calls executables through it: a foreign call with one integer
argument costs a fraction of one with six converted arguments, and reading an array's data
pointer from its object in native code costs nothing, where `ndarray.ctypes.data` costs
about a microsecond.

`jl_invoke_all(frames, count)` runs `count` frames at once, each on a thread of its own (the
caller's thread takes the first): the partitions of an SPMD program, with no Python between
start and end. `jl_spmd_barrier(rendezvous)` is where the partitions of an SPMD program (each running the
program in a thread of its own, `spmd_executable`) wait for each other at a collective: the
last to arrive releases the others. A waiter yields its core while it waits (eight
partitions may share two cores), and gives up after the rendezvous's timeout: it then sets
the rendezvous's abort word, and every later barrier of that run returns at once, so the
partitions of a program that diverged (one waits where another never comes) end instead of
hanging. When the rendezvous holds a hook, the last to arrive calls it before releasing
the others (the partitions of other processes meet there, `spmd_exchange`). See
`RENDEZVOUS_WORDS` for the rendezvous's layout.

`install()` compiles the runtime once per process and makes its symbols, and the C library
functions generated code calls, known to LLVM's JIT linker by address, so that modules (and
object files loaded from the compilation cache) resolve them.
"""
from __future__ import annotations

import ctypes
import platform
import threading
from typing import Callable

import llvmlite.binding as llvm
import numpy as np

from jaxlite.backends.cpu import interrupt

__all__ = ["install", "invoker", "invoke_all", "invoke_frame", "RUNTIME_IR", "MAX_THREADS", "FRAME_HEADER",
           "ARRAY_DATA_OFFSET", "FLUSHES_SUBNORMALS", "RENDEZVOUS_WORDS"]

MAX_THREADS = 64
# The words of an invoke frame before its array objects (see `invoke_frame`).
FRAME_HEADER = 9

# The words (int64) at the start of an SPMD run's rendezvous: partitions arrived at the
# current barrier, barriers completed, partitions taking part, abort (nonzero after a
# timeout), the timeout in seconds, and a hook (the address of a function of the
# rendezvous, or 0) that the last partition to arrive calls before it releases the others:
# how a run of several processes exchanges operands between them (`spmd_exchange`). Then (`codegen/collectives.py`) each partition's last
# collective site and the operand addresses each partition publishes.
RENDEZVOUS_WORDS = ("arrived", "generation", "partitions", "abort", "timeout", "hook")

# XLA's CPU runtime computes with subnormal floats flushed to zero, inputs and results
# alike (x86's MXCSR FTZ and DAZ bits, AArch64's FPCR FZ), and JAX's numbers are those:
# 1e-39 * 1.0 is 0 there, as is exp(-88). The entry call sets the mode of the calling
# thread and restores it after, so the process's own numpy code never sees it; the threads
# `jl_parallel_for` starts inherit it (pthread_create copies the floating-point
# environment). It is also what keeps a gelu fed its own results (values halving towards
# zero) from slowing down twofold once they reach the subnormal range.
_MACHINE = platform.machine().lower()
if _MACHINE in ("x86_64", "amd64"):
    _FLUSH_DECLARE = """
declare void @llvm.x86.sse.stmxcsr(ptr)
declare void @llvm.x86.sse.ldmxcsr(ptr)
"""
    # MXCSR bit 15 flushes results (FTZ), bit 6 reads subnormal operands as zero (DAZ).
    _FLUSH_ON = """  %mode.saved = alloca i32, align 4
  %mode.flush = alloca i32, align 4
  call void @llvm.x86.sse.stmxcsr(ptr %mode.saved)
  %mode = load i32, ptr %mode.saved, align 4
  %mode.ftz = or i32 %mode, 32832
  store i32 %mode.ftz, ptr %mode.flush, align 4
  call void @llvm.x86.sse.ldmxcsr(ptr %mode.flush)"""
    _FLUSH_OFF = "  call void @llvm.x86.sse.ldmxcsr(ptr %mode.saved)"
elif _MACHINE in ("aarch64", "arm64"):
    _FLUSH_DECLARE = """
declare i64 @llvm.aarch64.get.fpcr()
declare void @llvm.aarch64.set.fpcr(i64)
"""
    # FPCR bit 24 (FZ) flushes subnormal operands and results of single and double ops.
    _FLUSH_ON = """  %mode = call i64 @llvm.aarch64.get.fpcr()
  %mode.fz = or i64 %mode, 16777216
  call void @llvm.aarch64.set.fpcr(i64 %mode.fz)"""
    _FLUSH_OFF = "  call void @llvm.aarch64.set.fpcr(i64 %mode)"
else:  # other hosts keep IEEE subnormals (and differ from XLA there)
    _FLUSH_DECLARE = _FLUSH_ON = _FLUSH_OFF = ""
FLUSHES_SUBNORMALS = bool(_FLUSH_ON)

RUNTIME_IR = f"""{_FLUSH_DECLARE}
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_join(i64, ptr)

define internal ptr @jl_thread_main(ptr %job) {{
entry:
  %task = load ptr, ptr %job, align 8
  %ctx.p = getelementptr inbounds {{ptr, ptr, i64, i64, i64}}, ptr %job, i32 0, i32 1
  %ctx = load ptr, ptr %ctx.p, align 8
  %lo.p = getelementptr inbounds {{ptr, ptr, i64, i64, i64}}, ptr %job, i32 0, i32 2
  %lo = load i64, ptr %lo.p, align 8
  %hi.p = getelementptr inbounds {{ptr, ptr, i64, i64, i64}}, ptr %job, i32 0, i32 3
  %hi = load i64, ptr %hi.p, align 8
  %w.p = getelementptr inbounds {{ptr, ptr, i64, i64, i64}}, ptr %job, i32 0, i32 4
  %w = load i64, ptr %w.p, align 8
  call void %task(ptr %ctx, i64 %lo, i64 %hi, i64 %w)
  ret ptr null
}}

define void @jl_parallel_for(ptr %task, ptr %ctx, i64 %units, i64 %grain, i64 %threads) {{
entry:
  %jobs = alloca [{MAX_THREADS} x {{ptr, ptr, i64, i64, i64}}], align 16
  %tids = alloca [{MAX_THREADS} x i64], align 16
  %g = call i64 @llvm.umax.i64(i64 %grain, i64 1)
  %g1 = sub i64 %g, 1
  %u1 = add i64 %units, %g1
  %chunks = udiv i64 %u1, %g
  %n0 = call i64 @llvm.umin.i64(i64 %threads, i64 %chunks)
  %n = call i64 @llvm.umin.i64(i64 %n0, i64 {MAX_THREADS})
  %single = icmp ule i64 %n, 1
  br i1 %single, label %alone, label %split
alone:
  call void %task(ptr %ctx, i64 0, i64 %units, i64 0)
  ret void
split:
  %n1 = sub i64 %n, 1
  %c1 = add i64 %chunks, %n1
  %per = udiv i64 %c1, %n
  %size = mul i64 %per, %g
  br label %spawn.head
spawn.head:
  %t = phi i64 [1, %split], [%t.next, %spawn.next]
  %more = icmp ult i64 %t, %n
  br i1 %more, label %spawn.body, label %own
spawn.body:
  %lo = mul i64 %t, %size
  %lo.size = add i64 %lo, %size
  %hi = call i64 @llvm.umin.i64(i64 %lo.size, i64 %units)
  %tid.p = getelementptr inbounds [{MAX_THREADS} x i64], ptr %tids, i64 0, i64 %t
  store i64 0, ptr %tid.p, align 8
  %empty = icmp uge i64 %lo, %hi
  br i1 %empty, label %spawn.next, label %spawn.go
spawn.go:
  %job = getelementptr inbounds [{MAX_THREADS} x {{ptr, ptr, i64, i64, i64}}], ptr %jobs,
      i64 0, i64 %t
  store ptr %task, ptr %job, align 8
  %job.ctx = getelementptr inbounds {{ptr, ptr, i64, i64, i64}}, ptr %job, i32 0, i32 1
  store ptr %ctx, ptr %job.ctx, align 8
  %job.lo = getelementptr inbounds {{ptr, ptr, i64, i64, i64}}, ptr %job, i32 0, i32 2
  store i64 %lo, ptr %job.lo, align 8
  %job.hi = getelementptr inbounds {{ptr, ptr, i64, i64, i64}}, ptr %job, i32 0, i32 3
  store i64 %hi, ptr %job.hi, align 8
  %job.w = getelementptr inbounds {{ptr, ptr, i64, i64, i64}}, ptr %job, i32 0, i32 4
  store i64 %t, ptr %job.w, align 8
  %rc = call i32 @pthread_create(ptr %tid.p, ptr null, ptr @jl_thread_main, ptr %job)
  %failed = icmp ne i32 %rc, 0
  br i1 %failed, label %inline, label %spawn.next
inline:
  store i64 0, ptr %tid.p, align 8
  %ignored = call ptr @jl_thread_main(ptr %job)
  br label %spawn.next
spawn.next:
  %t.next = add i64 %t, 1
  br label %spawn.head
own:
  %own.hi = call i64 @llvm.umin.i64(i64 %size, i64 %units)
  call void %task(ptr %ctx, i64 0, i64 %own.hi, i64 0)
  br label %join.head
join.head:
  %j = phi i64 [1, %own], [%j.next, %join.next]
  %jmore = icmp ult i64 %j, %n
  br i1 %jmore, label %join.body, label %done
join.body:
  %jtid.p = getelementptr inbounds [{MAX_THREADS} x i64], ptr %tids, i64 0, i64 %j
  %jtid = load i64, ptr %jtid.p, align 8
  %running = icmp ne i64 %jtid, 0
  br i1 %running, label %join.wait, label %join.next
join.wait:
  %jr = call i32 @pthread_join(i64 %jtid, ptr null)
  br label %join.next
join.next:
  %j.next = add i64 %j, 1
  br label %join.head
done:
  ret void
}}

define void @jl_invoke(ptr %frame) {{
entry:
  %count.p = getelementptr inbounds ptr, ptr %frame, i64 7
  %count = load i64, ptr %count.p, align 8
  %offset.p = getelementptr inbounds ptr, ptr %frame, i64 8
  %offset = load i64, ptr %offset.p, align 8
  %objects = getelementptr inbounds ptr, ptr %frame, i64 {FRAME_HEADER}
  %params.p = getelementptr inbounds ptr, ptr %frame, i64 1
  %params = load ptr, ptr %params.p, align 8
  br label %data.head
data.head:
  %k = phi i64 [0, %entry], [%k.next, %data.body]
  %more = icmp ult i64 %k, %count
  br i1 %more, label %data.body, label %run
data.body:
  %object.p = getelementptr inbounds ptr, ptr %objects, i64 %k
  %object = load ptr, ptr %object.p, align 8
  %data.p = getelementptr inbounds i8, ptr %object, i64 %offset
  %data = load ptr, ptr %data.p, align 8
  %slot = getelementptr inbounds ptr, ptr %params, i64 %k
  store ptr %data, ptr %slot, align 8
  %k.next = add i64 %k, 1
  br label %data.head
run:
  %fn = load ptr, ptr %frame, align 8
  %outs.p = getelementptr inbounds ptr, ptr %frame, i64 2
  %outs = load ptr, ptr %outs.p, align 8
  %arena.p = getelementptr inbounds ptr, ptr %frame, i64 3
  %arena = load ptr, ptr %arena.p, align 8
  %consts.p = getelementptr inbounds ptr, ptr %frame, i64 4
  %consts = load ptr, ptr %consts.p, align 8
  %extra.p = getelementptr inbounds ptr, ptr %frame, i64 5
  %extra = load ptr, ptr %extra.p, align 8
  %threads.p = getelementptr inbounds ptr, ptr %frame, i64 6
  %threads = load i64, ptr %threads.p, align 8
{_FLUSH_ON}
  call void %fn(ptr %params, ptr %outs, ptr %arena, ptr %consts, ptr %extra, i64 %threads)
{_FLUSH_OFF}
  ret void
}}

declare i32 @sched_yield()
declare i64 @time(ptr)

define internal void @jl_invoke_task(ptr %frames, i64 %lo, i64 %hi, i64 %worker) {{
entry:
  br label %head
head:
  %k = phi i64 [%lo, %entry], [%k.next, %body]
  %more = icmp ult i64 %k, %hi
  br i1 %more, label %body, label %done
body:
  %frame.p = getelementptr inbounds ptr, ptr %frames, i64 %k
  %frame = load ptr, ptr %frame.p, align 8
  call void @jl_invoke(ptr %frame)
  %k.next = add i64 %k, 1
  br label %head
done:
  ret void
}}

define void @jl_invoke_all(ptr %frames, i64 %count) {{
entry:
  call void @jl_parallel_for(ptr @jl_invoke_task, ptr %frames, i64 %count, i64 1, i64 %count)
  ret void
}}

define void @jl_spmd_barrier(ptr %rv) {{
entry:
  %gen.p = getelementptr inbounds i64, ptr %rv, i64 1
  %count.p = getelementptr inbounds i64, ptr %rv, i64 2
  %abort.p = getelementptr inbounds i64, ptr %rv, i64 3
  %timeout.p = getelementptr inbounds i64, ptr %rv, i64 4
  %abort0 = load atomic i64, ptr %abort.p seq_cst, align 8
  %aborted0 = icmp ne i64 %abort0, 0
  br i1 %aborted0, label %done, label %arrive
arrive:
  ; The generation is read before arriving: it cannot move on until this partition has.
  %gen = load atomic i64, ptr %gen.p seq_cst, align 8
  %count = load i64, ptr %count.p, align 8
  %before = atomicrmw add ptr %rv, i64 1 seq_cst
  %arrived = add i64 %before, 1
  %last = icmp eq i64 %arrived, %count
  br i1 %last, label %release, label %wait
release:
  %hook.p = getelementptr inbounds ptr, ptr %rv, i64 5
  %hook = load ptr, ptr %hook.p, align 8
  %hooked = icmp ne ptr %hook, null
  br i1 %hooked, label %call.hook, label %reset
call.hook:
  call void %hook(ptr %rv)
  br label %reset
reset:
  store atomic i64 0, ptr %rv seq_cst, align 8
  %gen.next = add i64 %gen, 1
  store atomic i64 %gen.next, ptr %gen.p seq_cst, align 8
  br label %done
wait:
  %started = call i64 @time(ptr null)
  %timeout = load i64, ptr %timeout.p, align 8
  br label %spin
spin:
  %i = phi i64 [0, %wait], [%i.next, %yield]
  %now.gen = load atomic i64, ptr %gen.p seq_cst, align 8
  %moved = icmp ne i64 %now.gen, %gen
  br i1 %moved, label %done, label %check
check:
  %abort = load atomic i64, ptr %abort.p seq_cst, align 8
  %aborted = icmp ne i64 %abort, 0
  br i1 %aborted, label %done, label %clock
clock:
  %i.next = add i64 %i, 1
  %tick = and i64 %i.next, 1023
  %look = icmp eq i64 %tick, 0
  br i1 %look, label %late, label %yield
late:
  %now = call i64 @time(ptr null)
  %waited = sub i64 %now, %started
  %over = icmp sgt i64 %waited, %timeout
  br i1 %over, label %give.up, label %yield
give.up:
  store atomic i64 1, ptr %abort.p seq_cst, align 8
  br label %done
yield:
  %ignored = call i32 @sched_yield()
  br label %spin
done:
  ret void
}}
"""

_LOCK = threading.Lock()

# C library functions that generated code may call, resolved by address (the JIT linker's
# own search of the process would find most of them; this makes it certain).
_LIBC = ("pthread_create", "pthread_join", "memcpy", "memmove", "memset", "malloc", "free",
         "sigaction", "pthread_self", "sched_yield", "time")


_INSTALLED: list[llvm.ExecutionEngine] = []
_INVOKER: list[Callable[[int], None]] = []


def install(compile_object: Callable[[str], bytes],
            link: Callable[[bytes], llvm.ExecutionEngine]) -> None:
    """Compile the runtime (once per process, with the backend's `compile_object` and
    `link`) and register its symbols, and the C library's, for later modules."""
    with _LOCK:
        if _INSTALLED:
            return
        libc = ctypes.CDLL(None)
        for name in _LIBC:
            llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        engine = link(compile_object(RUNTIME_IR + interrupt.IR))
        for name in ("jl_parallel_for", "jl_spmd_barrier"):
            llvm.add_symbol(name, engine.get_function_address(name))
        # Ctrl-C in compiled while loops (see `interrupt`): the flag loops poll, the check.
        flag = engine.get_global_value_address("jl_interrupt_flag")
        llvm.add_symbol("jl_interrupt_flag", flag)
        llvm.add_symbol("jl_interrupt_here", engine.get_function_address("jl_interrupt_here"))
        interrupt.bind(flag)
        _INSTALLED.append(engine)  # the code lives as long as its engine
        # A CFUNCTYPE releases the GIL during the call, so other threads run meanwhile.
        for name in ("jl_invoke", "jl_invoke_interruptible"):
            _INVOKER.append(ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
                engine.get_function_address(name)))
        _INVOKER.append(ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(
            engine.get_function_address("jl_invoke_all")))


def invoke_all(frames: int, count: int) -> None:
    """Run the `count` frames whose addresses the table at `frames` holds at once, each on
    a thread of its own (`jl_invoke_all`; at most `MAX_THREADS`)."""
    if not 0 < count <= MAX_THREADS:
        raise ValueError(f"invoke_all: {count} frames; at most {MAX_THREADS} run at once")
    _INVOKER[2](frames, count)


def invoker(interruptible: bool = False) -> Callable[[int], None]:
    """`jl_invoke` as a ctypes function of the frame's address (after `install`); with
    `interruptible`, `jl_invoke_interruptible` (Ctrl-C stops its while loops: `interrupt`)."""
    return _INVOKER[1 if interruptible else 0]


def invoke_frame(entry: int, consts: int, params: int, results: int) -> ctypes.Array:
    """A frame for `jl_invoke` calling the entry function at address `entry`.

    Words: 0 the function; 1, 2 the tables of parameter and result addresses; 3 the arena;
    4 the constant table `consts`; 5 the extra area; 6 the thread count; 7 how many array
    objects to read data pointers from (0: the caller writes the tables itself); 8 the
    offset of the data pointer in an array object (`ARRAY_DATA_OFFSET`); then
    `params + results` array objects (their `id`s), then the two tables, contiguous. The
    caller sets words 3, 5, 6 and 7 and the objects (or the tables).
    """
    count = params + results
    frame = (ctypes.c_void_p * (FRAME_HEADER + 2 * count))()
    word = ctypes.sizeof(ctypes.c_void_p)
    tables = ctypes.addressof(frame) + (FRAME_HEADER + count) * word
    frame[0], frame[1], frame[2], frame[4] = entry, tables, tables + params * word, consts
    frame[8] = ARRAY_DATA_OFFSET
    return frame


def _array_data_offset() -> int:
    """Where a numpy array object holds its data pointer (right after the object header in
    CPython's layout of `PyArrayObject`), checked on two arrays; 0 when not found, and then
    callers write the addresses themselves."""
    probes = [np.empty(3, np.float32), np.zeros((2, 2), np.int8)]
    word = ctypes.sizeof(ctypes.c_void_p)
    for offset in range(word, 8 * word, word):
        if all(ctypes.c_void_p.from_address(id(p) + offset).value == p.ctypes.data
               for p in probes):
            return offset
    return 0


ARRAY_DATA_OFFSET = _array_data_offset()
