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
from jaxlite.core.shape_poly import is_symbolic_dim
from jaxlite.core.array_ops import array_op
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, Var, eval_jaxpr
from jaxlite.core.primitive import registry as primitive_registry
from jaxlite.core.trace import Trace, Tracer, current_trace, new_transformation, set_current_trace
from jaxlite.interpreters.dce import dce_closed_jaxpr
from jaxlite.interpreters.rule_tables import RuleTable
from jaxlite.interpreters.staging import StagingTrace, trace_to_jaxpr
from jaxlite.tree_util import register_pytree_node, tree_flatten


class Zero:
    """A tangent known to be zero, kept symbolic so that no zeros are computed
    (mirrors `jax.interpreters.ad.Zero`)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"

    @staticmethod
    def from_primal_value(value: Any) -> "Zero":
        """The zero tangent of a primal value."""
        return Zero(tangent_aval(get_aval(value)))

    def instantiate(self) -> Any:
        """Zeros of this tangent's shape and dtype."""
        return zeros_like_aval(self.aval)


class UndefinedPrimal:
    """Marks a linear input of a transpose rule: its value is what we solve for
    (mirrors `jax.interpreters.ad.UndefinedPrimal`)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


# As in JAX, an undefined primal is a pytree node without leaves.
register_pytree_node(UndefinedPrimal, lambda u: ((), u.aval), lambda aval, _: UndefinedPrimal(aval))


def is_undefined_primal(x: Any) -> bool:
    """Whether `x` is an `UndefinedPrimal` (mirrors `jax.interpreters.ad.is_undefined_primal`)."""
    return type(x) is UndefinedPrimal


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The tangent space of an aval: itself for inexact dtypes, float0 otherwise."""
    if dtypes.is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, dtypes.float0, False)


def zeros_like_aval(aval: ShapedArray) -> Any:
    if aval.dtype == dtypes.float0 and not any(is_symbolic_dim(d) for d in aval.shape):
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

    # As in JAX, a tracer kept from jvp, grad or vjp is not reported by the leak checker
    # (it raises UnexpectedTracerError when used).
    leaks_checked = False

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


def deflinear(primitive: Any, transpose_rule: Callable[..., Any] | None = None) -> None:
    """A primitive linear in all its arguments: the tangent is the primitive on tangents
    (mirrors `jax.interpreters.ad.deflinear`).

    With `transpose_rule(ct, **params)` (JAX's form) it also becomes the transpose, which
    returns one cotangent per argument; jaxlite's own primitives set `transpose` apart.
    """
    primitive.is_linear = True
    if transpose_rule is not None:
        primitive.transpose = _linear_transpose(transpose_rule, with_args=False)
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
    tangent_trace.leaks_checked = False  # part of differentiation, as the JVP trace is
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
    # Tangent work that no output tangent needs (behind a stop_gradient) goes, and with it
    # the residuals only it read: JAX's tangent trace drops them the same way.
    linear, _ = dce_closed_jaxpr(linear, [True] * len(linear.jaxpr.outvars), instantiate=True)
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


# ------------------------------------------------- JAX's extension API (jax.interpreters.ad)
#
# Libraries define differentiation rules by assigning into `primitive_jvps` and
# `primitive_transposes`; both are views of the primitives' own `jvp` and `transpose` slots,
# whose calling conventions are JAX's: `jvp(primals, tangents, **params) -> (out, t_out)`
# with `Zero` tangents, `transpose(ct, *args, **params) -> [ct_arg or None, ...]` with
# `UndefinedPrimal` for the linear arguments.

