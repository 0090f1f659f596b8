"""`jit` calls through the compiler (mirrors JAX's pjit implementation; single primitives
op by op are `eager`'s, whose hook importing this module installs too).

The `jit` primitive compiles: its jaxpr is lowered to HLO (`lower_jaxpr`), compiled
by the default backend (`jaxlite.backends`), cached per jaxpr and backend (and executables
per module text), and run on the backend's buffers; importing this module installs that as
`jit_p.impl`.
"""
from __future__ import annotations

import logging
import re
import sys
import threading
import time
import weakref
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from jaxlite import monitoring
from jaxlite.runtime import compiler
from jaxlite.runtime.allocation import (INT64_MAX, allocation_error, out_of_memory,
                                        staged_avals)
from jaxlite.runtime.array import ArrayImpl, fresh_array
from jaxlite.runtime.device_eager import argument_buffer, device_results
from jaxlite.runtime.eager import checking_values, invalid_kind
from jaxlite.runtime.placement import place_jit_outputs
from jaxlite.runtime.call_cache import LRUCache, SingleFlight
from jaxlite.runtime.collector import collection_paused
from jaxlite.backends.base import Buffer, Client, CompileOptions, Executable, HostExecutable
from jaxlite.backends.registry import get_backend, started_default
from jaxlite.config import config
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.errors import JaxRuntimeError, warn_at_user
from jaxlite.interpreters.lowering import LoweredModule, lower_jaxpr
from jaxlite.lax.higher_order import jit_p
from jaxlite.xla import compile_progress
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import print_module




# ------------------------------------------------------------------ compiled execution

logger = logging.getLogger("jaxlite")
# JAX's monitoring event of a backend compile (a duration and a time span).
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def module_name(name: str) -> str:
    """The HLO module name of a jitted function `name` (`jit_f`; `jit__lambda` for a
    lambda, as JAX names them)."""
    return "jit_" + re.sub(r"[^A-Za-z0-9_]", "_", name.replace(">", ""))


