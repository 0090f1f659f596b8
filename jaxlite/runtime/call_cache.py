"""Two pieces of the caches of compiled calls: a bounded least-recently-used map, and
single flight.

`LRUCache` bounds what a jitted function keeps (its traces and call plans), as JAX's jit
caches are bounded; evicted entries are recomputed on their next use. `SharedBudget` bounds
the entries of many such caches together (JAX's 8192 compiled entries shared by all jitted
functions).

`SingleFlight` runs one computation per key at a time: threads that ask for a key another
thread is already computing wait for its result instead of computing it again (the
in-flight entries of JAX's jit cache, where one thread compiles a signature while the others
wait). `jit` uses it for tracing and `dispatch` for lowering and compiling, so that 8 threads
released together on a new jitted function trace and compile it once. Its rules, each for a
reason:
- An exception in the computing thread is raised in every thread waiting for it, and the key
  is forgotten, so that a later call tries again (a failure never poisons a cache). An
  interrupt (KeyboardInterrupt, SystemExit) stays in its thread: waiters compute instead.
- A thread that asks again for a key it is itself computing (a recursive call) computes it
  directly: waiting for itself would never end.
- A waiter whose computing thread is itself blocked (in a join, an event, a lock of
  `threading`, or waiting in here for another key) computes the value itself after a short
  grace period: the computing thread may be waiting for this very waiter (a jitted function
  that starts a thread calling itself, or two threads tracing mutually nested jits), and a
  duplicate computation is better than a deadlock. With `stall_seconds` (for computations
  that run user code, as tracing does), a computing thread whose innermost frame has not
  moved for that long counts as blocked too (it may wait in C for a lock the waiter holds).
- Results that must not cross threads (`shareable` says no: a trace holding another
  thread's tracers) are computed again by each waiter.
"""
from __future__ import annotations

import os
import queue
import sys
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Hashable

__all__ = ["LRUCache", "SharedBudget", "SingleFlight"]

# How often a waiter looks at the computing thread, and after how long it starts to.
_SLICE_SECONDS = 0.02
_GRACE_SECONDS = 0.1
# Files whose functions block a thread until another thread acts.
_BLOCKING_FILES = tuple(os.path.normcase(os.path.abspath(f)) for f in (
    threading.__file__, queue.__file__, __file__))


class LRUCache(OrderedDict):
    """A dict that keeps at most `capacity` entries, dropping the least recently used.

    `lookup` counts as a use once the cache is more than half full: below that nothing is
    near eviction, and recording a use costs a second hash of the key (a jit signature's
    takes a microsecond), so the order is exact only among uses made past half. Plain `get`
    is not a use. Safe under concurrent use: a key evicted meanwhile is simply missing."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity
        self._half = capacity // 2

    def lookup(self, key: Hashable) -> Any:
        value = self.get(key)
        if value is not None and len(self) > self._half:
            self.touch(key)
        return value

    def touch(self, key: Hashable) -> None:
        try:
            self.move_to_end(key)
        except KeyError:  # evicted by another thread since it was read
            pass

    def __setitem__(self, key: Hashable, value: Any) -> None:
        super().__setitem__(key, value)
        self.touch(key)
        while len(self) > self.capacity:
            try:
                self.popitem(last=False)
            except KeyError:  # emptied by another thread
                break


class SharedBudget:
    """At most `capacity` entries in all the caches that `use` it: beyond that, the entry
    used least recently (through `use`) is dropped from its cache. Caches are held weakly,
    and a dead cache's entries leave the budget (with the keys they hold) at the next use."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._order: OrderedDict[tuple[int, Hashable], weakref.ref] = OrderedDict()
        # id of a live cache -> (a weak reference to it, its keys in `_order`)
        self._caches: dict[int, tuple[weakref.ref, set]] = {}
        self._dead: list[int] = []  # ids of caches that died (appended by the collector)
        self._lock = threading.Lock()

    def use(self, cache: dict, key: Hashable) -> None:
        """Record a use of `cache[key]` (a new entry, or a hit)."""
        token = (id(cache), key)
        dropped = []
        with self._lock:
            self._forget_dead()
            if token in self._order:
                self._order.move_to_end(token)
                return
            known = self._caches.get(id(cache))
            if known is None:
                known = self._caches[id(cache)] = (weakref.ref(
                    cache, lambda _, ident=id(cache): self._dead.append(ident)), set())
            known[1].add(key)
            self._order[token] = known[0]
            while len(self._order) > self.capacity:
                (ident, old_key), old_ref = self._order.popitem(last=False)
                self._caches[ident][1].discard(old_key)
                dropped.append((old_ref, old_key))
        for old_ref, old_key in dropped:  # outside the lock: dropping frees executables
            owner = old_ref()
            if owner is not None:
                owner.pop(old_key, None)

    def _forget_dead(self) -> None:
        while self._dead:
            ident = self._dead.pop()
            for key in self._caches.pop(ident, (None, ()))[1]:
                self._order.pop((ident, key), None)

    def __len__(self) -> int:
        with self._lock:
            self._forget_dead()
            return len(self._order)


