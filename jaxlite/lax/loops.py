"""Loops with a condition: the `while` primitive, `lax.while_loop` and `lax.fori_loop`.

Mirrors `jax.lax.while_loop` and `jax.lax.fori_loop`. One `while` equation has operands
`cond_consts, body_consts, init carry` and the parameters `cond_jaxpr` (cond_consts, carry
-> bool[]), `body_jaxpr` (body_consts, carry -> carry), `cond_nconsts`, `body_nconsts`.
Rules: jvp carries the tangents along (those that can become nonzero found as a fixed
point); reverse mode is refused with JAX's message, because the number of iterations is
unknown until the loop has run (under linearize the whole jvp loop is staged, so forward
mode and `jax.linearize` still work). Under vmap a predicate that differs per member runs
the loop until every member is done: the batched loop's condition is the `reduce_or` of the
members' predicates, and its body keeps the carry of the members that are done. It lowers
to XLA's While over a tuple of (cond consts, body consts, carry).

`fori_loop` with bounds known in Python is a `scan` (so reverse mode works, as in JAX);
with traced bounds it is a `while` loop over (i, upper, carry).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.traceback_filter import api_boundary
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import Tracer
from jaxlite.errors import ConcretizationTypeError
from jaxlite.interpreters.ad import instantiate
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._control_flow_util import (abstractify, batch_closed, check_carry,
                                            eval_closed, first_parameter_name,
                                            io_callbacks_in, is_partial_eval, jvp_closed,
                                            nonzero_tangents,
                                            promote_weak_carry, run_in_python, same_type,
                                            symbolic_zeros, traced_once,
                                            type_str, with_unused_invars, wrapper_for)
from jaxlite.lax.arithmetic import add
from jaxlite.lax.broadcast import broadcast_in_dim
from jaxlite.lax.comparisons import lt
from jaxlite.lax.convert import _convert_element_type
from jaxlite.lax.dimension_value import dimensions_as_values
from jaxlite.lax.reductions import reduce_or
from jaxlite.lax.scan import scan
from jaxlite.lax.selection import select_n
from jaxlite.tree_util import tree_flatten, tree_unflatten, treedef_is_leaf
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["while_loop", "fori_loop", "while_p"]

while_p = Primitive("while", multiple_results=True)

_REVERSE_MODE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
    "start/stop.")


def _while_abstract_eval(*avals: ShapedArray, cond_jaxpr: ClosedJaxpr,
                         body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                         body_nconsts: int) -> list[ShapedArray]:
    cond_consts = list(avals[:cond_nconsts])
    body_consts = list(avals[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(avals[cond_nconsts + body_nconsts:])
    for what, jaxpr, expected in (("cond_jaxpr", cond_jaxpr, cond_consts + carry),
                                  ("body_jaxpr", body_jaxpr, body_consts + carry)):
        if len(jaxpr.in_avals) != len(expected) or not all(map(same_type, jaxpr.in_avals,
                                                              expected)):
            raise TypeError(f"while: {what} takes {[type_str(a) for a in jaxpr.in_avals]} "
                            f"but the operands give {[type_str(a) for a in expected]}.")
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise TypeError(f"while: cond_jaxpr must return one bool[], got "
                        f"{[type_str(a) for a in pred]}.")
    out = body_jaxpr.out_avals
    if len(out) != len(carry) or not all(map(same_type, out, carry)):
        raise TypeError(f"while: body_jaxpr returns {[type_str(a) for a in out]} for the "
                        f"carry {[type_str(a) for a in carry]}.")
    return list(out)  # the body's types, weak types included, as JAX's while


def _while_reference(*args: np.ndarray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                     cond_nconsts: int, body_nconsts: int) -> list[Any]:
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(np.asarray(eval_closed(cond_jaxpr, *cond_consts, *carry)[0])):
        carry = eval_closed(body_jaxpr, *body_consts, *carry)
    return carry


def _while_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, cond_jaxpr: ClosedJaxpr,
               body_jaxpr: ClosedJaxpr, cond_nconsts: int,
               body_nconsts: int) -> tuple[list, list]:
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    split = cond_nconsts + body_nconsts
    cond_consts, body_consts, carry = (primals[:cond_nconsts], primals[cond_nconsts:split],
                                       primals[split:])
    nonzero = nonzero_tangents(tangents)
    consts_nz, carry_nz = nonzero[cond_nconsts:split], nonzero[split:]
    while True:
        _, out_nz = jvp_closed(body_jaxpr, consts_nz + carry_nz, carry_nz)
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            break
        carry_nz = new
    body_t = [t for t, nz in zip(tangents[cond_nconsts:split], consts_nz) if nz]
    carry_t = [instantiate(t) for t, nz in zip(tangents[split:], carry_nz) if nz]
    jvp, _ = jvp_closed(body_jaxpr, consts_nz + carry_nz, carry_nz)
    body = _reordered_body(jvp, len(body_consts), len(carry), len(body_t), len(carry_t))
    cond = keep_batched_mark(
        with_unused_invars(cond_jaxpr, len(cond_jaxpr.in_avals), abstractify(carry_t)),
        cond_jaxpr)
    operands = [*cond_consts, *body_consts, *body_t, *carry, *carry_t]
    jvp_params = dict(cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=cond_nconsts,
                      body_nconsts=len(body_consts) + len(body_t))
    if is_partial_eval():
        # The loop runs now; the jvp loop (which computes the primal again) is staged into
        # the linear jaxpr, where transposing it fails with JAX's message.
        outs = while_p.bind(*primals, **params)
        tangents_out = while_p.bind(*operands, **jvp_params)[len(carry):]
    else:
        results = while_p.bind(*operands, **jvp_params)
        outs, tangents_out = results[:len(carry)], results[len(carry):]
    return list(outs), symbolic_zeros(tangents_out, carry_nz, abstractify(carry))


def _reordered_body(jvp: ClosedJaxpr, num_consts: int, num_carry: int, num_consts_t: int,
                    num_carry_t: int) -> ClosedJaxpr:
    """(consts, carry, consts_t, carry_t) -> ... as (consts, consts_t, carry, carry_t)."""
    avals = jvp.in_avals
    order = (list(range(num_consts)) + list(range(num_consts + num_carry,
                                                  num_consts + num_carry + num_consts_t))
             + list(range(num_consts, num_consts + num_carry))
             + list(range(num_consts + num_carry + num_consts_t, len(avals))))

    def fun(*args: Any) -> list[Any]:
        original = [None] * len(args)
        for new_position, old_position in enumerate(order):
            original[old_position] = args[new_position]
        return eval_closed(jvp, *original)
    return trace_to_jaxpr(fun, [avals[i] for i in order])


def _while_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    raise ValueError(_REVERSE_MODE_ERROR)


def _while_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                 cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                 body_nconsts: int) -> tuple[list, list]:
    # JAX's rule: IO callbacks may be mapped only while every member runs the same trip
    # count, and ordered ones not at all.
    any_io, ordered_io = io_callbacks_in(cond_jaxpr, body_jaxpr)
    if ordered_io:
        raise Exception("Ordered IO effects not supported in vmap.")
    split = cond_nconsts + body_nconsts
    batched = [d is not None for d in dims]
    cond_b, body_b, carry_b = batched[:cond_nconsts], batched[cond_nconsts:split], \
        batched[split:]
    while True:
        _, pred_b = batch_closed(cond_jaxpr, axis_size, cond_b + carry_b, [False])
        if pred_b[0]:
            if any_io:
                raise Exception("Unordered IO effects not supported in while_loop with "
                                "batched predicate")
            carry_b = [True] * len(carry_b)
            break
        _, out_b = batch_closed(body_jaxpr, axis_size, body_b + carry_b, carry_b)
        new = [a or b for a, b in zip(carry_b, out_b)]
        if new == carry_b:
            break
        carry_b = new
    # Operands batched along axis 0; carries that become batched are broadcast first.
    must_batch = batched[:split] + carry_b
    moved = [move_batch_axis(x, d, axis_size, 0) if b else x
             for x, d, b in zip(args, dims, must_batch)]
    cond_consts, body_consts, carry = moved[:cond_nconsts], moved[cond_nconsts:split], \
        moved[split:]
    cond, pred_b = batch_closed(cond_jaxpr, axis_size, cond_b + carry_b, [False])
    body, _ = batch_closed(body_jaxpr, axis_size, body_b + carry_b, carry_b)
    if not pred_b[0]:
        outs = while_p.bind(*moved, cond_jaxpr=keep_batched_mark(cond, cond_jaxpr),
                            body_jaxpr=body,
                            cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
        return outs, [0 if b else None for b in carry_b]
    any_cond = trace_to_jaxpr(lambda *a: [reduce_or(eval_closed(cond, *a)[0], (0,))],
                              cond.in_avals)
    any_cond.batched_predicate = True

    def guarded_body(*values: Any) -> list[Any]:
        c_consts, b_consts = values[:cond_nconsts], values[cond_nconsts:split]
        old = values[split:]
        running = eval_closed(cond, *c_consts, *old)[0]
        new = eval_closed(body, *b_consts, *old)
        return [select_n(_along_batch(running, n), o, n) for o, n in zip(old, new)]
    guarded = trace_to_jaxpr(guarded_body, abstractify(cond_consts + body_consts + carry))
    outs = while_p.bind(*cond_consts, *cond_consts, *body_consts, *carry,
                        cond_jaxpr=any_cond, body_jaxpr=guarded, cond_nconsts=cond_nconsts,
                        body_nconsts=split)
    return outs, [0] * len(outs)


def keep_batched_mark(new: ClosedJaxpr, old: ClosedJaxpr) -> ClosedJaxpr:
    """`new` marked, like `old`, as the predicate of a loop whose batched predicate vmap
    reduced (its body runs for finished members too, so checkify refuses it, as JAX
    refuses checkify of a batched while)."""
    if getattr(old, "batched_predicate", False):
        new.batched_predicate = True
    return new


def _along_batch(which: Any, like: Any) -> Any:
    shape = np.shape(like)
    return which if len(shape) == 1 else broadcast_in_dim(which, shape, (0,))


def _while_lower(ctx: LoweringContext, *args: HloInstruction, cond_jaxpr: ClosedJaxpr,
                 body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                 body_nconsts: int) -> list[HloInstruction]:
    state = hlo.make_tuple(ctx, args)
    split = cond_nconsts + body_nconsts
    condition = _loop_computation(ctx, "while_condition", cond_jaxpr, state.shape,
                                  range(cond_nconsts), split, keep=None)
    body = _loop_computation(ctx, "while_body", body_jaxpr, state.shape,
                             range(cond_nconsts, split), split, keep=split)
    loop = ctx.builder.add(Opcode.WHILE, state.shape, (state,), None, (condition, body))
    return [hlo.get_tuple_element(ctx, loop, k) for k in range(split, len(args))]


def _loop_computation(ctx: LoweringContext, name: str, jaxpr: ClosedJaxpr, state_shape: Shape,
                      consts: Sequence[int], split: int, keep: int | None) -> HloComputation:
    """A computation of the loop state calling `jaxpr` on (consts, carry).

    With `keep` (the body), its result is the state with the carry replaced by the jaxpr's
    outputs; without (the condition), the jaxpr's predicate.
    """
    builder = ctx.new_builder(name)
    inner = ctx.with_builder(builder)
    state = builder.parameter(state_shape, "state")
    parts = [hlo.get_tuple_element(inner, state, k)
             for k in range(len(state_shape.tuple_shapes or ()))]
    outs = hlo.call_jaxpr(inner, jaxpr, [parts[k] for k in consts] + parts[split:],
                          f"{name}_fun")
    if keep is None:
        return builder.build(outs[0])
    return builder.build(hlo.make_tuple(inner, parts[:keep] + outs))


while_p.abstract_eval = _while_abstract_eval
while_p.reference = _while_reference
while_p.jvp = _while_jvp
while_p.transpose = _while_transpose
while_p.batch = _while_batch
while_p.lower = _while_lower


# ------------------------------------------------------------------------------ wrappers

@api_boundary
def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """Repeat `body_fun` while `cond_fun` holds (mirrors `jax.lax.while_loop`).

    Semantically::

        def while_loop(cond_fun, body_fun, init_val):
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val

    `cond_fun` returns a boolean scalar and `body_fun` a value of the type of `init_val`.
    Forward-mode differentiation works; reverse mode raises (use `scan` or a `fori_loop`
    with static bounds). Under vmap the loop runs until every member's predicate is false.

    Differences from JAX: under vmap with a batched predicate the jaxpr holds the
    `reduce_or` of the predicate and the `select_n` that keeps finished members' carries
    (JAX keeps a batched predicate in the `while` equation and adds them when lowering).
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: cond_fun and body_fun arguments should be callable.")
    if run_in_python():
        try:
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val
        except ConcretizationTypeError:
            pass  # a traced predicate: stage the loop after all, as JAX does
    init_leaves, init_tree = tree_flatten(init_val)
    args_tree = tree_flatten((init_val,))[1]
    carry_name = first_parameter_name(body_fun, "carry")
    while True:  # again after a weak initial carry is promoted (at most once per leaf)
        avals = abstractify(init_leaves)
        # cond_fun first, as JAX traces them (checkify numbers checks in tracing order).
        cond, cond_consts, cond_tree = traced_once(cond_fun, "while_cond", cond_fun,
                                                   args_tree, avals)
        body, body_consts, body_tree = traced_once(body_fun, "while_body", body_fun,
                                                   args_tree, avals)
        out_avals = body.out_avals if body_tree == init_tree else avals
        init_leaves, changed = promote_weak_carry(init_leaves, avals, out_avals)
        if not changed:
            break
    check_carry("while_loop", carry_name, tree_unflatten(init_tree, avals), body_tree, avals,
                body.out_avals)
    pred = cond.out_avals
    if not treedef_is_leaf(cond_tree):
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
    if pred[0].shape != () or pred[0].dtype != np.bool_:
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{_aval_repr(pred[0])}].")
    outs = while_p.bind(*cond_consts, *body_consts, *init_leaves, cond_jaxpr=cond,
                        body_jaxpr=body, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts))
    return tree_unflatten(init_tree, outs)


