"""Reverse-mode tools beyond `grad` and `vjp`: `linear_transpose` and `fwd_and_bwd`.

Mirrors `jax.linear_transpose` (the transpose of a linear function, traced once at the
given argument types) and `jax.fwd_and_bwd` (vjp split into a forward function returning
residuals and a backward function, so that each can be jitted once). Both return their
backward function as a `tree_util.Partial` whose leaves are the residuals, so it can cross
a `jit` boundary, as in JAX.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.interpreters.ad import UndefinedPrimal, Zero, linearize_flat, tangent_aval
from jaxlite.interpreters.transpose import backward_pass
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.lax.ad_util import zeros_like_tangent
from jaxlite.lax.convert import _convert_element_type
from jaxlite.transforms.jit import jit
from jaxlite.tree_util import Partial, PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["linear_transpose", "fwd_and_bwd"]


def _check_cotangents(cts: Sequence[Any], out_avals: Sequence[ShapedArray]) -> None:
    for ct, aval in zip(cts, out_avals):
        got = get_aval(ct)
        if got.shape != aval.shape or got.dtype != aval.dtype:
            raise TypeError("cotangent type does not match function output, expected "
                            f"{[a.str_short() for a in out_avals]} but got "
                            f"{got.str_short()} for {aval.str_short()}")


def _transposed(jaxpr: ClosedJaxpr, in_avals: list[ShapedArray], in_tree: PyTreeDef,
                out_tree: PyTreeDef, consts: list[Any], out_cotangent: Any) -> Any:
    cts, tree = tree_flatten(out_cotangent)
    if tree != out_tree:
        raise TypeError("cotangent tree does not match function output, expected "
                        f"{out_tree} but got {tree}")
    _check_cotangents(cts, jaxpr.out_avals)
    undefined = [UndefinedPrimal(a) for a in in_avals]
    in_cts = backward_pass(jaxpr.jaxpr, consts, undefined, cts)
    # Each cotangent is an array of its input's type (a cotangent passed through unchanged
    # may be a Python scalar).
    return tree_unflatten(in_tree, [
        zeros_like_tangent(c.aval) if isinstance(c, Zero)
        else _convert_element_type(c, a.dtype, weak_type=a.weak_type)
        for c, a in zip(in_cts, in_avals)])


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes: Any = ()
                     ) -> Callable[..., Any]:
    """The transpose of the linear function `fun` at the types of `primals` (arrays or
    `ShapeDtypeStruct`s), as a function of an output cotangent that returns a tuple of
    input cotangents (mirrors `jax.linear_transpose`)."""
    leaves, in_tree = tree_flatten(primals)
    in_avals = [get_aval(x) for x in leaves]
    out_trees: list = []

    def flat(*xs: Any) -> list[Any]:
        out, tree = tree_flatten(fun(*tree_unflatten(in_tree, xs)))
        out_trees.append(tree)
        return out
    closed = trace_to_jaxpr(flat, in_avals)
    kinds = [a.dtype for a in in_avals] + [a.dtype for a in closed.out_avals]
    if not (all(dtypes.issubdtype(d, np.inexact) for d in kinds)
            or all(dtypes.issubdtype(d, np.integer) for d in kinds)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{[a.dtype.name for a in in_avals]} -> "
                        f"{[a.dtype.name for a in closed.out_avals]}.")
    body = ClosedJaxpr(closed.jaxpr, [])
    transposed = functools.partial(_transposed, body, in_avals, in_tree, out_trees[0])
    return Partial(transposed, list(closed.consts))


def _pullback(linear: ClosedJaxpr, in_avals: list[ShapedArray], differentiable: list[bool],
              in_tree: PyTreeDef, out_tree: PyTreeDef, consts: list[Any], ct: Any) -> Any:
    cts, tree = tree_flatten(ct)
    if tree != out_tree:
        raise ValueError("unexpected tree structure: the cotangent passed to the backward "
                         f"function must have the structure of the primal output "
                         f"{out_tree}, got {tree}.")
    undefined = [UndefinedPrimal(v.aval) for v in linear.jaxpr.invars]
    results = iter(backward_pass(linear.jaxpr, consts, undefined, cts))
    grads = []
    for aval, diff in zip(in_avals, differentiable):
        g = next(results) if diff else Zero(tangent_aval(aval))
        grads.append(zeros_like_tangent(g.aval) if isinstance(g, Zero) else g)
    return tree_unflatten(in_tree, grads)


def _vjp_as_pytree(fun: Callable[..., Any], dyn_args: tuple, has_aux: bool) -> tuple:
    """`jax.vjp(fun, *dyn_args)` whose vjp function is a Partial with residual leaves."""
    leaves, in_tree = tree_flatten(dyn_args)
    trees: list = []

    def flat(*xs: Any) -> list[Any]:
        out = fun(*tree_unflatten(in_tree, xs))
        aux = None
        if has_aux:
            out, aux = out
        out_leaves, out_tree = tree_flatten(out)
        aux_leaves, aux_tree = tree_flatten(aux)
        trees[:] = [out_tree, aux_tree, len(out_leaves)]
        return out_leaves + aux_leaves
    outs, linear, differentiable = linearize_flat(flat, leaves)
    out_tree, aux_tree, num_out = trees
    body = ClosedJaxpr(linear.jaxpr, [])
    pullback = functools.partial(_pullback, body, [get_aval(x) for x in leaves],
                                 differentiable, in_tree, out_tree)
    result = (tree_unflatten(out_tree, outs[:num_out]), Partial(pullback, list(linear.consts)))
    return (*result, tree_unflatten(aux_tree, outs[num_out:])) if has_aux else result


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """`fwd(*args) -> (out, residuals[, aux])` and `bwd(residuals, ct) -> cotangents of
    the arguments at argnums` (mirrors `jax.fwd_and_bwd`)."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def fwd(*args: Any) -> tuple:
        def partial_fun(*dyn: Any) -> Any:
            full = list(args)
            for n, value in zip(nums, dyn):
                full[n] = value
            return fun(*full)
        return _vjp_as_pytree(partial_fun, tuple(args[n] for n in nums), has_aux)

    def bwd(f_vjp: Callable[[Any], Any], outgrad: Any) -> Any:
        g = f_vjp(outgrad)
        return g[0] if isinstance(argnums, int) else g
    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
