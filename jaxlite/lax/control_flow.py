"""Conditionals: the `cond` primitive and `lax.cond`, `lax.switch`.

Mirrors `jax.lax.cond` and `jax.lax.switch`. Both become one `cond` equation whose operand 0
is an int32 branch index and whose `branches` parameter holds one closed jaxpr per branch
(for `lax.cond`: false first, then true, as in JAX). Its rules: jvp differentiates every
branch with the same tangent pattern; under linearize each branch splits into a known part
returning its residuals (every branch returns room for all branches' residuals, zeros for
the others) and a linear part, both again `cond`s on the same index; the transpose of a
linear `cond` is the `cond` of the branches' backward passes. Under vmap an unbatched index
keeps a `cond` of batched branches, while a batched index evaluates every branch and
selects per member. It lowers to XLA's Conditional, each branch a computation of one tuple.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.traceback_filter import api_boundary
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import instantiate
from jaxlite.interpreters.batching import move_batch_axis, vmap_flat
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import hoist_tracer_consts, trace_to_jaxpr
from jaxlite.interpreters.transpose import backward_pass, is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._control_flow_util import (abstractify, batch_closed, check_branch_outputs,
                                            convert_outputs, differentiable, eval_closed,
                                            io_callbacks_in, is_concrete, is_partial_eval,
                                            jvp_closed,
                                            linearize_closed, nonzero_tangents,
                                            run_in_python, same_type, symbolic_zeros,
                                            trace_function, type_str, unify_hoisted)
from jaxlite.lax.ad_util import stop_gradient, zeros
from jaxlite.lax.broadcast import broadcast_in_dim
from jaxlite.lax.comparisons import eq, ne
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.selection import clamp, select_n
from jaxlite.tree_util import tree_flatten, tree_unflatten
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["cond", "switch", "cond_p"]

cond_p = Primitive("cond", multiple_results=True)


def _cond_abstract_eval(index: ShapedArray, *avals: ShapedArray,
                        branches: tuple[ClosedJaxpr, ...]) -> list[ShapedArray]:
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond: the branch index must be an int32 scalar, got "
                        f"{index.str_short()}.")
    for i, branch in enumerate(branches):
        expected = branch.in_avals
        if len(expected) != len(avals) or not all(map(same_type, expected, avals)):
            raise TypeError(f"cond: branch {i} takes {[type_str(a) for a in expected]} but "
                            f"the operands are {[type_str(a) for a in avals]}.")
        if len(branch.out_avals) != len(branches[0].out_avals) or not all(
                map(same_type, branch.out_avals, branches[0].out_avals)):
            raise TypeError(f"cond: branch {i} returns "
                            f"{[type_str(a) for a in branch.out_avals]} but branch 0 returns "
                            f"{[type_str(a) for a in branches[0].out_avals]}.")
    return [a.update(weak_type=all(b.out_avals[k].weak_type for b in branches))
            for k, a in enumerate(branches[0].out_avals)]


def _clamped(index: Any, num_branches: int) -> int:
    return int(np.clip(int(np.asarray(index)), 0, num_branches - 1))


def _cond_reference(index: np.ndarray, *args: np.ndarray,
                    branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    return eval_closed(branches[_clamped(index, len(branches))], *args)


def _cond_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
              branches: tuple[ClosedJaxpr, ...]) -> tuple[list, list]:
    index, operands = primals[0], list(primals[1:])
    nonzero = nonzero_tangents(tangents[1:])
    given = [t for t, nz in zip(tangents[1:], nonzero) if nz]
    out_avals = branches[0].out_avals
    out_nonzero = [False] * len(out_avals)
    for branch in branches:
        _, branch_nonzero = jvp_closed(branch, nonzero, out_nonzero)
        out_nonzero = [a or b for a, b in zip(out_nonzero, branch_nonzero)]
    if is_partial_eval():
        return _cond_linearize(index, operands, given, nonzero, out_nonzero, branches)
    jvps = tuple(jvp_closed(b, nonzero, out_nonzero)[0] for b in branches)
    outs = cond_p.bind(index, *operands, *given, branches=jvps)
    num_out = len(out_avals)
    return outs[:num_out], symbolic_zeros(outs[num_out:], out_nonzero, out_avals)


def _cond_linearize(index: Any, operands: list[Any], given: list[Any], nonzero: list[bool],
                    out_nonzero: list[bool], branches: tuple[ClosedJaxpr, ...]
                    ) -> tuple[list, list]:
    """A known cond returning outputs and residuals, and a linear cond of the tangents.

    The branches share residual slots as in JAX (see `merge_residuals`); this is visible
    under vmap with a batched index, where every branch's linear part runs for every member
    and a collective in it mixes members that took another branch.
    """
    parts = [linearize_closed(b, nonzero, out_nonzero) for b in branches]
    num_out = len(branches[0].out_avals)
    slot_avals, slots = merge_residuals([known.out_avals[num_out:] for known, _, _ in parts])
    known = tuple(_known_branch(k, num_out, slot_avals, s) for (k, _, _), s in zip(parts, slots))
    results = cond_p.bind(index, *operands, branches=known)
    outs, residuals = results[:num_out], results[num_out:]
    tangent_avals = [get_aval(t) for t in given]
    linear = tuple(_linear_branch(lin, slot_avals, s, tangent_avals)
                   for (_, lin, _), s in zip(parts, slots))
    tangents_out = cond_p.bind(index, *residuals, *given, branches=linear)
    return outs, symbolic_zeros(tangents_out, out_nonzero, branches[0].out_avals)


def merge_residuals(res_avals: Sequence[Sequence[ShapedArray]]
                    ) -> tuple[list[ShapedArray], list[list[int]]]:
    """Shared residual slots for branches: the k-th residual of a type in any branch goes to
    the k-th slot of that type (JAX's `_merge_branch_residuals`). Returns the slots' avals
    and, per branch, the slot of each of its residuals."""
    keys: dict[tuple, int] = {}
    slot_avals: list[ShapedArray] = []
    slots = []
    for avals in res_avals:
        seen: dict[tuple, int] = {}
        mine = []
        for a in avals:
            kind = (a.shape, np.dtype(a.dtype), a.weak_type)
            key = (kind, seen.get(kind, 0))
            seen[kind] = key[1] + 1
            if key not in keys:
                keys[key] = len(slot_avals)
                slot_avals.append(a)
            mine.append(keys[key])
        slots.append(mine)
    return slot_avals, slots


def _known_branch(known: ClosedJaxpr, num_out: int, slot_avals: list[ShapedArray],
                  mine: list[int]) -> ClosedJaxpr:
    """A branch's known part, its residuals in its slots and zeros in the other slots."""
    def fun(*args: Any) -> list[Any]:
        results = eval_closed(known, *args)
        residuals = [zeros(a) for a in slot_avals]
        for slot, r in zip(mine, results[num_out:]):
            residuals[slot] = r
        return list(results[:num_out]) + residuals
    return trace_to_jaxpr(fun, known.in_avals)


def _linear_branch(linear: ClosedJaxpr, slot_avals: list[ShapedArray], mine: list[int],
                   tangent_avals: list[ShapedArray]) -> ClosedJaxpr:
    """A branch's linear part, reading its own residuals out of the shared slots."""
    total = len(slot_avals)

    def fun(*args: Any) -> list[Any]:
        return eval_closed(linear, *[args[s] for s in mine], *args[total:])
    return trace_to_jaxpr(fun, list(slot_avals) + list(tangent_avals))


def _cond_transpose(cts: Sequence[Any], index: Any, *args: Any,
                    branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    if is_undefined(index):
        raise TypeError("cond is not linear in its branch index; it cannot be transposed "
                        "with respect to it.")
    undefined = [is_undefined(a) for a in args]
    known = [a for a in args if not is_undefined(a)]
    cts = [instantiate(ct) for ct in cts]
    in_avals = abstractify(known) + abstractify(cts)

    def transposed(branch: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
        def fun(*xs: Any) -> list[Any]:
            values = iter(xs[:len(known)])
            full = [a if u else next(values) for a, u in zip(args, undefined)]
            results = backward_pass(branch.jaxpr, branch.consts, full, xs[len(known):])
            return [instantiate(r) for r, u in zip(results, undefined) if u]
        return hoist_tracer_consts(trace_to_jaxpr(fun, in_avals))
    new_branches, consts = unify_hoisted([transposed(b) for b in branches])
    outs = iter(cond_p.bind(index, *consts, *known, *cts, branches=tuple(new_branches)))
    return [None] + [next(outs) if u else None for u in undefined]


def _cond_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                branches: tuple[ClosedJaxpr, ...]) -> tuple[list, list]:
    if io_callbacks_in(*branches)[0]:  # JAX's rule refuses IO effects in any vmapped cond
        raise NotImplementedError("IO effect not supported in vmap-of-cond.")
    index, operands = args[0], list(args[1:])
    if dims[0] is not None:
        return _cond_batch_index(axis_size, index, dims[0], operands, dims[1:], branches)
    batched = [d is not None for d in dims[1:]]
    operands = [move_batch_axis(x, d, axis_size, 0) if d is not None else x
                for x, d in zip(operands, dims[1:])]
    num_out = len(branches[0].out_avals)
    out_batched = [False] * num_out
    for branch in branches:
        _, branch_batched = batch_closed(branch, axis_size, batched, out_batched)
        out_batched = [a or b for a, b in zip(out_batched, branch_batched)]
    new = tuple(batch_closed(b, axis_size, batched, out_batched)[0] for b in branches)
    outs = cond_p.bind(index, *operands, branches=new)
    return outs, [0 if b else None for b in out_batched]


def _cond_batch_index(axis_size: int, index: Any, index_dim: int, operands: list[Any],
                      dims: Sequence[int | None], branches: tuple[ClosedJaxpr, ...]
                      ) -> tuple[list, list]:
    """Each member picks its own branch: run every branch, then select per member.

    A branch sees the operands through `stop_gradient` where it is not the chosen one, so
    that its derivative (possibly inf or nan there) cannot reach the operands.
    """
    index = clamp(0, move_batch_axis(index, index_dim, axis_size, 0), len(branches) - 1)
    operands = [move_batch_axis(x, d, axis_size, 0) for x, d in zip(operands, dims)]
    per_branch = []
    for i, branch in enumerate(branches):
        chosen = eq(index, i)
        guarded = [select_n(_along_batch(chosen, x), stop_gradient(x), x)
                   if differentiable(get_aval(x)) else x for x in operands]
        per_branch.append(vmap_flat(lambda *a, b=branch: eval_closed(b, *a), axis_size,
                                    guarded, [0] * len(guarded), 0))
    outs = [select_n(_along_batch(index, cases[0]), *cases) for cases in zip(*per_branch)]
    return outs, [0] * len(outs)


def _along_batch(which: Any, like: Any) -> Any:
    """A per-member (leading axis) `which` broadcast to the shape of `like`."""
    shape = np.shape(like)
    return which if len(shape) == 1 else broadcast_in_dim(which, shape, (0,))


def _cond_lower(ctx: LoweringContext, index: HloInstruction, *args: HloInstruction,
                branches: tuple[ClosedJaxpr, ...]) -> list[HloInstruction]:
    operand = hlo.make_tuple(ctx, args)
    result_shape = Shape.tuple([ctx.shape(a) for a in ctx.avals_out])
    computations = [_branch_computation(ctx, b, operand.shape, result_shape, i)
                    for i, b in enumerate(branches)]
    conditional = ctx.builder.add(Opcode.CONDITIONAL, result_shape,
                                  (index, *[operand] * len(branches)), None, computations)
    return [hlo.get_tuple_element(ctx, conditional, k) for k in range(len(ctx.avals_out))]


def _branch_computation(ctx: LoweringContext, branch: ClosedJaxpr, operand_shape: Shape,
                        result_shape: Shape, i: int) -> HloComputation:
    builder = ctx.new_builder(f"branch_{i}")
    inner = ctx.with_builder(builder)
    param = builder.parameter(operand_shape, "operands")
    args = [hlo.get_tuple_element(inner, param, k)
            for k in range(len(operand_shape.tuple_shapes or ()))]
    outs = hlo.call_jaxpr(inner, branch, args, f"branch_{i}_fun")
    return builder.build(hlo.make_tuple(inner, outs))


cond_p.abstract_eval = _cond_abstract_eval
cond_p.reference = _cond_reference
cond_p.jvp = _cond_jvp
cond_p.transpose = _cond_transpose
cond_p.batch = _cond_batch
cond_p.lower = _cond_lower


# ------------------------------------------------------------------------------ wrappers

class _NoOperand:
    def __repr__(self) -> str:
        return "<no operand>"


_NO_OPERAND = _NoOperand()


def _operands(operands: tuple, operand: Any) -> tuple:
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(f"if 'operand' keyword is passed then no positional operands can be "
                        f"passed, got operand={operand} and positional operands {operands}")
    return (operand,)


def _bind_branches(index: Any, funs: Sequence[Callable[..., Any]], operands: tuple,
                   what: str, names: Sequence[str], report: Sequence[int]) -> Any:
    """Trace each branch on the operands and bind one `cond` (branch order = `funs`).

    `report` orders the branches for error messages (JAX names true_fun first).
    """
    leaves, in_tree = tree_flatten(tuple(operands))
    avals = abstractify(leaves)
    traced = [trace_function(f, in_tree, avals, what) for f in funs]
    check_branch_outputs(what, [names[i] for i in report], [funs[i] for i in report],
                         [traced[i][2] for i in report],
                         [traced[i][0].out_avals for i in report])
    joined = [a.update(weak_type=all(t[0].out_avals[k].weak_type for t in traced))
              for k, a in enumerate(traced[0][0].out_avals)]
    branches, consts = unify_hoisted([(convert_outputs(closed, joined), c)
                                      for closed, c, _ in traced])
    outs = cond_p.bind(index, *consts, *leaves, branches=tuple(branches))
    return tree_unflatten(traced[0][2], outs)


@api_boundary
def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)` (mirrors `jax.lax.cond`).

    Both branches are traced; the one `pred` picks runs. `pred` is a scalar: a bool, or a
    number compared with zero. Both branches must return the same pytree of the same
    shapes and dtypes. The old form `cond(pred, true_operand, true_fun, false_operand,
    false_fun)` is accepted too.

    Under vmap with a batched `pred` both branches run and the results are selected.
    """
    operands = _operands(operands, operand)
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, operands[0], operands[1]
            return cond(pred, lambda x, _: f_true(x), lambda _, y: f_false(y), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {aval.shape}.")
    if aval.dtype != np.bool_:
        if not (dtypes.is_integer(aval.dtype) or dtypes.is_floating(aval.dtype)):
            raise TypeError(f"Pred type must be either boolean or number, got "
                            f"{np.dtype(aval.dtype).name}.")
        pred = ne(pred, np.zeros((), aval.dtype))
    if run_in_python() and is_concrete(pred):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    index = convert_element_type(pred, np.int32)
    return _bind_branches(index, [false_fun, true_fun], operands, "cond",
                          ["false_fun", "true_fun"], [1, 0])


@api_boundary
def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """`branches[index](*operands)` (mirrors `jax.lax.switch`).

    `index` is an integer scalar, clamped to `[0, len(branches) - 1]`. Every branch is
    traced and must return the same pytree of the same shapes and dtypes.
    """
    operands = _operands(operands, operand)
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    aval = get_aval(index)
    if aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {aval.shape}.")
    if not dtypes.is_integer(aval.dtype):
        raise TypeError(f"Index type must be an integer, got {index} as "
                        f"{np.dtype(aval.dtype).name}")
    if len(branches) == 1:
        return branches[0](*operands)
    if run_in_python() and is_concrete(index):
        return branches[int(np.clip(int(index), 0, len(branches) - 1))](*operands)
    index = clamp(0, convert_element_type(index, np.int32), len(branches) - 1)
    names = [f"branch {i}" for i in range(len(branches))]
    return _bind_branches(index, branches, operands, "switch", names, range(len(branches)))
