"""`jax.interpreters.partial_eval`: tracing with some inputs known (JAX's names).

Partial evaluation runs the work that depends only on known values now and stages the
rest into a jaxpr. jaxlite does it with its staging trace in `forward_known` mode (the one
`linearize` uses): `trace_to_jaxpr_nounits` hands known values to the trace below and
stages the operations that touch an unknown one. flax's `lazy_init` and
`partial_eval_by_shape` are built on it.
"""
from __future__ import annotations

from typing import Any, Sequence

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import Jaxpr
from jaxlite.core.linear_util import WrappedFun
from jaxlite.core.trace import current_trace, new_transformation
from jaxlite.interpreters.dce import (dce_jaxpr, dce_jaxpr_call_rule,
                                     dce_jaxpr_closed_call_rule, dce_jaxpr_consts, dce_rules)
from jaxlite.interpreters.staging import StagingTrace, StagingTracer

__all__ = ["PartialVal", "JaxprTracer", "DynamicJaxprTracer", "trace_to_jaxpr_nounits",
           "trace_to_jaxpr_dynamic", "dce_jaxpr", "dce_jaxpr_consts", "dce_jaxpr_call_rule",
           "dce_jaxpr_closed_call_rule", "dce_rules", "custom_partial_eval_rules",
           "partial_eval_jaxpr_custom_rules", "convert_constvars_jaxpr"]

Val = Any  # JAX's alias for a value of any kind

# Tables libraries register rules in. jaxlite's partial evaluation goes through each
# primitive's jvp and staging rules, so it reads neither.
custom_partial_eval_rules: dict[Any, Any] = {}
partial_eval_jaxpr_custom_rules: dict[Any, Any] = {}


class PartialVal(tuple):
    """A value that is known (`(None, value)`) or unknown with a type (`(aval, None)`)
    (mirrors `pe.PartialVal`)."""

    def __new__(cls, xs: tuple[Any, Any]) -> "PartialVal":
        pv, const = xs
        if pv is not None and not isinstance(pv, ShapedArray):
            raise TypeError(f"PartialVal: the unknown part must be an abstract value, got {pv!r}")
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const: Any) -> "PartialVal":
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval: ShapedArray) -> "PartialVal":
        return PartialVal((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        """The value when known, else None."""
        return self[1] if self[0] is None else None

    def get_aval(self) -> ShapedArray:
        """The abstract value, known or not."""
        return get_aval(self[1]) if self[0] is None else self[0]


class _StagingTracerKind(type):
    # A staging tracer is a JaxprTracer while partially evaluating (forward_known) and a
    # DynamicJaxprTracer while tracing for jit and friends, as in JAX.
    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, StagingTracer)
                and obj._trace.forward_known is cls.partial_eval)  # type: ignore[attr-defined]


class JaxprTracer(metaclass=_StagingTracerKind):
    """The tracer of partial evaluation (mirrors `pe.JaxprTracer`; for isinstance)."""

    partial_eval = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("jaxlite makes its tracers itself; JaxprTracer is for isinstance.")


class DynamicJaxprTracer(metaclass=_StagingTracerKind):
    """The tracer of jit's staging (mirrors `pe.DynamicJaxprTracer`; for isinstance)."""

    partial_eval = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("jaxlite makes its tracers itself; DynamicJaxprTracer is for "
                        "isinstance.")


def _call(fun: Any, args: Sequence[Any]) -> list[Any]:
    out = fun.call_wrapped(*args) if isinstance(fun, WrappedFun) else fun(*args)
    return list(out)


def trace_to_jaxpr_nounits(fun: Any, pvals: Sequence[PartialVal],
                           instantiate: bool | Sequence[bool] = False
                           ) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Run `fun` on partially known inputs (mirrors `pe.trace_to_jaxpr_nounits`).

    Work on known inputs happens now; work that touches an unknown one is staged. Returns
    the jaxpr of the staged part (its inputs are the unknown inputs, its outputs the
    unknown outputs, its constants `consts`), one PartialVal per output (known outputs
    carry their value, unless `instantiate` asks for them as jaxpr outputs too), and
    `consts`.
    """
    trace = StagingTrace(current_trace(), forward_known=True)
    with new_transformation(trace):
        args = [trace.new_arg(pv[0]) if pv[0] is not None else pv[1] for pv in pvals]
        outs = _call(fun, args)
        flags = [instantiate] * len(outs) if isinstance(instantiate, bool) else instantiate
        staged = [o for o, inst in zip(outs, flags) if trace.is_own(o) or inst]
        out_pvals = [PartialVal.unknown(get_aval(o)) if trace.is_own(o) or inst
                     else PartialVal.known(o) for o, inst in zip(outs, flags)]
        closed = trace.to_closed_jaxpr(staged)
    return closed.jaxpr, out_pvals, list(closed.consts)


def trace_to_jaxpr_dynamic(fun: Any, in_avals: Sequence[ShapedArray], *,
                           keep_inputs: list[bool] | None = None, lower: bool = False,
                           auto_dce: bool = False) -> tuple[Jaxpr, list[ShapedArray], list]:
    """Trace `fun` at `in_avals` into a jaxpr (mirrors `pe.trace_to_jaxpr_dynamic`).

    Returns the jaxpr (with constant variables), its output avals and the constants.
    """
    trace = StagingTrace(current_trace())
    with new_transformation(trace):
        args = [trace.new_arg(a) for a in in_avals]
        closed = trace.to_closed_jaxpr(_call(fun, args))
    jaxpr = closed.jaxpr
    if keep_inputs is not None:
        jaxpr = jaxpr.replace(invars=[v for v, k in zip(jaxpr.invars, keep_inputs) if k])
    if auto_dce:
        jaxpr, used_consts, _ = dce_jaxpr_consts(
            jaxpr, [True] * len(jaxpr.outvars),
            [False] * len(jaxpr.constvars) + [True] * len(jaxpr.invars))
        return jaxpr, list(jaxpr.out_avals), [c for c, u in zip(closed.consts, used_consts)
                                              if u]
    return jaxpr, list(jaxpr.out_avals), list(closed.consts)


def convert_constvars_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """The jaxpr with its constant variables turned into leading inputs (JAX's)."""
    return jaxpr.replace(constvars=[], invars=list(jaxpr.constvars) + list(jaxpr.invars))