class CompiledCall:
    """A jaxpr compiled for one backend, ready to call on eager values.

    executable : the backend's executable; its parameters are the lowering's constant
        arguments, then one per jaxpr input.
    const_buffers : the constant arguments, already on the device.
    in_avals, out_avals : the jaxpr's abstract inputs and outputs (outputs give the weak
        types of the results).
    donated : the positions of the jaxpr inputs given up to the call (`donate_argnums`)
        that a result can be returned in (see `usable_donations`): their Arrays are
        deleted by the call, as in JAX.

    A call on a `HostExecutable` hands it the arrays themselves, each donated one only when
    nothing else holds its memory (else a copy), so that a result can be written into it.
    Other executables get buffers (`Client.buffer_from_numpy`), whose memory is theirs.
    """

    __slots__ = ("executable", "const_buffers", "in_avals", "out_avals", "donated", "_host",
                 "_const_arrays", "_in_dtypes", "_in_shapes", "_consts_checked", "_out_weak",
                 "_plain_outputs", "checked", "_too_large")

    def __init__(self, executable: Executable, const_buffers: tuple[Buffer, ...],
                 in_avals: tuple[ShapedArray, ...], out_avals: tuple[ShapedArray, ...],
                 donated: tuple[int, ...] = (), checked: tuple[ClosedJaxpr, str] | None = None
                 ) -> None:
        self.executable = executable
        self.const_buffers = const_buffers
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.donated = donated
        self._host = isinstance(executable, HostExecutable)
        self._const_arrays = [b.to_numpy() for b in const_buffers] if self._host else []
        self._in_dtypes = [None if _special(a) else a.dtype for a in in_avals]
        self._in_shapes = [a.shape for a in in_avals]
        self._consts_checked = all(
            type(c) is np.ndarray and c.flags.c_contiguous for c in self._const_arrays)
        self._out_weak = [a.weak_type for a in out_avals]
        self._plain_outputs = not any(map(_special, out_avals))
        # Whether the results cannot be allocated (checked once: the shapes are fixed).
        self._too_large = allocation_error(out_avals) is not None
        # (jaxpr, name) when compiled under jax_debug_nans / jax_debug_infs: outputs are
        # checked, and a bad one is traced to its operation by running the jaxpr op by op.
        self.checked = checked

    def __call__(self, args: Sequence[Any]) -> list[ArrayImpl]:
        if self.checked is None:
            return self._call(args)
        inputs = list(args)  # before donation deletes any
        outs = self._call(args)
        kind = invalid_kind(outs)
        if kind is not None:
            jaxpr, name = self.checked
            logger.warning("Invalid %s value encountered in the output of jit(%s). Calling "
                           "the de-optimized version.", kind, name)
            eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *inputs)
            raise FloatingPointError(
                f"invalid value ({kind}) encountered in jit({name}); the "
                "de-optimized function (run op by op, as if without jit) produced none, so "
                "the compiled code's different rounding or operation order made it.")
        return outs

    def _call(self, args: Sequence[Any]) -> list[ArrayImpl]:
        if self._too_large:
            raise allocation_error(self.out_avals)
        if len(args) != len(self.in_avals):
            raise TypeError(f"{self.executable!r} takes {len(self.in_avals)} arguments, got "
                            f"{len(args)}.")
        try:
            return self._run(args)
        except MemoryError as e:  # a temporary the compiled code needed
            raise out_of_memory(None, f"a buffer of the compiled call: {e}") from e

    def _run(self, args: Sequence[Any]) -> list[ArrayImpl]:
        if self.donated:
            _check_donated_reuse(args, self.donated)
        if not self._host:
            return self._call_buffers(args)
        # Arrays already as their parameters take them (the common case) go as they are,
        # and the executable need not check them again.
        values = [a._value for a, dtype, shape in zip(args, self._in_dtypes, self._in_shapes)
                  if type(a) is ArrayImpl and a._value.dtype == dtype
                  and a._value.shape == shape and a._value.flags.c_contiguous]
        checked = len(values) == len(args) and self._consts_checked
        if len(values) != len(args):
            values = [a._value if type(a) is ArrayImpl and a._value.dtype == dtype
                      and a._value.flags.c_contiguous else _device_value(a, aval)
                      for a, dtype, aval in zip(args, self._in_dtypes, self.in_avals)]
        values = self._const_arrays + values
        if self.donated:
            self._hand_over(args, values)
        try:
            outs = self.executable.execute_arrays(  # type: ignore[attr-defined]
                values, checked=checked)
        except KeyboardInterrupt:
            # Ctrl-C stopped the run: a donated Array's memory may hold part of an update,
            # so it is given up as JAX gives it up at dispatch.
            self._delete_donated(args)
            raise
        self._delete_donated(args)
        if self._plain_outputs:
            return list(map(fresh_array, outs, self._out_weak))
        return [_array_of(out, aval) for out, aval in zip(outs, self.out_avals)]

    def _hand_over(self, args: Sequence[Any], values: list[np.ndarray]) -> None:
        """Make each donated argument's array one the executable may write: the Array's
        own memory when nothing else holds it (no view, no other Array, no numpy user,
        no other argument), else a copy."""
        first = len(self._const_arrays)
        for i in self.donated:
            arg = args[i]
            if type(arg) is ArrayImpl and values[first + i] is arg._value and (
                    values[first + i].base is not None
                    or _holders(values[first + i]) > _SOLE_HOLDERS):
                values[first + i] = np.array(values[first + i])

    def _call_buffers(self, args: Sequence[Any]) -> list[ArrayImpl]:
        client = self.executable.client
        device = self.const_buffers[0].device if self.const_buffers else None
        # Arrays in the device's memory go as they are (`device_eager.argument_buffer`),
        # and then the results stay there too.
        on_device = [argument_buffer(client, a, aval) for a, aval in zip(args, self.in_avals)]
        buffers = list(self.const_buffers)
        buffers += [b if b is not None else client.buffer_from_numpy(_device_value(a, aval),
                                                                      device)
                    for b, a, aval in zip(on_device, args, self.in_avals)]
        try:
            outs = self.executable.execute(buffers)
        except KeyboardInterrupt:
            self._delete_donated(args)  # (as above)
            raise
        self._delete_donated(args)
        # The results stay in device memory when an argument was there, or when this is
        # the default backend (uncommitted results belong on the default device).
        kept = (client is started_default() or any(b is not None for b in on_device)) \
            and device_results(outs, self.out_avals)
        return kept or [_array_of(out.to_numpy(), aval)
                        for out, aval in zip(outs, self.out_avals)]

    def _delete_donated(self, args: Sequence[Any]) -> None:
        for i in self.donated:
            if type(args[i]) is ArrayImpl:
                args[i].delete()


