"""Taylor-mode differentiation: the jet trace and `jet` itself.

A `JetTracer` carries a primal value and its truncated Taylor series (the coefficients
of t, t², ... of x(t), without factorials). `JetTrace` applies each primitive by its rule
in `jet_rules`, which maps the primals and input series to the output primal and series.
A value with no series (`zero_series`: a constant) goes through primitives untouched.
`jet` scales between derivatives and coefficients by factorials at the boundary.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.linear_util import transformation2, transformation_with_aux2, wrap_init
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import Trace, Tracer, current_trace, new_transformation, \
    set_current_trace
from jaxlite.core.util import unzip2
from jaxlite.tree_util import (register_pytree_node, tree_flatten, tree_structure,
                               tree_unflatten, treedef_is_leaf)


class ZeroTerm:
    """One Taylor coefficient known to be zero (mirrors `jet.ZeroTerm`)."""


class ZeroSeries:
    """A whole series known to be zero: the value is a constant (mirrors `jet.ZeroSeries`)."""


zero_term = ZeroTerm()
zero_series = ZeroSeries()
register_pytree_node(ZeroTerm, lambda z: ((), None), lambda _, xs: zero_term)
register_pytree_node(ZeroSeries, lambda z: ((), None), lambda _, xs: zero_series)

# primitive -> rule(primals_in, series_in, **params) -> (primal_out, series_out)
jet_rules: dict[Primitive, Callable[..., Any]] = {}
# Kept for JAX's API: jaxlite's calls are primitives with rules in `jet_rules`.
call_param_updaters: dict[Primitive, Callable[..., Any]] = {}


class JetTracer(Tracer):
    """A value and its Taylor coefficients under `jet` (mirrors `jet.JetTracer`)."""

    __slots__ = ("primal", "terms")

    def __init__(self, trace: "JetTrace", primal: Any, terms: Any) -> None:
        if not isinstance(terms, (ZeroSeries, list, tuple)):
            raise TypeError(f"jet terms must be a list or zero_series, got {type(terms)}")
        super().__init__(trace)
        self.primal = primal
        self.terms = terms

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


class JetTrace(Trace):
    """Applies primitives to (primal, series) pairs through `jet_rules` (mirrors
    `jet.JetTrace`); `order` is the number of Taylor coefficients."""

    def __init__(self, tag: Any, parent_trace: Trace, order: int) -> None:
        super().__init__(parent_trace)
        self.tag = tag
        self.parent_trace = parent_trace
        self.order = order

    def to_primal_terms_pair(self, val: Any) -> tuple[Any, Any]:
        if self.is_own(val):
            return val.primal, val.terms
        return val, zero_series

    def process_primitive(self, primitive: Any, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        primals_in, series_in = unzip2(map(self.to_primal_terms_pair, args))
        with set_current_trace(self.parent_trace):
            if all(s is zero_series for s in series_in):
                out = primitive.bind(*primals_in, **params)
                outs = out if primitive.multiple_results else [out]
                wrapped = [JetTracer(self, p, zero_series) for p in outs]
                return wrapped if primitive.multiple_results else wrapped[0]
            series_in = [_instantiate(x, s, self.order) for x, s in zip(primals_in, series_in)]
            primal_out, terms_out = _rule(primitive)(primals_in, series_in, **params)
        if primitive.multiple_results:
            return [JetTracer(self, p, ts) for p, ts in zip(primal_out, terms_out)]
        return JetTracer(self, primal_out, terms_out)


def _instantiate(primal: Any, series: Any, order: int) -> list[Any]:
    """The series as arrays: zeros of the primal's shape and dtype where it is zero."""
    if series is zero_series:
        series = [zero_term] * order
    return [jnp.zeros(np.shape(primal), dtype=jnp.result_type(primal)) if t is zero_term
            else t for t in series]


