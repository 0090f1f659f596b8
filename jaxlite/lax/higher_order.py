"""Primitives that carry a jaxpr: `jit`, `checkpoint` and the custom-derivative calls.

Each is declared once with all its rules, like any other primitive; their rules transform
the inner jaxpr (with `jvp_jaxpr`, `linearize_flat`, `backward_pass` and `batch_jaxpr`) and
bind the same primitive again on the result, so that a `jit` stays one call (and one
compiled program) under `grad` and `vmap`. Mirrors JAX's `pjit` (printed as `jit`), `remat`
(printed here as `checkpoint`), `custom_jvp_call`, `custom_vjp_call` and the linear
`custom_lin` that stands for a custom VJP's backward function inside a linear jaxpr.

Eagerly, each runs through the dispatch like any primitive: its reference rule evaluates the
jaxpr, and the dispatch turns the results into `Array`s of the jaxpr's output types.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, OwnNames, eval_jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import Tracer, current_trace
from jaxlite.interpreters.ad import (Zero, instantiate, jvp_jaxpr, linearize_flat,
                                    tangent_aval)
from jaxlite.interpreters.batching import (BatchTrace, move_batch_axis, rule_trace,
                                          vmap_flat)
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import StagingTrace, hoist_tracer_consts, trace_to_jaxpr
from jaxlite.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._control_flow_util import JaxprCache, batch_closed
from jaxlite.lax.arithmetic import div
from jaxlite.lax.remat import linearize_with_policy
from jaxlite.xla.ir import HloInstruction

__all__ = ["jit_p", "checkpoint_p", "custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p"]


def _eval_closed(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _jaxpr_out_avals(*avals: ShapedArray, jaxpr: ClosedJaxpr, **params: Any) -> list:
    expected = jaxpr.in_avals
    got = [a.strip_weak_type() for a in avals]
    if [a.shape for a in got] != [a.shape for a in expected] or \
            [a.dtype for a in got] != [a.dtype for a in expected]:
        raise TypeError(f"call of a jaxpr with arguments {[a.str_short() for a in avals]}, "
                        f"but it takes {[a.str_short() for a in expected]}")
    return list(jaxpr.out_avals)


def _is_partial_eval() -> bool:
    trace = current_trace()
    return isinstance(trace, StagingTrace) and trace.forward_known


def _symbolic_float0(tangents: Sequence[Any]) -> list[Any]:
    # Tangents of integer outputs come back from a call as float0 arrays; keep them
    # symbolic, so that the rules after the call skip them.
    return [Zero(get_aval(t)) if get_aval(t).dtype == dtypes.float0 else t for t in tangents]


def _nonzero(tangents: Sequence[Any]) -> tuple[list[bool], list[Any]]:
    mask = [not isinstance(t, Zero) for t in tangents]
    return mask, [t for t, nz in zip(tangents, mask) if nz]


# The jvp, linearization and transpose of each jaxpr a call carries, made once per
# signature: `grad` of a function calling a jitted one then binds the same jaxprs every
# step, which the compiled-call cache finds by identity.
TRANSFORMED_CALLS = JaxprCache()


def _no_tracer_consts(closed: ClosedJaxpr) -> bool:
    # A jaxpr closing over an outer transformation's tracers belongs to that one trace.
    return not any(isinstance(c, Tracer) for c in closed.consts)


def _linearize_call(primitive: Primitive, primals: Sequence[Any], tangents: Sequence[Any],
                    jaxpr: ClosedJaxpr, params: dict[str, Any]) -> tuple[list, list]:
    """The jvp of a call under linearize: a known call and a linear call of the same kind.

    The known call computes the outputs and the residuals now (in the parent trace); the
    linear call, staged into the linear jaxpr, maps residuals and tangents to the output
    tangents.
    """
    nonzero, given = _nonzero(tangents)
    in_avals = tuple(get_aval(p) for p in primals)
    known, linear = TRANSFORMED_CALLS.get(
        jaxpr, ("linearize", primitive, tuple(nonzero), in_avals),
        lambda: _split_call(jaxpr, nonzero, in_avals))
    num_out = len(jaxpr.out_avals)
    results = primitive.bind(*primals, **{**params, "jaxpr": known})
    outs, residuals = results[:num_out], results[num_out:]
    tangents_out = primitive.bind(*residuals, *given, **{**params, "jaxpr": linear})
    return outs, _symbolic_float0(tangents_out)


def _split_call(jaxpr: ClosedJaxpr, nonzero: Sequence[bool], in_avals: Sequence[ShapedArray]
                ) -> tuple[tuple[ClosedJaxpr, ClosedJaxpr], bool]:
    """(known, linear) jaxprs of `jaxpr` linearized at `in_avals` (see `_linearize_call`),
    and whether they may be cached."""
    linear_parts: list[ClosedJaxpr] = []

    def known_fun(*xs: Any) -> list[Any]:
        outs, linear, _ = linearize_flat(lambda *a: _eval_closed(jaxpr, *a), xs, nonzero)
        linear, residuals = hoist_tracer_consts(linear)
        linear_parts.append(linear)
        return list(outs) + residuals
    known = trace_to_jaxpr(known_fun, list(in_avals))
    linear = linear_parts[0]
    return (known, linear), _no_tracer_consts(known) and _no_tracer_consts(linear)


def _transpose_call(primitive: Primitive, cts: Sequence[Any], args: Sequence[Any],
                    jaxpr: ClosedJaxpr, params: dict[str, Any]) -> list[Any]:
    """Transpose a call of a jaxpr linear in its undefined arguments, as one call.

    The new call takes the defined arguments and the nonzero cotangents and returns the
    cotangents of the undefined arguments (its body is the backward pass of `jaxpr`).
    """
    undefined = tuple(is_undefined(a) for a in args)
    known = [a for a in args if not is_undefined(a)]
    ct_nonzero = tuple(ct is not None and not isinstance(ct, Zero) for ct in cts)
    given_cts = [ct for ct, nz in zip(cts, ct_nonzero) if nz]
    in_avals = tuple(get_aval(x) for x in known + given_cts)
    undefined_avals = tuple(a.aval for a in args if is_undefined(a))
    closed, consts = TRANSFORMED_CALLS.get(
        jaxpr, ("transpose", primitive, undefined, ct_nonzero, in_avals, undefined_avals),
        lambda: _transposed_call(jaxpr, undefined, undefined_avals, ct_nonzero, in_avals))
    outs = iter(primitive.bind(*consts, *known, *given_cts, **{**params, "jaxpr": closed}))
    return [next(outs) if u else None for u in undefined]


def _transposed_call(jaxpr: ClosedJaxpr, undefined: Sequence[bool],
                     undefined_avals: Sequence[ShapedArray], ct_nonzero: Sequence[bool],
                     in_avals: Sequence[ShapedArray]
                     ) -> tuple[tuple[ClosedJaxpr, list[Any]], bool]:
    """The backward pass of `jaxpr` as a jaxpr of (defined arguments, nonzero cotangents),
    with the tracers it closes over, and whether it may be cached (it closes over none)."""
    num_known = len(undefined) - sum(undefined)

    def transposed(*xs: Any) -> list[Any]:
        known_values, ct_values = iter(xs[:num_known]), iter(xs[num_known:])
        undefined_values = iter(undefined_avals)
        full_args = [UndefinedPrimal(next(undefined_values)) if u else next(known_values)
                     for u in undefined]
        full_cts = [next(ct_values) if nz else Zero(tangent_aval(aval))
                    for nz, aval in zip(ct_nonzero, jaxpr.out_avals)]
        results = backward_pass(jaxpr.jaxpr, jaxpr.consts, full_args, full_cts)
        return [instantiate(r) for r, u in zip(results, undefined) if u]
    closed = trace_to_jaxpr(transposed, list(in_avals))
    closed, consts = hoist_tracer_consts(closed)
    return (closed, consts), not consts


def _batch_call(closed: ClosedJaxpr, axis_size: int, args: Sequence[Any],
                dims: Sequence[Any]) -> tuple[list[Any], ClosedJaxpr, list[bool]]:
    """`closed` mapped over the batched arguments only, as JAX batches a call's jaxpr.

    Unbatched arguments stay unbatched (a `cond` on one inside stays a `cond`, not a
    select running both branches) and so do the outputs that depend on none of the batched
    ones. Returns the arguments (batch axes first), the jaxpr and which outputs are batched.
    """
    batched = [d is not None for d in dims]
    args = [move_batch_axis(x, d, axis_size, 0) if d is not None else x
            for x, d in zip(args, dims)]
    inner, out_batched = batch_closed(closed, axis_size, batched,
                                      [False] * len(closed.out_avals))
    return args, inner, out_batched


def _dims(batched: Sequence[bool]) -> list[int | None]:
    return [0 if b else None for b in batched]


def _mapped_here(x: Any) -> bool:
    """Whether `x` is mapped by the batch trace running now (inside a `vmap_flat` body)."""
    trace = current_trace()
    return isinstance(trace, BatchTrace) and trace.unpack(x)[1] is not None


class _SettledDims:
    """Which outputs of a batched custom-derivative call are batched.

    The call's own jaxpr says one thing; the custom rule (run by an enclosing jvp while the
    call is being bound) may batch more outputs, and then its answer is the call's, as in
    JAX. A rule run later, when the call's outputs are fixed, must fit them.
    """

    def __init__(self, call_batched: list[bool]) -> None:
        self.outs = call_batched
        self.bound = False

    def settle(self, rule_batched: list[bool], what: str) -> list[bool]:
        if not self.bound:
            self.outs = rule_batched
        elif any(r and not o for r, o in zip(rule_batched, self.outs)):
            raise NotImplementedError(
                f"vmap of a {what}: the custom rule returns a batched value for an output "
                "that the function itself leaves unbatched, after the call was staged; "
                "differentiate before staging (or make the output depend on the mapped "
                "arguments).")
        return self.outs


# ----------------------------------------------------------------------------------- jit

jit_p = Primitive("jit", multiple_results=True)


def _jit_reference(*args: Any, jaxpr: ClosedJaxpr, name: str) -> list[Any]:
    return _eval_closed(jaxpr, *args)


def _jit_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
             name: str) -> tuple[list, list]:
    if _is_partial_eval():
        return _linearize_call(jit_p, primals, tangents, jaxpr, dict(name=name))
    nonzero, given = _nonzero(tangents)
    full = TRANSFORMED_CALLS.get(jaxpr, ("jvp", tuple(nonzero)), lambda: (
        jvp_jaxpr(jaxpr, nonzero), _no_tracer_consts(jaxpr)))
    outs = jit_p.bind(*primals, *given, jaxpr=full, name=name)
    num_out = len(jaxpr.out_avals)
    return outs[:num_out], _symbolic_float0(outs[num_out:])


def _jit_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, name: str) -> list:
    return _transpose_call(jit_p, cts, args, jaxpr, dict(name=name))


def _jit_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
               jaxpr: ClosedJaxpr, name: str) -> tuple[list, list]:
    args, inner, out_batched = _batch_call(jaxpr, axis_size, args, dims)
    outs = jit_p.bind(*args, jaxpr=inner, name=name)
    return outs, _dims(out_batched)


def _jit_print_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("name", params["name"]), ("jaxpr", OwnNames(params["jaxpr"]))]


def _jit_lower(ctx: LoweringContext, *args: HloInstruction, jaxpr: ClosedJaxpr,
               name: str) -> list[HloInstruction]:
    return hlo.call_jaxpr(ctx, jaxpr, args, hlo.computation_name(name))


jit_p.abstract_eval = _jaxpr_out_avals
jit_p.reference = _jit_reference
jit_p.jvp = _jit_jvp
jit_p.transpose = _jit_transpose
jit_p.batch = _jit_batch
jit_p.print_params = _jit_print_params
jit_p.lower = _jit_lower


# ---------------------------------------------------------------------------- checkpoint

checkpoint_p = Primitive("checkpoint", multiple_results=True)


def _checkpoint_reference(*args: Any, jaxpr: ClosedJaxpr, prevent_cse: bool,
                          policy: Any) -> list[Any]:
    return _eval_closed(jaxpr, *args)


def _checkpoint_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
                    prevent_cse: bool, policy: Any) -> tuple[list, list]:
    params = dict(prevent_cse=prevent_cse, policy=policy)
    if policy is not None and _is_partial_eval():
        return linearize_with_policy(checkpoint_p, primals, tangents, jaxpr, params)
    primal_out = checkpoint_p.bind(*primals, jaxpr=jaxpr, **params)
    # The tangent jaxpr takes the primal inputs, not the intermediates: under linearize
    # they are the only residuals, and the transpose recomputes the rest.
    nonzero, given = _nonzero(tangents)
    full = jvp_jaxpr(jaxpr, nonzero)
    num_out = len(jaxpr.out_avals)
    tangent_only = _select_outputs(full, range(num_out, 2 * num_out))
    tangent_out = checkpoint_p.bind(*primals, *given, jaxpr=tangent_only, **params)
    return primal_out, _symbolic_float0(tangent_out)


def _select_outputs(closed: ClosedJaxpr, keep: Sequence[int]) -> ClosedJaxpr:
    keep = list(keep)
    return trace_to_jaxpr(lambda *a: [_eval_closed(closed, *a)[i] for i in keep],
                          closed.in_avals)


def _checkpoint_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr,
                          prevent_cse: bool, policy: Any) -> list:
    params = dict(prevent_cse=prevent_cse, policy=policy)
    return _transpose_call(checkpoint_p, cts, args, jaxpr, params)


def _checkpoint_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                      jaxpr: ClosedJaxpr, prevent_cse: bool, policy: Any) -> tuple[list, list]:
    args, inner, out_batched = _batch_call(jaxpr, axis_size, args, dims)
    outs = checkpoint_p.bind(*args, jaxpr=inner, prevent_cse=prevent_cse,
                             policy=policy)
    return outs, _dims(out_batched)


def _checkpoint_lower(ctx: LoweringContext, *args: HloInstruction, jaxpr: ClosedJaxpr,
                      prevent_cse: bool, policy: Any) -> list[HloInstruction]:
    # Rematerialization is a matter of the backward pass, already in the jaxpr: the call
    # computes the primal.
    return hlo.call_jaxpr(ctx, jaxpr, args, "checkpoint")


checkpoint_p.abstract_eval = _jaxpr_out_avals
checkpoint_p.reference = _checkpoint_reference
checkpoint_p.jvp = _checkpoint_jvp
checkpoint_p.transpose = _checkpoint_transpose
checkpoint_p.batch = _checkpoint_batch
checkpoint_p.lower = _checkpoint_lower


# ---------------------------------------------------------------------- custom_jvp_call

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


def _custom_jvp_call_reference(*args: Any, jaxpr: ClosedJaxpr, jvp: Callable,
                               num_consts: int, symbolic_zeros: bool,
                               name: str) -> list[Any]:
    return _eval_closed(jaxpr, *args)


def _custom_jvp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                         jaxpr: ClosedJaxpr, jvp: Callable, num_consts: int,
                         symbolic_zeros: bool, name: str) -> tuple[list, list]:
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise TypeError(
            "A custom_jvp function closes over a value that is being differentiated; the "
            "custom rule cannot see its tangent. Pass the value as an argument instead.")
    args = primals[num_consts:]
    # With symbolic_zeros the rule sees which tangents are zero (as SymbolicZero).
    arg_tangents = list(tangents[num_consts:]) if symbolic_zeros else \
        [instantiate(t) for t in tangents[num_consts:]]
    primal_out, tangent_out = jvp(args, arg_tangents)
    return list(primal_out), list(tangent_out)


def _custom_jvp_call_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                           jaxpr: ClosedJaxpr, jvp: Callable, num_consts: int,
                           symbolic_zeros: bool, name: str) -> tuple[list, list]:
    args, inner, call_batched = _batch_call(jaxpr, axis_size, args, dims)
    batched = [d is not None for d in dims[num_consts:]]
    settled = _SettledDims(call_batched)
    # The user's rule may close over values this vmap maps; when an enclosing jvp calls it,
    # it runs in a batch trace that stands for this one, so those values stay mapped.
    this_vmap = rule_trace()

    def batched_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
        # Tangents are batched where their primals are; symbolic zeros stay symbolic
        # inside, with one example's type.
        given = [not isinstance(t, Zero) for t in tangents]
        rule_batched: list[bool] = []

        def flat(*a: Any) -> list[Any]:
            mapped = iter(a[len(primals):])
            full = [next(mapped) if g else
                    Zero(t.aval.update(shape=t.aval.shape[1:]) if b else t.aval)
                    for t, g, b in zip(tangents, given, batched)]
            primal_out, tangent_out = jvp(a[:len(primals)], full)
            tangent_out = [instantiate(t) for t in tangent_out]
            rule_batched[:] = [_mapped_here(p) or _mapped_here(t)
                               for p, t in zip(primal_out, tangent_out)]
            return list(primal_out) + tangent_out

        def out_dims() -> list[int | None]:
            return _dims(settled.settle(rule_batched, "custom_jvp function")) * 2
        ins = list(primals) + [t for t, g in zip(tangents, given) if g]
        in_dims = _dims(batched) + _dims([b for b, g in zip(batched, given) if g])
        outs = vmap_flat(flat, axis_size, ins, in_dims, out_dims, stands_for=this_vmap)
        return outs[:len(outs) // 2], outs[len(outs) // 2:]
    batched_jvp.__name__ = getattr(jvp, "__name__", "jvp")
    outs = custom_jvp_call_p.bind(*args, jaxpr=inner, jvp=batched_jvp, num_consts=num_consts,
                                  symbolic_zeros=symbolic_zeros, name=name)
    settled.bound = True
    return outs, _dims(settled.outs)


def _custom_jvp_print_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("name", params["name"]), ("call_jaxpr", params["jaxpr"]),
            ("jvp", params["jvp"]), ("symbolic_zeros", params["symbolic_zeros"])]


def _custom_jvp_call_lower(ctx: LoweringContext, *args: HloInstruction, jaxpr: ClosedJaxpr,
                           jvp: Callable, num_consts: int, symbolic_zeros: bool,
                           name: str) -> list[HloInstruction]:
    # The custom rule only matters to differentiation, which has happened by now.
    return hlo.call_jaxpr(ctx, jaxpr, args, hlo.computation_name(name))


def _custom_jvp_call_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr,
                               jvp: Callable, num_consts: int, symbolic_zeros: bool,
                               name: str) -> list[Any]:
    # A custom_jvp function applied to tangents (a jvp rule calling another custom_jvp
    # function) lands in a linear jaxpr; its rule is about differentiation, so transposing
    # the call transposes its function, as JAX does.
    cts = [Zero(tangent_aval(a)) if ct is None else ct for ct, a in zip(cts, jaxpr.out_avals)]
    results = backward_pass(jaxpr.jaxpr, jaxpr.consts, args, cts)
    return [r if is_undefined(a) else None for r, a in zip(results, args)]


custom_jvp_call_p.abstract_eval = _jaxpr_out_avals
custom_jvp_call_p.transpose = _custom_jvp_call_transpose
custom_jvp_call_p.reference = _custom_jvp_call_reference
custom_jvp_call_p.jvp = _custom_jvp_call_jvp
custom_jvp_call_p.batch = _custom_jvp_call_batch
custom_jvp_call_p.print_params = _custom_jvp_print_params
custom_jvp_call_p.lower = _custom_jvp_call_lower


# ---------------------------------------------------------------------- custom_vjp_call

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)


def _custom_vjp_call_reference(*args: Any, jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable,
                               num_consts: int, name: str) -> list[Any]:
    return _eval_closed(jaxpr, *args)


def _custom_vjp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                         jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable,
                         num_consts: int, name: str) -> tuple[list, list]:
    # The tangents become a `custom_lin` equation, which only transposition can run: a
    # true forward-mode use fails when custom_lin is evaluated or lowered, as JAX refuses
    # jvp of a custom_vjp function. Not refusing here lets control flow (scan, while,
    # cond) trace the jvp of a body that calls a custom_vjp function on its way to
    # linearizing it.
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise TypeError(
            "A custom_vjp function closes over a value that is being differentiated; the "
            "custom rule cannot see its cotangent. Pass the value as an argument instead.")
    args = primals[num_consts:]
    # `perturbed` tells a symbolic_zeros fwd rule which inputs have nonzero tangents.
    outs, residuals = fwd(*args, perturbed=[not isinstance(t, Zero)
                                            for t in tangents[num_consts:]])
    arg_tangents = [instantiate(t) for t in tangents[num_consts:]]
    out_avals = tuple(tangent_aval(get_aval(o)) for o in outs)
    tangent_out = custom_lin_p.bind(*residuals, *arg_tangents, num_res=len(residuals),
                                    bwd=bwd, out_avals=out_avals)
    return list(outs), tangent_out


def _custom_vjp_call_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                           jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable,
                           num_consts: int, name: str) -> tuple[list, list]:
    args, inner, call_batched = _batch_call(jaxpr, axis_size, args, dims)
    batched = [d is not None for d in dims[num_consts:]]
    settled = _SettledDims(call_batched)
    res_batched: list[bool] = []

    def batched_fwd(*xs: Any, perturbed: Sequence[bool]) -> tuple[list, list]:
        num_outs: list[int] = []
        fwd_batched: list[bool] = []

        def flat(*a: Any) -> list[Any]:
            outs, res = fwd(*a, perturbed=perturbed)
            num_outs.append(len(outs))
            fwd_batched[:] = [_mapped_here(r) for r in list(outs) + list(res)]
            return list(outs) + list(res)

        def out_dims() -> list[int | None]:
            n = num_outs[0]
            res_batched[:] = fwd_batched[n:]
            return _dims(settled.settle(fwd_batched[:n], "custom_vjp function")) + \
                _dims(res_batched)
        results = vmap_flat(flat, axis_size, xs, _dims(batched), out_dims)
        return results[:num_outs[0]], results[num_outs[0]:]

    def batched_bwd(residuals: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        # The cotangent of an unbatched argument is the sum over the members' cotangents;
        # an unbatched output's cotangent is shared out evenly among the members' bwd
        # calls, so that the sum counts it once. (JAX 0.10.2 hands all of it to every
        # member, which multiplies its contribution by the axis size: a wrong gradient.)
        n_res = len(residuals)
        cts = [instantiate(c) if b else _share(instantiate(c), axis_size)
               for c, b in zip(cts, settled.outs)]
        flat = lambda *a: list(bwd(a[:n_res], a[n_res:]))  # noqa: E731
        return vmap_flat(flat, axis_size, list(residuals) + cts,
                         _dims(res_batched) + _dims(settled.outs), _dims(batched),
                         sum_match=True)
    batched_fwd.__name__ = getattr(fwd, "__name__", "fwd")
    batched_bwd.__name__ = getattr(bwd, "__name__", "bwd")
    outs = custom_vjp_call_p.bind(*args, jaxpr=inner, fwd=batched_fwd, bwd=batched_bwd,
                                  num_consts=num_consts, name=name)
    settled.bound = True
    return outs, _dims(settled.outs)


def _share(ct: Any, axis_size: int) -> Any:
    dtype = get_aval(ct).dtype
    return div(ct, np.asarray(axis_size, dtype)) if dtypes.is_inexact(dtype) else ct


def _custom_vjp_print_params(params: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("name", params["name"]), ("bwd", params["bwd"]),
            ("call_jaxpr", params["jaxpr"]), ("fwd", params["fwd"])]


def _custom_vjp_call_lower(ctx: LoweringContext, *args: HloInstruction, jaxpr: ClosedJaxpr,
                           fwd: Callable, bwd: Callable, num_consts: int,
                           name: str) -> list[HloInstruction]:
    return hlo.call_jaxpr(ctx, jaxpr, args, hlo.computation_name(name))


custom_vjp_call_p.abstract_eval = _jaxpr_out_avals
custom_vjp_call_p.reference = _custom_vjp_call_reference
custom_vjp_call_p.jvp = _custom_vjp_call_jvp
custom_vjp_call_p.batch = _custom_vjp_call_batch
custom_vjp_call_p.print_params = _custom_vjp_print_params
custom_vjp_call_p.lower = _custom_vjp_call_lower


# --------------------------------------------------------------------------- custom_lin

custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_abstract_eval(*avals: ShapedArray, num_res: int, bwd: Callable,
                              out_avals: tuple) -> list:
    return list(out_avals)


def _custom_lin_reference(*args: Any, num_res: int, bwd: Callable, out_avals: tuple) -> list:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function. "
                    "Use reverse mode (grad, vjp) or define a custom_jvp rule instead.")


def _custom_lin_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                      num_res: int, bwd: Callable, out_avals: tuple) -> tuple[list, list]:
    # Backward passes under vmap call bwd directly; batching custom_lin itself means its
    # tangents are being computed forwards (jacfwd of a custom_vjp function).
    return _custom_lin_reference(num_res=num_res, bwd=bwd, out_avals=out_avals), []


def _custom_lin_transpose(cts: Sequence[Any], *args: Any, num_res: int, bwd: Callable,
                          out_avals: tuple) -> list:
    residuals = args[:num_res]
    if any(is_undefined(r) for r in residuals):
        raise TypeError("custom_lin: residuals must be known in the backward pass")
    # Symbolic zero cotangents go to bwd as they are; it instantiates them unless the
    # user's rule asked for symbolic zeros.
    cts_in = bwd(residuals, list(cts))
    return [None] * num_res + list(cts_in)


_custom_lin_transpose.takes_symbolic_zeros = True  # type: ignore[attr-defined]


def _custom_lin_lower(ctx: LoweringContext, *args: HloInstruction, num_res: int,
                      bwd: Callable, out_avals: tuple) -> list[HloInstruction]:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function. "
                    "(custom_lin, which stands for its backward pass, reached lowering: only "
                    "transposition (grad, vjp) runs it.) Use reverse mode, or define a "
                    "custom_jvp rule instead.")


custom_lin_p.abstract_eval = _custom_lin_abstract_eval
custom_lin_p.reference = _custom_lin_reference
custom_lin_p.transpose = _custom_lin_transpose
custom_lin_p.batch = _custom_lin_batch
custom_lin_p.lower = _custom_lin_lower