def _aval_repr(aval: ShapedArray) -> str:
    weak = ", weak_type=True" if aval.weak_type else ""
    return f"ShapedArray({type_str(aval)}{weak})"


def _static_int(value: Any) -> int | None:
    """The Python integer value of a loop bound known in Python, else None."""
    if isinstance(value, Tracer):
        concrete = value.concrete_value()
        if concrete is None:
            return None
        value = concrete
    try:
        return int(np.asarray(value))
    except (TypeError, ValueError):
        return None


def _bound_types(lower: Any, upper: Any) -> tuple[Any, Any]:
    """Bring both bounds to one dtype (a weak bound takes the other's), as JAX does."""
    lower, upper = dimensions_as_values((lower, upper))  # sizes under shape polymorphism
    lower_aval, upper_aval = get_aval(lower), get_aval(upper)
    if lower_aval.weak_type and not upper_aval.weak_type:
        lower = _convert_element_type(lower, upper_aval.dtype)
    elif upper_aval.weak_type and not lower_aval.weak_type:
        upper = _convert_element_type(upper, lower_aval.dtype)
    lower_dtype, upper_dtype = get_aval(lower).dtype, get_aval(upper).dtype
    if lower_dtype != upper_dtype:
        raise TypeError(f"lower and upper arguments to fori_loop must have equal types, got "
                        f"{np.dtype(lower_dtype).name} and {np.dtype(upper_dtype).name}")
    return lower, upper