def _check_donated_reuse(args: Sequence[Any], donated: Sequence[int]) -> None:
    """JAX's JaxRuntimeError when one Array is given to a donated parameter and to another
    parameter of the same call (its buffer cannot be both given up and read); the call
    runs nothing and deletes nothing."""
    first_use: dict[int, int] = {}
    for i, arg in enumerate(args):
        if type(arg) is not ArrayImpl:
            continue
        first = first_use.setdefault(id(arg), i)
        if first == i:
            continue
        if first in donated:
            what, toy = "use a buffer that was previously donated in", "f(donate(a), a)"
        elif i in donated:
            what, toy = "donate a buffer which is also used by", "f(a, donate(a))"
        else:
            continue
        raise JaxRuntimeError(
            f"INVALID_ARGUMENT: Attempt to {what} the same call to Execute() (flattened "
            f"argument {i}, replica 0, partition 0, first use: {first}). Toy example for "
            f"this bug: `{toy}`. See https://docs.jax.dev/en/latest/faq.html#buffer-donation.")


def _device_value(value: Any, aval: ShapedArray) -> np.ndarray:
    """An argument as the numpy array its entry parameter takes (never a user's array,
    which the buffer would make read-only)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, np.bool_)  # float0 has no storage; HLO passes it as pred
    if dtypes.is_extended(aval.dtype):
        return np.asarray(aval.dtype.to_physical(value))
    if type(value) is ArrayImpl and value.dtype == aval.dtype:
        # A broadcast (`jnp.zeros`) or strided view is laid out in C order once, and the
        # Array keeps that buffer: later calls pass it without a copy.
        return value.contiguous_value()
    return np.array(value, dtype=aval.dtype)


def _special(aval: ShapedArray) -> bool:
    """Whether values of `aval` are not stored as they are: float0, and typed keys (stored
    as their physical data)."""
    return aval.dtype == dtypes.float0 or dtypes.is_extended(aval.dtype)


def _array_of(value: np.ndarray, aval: ShapedArray) -> Any:
    if aval.dtype == dtypes.float0:
        return ArrayImpl(np.zeros(aval.shape, dtypes.float0), aval.weak_type)
    if dtypes.is_extended(aval.dtype):
        return aval.dtype.from_physical(ArrayImpl(value))
    return ArrayImpl(value, aval.weak_type)


def _holders(array: np.ndarray) -> int:
    """The reference count of `array` seen from inside a call of this function."""
    return sys.getrefcount(array)


def _calibrate_holders() -> int:
    """What `_holders` says of an array held only by an Array and a list of a call's values
    (the count depends on the interpreter's calling convention)."""
    probe = ArrayImpl(np.empty(1, np.uint8))
    values = [probe._value]
    return _holders(values[0])


_SOLE_HOLDERS = _calibrate_holders()


def usable_donations(in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray],
                     donated: Sequence[int]) -> tuple[int, ...]:
    """The donated inputs a result can be returned in: results matched in order with
    donated inputs of the same shape and dtype, each input once (as XLA pairs them)."""
    free = sorted(set(donated))
    used = []
    for out in out_avals:
        match = next((i for i in free if in_avals[i].shape == out.shape
                      and in_avals[i].dtype == out.dtype), None)
        if match is not None:
            used.append(match)
            free.remove(match)
    return tuple(sorted(used))


