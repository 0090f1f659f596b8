"""Traces and tracers: how a transformation intercepts primitives (mirrors `jax.core.Trace`).

The current trace lives in a `ContextVar`. Every trace has a parent (the trace that was
current when it started), so traces form a chain down to the eager `EvalTrace`. A trace
interprets a primitive by unwrapping its own tracers and running the primitive's rule with
its parent as the current trace; values from further down the chain (closed-over tracers of
outer transformations, or plain arrays) are constants to it. Because each trace only opens
its own tracers, nested transformations never confuse each other's perturbations.

A trace is "alive" while its transformation runs; a tracer of a finished trace that shows up
later raises `UnexpectedTracerError`, naming the function being traced and the line that made
the value. With `jax_check_tracer_leaks` on, a transformation that ends while something
outside it still holds one of its tracers raises at once (`core.leaks`).
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator, Sequence

import numpy as np

# (defines jax_check_tracer_leaks, read below)
from jaxlite import _jax_options  # noqa: F401
from jaxlite.config import config
from jaxlite.core.avals import ShapedArray
from jaxlite.core.basearray import Array
from jaxlite.core.leaks import Location, find_leaks, leak_report, where_created
from jaxlite.errors import (ConcretizationTypeError, TracerArrayConversionError,
                            TracerBoolConversionError, TracerIntegerConversionError,
                            UnexpectedTracerError)


_CHECK_LEAKS = config.reader("jax_check_tracer_leaks")


class Trace:
    """One active transformation; `process_primitive` says what `bind` means under it."""

    # Where the transformation started (the user's line), known while leaks are checked.
    started_at: Location | None = None
    # Whether `process_primitive` records where each of its tracers is made by itself
    # (staging does, always); other traces do it only while leaks are checked.
    records_origins = False
    # Whether `jax_check_tracer_leaks` checks this kind of trace when it ends (JAX checks
    # its jaxpr and batching traces, not forward-mode differentiation's).
    leaks_checked = True

    def __init__(self, parent: "Trace | None", stands_for: "Trace | None" = None) -> None:
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.alive = True
        # A trace that runs work deferred by another, live one (a batched custom rule) and
        # treats that trace's tracers as its own.
        self.stands_for = stands_for
        if _CHECK_LEAKS():
            self._record_origins()

    def process_primitive(self, primitive: Any, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        raise NotImplementedError

    @property
    def main(self) -> "Trace":
        """The identity of this transformation (JAX's trace tag); a trace is its own."""
        return self

    def is_own(self, value: Any) -> bool:
        """Whether `value` is a tracer of this trace (after checking it is not stale)."""
        if not isinstance(value, Tracer):
            return False
        trace = value._trace
        if trace is self or (trace is self.stands_for and trace.alive):
            return True
        check_ancestor(self, trace, value)
        return False

    def invalidate(self) -> None:
        """Mark the transformation finished: its tracers may no longer be used."""
        self.alive = False

    def concretization_error(self, tracer: "Tracer", context: str) -> Exception:
        return ConcretizationTypeError(
            f"Abstract tracer value encountered where a concrete value is expected ({context}) "
            f"of {tracer.aval.str_short()}.")

    def _record_origins(self) -> None:
        """Note the user's line where this transformation starts and, unless the trace does
        it itself, where each of its tracers is made (an instance attribute shadows the
        class's `process_primitive`, so traces made with the option off pay nothing)."""
        self.started_at = where_created()
        if self.records_origins:
            return
        process = type(self).process_primitive.__get__(self)

        def process_and_record(primitive: Any, args: Sequence[Any],
                               params: dict[str, Any]) -> Any:
            out = process(primitive, args, params)
            where = where_created()
            for value in out if isinstance(out, (list, tuple)) else (out,):
                if isinstance(value, Tracer) and value._trace is self:
                    value._origin = where
            return out
        self.process_primitive = process_and_record  # type: ignore[method-assign]

    def traced_function(self) -> tuple[str, str] | None:
        """The function this trace runs and the transformation, for error messages: ("h at
        file.py:3", "jit"); None when unknown."""
        return None

    def origin(self, tracer: "Tracer") -> tuple[str, str] | None:
        """Where `tracer` comes from: ("line", "file.py:4 (h)") or ("argument", "x");
        None when unknown."""
        where = getattr(tracer, "_origin", None) or _inner_origin(tracer) or self.started_at
        return None if where is None else ("line", str(where))

    def leak_lines(self, tracer: "Tracer") -> list[str]:
        """What the leak report says about one of this trace's tracers."""
        origin = self.origin(tracer)
        if origin is None:
            return []
        if origin[0] == "argument":
            return [f"This {type(tracer).__name__} is the argument {origin[1]}."]
        return [f"This {type(tracer).__name__} with object id {id(tracer)} was created on "
                f"line:\n  {origin[1]}"]


def _inner_origin(tracer: "Tracer") -> Location | None:
    """The line that made a tracer this one wraps (a jvp tracer's staged tangent under
    grad, a batched value under an outer jit): the same user line made both."""
    for cls in type(tracer).__mro__:
        for name in cls.__dict__.get("__slots__", ()):
            inner = getattr(tracer, name, None)
            if isinstance(inner, Tracer) and getattr(inner, "_origin", None) is not None:
                return inner._origin
    return None


def check_ancestor(trace: Trace, other: Trace, tracer: "Tracer | None" = None) -> None:
    """Raise UnexpectedTracerError unless `other` is a live trace below `trace`."""
    if not other.alive:
        raise _leaked_tracer_error(other, tracer)
    node = trace.parent
    while node is not None and node is not other and node.stands_for is not other:
        node = node.parent
    if node is None:
        raise UnexpectedTracerError(
            f"Encountered a tracer of a {type(other).__name__} inside a {type(trace).__name__} "
            "that does not run within it: a value traced by one transformation was used in "
            "another one that is not nested inside the first (for example through a global "
            "variable, or a custom derivative rule that closes over a traced value). Pass the "
            "value as an argument instead.")


def _leaked_tracer_error(trace: Trace, tracer: "Tracer | None" = None
                         ) -> UnexpectedTracerError:
    """JAX's message for a tracer used after its transformation ended, with the function
    that was being traced and the line that made the value, where known."""
    if tracer is None:
        what = f"a tracer of a {type(trace).__name__}"
    else:
        aval = tracer.aval
        what = (f"an intermediate value with type {aval.dtype.name}"
                f"[{','.join(map(str, aval.shape))}] wrapped in a {type(tracer).__name__}")
    lines = [f"Encountered an unexpected tracer. A function transformed by jaxlite had a side "
             f"effect, allowing for a reference to {what} to escape the scope of the "
             f"transformation: the value escaped its {type(trace).__name__}, which is no "
             "longer active."]
    function = trace.traced_function()
    if function is not None:
        lines.append(f"The function being traced when the value leaked was {function[0]} "
                     f"traced for {function[1]}.")
    origin = None if tracer is None else trace.origin(tracer)
    if origin is not None and origin[0] == "line":
        lines.append(f"The leaked intermediate value was created on line {origin[1]}.")
    elif origin is not None:
        lines.append(f"The leaked value is the argument {origin[1]} of the traced function.")
    lines.append("Transformations require functions to return their outputs explicitly: "
                 "return the value instead of saving it in a global variable or an attribute. "
                 "To catch the leak where it happens, use `jaxlite.checking_leaks()` or set "
                 "the environment variable JAX_CHECK_TRACER_LEAKS=1.")
    return UnexpectedTracerError("\n".join(lines))


def check_leaks(trace: Trace) -> None:
    """Raise JAX's "Leaked trace" `Exception` if something outside jaxlite still holds a
    tracer of `trace`, which has just ended (run when `jax_check_tracer_leaks` is on)."""
    leaks = find_leaks(trace, Tracer, Trace)
    if leaks:
        raise Exception(leak_report(trace, leaks, trace.leak_lines))


class Tracer(Array):
    """A stand-in for an array inside a transformation (mirrors `jax.core.Tracer`)."""

    # `_origin`: the user's line that made the tracer (a `Location`), set only by traces
    # that record it (see `Trace.records_origins`).
    __slots__ = ("_trace", "_origin")

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def concrete_value(self) -> Any:
        """The value as a numpy array when the trace knows it, else None."""
        return None

    def abstract_cause(self) -> "Tracer":
        """The tracer whose trace makes this value abstract, to explain a missing value.

        A tracer wrapping another one (a jvp primal) passes the question on, so that the
        error names the transformation that really hides the value (the jit below a grad).
        """
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    def _concrete(self, context: str, error_type: type) -> np.ndarray:
        value = self.concrete_value()
        if value is None:
            cause = self.abstract_cause()
            error = cause._trace.concretization_error(cause, context)
            raise error_type(str(error))
        return value

    def __bool__(self) -> bool:
        return bool(self._concrete("the bool function", TracerBoolConversionError))

    def __int__(self) -> int:
        return int(self._concrete("the int function", ConcretizationTypeError))

    def __index__(self) -> int:
        value = self._concrete("the __index__ method", TracerIntegerConversionError)
        return int(value)

    def __float__(self) -> float:
        return float(self._concrete("the float function", ConcretizationTypeError))

    def __complex__(self) -> complex:
        return complex(self._concrete("the complex function", ConcretizationTypeError))

    def item(self) -> Any:
        return self._concrete("the item method", ConcretizationTypeError).item()

    def tolist(self) -> Any:
        return self._concrete("the tolist method", ConcretizationTypeError).tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self.concrete_value()
        if value is None:
            raise TracerArrayConversionError(
                f"numpy cannot convert the traced value {self.aval.str_short()} to an array: "
                "inside jit, grad or vmap use jaxlite.numpy functions instead of numpy ones "
                "(or, outside jit, call numpy on the function's result).")
        return np.asarray(value, dtype=dtype)

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"


# The eager executor, installed by jaxlite.runtime.dispatch: ("apply_primitive", fn(prim, args, params)).
EVAL_HOOKS: dict[str, Any] = {}


class EvalTrace(Trace):
    """The root trace: primitives run eagerly, through `impl` or the dispatch hook."""

    def process_primitive(self, primitive: Any, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        for arg in args:
            if isinstance(arg, Tracer):
                raise _leaked_tracer_error(arg._trace, arg)
        if primitive.impl is not None:
            return primitive.impl(*args, **params)
        return EVAL_HOOKS["apply_primitive"](primitive, args, params)


_ROOT_TRACE = EvalTrace(None)
_current: contextvars.ContextVar[Trace] = contextvars.ContextVar(
    "jaxlite_current_trace", default=_ROOT_TRACE)


# The variable itself, for eager dispatch's fast path: `TRACE_VAR.get() is root_trace()`
# says that no transformation is active, without a call.
TRACE_VAR = _current


def root_trace() -> Trace:
    """The eager `EvalTrace` at the bottom of every chain of traces."""
    return _ROOT_TRACE


def current_trace() -> Trace:
    """The trace that `bind` hands primitives to now."""
    return _current.get()


@contextlib.contextmanager
def set_current_trace(trace: Trace) -> Iterator[None]:
    """Run a block with `trace` as the current trace."""
    token = _current.set(trace)
    try:
        yield
    finally:
        _current.reset(token)


@contextlib.contextmanager
def new_transformation(trace: Trace) -> Iterator[Trace]:
    """Make `trace` current for a block, and end its life when the block ends; with
    `jax_check_tracer_leaks` on, a block that ends normally is checked for leaked tracers."""
    try:
        with set_current_trace(trace):
            yield trace
    finally:
        trace.invalidate()
    if trace.leaks_checked and _CHECK_LEAKS():
        check_leaks(trace)
