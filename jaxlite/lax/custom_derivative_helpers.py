"""Helpers around custom derivatives: `custom_gradient` and `closure_convert` (mirror
`jax.custom_gradient` and `jax.closure_convert`).
"""
from __future__ import annotations

from typing import Any, Callable

from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.trace import Tracer
from jaxlite.interpreters.ad import JVPTracer, Zero, tangent_aval
from jaxlite.interpreters.batching import BatchTracer
from jaxlite.interpreters.staging import StagingTracer, hoist_tracer_consts, trace_to_jaxpr
from jaxlite.lax.custom_derivatives import custom_vjp
from jaxlite.tree_util import (register_pytree_node_class, tree_flatten, tree_unflatten,
                               treedef_is_leaf)

__all__ = ["closure_convert", "custom_gradient"]


@register_pytree_node_class
class _TracedRule:
    """A custom_gradient rule traced to a jaxpr: its constants are the residuals."""

    def __init__(self, jaxpr: ClosedJaxpr, consts: list[Any], in_tree: Any,
                 out_tree: Any) -> None:
        self.jaxpr, self.consts, self.in_tree, self.out_tree = jaxpr, consts, in_tree, out_tree

    def tree_flatten(self) -> tuple[list[Any], tuple]:
        return self.consts, (self.jaxpr, self.in_tree, self.out_tree)

    @classmethod
    def tree_unflatten(cls, aux: tuple, consts: list[Any]) -> "_TracedRule":
        jaxpr, in_tree, out_tree = aux
        return cls(jaxpr, list(consts), in_tree, out_tree)


def custom_gradient(fun: Callable[..., Any]) -> custom_vjp:
    """A function with a custom gradient given inline (mirrors `jax.custom_gradient`).

    `fun(*args)` returns `(out, vjp_fn)`; `vjp_fn(ct)` returns one cotangent per argument
    (a tuple, or the cotangent itself for a single argument).
    """
    def primal(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)[0]

    def fwd(*args: Any, **kwargs: Any) -> tuple[Any, _TracedRule]:
        out, rule = fun(*args, **kwargs)
        out_leaves, out_tree = tree_flatten((out,))
        in_trees: list = []

        def flat_rule(*cts: Any) -> list[Any]:
            ct_in = rule(*tree_unflatten(out_tree, cts))
            leaves, tree = tree_flatten(ct_in)
            in_trees.append(tree)
            return leaves
        avals = [tangent_aval(get_aval(o)) for o in out_leaves]
        closed, consts = hoist_tracer_consts(trace_to_jaxpr(flat_rule, avals))
        return out, _TracedRule(closed, consts, in_trees[0], out_tree)

    def bwd(res: _TracedRule, ct: Any) -> Any:
        ct_leaves, ct_tree = tree_flatten((ct,))
        if ct_tree != res.out_tree:
            raise TypeError(f"custom_gradient: cotangent structure {ct_tree} differs from the "
                            f"output structure {res.out_tree}.")
        cts_in = eval_jaxpr(res.jaxpr.jaxpr, res.jaxpr.consts, *res.consts, *ct_leaves)
        cts_in = tree_unflatten(res.in_tree, cts_in)
        return (cts_in,) if treedef_is_leaf(res.in_tree) else cts_in

    wrapped = custom_vjp(primal)
    wrapped.__name__ = getattr(fun, "__name__", "custom_gradient")
    wrapped.defvjp(fwd, bwd)
    return wrapped


def _maybe_perturbed(x: Any) -> bool:
    """Whether a closed-over value could carry a nonzero tangent (as JAX's heuristic):
    a constant or a value with a zero tangent cannot; a traced value under jit can, unless
    its type has no tangents (integers)."""
    if not isinstance(x, Tracer):
        return False
    if isinstance(x, JVPTracer) and isinstance(x.tangent, Zero):
        return _maybe_perturbed(x.primal)
    if isinstance(x, StagingTracer) and not x._trace.forward_known:
        return dtypes.is_inexact(x.aval.dtype)
    if isinstance(x, BatchTracer):
        return _maybe_perturbed(x.value)
    return True


def closure_convert(fun: Callable[..., Any], *example_args: Any
                    ) -> tuple[Callable[..., Any], list[Any]]:
    """Hoist the values `fun` closes over that could be differentiated into arguments
    (mirrors `jax.closure_convert`).

    Returns `(converted, consts)`: `converted(*args, *consts)` equals `fun(*args)`, and
    `converted` closes over no value that could carry a tangent, as a `custom_vjp` or
    `custom_jvp` rule requires.
    """
    leaves, in_tree = tree_flatten(example_args)
    out_trees: list = []

    def flat(*xs: Any) -> list[Any]:
        out, tree = tree_flatten(fun(*tree_unflatten(in_tree, xs)))
        out_trees.append(tree)
        return out
    closed = trace_to_jaxpr(flat, [get_aval(x) for x in leaves])
    jaxpr, consts = closed.jaxpr, list(closed.consts)
    hoist = [_maybe_perturbed(c) for c in consts]
    kept = [c for c, h in zip(consts, hoist) if not h]
    hoisted = [c for c, h in zip(consts, hoist) if h]
    out_tree = out_trees[0]
    num_hoisted = len(hoisted)  # (the function keeps the count, not the tracers: jit may
    # hold it as a static argument long after their trace ended)

    def converted(*args_and_consts: Any) -> Any:
        num_args = len(args_and_consts) - num_hoisted
        args, given = args_and_consts[:num_args], iter(args_and_consts[num_args:])
        kept_iter = iter(kept)
        all_consts = [next(given) if h else next(kept_iter) for h in hoist]
        arg_leaves, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"closure_convert: the converted function takes arguments with "
                            f"structure {in_tree}, got {tree}.")
        return tree_unflatten(out_tree, eval_jaxpr(jaxpr, all_consts, *arg_leaves))
    converted.__name__ = getattr(fun, "__name__", "converted")
    return converted, hoisted