def compile_lowered(lowered: LoweredModule, closed: ClosedJaxpr, name: str, client: Client,
                    donated_invars: Sequence[int] = (),
                    lowering_seconds: float | None = None) -> CompiledCall:
    """Compile a lowered jaxpr with `client`; `donated_invars` index the jaxpr's inputs
    (those no result can be returned in are not donated, with a warning, as in JAX).

    The executable is shared with every earlier compilation of the same module text for the
    same client and options (see `EXECUTABLES`). Each real compilation is logged (logger
    "jaxlite"; level WARNING under `jax_log_compiles`, else DEBUG) with the function's name,
    backend and time.
    """
    # Results and intermediates whose byte size overflows int64 can never exist (JAX's XLA
    # aborts there; the compiler would fail inside constant folding or buffer assignment).
    too_large = allocation_error(closed.out_avals, limit=INT64_MAX) or allocation_error(
        staged_avals(closed.jaxpr), limit=INT64_MAX)
    if too_large is not None:
        raise too_large
    num_consts = len(lowered.const_args)
    usable = usable_donations(closed.in_avals, closed.out_avals, donated_invars)
    if len(usable) < len(set(donated_invars)):
        unused = ", ".join(closed.in_avals[i].str_short() for i in sorted(set(donated_invars))
                           if i not in usable)
        warn_at_user(f"Some donated buffers were not usable: {unused}. jit of {name}: no "
                      "result has their shape and dtype, so they are not donated.")
    options = CompileOptions(
        donated_parameters=tuple(num_consts + i for i in usable),
        dump_dir=config.read("jaxlite_dump_dir"), verify=config.read("jaxlite_verify_hlo"),
        name=lowered.module.name)

    def compile_now() -> Executable:
        start, epoch = time.perf_counter(), time.time()
        with collection_paused():
            executable = compiler.backend_compile_and_load(client, lowered.module, options)
        seconds = time.perf_counter() - start
        monitoring.record_event_duration_secs(BACKEND_COMPILE_EVENT, seconds,
                                              fun_name=f"jit({name})")
        # JAX records the span too (seconds since the epoch); trace captures show it.
        monitoring.record_event_time_span(BACKEND_COMPILE_EVENT, epoch, time.time(),
                                          fun_name=f"jit({name})")
        _log_compile(name, client, closed, seconds, lowering_seconds)
        return executable
    try:
        executable = EXECUTABLES.get(lowered.module, client, options, compile_now)
    finally:
        compile_progress.finish()  # the long-compile report's chain of phases ends here
    device = client.local_devices()[0]
    const_buffers = tuple(client.buffer_from_numpy(np.asarray(c), device)
                          for c in lowered.const_args)
    return CompiledCall(executable, const_buffers, tuple(closed.in_avals),
                        tuple(closed.out_avals), usable,
                        (closed, name) if checking_values() else None)


def _log_compile(name: str, client: Client, closed: ClosedJaxpr, seconds: float,
                 lowering_seconds: float | None) -> None:
    level = logging.WARNING if config.read("jax_log_compiles") else logging.DEBUG
    if logger.isEnabledFor(level):
        lowering = "" if lowering_seconds is None else f" (lowering took {lowering_seconds:.4f} s)"
        signature = ", ".join(a.str_short() for a in closed.in_avals)
        logger.log(level, "Finished compiling jit(%s) for the %s backend in %.4f s%s; "
                   "arguments: [%s]", name, client.platform, seconds, lowering, signature)


class _ExecutableCache:
    """Executables by module text, client and compile options, for as long as something
    uses them.

    Transformations build a new jaxpr on every call (`grad(jit(f))` linearizes anew each
    time), so a cache by jaxpr identity alone would compile the same program again and
    again. The module's text is a complete key: it holds every instruction, attribute and
    small constant, and large constants are parameters whose values the caller passes.

    Entries are weak: an executable lives as long as a jitted function's cache, a
    `Compiled`, or `KEPT` (the recent executables of calls whose jaxprs are transient)
    holds it, and its machine code is freed with it. Concurrent requests for one key
    compile once (`SingleFlight`).
    """

    def __init__(self) -> None:
        self._entries: dict[Hashable, Callable[[], Executable | None]] = {}
        self._lock = threading.Lock()
        self._compiling = SingleFlight()

    def _lookup(self, key: Hashable) -> Executable | None:
        with self._lock:
            ref = self._entries.get(key)
        return None if ref is None else ref()

    def get(self, module: HloModule, client: Client, options: CompileOptions,
            compile_now: Callable[[], Executable]) -> Executable:
        key = (id(client), client.platform, options, print_module(module))
        executable = self._lookup(key)
        if executable is not None:
            return executable

        def compile_and_keep() -> Executable:
            found = self._lookup(key)
            if found is not None:
                return found
            compiled = compile_now()
            with self._lock:
                self._entries[key] = self._reference(key, compiled)
            return compiled
        return self._compiling.run(key, compile_and_keep)

    def _reference(self, key: Hashable, executable: Executable
                   ) -> Callable[[], Executable | None]:
        def forget(ref: Any) -> None:
            # No lock: the collector may run this while this thread holds it. (A racing
            # new entry may be dropped too; it is then compiled again.)
            if self._entries.get(key) is ref:
                self._entries.pop(key, None)
        try:
            return weakref.ref(executable, forget)
        except TypeError:  # an executable class without weak references: held strongly
            return lambda: executable

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
        KEPT.clear()

    def __len__(self) -> int:
        return len(self._entries)