def _transpose_from_jax(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    def transpose(ct: Any, *args: Any, **params: Any) -> Any:
        return rule(ct, *args, **params)
    transpose.takes_symbolic_zeros = True  # type: ignore[attr-defined]
    return transpose


def _transpose_to_jax(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(rule, "takes_symbolic_zeros", False):
        return rule

    def transpose(ct: Any, *args: Any, **params: Any) -> Any:
        # jaxlite's own rules never see symbolic zeros; JAX's callers may pass them.
        if prim.multiple_results:
            ct = [instantiate(c) for c in ct]
        elif isinstance(ct, Zero):
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return rule(ct, *args, **params)
    return transpose


primitive_jvps = RuleTable("jvp")
primitive_transposes = RuleTable("transpose", _transpose_from_jax, _transpose_to_jax)


def get_primitive_transpose(p: Any) -> Callable[..., Any]:
    """The transpose rule of `p` (mirrors `jax.interpreters.ad.get_primitive_transpose`)."""
    try:
        return primitive_transposes[p]
    except KeyError as error:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{p}' not implemented"
        ) from error


def instantiate_zeros(tangent: Any) -> Any:
    """A symbolic zero as an array of zeros; other tangents unchanged (JAX's)."""
    return instantiate(tangent)


def add_jaxvals(x: Any, y: Any) -> Any:
    """The sum of two tangents (mirrors `jax.interpreters.ad.add_jaxvals`)."""
    return array_op("add_any")(x, y)


def __getattr__(name: str) -> Any:
    # `add_jaxvals_p` is lax's `add_any`, declared above this module in the import order.
    if name == "add_jaxvals_p":
        return primitive_registry["add_any"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _linear_transpose(rule: Callable[..., Any], with_args: bool) -> Callable[..., Any]:
    def transpose(ct: Any, *args: Any, **params: Any) -> Any:
        if isinstance(ct, Zero):
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return rule(ct, *args, **params) if with_args else rule(ct, **params)
    transpose.takes_symbolic_zeros = True  # type: ignore[attr-defined]
    return transpose


def deflinear2(primitive: Any, transpose_rule: Callable[..., Any]) -> None:
    """A linear primitive whose transpose is `transpose_rule(ct, *args, **params)`
    (mirrors `jax.interpreters.ad.deflinear2`)."""
    deflinear(primitive)
    primitive.transpose = _linear_transpose(transpose_rule, with_args=True)


def defjvp2(primitive: Any, *jvprules: Callable[..., Any] | None) -> None:
    """Like `defjvp`, with rules `rule(tangent, out, *primals, **params)` that also see the
    primal output (mirrors `jax.interpreters.ad.defjvp2`)."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        primal_out = primitive.bind(*primals, **params)
        tangent_out: Any = Zero(tangent_aval(get_aval(primal_out)))
        for rule, t in zip(jvprules, tangents):
            if rule is not None and not isinstance(t, Zero):
                tangent_out = add_tangents(tangent_out, rule(t, primal_out, *primals, **params))
        return primal_out, tangent_out
    primitive.jvp = jvp


def defbilinear(prim: Any, lhs_rule: Callable[..., Any], rhs_rule: Callable[..., Any]) -> None:
    """A primitive linear in each of its two arguments separately; `lhs_rule(ct, x, y,
    **params)` gives x's cotangent when x is the undefined one, `rhs_rule` y's (mirrors
    `jax.interpreters.ad.defbilinear`)."""
    defjvp(prim, lambda g, x, y, **kw: prim.bind(g, y, **kw),
           lambda g, x, y, **kw: prim.bind(x, g, **kw))

    def transpose(ct: Any, x: Any, y: Any, **params: Any) -> Any:
        if is_undefined_primal(x) == is_undefined_primal(y):
            raise ValueError(f"transposing the bilinear primitive '{prim.name}' needs exactly "
                             "one undefined (linear) argument.")
        if is_undefined_primal(x):
            return (Zero(x.aval) if isinstance(ct, Zero) else lhs_rule(ct, x, y, **params)), None
        return None, (Zero(y.aval) if isinstance(ct, Zero) else rhs_rule(ct, x, y, **params))
    transpose.takes_symbolic_zeros = True  # type: ignore[attr-defined]
    prim.transpose = transpose


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False, instantiate: bool | Sequence[bool] = True,
        transform_stack: bool = True) -> tuple:
    """Flat forward-mode differentiation of `fun(*primals)` (mirrors JAX's internal
    `ad.jvp`; primals and tangents are flat sequences, `None` or `Zero` for zero tangents).

    Returns `(out_primals, out_tangents)` as flat lists of the output's leaves, plus the
    auxiliary output with `has_aux`.
    """
    tangents = [Zero(tangent_aval(get_aval(p))) if t is None or (
        not isinstance(t, Zero) and get_aval(t).dtype == dtypes.float0) else t
        for p, t in zip(primals, tangents)]
    out_store: list = []

    def flat(*xs: Any) -> list[Any]:
        out = fun(*xs)
        if has_aux:
            out, aux = out
            out_store.append(aux)
        leaves, tree = tree_flatten(out)
        out_store.insert(0, tree)
        return leaves
    outs, out_tangents = jvp_flat(flat, primals, tangents)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(out_tangents)
    out_tangents = [instantiate_zeros(t) if inst else t
                    for t, inst in zip(out_tangents, instantiate)]
    return (outs, out_tangents, *out_store[1:])


def linearize(traceable: Callable[..., Any], primals_ft: Sequence[Any], has_aux: bool = False,
              is_vjp: bool = False) -> tuple:
    """Flat linearization of `traceable(*primals)` (mirrors JAX's internal `ad.linearize`).

    Returns `(out_primals, out_zeros, jaxpr, consts[, aux])`: the jaxpr takes the
    residuals `consts` as constants and one tangent per primal, and returns one tangent
    per output leaf (`out_zeros` is all False: jaxlite instantiates output tangents).
    """
    aux_store: list = []

    def flat(*xs: Any) -> list[Any]:
        out = traceable(*xs)
        if has_aux:
            out, aux = out
            aux_store.append(aux)
        return tree_flatten(out)[0]
    outs, linear, differentiable = linearize_flat(flat, primals_ft)
    given = iter(linear.jaxpr.invars)
    invars = [next(given) if d else Var(tangent_aval(get_aval(p)))
              for p, d in zip(primals_ft, differentiable)]
    jaxpr = Jaxpr(linear.jaxpr.constvars, invars, linear.jaxpr.outvars, linear.jaxpr.eqns)
    return (outs, [False] * len(outs), jaxpr, list(linear.consts), *aux_store)
