"""What a long compilation is doing, reported while it runs under `jax_log_compiles`
(jaxlite's own; JAX logs each phase of every compile, XLA warns of slow ones).

A compilation is a chain of phases run by one thread: tracing, lowering, then the backend's
(HLO passes, LLVM IR emission, LLVM compilation, linking on the cpu backend). Code marks
each with `with phase(name):`; `finish()` ends the chain once the backend has compiled.
With `jax_log_compiles` on, once the phases of a chain have taken `THRESHOLD_SECONDS` in
all, each phase is logged as it ends (the earlier ones at once), on JAX's logger for
compile phases ("jax._src.dispatch", level WARNING). A phase that is still running when the
mark passes, or that has run `THRESHOLD_SECONDS` itself after it, is logged while it runs,
so a compile that seems stuck says where it is. With the option off, a phase costs one
option read.

Every phase is also recorded as a `jaxlite.monitoring` time span (`PHASE_EVENT`, with the
phase's and the program's names), whatever the option: a trace capture
(`jaxlite.profiler`) shows them as compile events.

Phases inside a phase (a nested jit traced while its caller traces, an eager operation
compiled meanwhile) belong to the outer one. Tracing starts a new chain, and so does a
lowering unless it lowers what the chain just traced (the same program): a chain
abandoned after `jit(f).trace()` does not count towards the next compile of another.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Iterator

from jaxlite import monitoring
from jaxlite.config import config

__all__ = ["PHASE_EVENT", "THRESHOLD_SECONDS", "finish", "phase"]

# The monitoring time span of each phase (metadata: phase=, program=).
PHASE_EVENT = "/jaxlite/compile/phase"

# Seconds of compiling after which the phases are reported (tests set it lower).
THRESHOLD_SECONDS = 1.0
logger = logging.getLogger("jax._src.dispatch")  # JAX's name, which log handlers select

_LOG_COMPILES = config.reader("jax_log_compiles")
_STARTS_CHAIN = ("tracing", "lowering")


class _Chain:
    """The phases one thread has run so far for one compilation."""

    def __init__(self, name: str) -> None:
        self.name = name
        # (phase, its seconds, seconds of the chain when it ended), in the order they ended
        self.done: list[tuple[str, float, float]] = []
        self.logged = 0                           # how many of `done` are logged
        self.elapsed = 0.0                        # seconds of the phases in `done`
        self.lock = threading.Lock()              # against the timer's thread

    def end(self, name: str, seconds: float) -> None:
        with self.lock:
            self.elapsed += seconds
            self.done.append((name, seconds, self.elapsed))
            if self.elapsed >= THRESHOLD_SECONDS:
                self._log_done()

    def _log_done(self) -> None:
        for name, seconds, until in self.done[self.logged:]:
            logger.warning("Compiling %s: %s took %.3f s (%.3f s into compiling)",
                           self.name, name, seconds, until)
        self.logged = len(self.done)

    def running(self, name: str, started: float) -> None:
        """Told by the timer: phase `name`, begun at `started`, is still running."""
        with self.lock:
            self._log_done()
            now = time.perf_counter() - started
            logger.warning("Compiling %s: %s running for %.3f s (%.3f s into compiling)",
                           self.name, name, now, self.elapsed + now)

    def alarm(self, name: str, started: float) -> threading.Timer:
        """A started timer that reports phase `name` if it is still running when the chain
        passes the mark (or, past it already, after the phase has run the mark itself)."""
        left = THRESHOLD_SECONDS - self.elapsed
        timer = threading.Timer(left if left > 0 else THRESHOLD_SECONDS, self.running,
                                (name, started))
        timer.daemon = True
        timer.start()
        return timer


class _ThreadState(threading.local):
    chain: _Chain | None = None
    depth = 0


_STATE = _ThreadState()


@contextlib.contextmanager
def phase(name: str, program: str | None = None) -> Iterator[None]:
    """Mark a phase of compiling `program` (e.g. "jit(f)"; the chain keeps the first name
    it is told), for the long-compile report of `jax_log_compiles` and as a monitoring
    time span (`PHASE_EVENT`)."""
    start = time.time()  # (monitoring's time spans are seconds since the epoch)
    try:
        with _reported(name, program):
            yield
    finally:
        monitoring.record_event_time_span(PHASE_EVENT, start, time.time(), phase=name,
                                          program=program or "")


@contextlib.contextmanager
def _reported(name: str, program: str | None) -> Iterator[None]:
    """The phase as the long-compile report sees it."""
    state = _STATE
    if state.depth or not _LOG_COMPILES():
        yield
        return
    chain = state.chain
    if chain is None or (name in _STARTS_CHAIN and not _follows_tracing(chain, name, program)):
        chain = state.chain = _Chain(program or "a program")
    started = time.perf_counter()
    timer = chain.alarm(name, started)
    state.depth = 1
    try:
        yield
    finally:
        state.depth = 0
        timer.cancel()
        chain.end(name, time.perf_counter() - started)


def _follows_tracing(chain: _Chain, name: str, program: str | None) -> bool:
    """Whether phase `name` of `program` lowers what the chain has just traced."""
    return (name == "lowering" and program == chain.name
            and [n for n, _, _ in chain.done] == ["tracing"])


def finish() -> None:
    """End this thread's chain of phases: the backend has compiled (or failed to)."""
    if not _STATE.depth:
        _STATE.chain = None