EXECUTABLES = _ExecutableCache()
# The executables of the latest calls of the `jit` primitive (as `grad(jit(f))` makes),
# whose jaxprs die with each call: kept so that the next such call finds its executable.
KEPT: LRUCache = LRUCache(64)


def lower_and_compile(closed: ClosedJaxpr, name: str, client: Client,
                      donated_invars: Sequence[int] = ()) -> CompiledCall:
    """Lower `closed` to HLO and compile it with `client` (sharing executables by module
    text, see `EXECUTABLES`)."""
    start = time.perf_counter()
    with compile_progress.phase("lowering", f"jit({name})"):
        lowered = lower_jaxpr(closed, module_name(name), f"jit({name})")
    return compile_lowered(lowered, closed, name, client, donated_invars,
                           time.perf_counter() - start)


class _CompileCache:
    """Compiled calls per jaxpr (by identity, for as long as the jaxpr lives), backend and
    donated inputs."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, dict[Hashable, CompiledCall]]] = {}
        self._lock = threading.Lock()
        self._compiling = SingleFlight()

    def _lookup(self, closed: ClosedJaxpr, key: Hashable) -> CompiledCall | None:
        with self._lock:
            entry = self._entries.get(id(closed))
            if entry is not None and entry[0]() is closed:
                return entry[1].get(key)
        return None

    def get(self, closed: ClosedJaxpr, name: str, client: Client,
            donated_invars: tuple[int, ...]) -> CompiledCall:
        key = (client.platform, id(client), donated_invars)
        with self._lock:  # (`_lookup` inlined: this is every call's path)
            entry = self._entries.get(id(closed))
            if entry is not None and entry[0]() is closed and key in entry[1]:
                return entry[1][key]
        # Threads compiling this jaxpr at once: one lowers and compiles, the others wait.
        return self._compiling.run(
            (id(closed), key), lambda: self._lookup(closed, key)
            or self._compile_and_keep(closed, name, client, donated_invars, key))

    def _compile_and_keep(self, closed: ClosedJaxpr, name: str, client: Client,
                          donated_invars: tuple[int, ...], key: Hashable) -> CompiledCall:
        compiled = lower_and_compile(closed, name, client, donated_invars)
        with self._lock:
            entry = self._entries.get(id(closed))
            if entry is None or entry[0]() is not closed:
                ident = id(closed)
                ref = weakref.ref(closed, lambda _: self._entries.pop(ident, None))
                entry = (ref, {})
                self._entries[ident] = entry
            return entry[1].setdefault(key, compiled)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


COMPILE_CACHE = _CompileCache()


def compiled_call(closed: ClosedJaxpr, name: str, client: Client,
                  donated_invars: tuple[int, ...] = ()) -> CompiledCall:
    """The cached compilation of `closed` for `client` (compiled on first use)."""
    return COMPILE_CACHE.get(closed, name, client, donated_invars)


def _jit_impl(*args: Any, jaxpr: ClosedJaxpr, name: str) -> list[ArrayImpl]:
    """Eager execution of the `jit` primitive: compile with the default backend and run."""
    compiled = compiled_call(jaxpr, name, get_backend())
    KEPT[compiled.executable] = True
    return place_jit_outputs(jaxpr, args, compiled(args), name)


jit_p.impl = _jit_impl