class _Flight:
    """A computation in progress: its thread, and its outcome once `done` is set."""

    __slots__ = ("owner", "done", "result", "error")

    def __init__(self) -> None:
        self.owner = threading.get_ident()
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class SingleFlight:
    """Runs `compute` once per key among concurrent callers (see the module's rules)."""

    def __init__(self, stall_seconds: float | None = None) -> None:
        self._lock = threading.Lock()
        self._flights: dict[Hashable, _Flight] = {}
        self._stall_seconds = stall_seconds

    def run(self, key: Hashable, compute: Callable[[], Any],
            shareable: Callable[[Any], bool] = lambda _: True) -> Any:
        """The value of `compute()` for `key`: computed here, or by the thread already
        computing it (its exception raised here too)."""
        me = threading.get_ident()
        with self._lock:
            flight = self._flights.get(key)
            if flight is None:
                flight = self._flights[key] = _Flight()
                owner = True
            else:
                owner = False
        if owner:
            return self._compute(key, flight, compute)
        if flight.owner != me and _wait(flight, self._stall_seconds):
            if isinstance(flight.error, Exception):
                raise flight.error
            if flight.error is None and shareable(flight.result):
                return flight.result
        # Recursive, abandoned wait, the other thread interrupted (KeyboardInterrupt is
        # that thread's own), or a result of the other thread's own.
        return compute()

    def _compute(self, key: Hashable, flight: _Flight, compute: Callable[[], Any]) -> Any:
        try:
            flight.result = compute()
            return flight.result
        except BaseException as error:
            flight.error = error
            raise
        finally:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.done.set()

    def __len__(self) -> int:
        return len(self._flights)


def _wait(flight: _Flight, stall_seconds: float | None) -> bool:
    """Wait for `flight`; False when waiting was given up (its thread is blocked)."""
    waited = still = 0.0
    place = None
    blocked = 0  # consecutive looks that found it waiting (one look may catch it passing)
    while not flight.done.wait(_SLICE_SECONDS):
        waited += _SLICE_SECONDS
        if waited < _GRACE_SECONDS:
            continue
        frame = sys._current_frames().get(flight.owner)
        if frame is None:
            return False
        blocked = blocked + 1 if _in_blocking_code(frame) else 0
        if blocked >= 3:
            return False
        here = (id(frame), frame.f_lasti)
        still = still + _SLICE_SECONDS if here == place else 0.0
        place = here
        if stall_seconds is not None and still >= stall_seconds:
            return False
    return True


def _in_blocking_code(frame: Any) -> bool:
    """Whether a thread's innermost Python frame waits for another thread (it is in
    `threading`, `queue` or this module)."""
    return os.path.normcase(os.path.abspath(frame.f_code.co_filename)) in _BLOCKING_FILES
