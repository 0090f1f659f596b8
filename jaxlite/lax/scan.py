"""Loops over a leading axis: the `scan` primitive and `lax.scan`.

Mirrors `jax.lax.scan`. One `scan` equation has operands `consts, init carry, xs` and the
parameters `jaxpr` (the body: consts, carry, one slice of each xs -> new carry, one slice of
each ys), `num_consts`, `num_carry`, `length`, `reverse` and `unroll`. Rules:

- jvp: the body's jvp, with the carry tangents that can become nonzero found as a fixed
  point (a zero initial tangent may be fed by a nonzero one).
- linearize: a known scan returns the outputs and, per iteration, the residuals of the
  body's linearization (stacked like ys; residuals that are loop constants are passed once
  instead); a linear scan maps the tangents with the stacked residuals as extra xs.
- transpose (of a linear scan): a scan in the other direction over the cotangents of ys,
  carrying the carry's cotangent and accumulating the cotangents of linear constants.
- vmap: consts and carry batched along axis 0, xs and ys along axis 1; the carries that
  must be batched are found as a fixed point.
- lowering: an XLA While over (counter, consts, carry, xs, ys) that dynamic-slices each x
  and dynamic-update-slices each y.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.traceback_filter import api_boundary
from jaxlite.core.avals import ShapedArray, get_aval, physical_aval, physical_value
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import add_tangents, instantiate
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import hoist_tracer_consts, trace_to_jaxpr
from jaxlite.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._control_flow_util import (abstractify, batch_closed, check_carry,
                                            eval_closed, first_parameter_name,
                                            is_partial_eval, jvp_closed, linearize_closed,
                                            nonzero_tangents, promote_weak_carry,
                                            run_in_python, same_type,
                                            symbolic_zeros, traced_once,
                                            type_str)
from jaxlite.lax.ad_util import zeros
from jaxlite.lax.shape_ops import expand_dims
from jaxlite.lax.slicing import concatenate, index_in_dim
from jaxlite.tree_util import tree_flatten, tree_unflatten, treedef_children
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["scan", "scan_p"]

scan_p = Primitive("scan", multiple_results=True)


def _split(values: Sequence[Any], num_consts: int, num_carry: int) -> tuple[list, list, list]:
    values = list(values)
    return (values[:num_consts], values[num_consts:num_consts + num_carry],
            values[num_consts + num_carry:])


def _slice_aval(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


def _stacked_aval(aval: ShapedArray, length: int) -> ShapedArray:
    return ShapedArray((length, *aval.shape), aval.dtype, aval.weak_type)


def _scan_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, num_consts: int,
                        num_carry: int, length: int, reverse: bool,
                        unroll: int) -> list[ShapedArray]:
    consts, carry, xs = _split(avals, num_consts, num_carry)
    for i, x in enumerate(xs):
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan: xs operand {i} of type {type_str(x)} must have a leading "
                            f"axis of the scan's length {length}.")
    expected = consts + carry + [_slice_aval(x) for x in xs]
    if len(jaxpr.in_avals) != len(expected) or not all(map(same_type, jaxpr.in_avals,
                                                          expected)):
        raise TypeError(f"scan: the body takes {[type_str(a) for a in jaxpr.in_avals]} but "
                        f"the operands give {[type_str(a) for a in expected]}.")
    carry_out = jaxpr.out_avals[:num_carry]
    if not all(map(same_type, carry_out, carry)):
        raise TypeError(f"scan: the body returns the carry as "
                        f"{[type_str(a) for a in carry_out]} but takes it as "
                        f"{[type_str(a) for a in carry]}.")
    # The carry out has the body's types, weak types included, as JAX's scan.
    return list(carry_out) + [_stacked_aval(y, length) for y in jaxpr.out_avals[num_carry:]]


def _scan_reference(*args: np.ndarray, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                    length: int, reverse: bool, unroll: int) -> list[Any]:
    consts, carry, xs = _split(args, num_consts, num_carry)
    ys: list[list[np.ndarray]] = [[] for _ in jaxpr.out_avals[num_carry:]]
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = eval_closed(jaxpr, *consts, *carry, *[x[i] for x in xs])  # typed keys too
        carry = outs[:num_carry]
        for stack, y, aval in zip(ys, outs[num_carry:], jaxpr.out_avals[num_carry:]):
            stack.append(np.asarray(physical_value(y, aval)))  # typed keys: their data
    stacked = []
    for stack, aval in zip(ys, jaxpr.out_avals[num_carry:]):
        if reverse:
            stack.reverse()
        physical = physical_aval(aval)
        stacked.append(np.stack(stack) if stack else
                       np.zeros((0, *physical.shape), physical.dtype))
    return list(carry) + stacked


def _carry_fixed_point(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                       nonzero: list[bool]) -> list[bool]:
    """Which carry tangents can be nonzero: a zero initial tangent may be fed by others."""
    consts, carry, xs = _split(nonzero, num_consts, num_carry)
    num_ys = len(jaxpr.out_avals) - num_carry
    while True:
        _, out = jvp_closed(jaxpr, consts + carry + xs, carry + [False] * num_ys)
        new = [a or b for a, b in zip(carry, out[:num_carry])]
        if new == carry:
            return carry
        carry = new


def _scan_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
              num_consts: int, num_carry: int, length: int, reverse: bool,
              unroll: int) -> tuple[list, list]:
    params = dict(length=length, reverse=reverse, unroll=unroll)
    nonzero = nonzero_tangents(tangents)
    carry_nz = _carry_fixed_point(jaxpr, num_consts, num_carry, nonzero)
    consts_nz, _, xs_nz = _split(nonzero, num_consts, num_carry)
    mask = consts_nz + carry_nz + xs_nz
    if is_partial_eval():
        return _scan_linearize(primals, tangents, mask, jaxpr, num_consts, num_carry, params)
    num_ys = len(jaxpr.out_avals) - num_carry
    jvp, out_nz = jvp_closed(jaxpr, mask, carry_nz + [False] * num_ys)
    ys_nz = out_nz[num_carry:]
    consts, carry, xs = _split(primals, num_consts, num_carry)
    consts_t, carry_t, xs_t = (_given(t, m) for t, m in
                               zip(_split(tangents, num_consts, num_carry),
                                   (consts_nz, carry_nz, xs_nz)))
    n = [num_consts, num_carry, len(xs), len(consts_t), len(carry_t), len(xs_t)]
    body = _reordered(jvp, n, [0, 3, 1, 4, 2, 5],
                      [num_carry, num_ys, sum(carry_nz), sum(ys_nz)], [0, 2, 1, 3])
    outs = scan_p.bind(*consts, *consts_t, *carry, *carry_t, *xs, *xs_t, jaxpr=body,
                       num_consts=num_consts + len(consts_t),
                       num_carry=num_carry + len(carry_t), **params)
    carry_out, carry_t_out, ys, ys_t = _groups(outs, [num_carry, len(carry_t), num_ys,
                                                      sum(ys_nz)])
    out_avals = _scan_abstract_eval(*abstractify(primals), jaxpr=jaxpr, num_consts=num_consts,
                                    num_carry=num_carry, **params)
    tangents_out = symbolic_zeros(carry_t_out + ys_t, carry_nz + ys_nz, out_avals)
    return carry_out + ys, tangents_out


def _given(tangents: Sequence[Any], mask: Sequence[bool]) -> list[Any]:
    return [instantiate(t) for t, m in zip(tangents, mask) if m]


def _groups(values: Sequence[Any], sizes: Sequence[int]) -> list[list[Any]]:
    out, start = [], 0
    for size in sizes:
        out.append(list(values[start:start + size]))
        start += size
    return out


def _reordered(closed: ClosedJaxpr, in_sizes: Sequence[int], in_order: Sequence[int],
               out_sizes: Sequence[int], out_order: Sequence[int]) -> ClosedJaxpr:
    """`closed` with its input groups and output groups permuted.

    The new jaxpr takes the input groups in the order `in_order` (indices of groups of
    `closed`, whose sizes are `in_sizes`) and returns its output groups in `out_order`.
    """
    avals = _groups(closed.in_avals, in_sizes)
    new_avals = [a for g in in_order for a in avals[g]]

    def fun(*args: Any) -> list[Any]:
        given = dict(zip(in_order, _groups(args, [in_sizes[g] for g in in_order])))
        outs = _groups(eval_closed(closed, *[x for g in range(len(in_sizes))
                                             for x in given[g]]), out_sizes)
        return [y for g in out_order for y in outs[g]]
    return trace_to_jaxpr(fun, new_avals)


def _scan_linearize(primals: Sequence[Any], tangents: Sequence[Any], mask: list[bool],
                    jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                    params: dict[str, Any]) -> tuple[list, list]:
    """A known scan of outputs and stacked residuals, and a linear scan of the tangents."""
    num_ys = len(jaxpr.out_avals) - num_carry
    _, out_nz = jvp_closed(jaxpr, mask, mask[num_consts:num_consts + num_carry]
                           + [False] * num_ys)
    known, linear, forwarded = linearize_closed(jaxpr, mask, out_nz, forwardable=num_consts)
    num_out = len(jaxpr.out_avals)
    num_res = len(known.out_avals) - num_out
    consts, carry, xs = _split(primals, num_consts, num_carry)
    results = scan_p.bind(*consts, *carry, *xs, jaxpr=known, num_consts=num_consts,
                          num_carry=num_carry, **params)
    carry_out, ys, stacked = _groups(results, [num_carry, num_ys, num_res])
    const_res = [consts[f] for f in forwarded if f is not None]
    consts_nz, carry_nz, xs_nz = _split(mask, num_consts, num_carry)
    consts_t, carry_t, xs_t = (_given(t, m) for t, m in
                               zip(_split(tangents, num_consts, num_carry),
                                   (consts_nz, carry_nz, xs_nz)))
    slice_avals = [_slice_aval(get_aval(r)) for r in stacked]

    def body(*args: Any) -> list[Any]:
        c_res, c_t, k_t, s_res, x_t = _groups(args, [len(const_res), len(consts_t),
                                                     len(carry_t), len(stacked), len(xs_t)])
        from_consts, from_stack = iter(c_res), iter(s_res)
        residuals = [next(from_consts) if f is not None else next(from_stack)
                     for f in forwarded]
        return eval_closed(linear, *residuals, *c_t, *k_t, *x_t)
    in_avals = abstractify(const_res + consts_t + carry_t) + slice_avals + \
        [_slice_aval(get_aval(x)) for x in xs_t]
    linear_body = trace_to_jaxpr(body, in_avals)
    tangents_out = scan_p.bind(*const_res, *consts_t, *carry_t, *stacked, *xs_t,
                               jaxpr=linear_body, num_consts=len(const_res) + len(consts_t),
                               num_carry=len(carry_t), **params)
    out_avals = [get_aval(c) for c in carry_out] + [get_aval(y) for y in ys]
    return carry_out + ys, symbolic_zeros(tangents_out, out_nz, out_avals)


def _scan_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, num_consts: int,
                    num_carry: int, length: int, reverse: bool, unroll: int) -> list[Any]:
    consts, carry, xs = _split(args, num_consts, num_carry)
    # A known initial carry of a linear scan can only be the zeros that linearize made for
    # a carry whose tangent starts at zero: the carry is linear all the same.
    carry_avals = [c.aval if is_undefined(c) else get_aval(c) for c in carry]
    const_res = [c for c in consts if not is_undefined(c)]
    xs_res = [x for x in xs if not is_undefined(x)]
    lin_consts = [c.aval for c in consts if is_undefined(c)]
    num_ys = len(jaxpr.out_avals) - num_carry
    ct_carry = [instantiate(ct) for ct in cts[:num_carry]]
    ct_ys = [instantiate(ct) for ct in cts[num_carry:]]
    ct_consts_init = [zeros(a) for a in lin_consts]

    def body(*values: Any) -> list[Any]:
        c_res, acc, k_ct, x_res, y_ct = _groups(values, [len(const_res), len(lin_consts),
                                                         num_carry, len(xs_res), num_ys])
        from_consts, from_xs = iter(c_res), iter(x_res)
        full = [UndefinedPrimal(c.aval) if is_undefined(c) else next(from_consts)
                for c in consts]
        full += [UndefinedPrimal(a) for a in carry_avals]
        full += [UndefinedPrimal(_slice_aval(x.aval)) if is_undefined(x) else next(from_xs)
                 for x in xs]
        results = backward_pass(jaxpr.jaxpr, jaxpr.consts, full, list(k_ct) + list(y_ct))
        r_consts, r_carry, r_xs = _split(results, num_consts, num_carry)
        linear_consts = [r for r, c in zip(r_consts, consts) if is_undefined(c)]
        new_acc = [add_tangents(a, instantiate(r)) for a, r in zip(acc, linear_consts)]
        return (new_acc + [instantiate(r) for r in r_carry]
                + [instantiate(r) for r, x in zip(r_xs, xs) if is_undefined(x)])
    in_avals = abstractify(const_res) + lin_consts + abstractify(ct_carry) + \
        [_slice_aval(get_aval(x)) for x in xs_res] + [_slice_aval(get_aval(y)) for y in ct_ys]
    closed, hoisted = hoist_tracer_consts(trace_to_jaxpr(body, in_avals))
    outs = scan_p.bind(*hoisted, *const_res, *ct_consts_init, *ct_carry, *xs_res, *ct_ys,
                       jaxpr=closed, num_consts=len(hoisted) + len(const_res),
                       num_carry=len(lin_consts) + num_carry, length=length,
                       reverse=not reverse, unroll=unroll)
    ct_consts, ct_init, ct_xs = _groups(outs, [len(lin_consts), num_carry,
                                               len(outs) - len(lin_consts) - num_carry])
    it_consts, it_xs = iter(ct_consts), iter(ct_xs)
    return ([next(it_consts) if is_undefined(c) else None for c in consts]
            + [ct if is_undefined(c) else None for ct, c in zip(ct_init, carry)]
            + [next(it_xs) if is_undefined(x) else None for x in xs])


def _scan_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, length: int,
                reverse: bool, unroll: int) -> tuple[list, list]:
    batched = [d is not None for d in dims]
    consts_b, carry_b, xs_b = _split(batched, num_consts, num_carry)
    num_ys = len(jaxpr.out_avals) - num_carry
    while True:
        _, out_b = batch_closed(jaxpr, axis_size, consts_b + carry_b + xs_b,
                                carry_b + [False] * num_ys)
        new = [a or b for a, b in zip(carry_b, out_b[:num_carry])]
        if new == carry_b:
            break
        carry_b = new
    body, out_b = batch_closed(jaxpr, axis_size, consts_b + carry_b + xs_b,
                               carry_b + [False] * num_ys)
    consts, carry, xs = _split(args, num_consts, num_carry)
    c_dims, k_dims, x_dims = _split(dims, num_consts, num_carry)
    consts = [move_batch_axis(c, d, axis_size, 0) if d is not None else c
              for c, d in zip(consts, c_dims)]
    carry = [move_batch_axis(c, d, axis_size, 0) if b else c
             for c, d, b in zip(carry, k_dims, carry_b)]
    xs = [move_batch_axis(x, d, axis_size, 1) if d is not None else x
          for x, d in zip(xs, x_dims)]
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=body, num_consts=num_consts,
                       num_carry=num_carry, length=length, reverse=reverse, unroll=unroll)
    out_dims = [0 if b else None for b in carry_b] + \
        [1 if b else None for b in out_b[num_carry:]]
    return outs, out_dims


def _scan_lower(ctx: LoweringContext, *args: HloInstruction, jaxpr: ClosedJaxpr,
                num_consts: int, num_carry: int, length: int, reverse: bool,
                unroll: int) -> list[HloInstruction]:
    """An XLA While over (i, consts, carry, xs, ys); iteration i reads and writes row i
    (row length - 1 - i when reversed)."""
    consts, carry, xs = _split(args, num_consts, num_carry)
    ys_shapes = [ctx.shape(a) for a in ctx.avals_out[num_carry:]]
    ys_init = [hlo.constant(ctx, 0, s.dtype, s.dims) for s in ys_shapes]
    if length == 0:
        # No iteration: the carry as it came, and empty ys (a body writing rows of an empty
        # buffer would not even verify).
        return list(carry) + ys_init
    counter = hlo.constant(ctx, 0, np.int32)
    state = hlo.make_tuple(ctx, [counter, *consts, *carry, *xs, *ys_init])
    sizes = [1, num_consts, num_carry, len(xs), len(ys_shapes)]
    condition = _counter_condition(ctx, state.shape, length)
    body = _scan_body_computation(ctx, jaxpr, state.shape, sizes, length, reverse)
    loop = ctx.builder.add(Opcode.WHILE, state.shape, (state,), None, (condition, body))
    first = 1 + num_consts
    return [hlo.get_tuple_element(ctx, loop, first + k) for k in range(num_carry)] + \
        [hlo.get_tuple_element(ctx, loop, first + num_carry + len(xs) + k)
         for k in range(len(ys_shapes))]


def _counter_condition(ctx: LoweringContext, state_shape: Shape,
                       length: int) -> HloComputation:
    builder = ctx.new_builder("scan_condition")
    inner = ctx.with_builder(builder)
    state = builder.parameter(state_shape, "state")
    counter = hlo.get_tuple_element(inner, state, 0)
    less = hlo.compare(inner, counter, hlo.constant(inner, length, np.int32), "LT")
    return builder.build(less)


def _scan_body_computation(ctx: LoweringContext, jaxpr: ClosedJaxpr, state_shape: Shape,
                           sizes: list[int], length: int, reverse: bool) -> HloComputation:
    builder = ctx.new_builder("scan_body")
    inner = ctx.with_builder(builder)
    state = builder.parameter(state_shape, "state")
    parts = [hlo.get_tuple_element(inner, state, k)
             for k in range(len(state_shape.tuple_shapes or ()))]
    (counter,), consts, carry, xs, ys = _groups(parts, sizes)
    row = counter
    if reverse:
        row = hlo.binary(inner, Opcode.SUBTRACT, hlo.constant(inner, length - 1, np.int32),
                         counter)
    x_slices = [_row_of(inner, x, row) for x in xs]
    outs = hlo.call_jaxpr(inner, jaxpr, [*consts, *carry, *x_slices], "scan_body_fun")
    new_carry, new_ys = outs[:len(carry)], outs[len(carry):]
    ys = [_set_row(inner, buffer, y, row) for buffer, y in zip(ys, new_ys)]
    step = hlo.binary(inner, Opcode.ADD, counter, hlo.constant(inner, 1, np.int32))
    return builder.build(hlo.make_tuple(inner, [step, *consts, *new_carry, *xs, *ys]))


def _row_of(ctx: LoweringContext, x: HloInstruction, row: HloInstruction) -> HloInstruction:
    dims = x.shape.dims
    zero = hlo.constant(ctx, 0, np.int32)
    piece = hlo.emit(ctx, Opcode.DYNAMIC_SLICE, x.shape.with_dims((1, *dims[1:])),
                     (x, row, *[zero] * (len(dims) - 1)), sizes=(1, *dims[1:]))
    return hlo.reshape(ctx, piece, dims[1:])


def _set_row(ctx: LoweringContext, buffer: HloInstruction, y: HloInstruction,
             row: HloInstruction) -> HloInstruction:
    zero = hlo.constant(ctx, 0, np.int32)
    update = hlo.reshape(ctx, y, (1, *y.shape.dims))
    return hlo.emit(ctx, Opcode.DYNAMIC_UPDATE_SLICE, buffer.shape,
                    (buffer, update, row, *[zero] * y.shape.rank))


scan_p.abstract_eval = _scan_abstract_eval
scan_p.reference = _scan_reference
scan_p.jvp = _scan_jvp
scan_p.transpose = _scan_transpose
scan_p.batch = _scan_batch
scan_p.lower = _scan_lower


# ------------------------------------------------------------------------------ wrapper

def _scan_length(xs_leaves: Sequence[Any], length: int | None) -> int:
    sizes = []
    for x in xs_leaves:
        shape = get_aval(x).shape
        if not shape:
            raise ValueError(f"scan got an xs value of shape () (a scalar); every leaf of xs "
                             f"needs a leading axis to scan over, got {x!r}.")
        sizes.append(shape[0])
    if length is not None:
        length = int(length)
        if sizes and any(s != length for s in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {sizes}.")
        return length
    if not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"scan got values with different leading axis sizes: "
                         f"{', '.join(str(s) for s in sizes)}.")
    return sizes[0]


def _unroll(unroll: int | bool, length: int) -> int:
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    return max(unroll, 1)


@api_boundary
def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False, unroll: int | bool = 1,
         _split_transpose: bool = False) -> tuple[Any, Any]:
    """Loop `f` over the leading axis of `xs`, carrying state (mirrors `jax.lax.scan`).

    Semantically::

        def scan(f, init, xs, length=None):
            carry, ys = init, []
            for x in xs:
                carry, y = f(carry, x)
                ys.append(y)
            return carry, np.stack(ys)

    `xs` may be a pytree (or None with `length`); `f` returns `(new_carry, y)` where the
    new carry has the type of `init`. `reverse` runs from the end (ys keep their order).
    `unroll` is accepted and recorded.

    Differences from JAX: `unroll` is recorded but does not change the compiled loop yet
    (a performance hint only); `_split_transpose` is ignored; the `scan` equation has no
    `linear` or `_split_transpose` parameters; a scalar leaf in `xs` raises a ValueError
    that says so (JAX fails with an IndexError).
    """
    xs_leaves, xs_tree = tree_flatten(xs)
    length = _scan_length(xs_leaves, length)
    unroll = _unroll(unroll, length)
    if run_in_python():
        return _scan_in_python(f, init, xs_leaves, xs_tree, length, bool(reverse))
    init_leaves, init_tree = tree_flatten(init)
    x_avals = [_slice_aval(get_aval(x)) for x in xs_leaves]
    carry_name = first_parameter_name(f, "carry")
    num_carry = len(init_leaves)
    while True:  # again after a weak initial carry is promoted (at most once per leaf)
        carry_avals = abstractify(init_leaves)
        closed, consts, out_tree = _trace_body(f, init_tree, xs_tree, carry_avals, x_avals)
        carry_tree = treedef_children(out_tree)[0]
        init_leaves, changed = promote_weak_carry(init_leaves, carry_avals,
                                                  closed.out_avals[:num_carry]
                                                  if carry_tree == init_tree else carry_avals)
        if not changed:
            break
    check_carry("scan", carry_name, tree_unflatten(init_tree, carry_avals), carry_tree,
                carry_avals, closed.out_avals[:num_carry])
    outs = scan_p.bind(*consts, *init_leaves, *xs_leaves, jaxpr=closed,
                       num_consts=len(consts), num_carry=num_carry, length=length,
                       reverse=bool(reverse), unroll=unroll)
    return tree_unflatten(out_tree, outs)


def _scan_in_python(f: Callable, init: Any, xs_leaves: list[Any], xs_tree: Any, length: int,
                    reverse: bool) -> tuple[Any, Any]:
    """The loop in Python, one step at a time (under `jax.disable_jit()`, as JAX)."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry, ys = init, [None] * length
    for i in reversed(range(length)) if reverse else range(length):
        x = tree_unflatten(xs_tree, [index_in_dim(v, i, keepdims=False) for v in xs_leaves])
        carry, ys[i] = f(carry, x)
    y_leaves = [tree_flatten(y)[0] for y in ys]
    stacked = [concatenate([expand_dims(y, (0,)) for y in column], 0)
               for column in zip(*y_leaves)]
    return carry, tree_unflatten(tree_flatten(ys[0])[1], stacked)


def _trace_body(f: Callable, init_tree: Any, xs_tree: Any, carry_avals: list[ShapedArray],
                x_avals: list[ShapedArray]) -> tuple[ClosedJaxpr, list[Any], Any]:
    def body(carry: Any, x: Any) -> Any:
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            shown = get_aval(out).str_short() if hasattr(out, "shape") else repr(out)
            raise TypeError(f"scan body output must be a pair, got {shown}.")
        return tuple(out)
    leaves_tree = tree_flatten((tree_unflatten(init_tree, carry_avals),
                                tree_unflatten(xs_tree, x_avals)))[1]
    return traced_once(f, "scan", body, leaves_tree, carry_avals + x_avals)

