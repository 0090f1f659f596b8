"""`jax._src.core` under the hook. Needed by numpyro (`trace_state_clean`, to know whether
it runs inside a transformation) and flax.linen's fp8 ops (`ShapedArray`, `physical_aval`)."""
from jaxlite.core import ShapedArray, Tracer
from jaxlite.core.avals import physical_aval
from jaxlite.core.trace import EvalTrace, current_trace


def trace_state_clean() -> bool:
    """Whether no transformation is active (the current trace is the eager one)."""
    return isinstance(current_trace(), EvalTrace)


__all__ = ["ShapedArray", "Tracer", "physical_aval", "trace_state_clean"]