def _rule(primitive: Any) -> Callable[..., Any]:
    rule = jet_rules.get(primitive)
    if rule is None:
        raise KeyError(f"{primitive.name}: jet has no rule for the primitive "
                       f"'{primitive.name}' (JAX's jet raises KeyError for it too, or has "
                       "no such primitive).")
    return rule


def fact(n: Any) -> Any:
    """n! as exp(lgamma(n + 1)), as JAX's `jet.fact` computes it."""
    return lax.exp(lax.lgamma(n + 1.))


@transformation2
def jet_fun(f: Callable[..., Any], order: int, primals: Sequence[Any],
            series: Sequence[Any]) -> tuple[list, list]:
    """Run `f(tag, order, primals, series)`, with zero output series as zero arrays."""
    out_primals, out_terms = f(object(), order, primals, series)
    out_terms = [[jnp.zeros_like(p)] * order if s is zero_series else s
                 for p, s in zip(out_primals, out_terms)]
    return out_primals, out_terms


@transformation2
def jet_subtrace(f: Callable[..., Any], tag: Any, order: int, primals: Sequence[Any],
                 series: Sequence[Any]) -> tuple[tuple, tuple]:
    """Run `f` on jet tracers of `primals` and `series`; returns the outputs' pairs."""
    trace = JetTrace(tag, current_trace(), order)
    with new_transformation(trace):
        ans = f(*[JetTracer(trace, p, s) for p, s in zip(primals, series)])
        return unzip2(map(trace.to_primal_terms_pair, ans))


@transformation_with_aux2
def traceable(f: Callable[..., Any], store: Any, in_tree_def: Any,
              *primals_and_series: Any) -> list[Any]:
    """`f(primals, series)` on flat arguments and results (the output tree goes to the
    store)."""
    primals_in, series_in = tree_unflatten(in_tree_def, primals_and_series)
    out_flat, out_tree_def = tree_flatten(f(primals_in, series_in))
    store.store(out_tree_def)
    return out_flat


@transformation_with_aux2
def _flatten_fun_output(f: Callable[..., Any], store: Any, *args: Any) -> list[Any]:
    leaves, tree = tree_flatten(f(*args))
    store.store(tree)
    return leaves


def jet(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Any],
        factorial_scaled: bool = True, **_: Any) -> tuple[Any, Any]:
    """Taylor-mode derivatives (mirrors `jax.experimental.jet.jet`).

    `primals` holds `fun`'s positional arguments (arrays or scalars) and `series`, per
    argument, the list of its first K derivatives along a curve (with
    `factorial_scaled=False`, its Taylor coefficients instead). Returns
    `(fun(*primals), series_out)`, the first K derivatives (coefficients) of the output,
    in the output's tree structure.
    """
    try:
        order, = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different "
                         "arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not treedef_is_leaf(tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not treedef_is_leaf(tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    f, out_tree = _flatten_fun_output(wrap_init(fun))
    if factorial_scaled:
        series = [[term / fact(k + 1) for k, term in enumerate(terms)] for terms in series]
    out_primals, out_terms = jet_fun(jet_subtrace(f), order).call_wrapped(primals, series)
    if factorial_scaled:
        out_terms = [[term * fact(k + 1) for k, term in enumerate(terms)]
                     for terms in out_terms]
    return tree_unflatten(out_tree(), out_primals), tree_unflatten(out_tree(), out_terms)


def jet2(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Any], *,
         factorial_scaled: bool = False, **_: Any) -> tuple[Any, Any]:
    """`jet` on Taylor coefficients rather than derivatives (mirrors `jet.jet2`)."""
    return jet(fun, primals, series, factorial_scaled=factorial_scaled)


def jet_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
             series: Sequence[Sequence[Any]]) -> tuple[list, list]:
    """`jet2` of a function of flat arguments returning a list: the rules of calls."""
    order = len(series[0]) if series else 0
    out_primals, out_terms = jet_fun(jet_subtrace(wrap_init(fun)), order).call_wrapped(
        primals, series)
    return list(out_primals), list(out_terms)