@api_boundary
def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any,
              *, unroll: int | bool | None = None) -> Any:
    """`body_fun(i, val)` for i from `lower` up to `upper` (mirrors `jax.lax.fori_loop`).

    Semantically::

        def fori_loop(lower, upper, body_fun, init_val):
            val = init_val
            for i in range(lower, upper):
                val = body_fun(i, val)
            return val

    With bounds known in Python the loop is a `scan` of `upper - lower` steps, which reverse
    mode can differentiate; with traced bounds it is a `while_loop` (forward mode only).
    `unroll` needs static bounds.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lower, upper = _bound_types(lower, upper)
    static_lower, static_upper = _static_int(lower), _static_int(upper)
    dtype = get_aval(lower).dtype
    if static_lower is not None and static_upper is not None and dtypes.is_integer(dtype):
        start = _convert_element_type(static_lower, dtype)
        step = wrapper_for(body_fun, ("fori_scan", dtype),
                           lambda held: _fori_scan_step(held, dtype))
        length = max(static_upper - static_lower, 0)
        (_, result), _ = scan(step, (start, init_val), None, length=length,
                              unroll=1 if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    cond, body = wrapper_for(body_fun, ("fori_while", dtype),
                             lambda held: _fori_while_funs(held, dtype))
    return while_loop(cond, body, (lower, upper, init_val))[2]


def _fori_scan_step(body_fun: Callable[[], Callable], dtype: Any) -> Callable:
    def step(loop_carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], None]:
        i, val = loop_carry
        return (add(i, _convert_element_type(1, dtype)), body_fun()(i, val)), None
    # Errors name the user's body (its arguments are the loop carry's), as JAX's do.
    step.debug_target = ("fori_loop", body_fun, lambda args: args[0])  # type: ignore
    return step


def _fori_while_funs(body_fun: Callable[[], Callable], dtype: Any
                     ) -> tuple[Callable, Callable]:
    def cond(loop_carry: tuple[Any, Any, Any]) -> Any:
        return lt(loop_carry[0], loop_carry[1])

    def body(loop_carry: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        i, stop, val = loop_carry
        return add(i, _convert_element_type(1, dtype)), stop, body_fun()(i, val)
    return cond, body
