"""`linear_call`: a linear function with its transpose given by the user (mirrors
`jax.custom_derivatives.linear_call`).

`linear_call(fun, fun_transpose, residual_args, linear_args)` computes
`fun(residual_args, linear_args)`, which must be linear in `linear_args`. Its derivative
in the linear arguments is itself (a linear call on the tangents), and its transpose is a
linear call of `fun_transpose(residual_args, ct)`, whose own transpose is `fun` again. The
residual arguments are constants: differentiating with respect to them is an error.

The primitive carries `fun` as a closed jaxpr (`callee`) and `fun_transpose` as a thunk
that traces it on first need; `num_callee_consts` leading operands are the constants
`fun` closes over, then `num_res` residuals, then the linear operands.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import Zero, instantiate, zeros_like_aval
from jaxlite.interpreters.batching import batch_at_front, batch_jaxpr
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import hoist_tracer_consts, trace_to_jaxpr
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.tree_util import tree_flatten, tree_unflatten
from jaxlite.xla.ir import HloInstruction

__all__ = ["linear_call", "linear_call_p"]

linear_call_p = Primitive("linear_call", multiple_results=True)


def _abstract_eval(*avals: ShapedArray, callee: ClosedJaxpr, **params: Any) -> list:
    return list(callee.out_avals)


def _reference(*args: Any, callee: ClosedJaxpr, **params: Any) -> list[Any]:
    return eval_jaxpr(callee.jaxpr, callee.consts, *args)


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, callee: ClosedJaxpr,
         transpose_thunk: Callable, num_callee_consts: int, num_res: int) -> tuple:
    params = dict(callee=callee, transpose_thunk=transpose_thunk,
                  num_callee_consts=num_callee_consts, num_res=num_res)
    fixed = num_callee_consts + num_res
    if any(not isinstance(t, Zero) for t in tangents[:fixed]):
        raise TypeError("linear_call: differentiating with respect to the residual "
                        "arguments (or values the linear function closes over) is not "
                        "supported; only the linear arguments may carry tangents.")
    out = linear_call_p.bind(*primals, **params)
    tangents_out = linear_call_p.bind(*primals[:fixed],
                                      *[instantiate(t) for t in tangents[fixed:]], **params)
    return out, tangents_out


def _transpose(cts: Sequence[Any], *args: Any, callee: ClosedJaxpr,
               transpose_thunk: Callable, num_callee_consts: int, num_res: int) -> list:
    transposed, t_consts = transpose_thunk()
    f_consts = args[:num_callee_consts]
    residuals = args[num_callee_consts:num_callee_consts + num_res]
    if any(is_undefined(r) for r in (*f_consts, *residuals)) or \
            not all(is_undefined(x) for x in args[num_callee_consts + num_res:]):
        raise TypeError("linear_call: transposition needs the residuals known and every "
                        "linear argument undefined (linear).")
    ct_avals = transposed.in_avals[len(t_consts) + num_res:]
    cts = [zeros_like_aval(a) if isinstance(c, Zero) else c for c, a in zip(cts, ct_avals)]
    back = functools.partial(_constant_thunk, callee, list(f_consts))
    cts_out = linear_call_p.bind(*t_consts, *residuals, *cts, callee=transposed,
                                 transpose_thunk=back, num_callee_consts=len(t_consts),
                                 num_res=num_res)
    return [None] * (num_callee_consts + num_res) + list(cts_out)


def _constant_thunk(jaxpr: ClosedJaxpr, consts: list[Any]) -> tuple[ClosedJaxpr, list[Any]]:
    return jaxpr, consts


def _batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *, callee: ClosedJaxpr,
           transpose_thunk: Callable, num_callee_consts: int, num_res: int) -> tuple:
    args = batch_at_front(args, dims, axis_size)
    batched_callee = batch_jaxpr(callee, axis_size, args, [0] * len(args))
    res_avals = [get_aval(a) for a in args[num_callee_consts:num_callee_consts + num_res]]
    ct_avals = list(batched_callee.out_avals)

    def batched_thunk() -> tuple[ClosedJaxpr, list[Any]]:
        transposed, t_consts = transpose_thunk()
        avals = [get_aval(c) for c in t_consts] + res_avals + ct_avals
        dims_in = [None] * len(t_consts) + [0] * (num_res + len(ct_avals))
        return batch_jaxpr(transposed, axis_size, avals, dims_in), list(t_consts)
    outs = linear_call_p.bind(*args, callee=batched_callee, transpose_thunk=batched_thunk,
                              num_callee_consts=num_callee_consts, num_res=num_res)
    return outs, [0] * len(outs)


def _lower(ctx: LoweringContext, *args: HloInstruction, callee: ClosedJaxpr,
           **params: Any) -> list[HloInstruction]:
    return hlo.call_jaxpr(ctx, callee, args, "linear_call")


linear_call_p.abstract_eval = _abstract_eval
linear_call_p.reference = _reference
linear_call_p.jvp = _jvp
linear_call_p.transpose = _transpose
linear_call_p.batch = _batch
linear_call_p.lower = _lower
linear_call_p.is_linear = True


def _traced(fun: Callable[..., Any], in_tree: Any, avals: Sequence[ShapedArray]
            ) -> tuple[ClosedJaxpr, list[Any], Any]:
    """`fun(*tree_unflatten(in_tree, leaves))` as a closed jaxpr without tracer constants,
    the hoisted constants, and the output tree."""
    out_trees: list = []

    def flat(*leaves: Any) -> list[Any]:
        out, tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        out_trees.append(tree)
        return out
    closed, consts = hoist_tracer_consts(trace_to_jaxpr(flat, avals))
    return closed, consts, out_trees[0]


def linear_call(fun: Callable[..., Any], fun_transpose: Callable[..., Any],
                residual_args: Any, linear_args: Any) -> Any:
    """Call `fun(residual_args, linear_args)`, linear in `linear_args`, with
    `fun_transpose(residual_args, ct)` as its transpose (mirrors
    `jax.custom_derivatives.linear_call`)."""
    res_leaves, res_tree = tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_flatten(linear_args)
    res_avals = [get_aval(x) for x in res_leaves]
    in_tree = tree_flatten((residual_args, linear_args))[1]
    callee, f_consts, out_tree = _traced(fun, in_tree, res_avals + [get_aval(x)
                                                                    for x in lin_leaves])

    def transpose_thunk() -> tuple[ClosedJaxpr, list[Any]]:
        ct_tree = tree_flatten((residual_args, tree_unflatten(out_tree, callee.out_avals)))[1]
        transposed, t_consts, t_out_tree = _traced(
            fun_transpose, ct_tree, res_avals + list(callee.out_avals))
        if t_out_tree != lin_tree:
            raise TypeError("transpose output pytree structure must match that of linear "
                            f"inputs, got output structure {t_out_tree} and input structure "
                            f"{lin_tree}.")
        return transposed, t_consts
    outs = linear_call_p.bind(*f_consts, *res_leaves, *lin_leaves, callee=callee,
                              transpose_thunk=transpose_thunk, num_callee_consts=len(f_consts),
                              num_res=len(res_leaves))
    return tree_unflatten(out_tree, outs)
