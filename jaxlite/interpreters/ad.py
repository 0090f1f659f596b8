"""Forward-mode differentiation and linearization (mirrors `jax.interpreters.ad`).

`JVPTrace` carries a (primal, tangent) pair per value. A primitive's `jvp` rule runs with the
trace's *tangent trace* as the current trace: for `jvp` that is the parent, so primal and
tangent are computed together; for `linearize` it is a `StagingTrace` with
`forward_known=True`, so the primal work is handed down to the parent and computed now, while
the tangent work, which is linear, is staged into a jaxpr whose constants are the residuals.
`vjp` transposes that jaxpr (see `transpose.py`).

Tangents may be the symbolic `Zero`, which rules skip instead of materializing.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.array_ops import array_op
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.trace import Trace, Tracer, current_trace, new_transformation, set_current_trace
from jaxlite.interpreters.staging import StagingTrace, trace_to_jaxpr


class Zero:
    """A tangent known to be zero, kept symbolic so that no zeros are computed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The tangent space of an aval: itself for inexact dtypes, float0 otherwise."""
    if dtypes.is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, dtypes.float0, False)


def zeros_like_aval(aval: ShapedArray) -> Any:
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return array_op("zeros")(aval)


def instantiate(tangent: Any) -> Any:
    """Turn a symbolic zero into an actual array of zeros."""
    return zeros_like_aval(tangent.aval) if isinstance(tangent, Zero) else tangent


def add_tangents(x: Any, y: Any) -> Any:
    if isinstance(x, Zero):
        return y
    if isinstance(y, Zero):
        return x
    return array_op("add_any")(x, y)


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: "JVPTrace", primal: Any, tangent: Any) -> None:
        super().__init__(trace)
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def concrete_value(self) -> Any:
        if isinstance(self.primal, Tracer):
            return self.primal.concrete_value()
        return np.asarray(self.primal)

    def abstract_cause(self) -> Tracer:
        if isinstance(self.primal, Tracer):
            return self.primal.abstract_cause()
        return self


class JVPTrace(Trace):
    """Interprets primitives on (primal, tangent) pairs through their `jvp` rules."""

    def __init__(self, parent: Trace, tangent_trace: Trace | None = None) -> None:
        super().__init__(parent)
        self.tangent_trace = parent if tangent_trace is None else tangent_trace

    def unpack(self, value: Any) -> tuple[Any, Any]:
        if self.is_own(value):
            return value.primal, value.tangent
        return value, Zero(tangent_aval(get_aval(value)))

    def process_primitive(self, primitive: Any, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        pairs = [self.unpack(a) for a in args]
        primals = [p for p, _ in pairs]
        tangents = [t for _, t in pairs]
        if all(isinstance(t, Zero) for t in tangents):
            with set_current_trace(self.parent):
                return primitive.bind(*primals, **params)
        with set_current_trace(self.tangent_trace):
            primal_out, tangent_out = primitive.jvp(primals, tangents, **params)
        if primitive.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)


# ------------------------------------------------------------------ rule helpers for lax

def defjvp(primitive: Any, *partials: Callable[..., Any] | None) -> None:
    """Give a single-result primitive a jvp rule built from one function per argument.

    `partials[i](tangent_i, *primals, **params)` is argument i's contribution to the output
    tangent (None for arguments the output does not depend on smoothly). Symbolic zero
    tangents are skipped.
    """
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        primal_out = primitive.bind(*primals, **params)
        tangent_out: Any = Zero(tangent_aval(get_aval(primal_out)))
        for rule, t in zip(partials, tangents):
            if rule is not None and not isinstance(t, Zero):
                tangent_out = add_tangents(tangent_out, rule(t, *primals, **params))
        return primal_out, tangent_out
    primitive.jvp = jvp


def defjvp_with_output(primitive: Any, rule: Callable[..., Any]) -> None:
    """A jvp rule for one-argument primitives whose derivative is best written with the output.

    `rule(tangent, output, operand, **params)` returns the output tangent.
    """
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        primal_out = primitive.bind(*primals, **params)
        return primal_out, rule(tangents[0], primal_out, *primals, **params)
    primitive.jvp = jvp


def defjvp_zero(primitive: Any) -> None:
    """Outputs that do not change smoothly with the inputs (comparisons, integer ops)."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return out, [Zero(tangent_aval(get_aval(o))) for o in out]
        return out, Zero(tangent_aval(get_aval(out)))
    primitive.jvp = jvp


