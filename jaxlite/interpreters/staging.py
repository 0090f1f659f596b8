"""Tracing Python functions into jaxprs (mirrors JAX's `DynamicJaxprTrace`).

`StagingTrace` records every primitive applied to its tracers as a jaxpr equation. Values
that are not its own tracers (arrays, closed-over tracers of outer transformations) become
constants of the jaxpr, and Python scalars become literals. With `forward_known=True` it
stages only the equations that touch its own tracers and hands the rest to its parent: that
is partial evaluation, which `linearize` uses to split the known primal computation from the
linear tangent computation.

Every equation remembers the user's line that made it (`core.leaks.where_created`, kept on
its output tracers), so that a tracer that escapes the trace can say where it came from.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from jaxlite.core.leaks import where_created
from jaxlite.core.sharding_rules import typed_results
from jaxlite.core.source_info import SourceInfo, current_name_stack
from jaxlite.core.trace import Trace, Tracer, current_trace, new_transformation, set_current_trace
from jaxlite.core.trace_state import eager_constant_folding
from jaxlite.errors import ConcretizationTypeError


@dataclass(frozen=True)
class DebugInfo:
    """Where a jaxpr came from, for error messages: the function, its arguments' names and
    where it is defined ("file.py:3", or "" when unknown)."""

    transformation: str
    function_name: str
    arg_names: tuple[str, ...]
    location: str = ""


class StagingTracer(Tracer):
    """A tracer that stands for a jaxpr variable (or a literal, for converted scalars)."""

    # Not `var`: that would hide the array method `x.var()` (the variance) on tracers.
    __slots__ = ("atom",)

    def __init__(self, trace: "StagingTrace", var: Atom) -> None:
        super().__init__(trace)
        self.atom = var

    @property
    def aval(self) -> ShapedArray:
        return self.atom.aval


def _is_literal_value(value: Any) -> bool:
    if isinstance(value, (bool, int, float, complex)):
        return True
    return isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0


class StagingTrace(Trace):
    """A trace that builds a jaxpr from the primitives applied to its tracers."""

    records_origins = True

    def __init__(self, parent: Trace, forward_known: bool = False,
                 debug: DebugInfo | None = None) -> None:
        super().__init__(parent)
        self.forward_known = forward_known
        self.debug = debug
        self.invars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._constvar_of: dict[int, Var] = {}
        self._const_of: dict[Var, Any] = {}        # the value of each constvar
        self._producer: dict[Var, JaxprEqn] = {}   # which equation computes a variable
        self._constant: dict[Var, bool] = {}       # memo of `computes_constant`
        self._copied: dict[tuple[int, Var], Var] = {}  # the parents' constants replayed here

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def atom(self, value: Any) -> Atom:
        """The jaxpr atom for `value`: its variable, a literal, or a new constant."""
        if self.is_own(value):
            return value.atom
        if isinstance(value, StagingTracer) and isinstance(value.atom, Literal):
            # An outer trace's converted scalar is a literal here too, not a captured
            # value (under linearize it would otherwise become a residual, unlike JAX).
            return value.atom
        replayed = self._replay_constant(value)
        if replayed is not None:
            return replayed
        if _is_literal_value(value):
            return Literal(value, get_aval(value))
        var = self._constvar_of.get(id(value))
        if var is None:
            var = Var(get_aval(value))
            self._constvar_of[id(value)] = var
            self.constvars.append(var)
            self.consts.append(value)  # also keeps the id from being reused
            self._const_of[var] = value
        return var

    def process_primitive(self, primitive: Any, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        if self.forward_known and not any(self.is_own(a) for a in args):
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        if eager_constant_folding() and not any(isinstance(a, Tracer) for a in args):
            # Inside `ensure_compile_time_eval`, concrete work runs now.
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        in_avals = [get_aval(a) for a in args]
        out_avals = primitive.abstract_eval(*in_avals, **params)
        out_avals = typed_results(primitive, in_avals, out_avals, params)
        if not primitive.multiple_results:
            out_avals = [out_avals]
        if _folds_to_literal(primitive, args, out_avals):
            # The result is still a tracer (user code sees an array), but one that stands for
            # a literal, so equations that use it show `2.0:f16[]`.
            literal = _literal_after_conversion(args[0], out_avals[0])
            return StagingTracer(self, Literal(literal, out_avals[0]))
        invars = [self.atom(a) for a in args]
        outvars = [Var(aval) for aval in out_avals]
        where = where_created()
        eqn = JaxprEqn(invars, outvars, primitive, dict(params),
                       source_info=SourceInfo((where,) if where else (), current_name_stack()))
        self.eqns.append(eqn)
        self._producer.update((v, eqn) for v in outvars)
        outs = [StagingTracer(self, v) for v in outvars]
        for out in outs:
            out._origin = where
        return outs if primitive.multiple_results else outs[0]

    def _replay_constant(self, value: Any) -> Atom | None:
        """Under linearize: the parent's value computed from constants alone, recomputed here.

        JAX keeps such values (a Python scalar broadcast by `x * 2.0`, the `/ n` of a
        pmean) literal in the linear jaxpr, so they are not residuals; the residuals must be
        JAX's where they are observable (the residual slots a `cond` shares between its
        branches). None when `value` is not such a value.
        """
        if not (self.forward_known and isinstance(value, StagingTracer)
                and isinstance(value._trace, StagingTrace) and value._trace is not self):
            return None
        owner = value._trace
        if not owner.computes_constant(value.atom):
            return None
        return self._copy_constant(owner, value.atom)

    def _copy_constant(self, owner: "StagingTrace", atom: Atom) -> Atom:
        if isinstance(atom, Literal):
            return atom
        copied = self._copied.get((id(owner), atom))
        if copied is not None:
            return copied
        eqn = owner._producer.get(atom)
        if eqn is None:  # a concrete constant of the owner
            return self.atom(owner._const_of[atom])
        outvars = [Var(v.aval) for v in eqn.outvars]
        invars = [self._copy_constant(owner, v) for v in eqn.invars]
        self.eqns.append(JaxprEqn(invars, outvars, eqn.primitive, dict(eqn.params)))
        for old, new in zip(eqn.outvars, outvars):
            self._copied[(id(owner), old)] = new
        return self._copied[(id(owner), atom)]

    def computes_constant(self, atom: Atom) -> bool:
        """Whether `atom` is computed from literals and concrete constants alone, by
        primitives that may be recomputed (no callbacks, no inner jaxprs)."""
        if isinstance(atom, Literal):
            return True
        known = self._constant.get(atom)
        if known is not None:
            return known
        eqn = self._producer.get(atom)
        if eqn is None:
            result = atom in self._const_of and not isinstance(self._const_of[atom], Tracer)
        else:
            result = ("callback" not in eqn.primitive.name and not any(
                isinstance(p, (ClosedJaxpr, Jaxpr)) or callable(p)
                for p in eqn.params.values())
                and all(self.computes_constant(v) for v in eqn.invars))
        self._constant[atom] = result
        return result

    def to_closed_jaxpr(self, outs: Sequence[Any]) -> ClosedJaxpr:
        outvars = [self.atom(x) for x in outs]
        jaxpr = Jaxpr(list(self.constvars), list(self.invars), outvars, list(self.eqns))
        return ClosedJaxpr(jaxpr, list(self.consts))

    def concretization_error(self, tracer: Tracer, context: str) -> Exception:
        return ConcretizationTypeError(concretization_message(self, tracer, context))

    def traced_function(self) -> tuple[str, str] | None:
        debug = self.debug
        if debug is None:
            return None
        place = f" at {debug.location}" if debug.location else ""
        return f"{debug.function_name}{place}", debug.transformation

    def origin(self, tracer: Tracer) -> tuple[str, str] | None:
        var = getattr(tracer, "atom", None)
        if getattr(tracer, "_origin", None) is None and var in self.invars:
            index = self.invars.index(var)
            names = self.debug.arg_names if self.debug is not None else ()
            return "argument", names[index] if index < len(names) else f"at position {index}"
        return super().origin(tracer)

    def leak_lines(self, tracer: Tracer) -> list[str]:
        """JAX's lines: the function being traced, then (ours) where the value was made and
        the arguments it depends on."""
        function = self.traced_function()
        if function is not None:
            text = (f"The error occurred while tracing the function {function[0]} for "
                    f"{function[1]}.")
        else:  # a loop body or a branch: where its transformation was called
            called = f" called at {self.started_at}" if self.started_at else ""
            text = f"The error occurred while tracing a function{called}."
        origin = self.origin(tracer)
        if origin is not None and origin[0] == "argument":
            text += f" The value is the argument {origin[1]}."
        elif origin is not None:
            text += f" The value was created on line {origin[1]}."
            if self.debug is not None and isinstance(tracer, StagingTracer) and \
                    isinstance(tracer.atom, Var):
                names = _argument_names_behind(self, tracer.atom)
                if names:
                    text += f" It depends on the value of the argument(s) {', '.join(names)}."
        return [text]


def _folds_to_literal(primitive: Any, args: Sequence[Any], out_avals: list) -> bool:
    # A Python scalar converted to another dtype stays a literal (`2.0:f16[]`), as in JAX.
    return (primitive.name == "convert_element_type" and len(args) == 1
            and _is_literal_value(args[0]) and not out_avals[0].shape)


def _literal_after_conversion(value: Any, aval: ShapedArray) -> Any:
    converted = np.asarray(value).astype(aval.dtype)
    return _WeakScalar(converted, aval) if aval.weak_type else converted[()]


class _WeakScalar(np.ndarray):
    """A 0-d constant that remembers its weak type (a literal such as `2.0:f16[]`).

    A numpy array, as JAX's `TypedNdArray` is, because a literal's value reaches user code
    when libraries evaluate jaxprs themselves (equinox indexes with one); `aval` keeps the
    weak type for the next bind. Arithmetic on it gives plain numpy results.
    """

    def __new__(cls, value: np.ndarray, aval: ShapedArray) -> "_WeakScalar":
        obj = np.asarray(value).view(cls)
        obj.aval = aval
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        self.aval = getattr(obj, "aval", None)

    def __array_wrap__(self, out: np.ndarray, context: Any = None,
                       return_scalar: bool = False) -> Any:
        plain = out.view(np.ndarray)
        return plain[()] if return_scalar else plain

    @property
    def value(self) -> np.ndarray:
        return self.view(np.ndarray)

    def __reduce__(self) -> tuple:
        return (_WeakScalar, (self.view(np.ndarray), self.aval))


def concretization_message(trace: StagingTrace, tracer: Tracer, context: str) -> str:
    """Explain which function and argument made a traced value abstract, and what to do."""
    lines = [f"Abstract tracer value encountered where concrete value is expected: "
             f"{tracer.aval.str_short()} used in {context}."]
    debug = trace.debug
    if debug is not None and isinstance(tracer, StagingTracer):
        names = _argument_names_behind(trace, tracer.atom)
        if names:
            args = ", ".join(names)
            lines.append(f"The value depends on the argument(s) {args} of the function "
                         f"'{debug.function_name}' traced by {debug.transformation}.")
    lines.append(
        "Under jit a traced value has no concrete value in Python. If the argument decides "
        "Python control flow or a shape, mark it static with static_argnums or "
        "static_argnames; for control flow on values, use lax.cond, lax.select or jnp.where.")
    return " ".join(lines)


def _argument_names_behind(trace: StagingTrace, var: Var) -> list[str]:
    needed = {var}
    for eqn in reversed(trace.eqns):
        if any(v in needed for v in eqn.outvars):
            needed.update(v for v in eqn.invars if isinstance(v, Var))
    debug = trace.debug
    assert debug is not None
    return [name for v, name in zip(trace.invars, debug.arg_names) if v in needed]


def trace_to_jaxpr(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
                   debug: DebugInfo | None = None) -> ClosedJaxpr:
    """Trace `fun` (flat arguments to a flat list of outputs) into a closed jaxpr."""
    trace = StagingTrace(current_trace(), debug=debug)
    with new_transformation(trace):
        args = [trace.new_arg(aval) for aval in in_avals]
        outs = fun(*args)
        return trace.to_closed_jaxpr(outs)


def hoist_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Turn the constants that are tracers into leading inputs of the jaxpr.

    A jaxpr that a higher-order primitive carries must not hold tracers: they belong to
    outer transformations, which must see them flow into the call (their tangents and batch
    axes). Those become the jaxpr's first inputs, returned for the caller to pass; concrete
    constants stay constants (printed as the inner jaxpr's constvars, as in JAX).
    """
    jaxpr = closed.jaxpr
    hoisted = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if isinstance(c, Tracer)]
    if not hoisted:
        return closed, []
    kept = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if not isinstance(c, Tracer)]
    opened = Jaxpr([v for v, _ in kept], [v for v, _ in hoisted] + list(jaxpr.invars),
                   jaxpr.outvars, jaxpr.eqns)
    return ClosedJaxpr(opened, [c for _, c in kept]), [c for _, c in hoisted]

