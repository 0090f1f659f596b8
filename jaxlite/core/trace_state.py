"""JAX's functions about the trace state (mirror `jax.core.find_top_trace` and friends).

Libraries ask which transformation is current (flax compares opaque trace states, equinox
looks for its own jvp), force evaluation at trace time (`ensure_compile_time_eval`) or
step out of every transformation (`eval_context`). All of them read the current-trace
`ContextVar` of `core.trace`.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator

from jaxlite.core.trace import Trace, Tracer, current_trace, root_trace, set_current_trace
from jaxlite.errors import ConcretizationTypeError

_eager_constant_folding: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "jaxlite_eager_constant_folding", default=False)


def eager_constant_folding() -> bool:
    """Whether operations on values that are no tracers run now, even while staging."""
    return _eager_constant_folding.get()


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Evaluate operations on concrete values at trace time (`jax.ensure_compile_time_eval`).

    Inside the block, a primitive applied only to concrete values (no tracers) runs eagerly
    even under `jit`, so its result can steer Python control flow; operations that involve
    a traced value are still traced.
    """
    token = _eager_constant_folding.set(True)
    try:
        yield
    finally:
        _eager_constant_folding.reset(token)


@contextlib.contextmanager
def eval_context() -> Iterator[None]:
    """Run a block outside every transformation, eagerly (`jax.core.eval_context`)."""
    with set_current_trace(root_trace()):
        yield


def find_top_trace(_: Any = None) -> Trace:
    """The current trace (`jax.core.find_top_trace`; its argument is ignored, as in JAX)."""
    return current_trace()


class OpaqueTraceState:
    """An identity of the current trace that compares equal only to itself (JAX's)."""

    __slots__ = ("_trace",)

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueTraceState) and other._trace is self._trace

    def __hash__(self) -> int:
        return id(self._trace)


def get_opaque_trace_state(convention: Any = None) -> OpaqueTraceState:
    """A token for the current trace (`jax.extend.core.get_opaque_trace_state`)."""
    return OpaqueTraceState(current_trace())


@contextlib.contextmanager
def take_current_trace() -> Iterator[Trace]:
    """Yield the current trace and run the block eagerly (`jax.extend.core.take_current_trace`)."""
    trace = current_trace()
    with set_current_trace(root_trace()):
        yield trace


def trace_chain() -> list[Trace]:
    """The current trace and all traces below it, innermost first."""
    chain = []
    trace: Trace | None = current_trace()
    while trace is not None:
        chain.append(trace)
        trace = trace.parent
    return chain


def concrete_or_error(force: Callable[[Any], Any] | None, val: Any, context: str = "") -> Any:
    """`force(val)`, or ConcretizationTypeError naming `context` for an abstract tracer
    (mirrors `jax.extend.core.concrete_or_error`)."""
    force = (lambda x: x) if force is None else force
    if isinstance(val, Tracer):
        value = val.concrete_value()
        if value is None:
            cause = val.abstract_cause()
            raise ConcretizationTypeError(str(cause._trace.concretization_error(cause, context)))
        return force(value)
    return force(val)
