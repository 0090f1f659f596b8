"""Ctrl-C during a compiled while loop (no XLA counterpart: JAX 0.10.2's CPU runtime
ignores Ctrl-C until a computation ends, so a jitted loop that never ends hangs it).

A compiled call is one foreign call: Python's SIGINT handler only sets a flag that the
interpreter reads at its next bytecode, which never comes while a `lax.while_loop` runs
forever in native code. So:

- a native handler `jl_sigint` (in the runtime module, `IR` below) stores 1 into the
  process-global word `jl_interrupt_flag` and then calls the handler it replaced, Python's
  C-level one, which trips Python's own flag as before (so Python still raises
  KeyboardInterrupt at its next bytecode, and a wakeup fd, if set, is still written);
- every compiled while loop reads that word once per iteration, and every program after
  each kernel large enough to run in parallel (a load and a branch that is never taken);
  when it is set, it asks `jl_interrupt_here()` whether this run is the one to stop: only
  a run started by `jl_invoke_interruptible`, which records its thread in
  `jl_interrupt_owner`. Then the loop leaves (the program returns) at once, and so does
  every enclosing loop; the run ends with partial results, which `leave` never returns: it
  raises KeyboardInterrupt instead. One kernel is never cut inside (a huge matmul runs to
  its end first).

`jl_invoke_interruptible` is the runtime's `jl_invoke` after installing the native
handler (`jl_interrupt_arm`, by sigaction) in front of whatever C-level handler SIGINT
has, so a handler Python installed again since (`signal.signal`) is chained again; SIG_IGN
and SIG_DFL are left alone. Executables use it (`enter`) only on the main thread and while
Python's handler is `signal.default_int_handler`: a user's own handler might not raise,
and partial results must never be returned. Other threads' runs are never cut short (the
flag is global, the owner is not).
"""
from __future__ import annotations

import ctypes
import signal
import threading
from typing import Any, Callable

__all__ = ["IR", "bind", "enter", "leave", "declarations", "poll_head"]

# The runtime's part: the flag, the owner, the handler and the arming function. x86-64 and
# AArch64 glibc both put `sa_handler` first in `struct sigaction` (152 bytes); 256 covers it.
IR = """
@jl_interrupt_flag = global i32 0, align 4
@jl_interrupt_owner = global i64 0, align 8
@jl_interrupt_previous = global ptr null, align 8

declare i32 @sigaction(i32, ptr, ptr)
declare i64 @pthread_self()
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define void @jl_sigint(i32 %sig, ptr %info, ptr %context) {
entry:
  store volatile i32 1, ptr @jl_interrupt_flag, align 4
  %previous = load volatile ptr, ptr @jl_interrupt_previous, align 8
  %word = ptrtoint ptr %previous to i64
  %callable = icmp ugt i64 %word, 1
  br i1 %callable, label %chain, label %done
chain:
  call void %previous(i32 %sig, ptr %info, ptr %context)
  br label %done
done:
  ret void
}

define i1 @jl_interrupt_here() {
entry:
  %flag = load volatile i32, ptr @jl_interrupt_flag, align 4
  %owner = load volatile i64, ptr @jl_interrupt_owner, align 8
  %me = call i64 @pthread_self()
  %set = icmp ne i32 %flag, 0
  %mine = icmp eq i64 %me, %owner
  %stop = and i1 %set, %mine
  ret i1 %stop
}

define void @jl_interrupt_arm() {
entry:
  %old = alloca [256 x i8], align 16
  %new = alloca [256 x i8], align 16
  %rc = call i32 @sigaction(i32 2, ptr null, ptr %old)
  %failed = icmp ne i32 %rc, 0
  br i1 %failed, label %done, label %look
look:
  %handler = load ptr, ptr %old, align 8
  %word = ptrtoint ptr %handler to i64
  %ours = icmp eq ptr %handler, @jl_sigint
  %default_or_ignored = icmp ule i64 %word, 1
  %leave = or i1 %ours, %default_or_ignored
  br i1 %leave, label %done, label %install
install:
  store volatile ptr %handler, ptr @jl_interrupt_previous, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %old, i64 256, i1 false)
  store ptr @jl_sigint, ptr %new, align 8
  %rc2 = call i32 @sigaction(i32 2, ptr %new, ptr null)
  br label %done
done:
  ret void
}

define void @jl_invoke_interruptible(ptr %frame) {
entry:
  call void @jl_interrupt_arm()
  ; (a run started from a host callback inside another run hands the owner back after)
  %outer = load volatile i64, ptr @jl_interrupt_owner, align 8
  %me = call i64 @pthread_self()
  store volatile i64 %me, ptr @jl_interrupt_owner, align 8
  call void @jl_invoke(ptr %frame)
  store volatile i64 %outer, ptr @jl_interrupt_owner, align 8
  ret void
}
"""

_MAIN = threading.main_thread().ident
# The C function behind `signal.getsignal` (whose Python wrapper, converting the result to
# an enum, costs over a microsecond per call).
_getsignal = getattr(getattr(signal, "_signal", None), "getsignal", signal.getsignal)
_STATE: dict[str, Any] = {}


def bind(flag: int) -> None:
    """Take the address of the linked runtime's flag."""
    _STATE["flag"] = ctypes.c_int32.from_address(flag)


def declarations() -> tuple[str, ...]:
    """The lines a module whose loops poll the flag declares."""
    return ("@jl_interrupt_flag = external global i32", "declare i1 @jl_interrupt_here()")


def poll_head(fb: Any, stop: str, go: str) -> None:
    """Emit the per-iteration poll into function builder `fb`: branch to label `stop` when
    this run is to be interrupted, else to `go`."""
    check = fb.label("while.interrupt")
    flag = fb.op("load volatile i32, ptr @jl_interrupt_flag, align 4", "sigint")
    raised = fb.op(f"icmp ne i32 {flag}, 0", "sigint")
    fb.cond_br(raised, check, go)
    fb.start(check)
    fb.cond_br(fb.op("call i1 @jl_interrupt_here()", "sigint"), stop, go)


def enter() -> bool:
    """Before a run with while loops: whether it can be interruptible (main thread,
    Python's default SIGINT handler). When True, run it with `jl_invoke_interruptible`
    (which arms the handler and marks the thread as the owner), then call `leave`."""
    if threading.get_ident() != _MAIN or "flag" not in _STATE \
            or _getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    flag = _STATE["flag"]
    if flag.value:
        # A Ctrl-C since the last run: Python raises it now if it has not yet, else it was
        # handled already and must not cut this run short.
        _check_signals()
        flag.value = 0
    return True


def leave() -> None:
    """After an interruptible run: raise KeyboardInterrupt if Ctrl-C came during it (its
    results may be partial and are dropped)."""
    flag = _STATE["flag"]
    if flag.value:
        flag.value = 0
        _check_signals()  # Python's handler raises KeyboardInterrupt here
        raise KeyboardInterrupt  # (its handler was replaced meanwhile)


def _check_signals() -> None:
    # Runs Python's pending signal handlers now; ctypes raises what they raise.
    _PENDING()


_PENDING: Callable[[], int] = ctypes.pythonapi.PyErr_CheckSignals
_PENDING.restype = ctypes.c_int
_PENDING.argtypes = []