def deflinear(primitive: Any) -> None:
    """A primitive linear in all its arguments: the tangent is the primitive on tangents."""
    primitive.is_linear = True
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        primal_out = primitive.bind(*primals, **params)
        if all(isinstance(t, Zero) for t in tangents):
            return primal_out, Zero(tangent_aval(get_aval(primal_out)))
        return primal_out, primitive.bind(*map(instantiate, tangents), **params)
    primitive.jvp = jvp


# ------------------------------------------------------------- function transformations

def jvp_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
             tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Push tangents forward through `fun` (flat arguments to a flat list of outputs)."""
    trace = JVPTrace(current_trace())
    with new_transformation(trace):
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        pairs = [trace.unpack(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


def linearize_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
                   differentiable: Sequence[bool] | None = None,
                   ) -> tuple[list[Any], ClosedJaxpr, list[bool]]:
    """Evaluate `fun` and stage its derivative as a linear jaxpr.

    Returns the primal outputs, the jaxpr taking one tangent per differentiable input
    (those marked True in the returned mask) to the output tangents, and that mask. By
    default every input of inexact dtype is differentiable; `differentiable` narrows that
    (inputs whose tangent is known to be zero).
    """
    parent = current_trace()
    tangent_trace = StagingTrace(parent, forward_known=True)
    trace = JVPTrace(parent, tangent_trace)
    inexact = [dtypes.is_inexact(get_aval(p).dtype) for p in primals]
    if differentiable is None:
        differentiable = inexact
    differentiable = [d and i for d, i in zip(differentiable, inexact)]
    with new_transformation(tangent_trace), new_transformation(trace):
        ins = []
        for p, diff in zip(primals, differentiable):
            aval = get_aval(p)
            t = tangent_trace.new_arg(aval) if diff else Zero(tangent_aval(aval))
            ins.append(JVPTracer(trace, p, t))
        outs = fun(*ins)
        pairs = [trace.unpack(o) for o in outs]
        with set_current_trace(tangent_trace):
            out_tangents = [instantiate(t) for _, t in pairs]
        linear = tangent_trace.to_closed_jaxpr(out_tangents)
    return [p for p, _ in pairs], linear, differentiable


def jvp_jaxpr(closed: ClosedJaxpr, nonzero: Sequence[bool]) -> ClosedJaxpr:
    """A jaxpr computing (primal outputs, output tangents) from (primals, nonzero tangents).

    `nonzero[i]` says whether input i gets a tangent argument; the others are zero. All
    output tangents are instantiated, so the outputs are the primals followed by one tangent
    per output.
    """
    from_jaxpr = _closed_call(closed)
    in_avals = list(closed.in_avals) + [tangent_aval(a) for a, nz in zip(closed.in_avals, nonzero)
                                        if nz]
    num_in = len(closed.in_avals)

    def fun(*args: Any) -> list[Any]:
        primals, given = list(args[:num_in]), iter(args[num_in:])
        tangents = [next(given) if nz else Zero(tangent_aval(get_aval(p)))
                    for p, nz in zip(primals, nonzero)]
        outs, out_tangents = jvp_flat(from_jaxpr, primals, tangents)
        return outs + [instantiate(t) for t in out_tangents]
    return trace_to_jaxpr(fun, in_avals)


def _closed_call(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)
