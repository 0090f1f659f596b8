"""Which values reverse-mode differentiation keeps for the backward pass (mirrors
`jax.ad_checkpoint.saved_residuals` and `print_saved_residuals`).

The function is linearized inside a staging trace, so that every residual (a constant of
the linear jaxpr) is a variable of the staged primal computation: an argument, or the
output of an equation. Each is described as JAX describes it, in JAX's order: literals,
constants, arguments, then equation outputs in program order. jaxlite's jaxprs carry no
source locations, so the descriptions end without JAX's " from file:line (function)".
"""
from __future__ import annotations

from typing import Any, Callable

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from jaxlite.core.trace import current_trace, new_transformation
from jaxlite.interpreters.ad import linearize_flat
from jaxlite.interpreters.staging import StagingTrace
from jaxlite.lax.remat import name_p
from jaxlite.transforms import api_util
from jaxlite.tree_util import tree_flatten, tree_unflatten

__all__ = ["saved_residuals", "print_saved_residuals"]


def _producers(jaxpr: Jaxpr) -> dict[Var, tuple[int, JaxprEqn]]:
    return {v: (i, eqn) for eqn in jaxpr.eqns for i, v in enumerate(eqn.outvars)}


def _describe(var: Var, jaxpr: Jaxpr, arg_names: dict[Var, str]) -> tuple[int, str]:
    """(sort key, description) of a variable of `jaxpr`; calls are looked into."""
    if var in arg_names:
        return -1, f"from the argument {arg_names[var]}"
    index, eqn = _producers(jaxpr)[var]
    position = jaxpr.eqns.index(eqn)
    if eqn.primitive is name_p:
        return position, f"named '{eqn.params['name']}'"
    if eqn.primitive.name == "jit":
        return position, f"output of jitted function '{eqn.params['name']}'"
    inner = eqn.params.get("jaxpr")
    if eqn.primitive.name == "checkpoint" and isinstance(inner, ClosedJaxpr):
        inner_var = inner.jaxpr.outvars[index]
        if isinstance(inner_var, Var):
            # A value a checkpoint saved: name what computed it inside.
            inner_args = {v: arg_names.get(outer) for v, outer in
                          zip(inner.jaxpr.invars, eqn.invars) if outer in arg_names}
            if inner_var not in inner.jaxpr.invars or inner_var in inner_args:
                return position, _describe(inner_var, inner.jaxpr, inner_args)[1]
    return position, f"output of {eqn.primitive.name}"


def saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any
                    ) -> list[tuple[ShapedArray, str]]:
    """The values `jax.vjp(f, *args)` keeps, with where each comes from (mirrors
    `jax.ad_checkpoint.saved_residuals`)."""
    leaves, in_tree = tree_flatten((args, kwargs))
    names = api_util.leaf_names(args, api_util.parameter_names(f, len(args)), kwargs)

    def flat(*xs: Any) -> list[Any]:
        a, k = tree_unflatten(in_tree, xs)
        return tree_flatten(f(*a, **k))[0]
    trace = StagingTrace(current_trace())
    with new_transformation(trace):
        ins = [trace.new_arg(get_aval(x)) for x in leaves]
        _, linear, _ = linearize_flat(flat, ins)
        residuals = list(linear.consts)
        jaxpr = trace.to_closed_jaxpr(residuals).jaxpr
    arg_names = dict(zip(jaxpr.invars, names))
    described: list[tuple[int, int, ShapedArray, str]] = []
    seen: set[Var] = set()
    for order, atom in enumerate(jaxpr.outvars):
        if isinstance(atom, Literal):
            described.append((-3, order, atom.aval, "from a literal"))
        elif atom in seen:
            continue
        elif atom in jaxpr.constvars:
            described.append((-2, order, atom.aval, "from a constant"))
        else:
            position, text = _describe(atom, jaxpr, arg_names)
            key = jaxpr.invars.index(atom) if position == -1 else position
            described.append((-1 if position == -1 else 0, key, atom.aval, text))
        if isinstance(atom, Var):
            seen.add(atom)
    described.sort(key=lambda item: (item[0], item[1]))
    return [(aval, text) for _, _, aval, text in described]


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print the values `jax.vjp(f, *args)` keeps, one per line (mirrors
    `jax.ad_checkpoint.print_saved_residuals`)."""
    for aval, text in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {text}")
