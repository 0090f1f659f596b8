"""Primitives that carry a jaxpr: `jit`, `checkpoint` and the custom-derivative calls.

Each is declared once with all its rules, like any other primitive; their rules transform
the inner jaxpr (with `jvp_jaxpr` and `batch_jaxpr`) or evaluate it under the current trace.
Mirrors JAX's `pjit` (printed as `jit`), `remat` (printed here as `checkpoint`),
`custom_jvp_call`, `custom_vjp_call` and the linear `custom_lin` that stands for a custom
VJP's backward function inside a linear jaxpr.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import current_trace
from jaxlite.interpreters.ad import (Zero, instantiate, jvp_flat, jvp_jaxpr, tangent_aval)
from jaxlite.interpreters.batching import batch_at_front, batch_jaxpr, vmap_flat
from jaxlite.interpreters.staging import StagingTrace, trace_to_jaxpr
from jaxlite.interpreters.transpose import backward_pass, is_undefined

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


# ----------------------------------------------------------------------------------- jit

jit_p = Primitive("jit", multiple_results=True)


def _jit_impl(*args: Any, jaxpr: ClosedJaxpr, name: str) -> list[Any]:
    return _eval_closed(jaxpr, *args)


def _jit_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
             name: str) -> tuple[list, list]:
    if _is_partial_eval():
        # Under linearize the call is inlined, so that its primal part stays known.
        return jvp_flat(lambda *a: _eval_closed(jaxpr, *a), primals, tangents)
    nonzero = [not isinstance(t, Zero) for t in tangents]
    inner = jvp_jaxpr(jaxpr, nonzero)
    given = [t for t in tangents if not isinstance(t, Zero)]
    outs = jit_p.bind(*primals, *given, jaxpr=inner, name=f"jvp({name})")
    num_out = len(jaxpr.out_avals)
    return outs[:num_out], outs[num_out:]


def _jit_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, name: str) -> list:
    return backward_pass(jaxpr.jaxpr, jaxpr.consts, args, cts)


def _jit_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
               jaxpr: ClosedJaxpr, name: str) -> tuple[list, list]:
    inner = batch_jaxpr(jaxpr, axis_size, args, dims)
    outs = jit_p.bind(*args, jaxpr=inner, name=name)
    return outs, [0] * len(outs)


jit_p.abstract_eval = _jaxpr_out_avals
jit_p.impl = _jit_impl
jit_p.reference = _jit_impl
jit_p.jvp = _jit_jvp
jit_p.transpose = _jit_transpose
jit_p.batch = _jit_batch


# ---------------------------------------------------------------------------- checkpoint

checkpoint_p = Primitive("checkpoint", multiple_results=True)


def _checkpoint_impl(*args: Any, jaxpr: ClosedJaxpr, prevent_cse: bool,
                     policy: Any) -> list[Any]:
    return _eval_closed(jaxpr, *args)


def _checkpoint_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
                    prevent_cse: bool, policy: Any) -> tuple[list, list]:
    params = dict(prevent_cse=prevent_cse, policy=policy)
    primal_out = checkpoint_p.bind(*primals, jaxpr=jaxpr, **params)
    # The tangent jaxpr takes the primal inputs, not the intermediates: under linearize
    # they are the only residuals, and the transpose recomputes the rest.
    nonzero = [not isinstance(t, Zero) for t in tangents]
    full = jvp_jaxpr(jaxpr, nonzero)
    num_out = len(jaxpr.out_avals)
    tangent_only = _select_outputs(full, range(num_out, 2 * num_out))
    given = [t for t in tangents if not isinstance(t, Zero)]
    tangent_out = checkpoint_p.bind(*primals, *given, jaxpr=tangent_only, **params)
    return primal_out, tangent_out


def _select_outputs(closed: ClosedJaxpr, keep: Sequence[int]) -> ClosedJaxpr:
    keep = list(keep)
    return trace_to_jaxpr(lambda *a: [_eval_closed(closed, *a)[i] for i in keep],
                          closed.in_avals)


def _checkpoint_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr,
                          prevent_cse: bool, policy: Any) -> list:
    return backward_pass(jaxpr.jaxpr, jaxpr.consts, args, cts)


def _checkpoint_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                      jaxpr: ClosedJaxpr, prevent_cse: bool, policy: Any) -> tuple[list, list]:
    inner = batch_jaxpr(jaxpr, axis_size, args, dims)
    outs = checkpoint_p.bind(*args, jaxpr=inner, prevent_cse=prevent_cse, policy=policy)
    return outs, [0] * len(outs)


checkpoint_p.abstract_eval = _jaxpr_out_avals
checkpoint_p.impl = _checkpoint_impl
checkpoint_p.reference = _checkpoint_impl
checkpoint_p.jvp = _checkpoint_jvp
checkpoint_p.transpose = _checkpoint_transpose
checkpoint_p.batch = _checkpoint_batch


# ---------------------------------------------------------------------- custom_jvp_call

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


def _custom_jvp_call_impl(*args: Any, jaxpr: ClosedJaxpr, jvp: Callable, num_consts: int,
                          symbolic_zeros: bool) -> list[Any]:
    return _eval_closed(jaxpr, *args)


def _custom_jvp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                         jaxpr: ClosedJaxpr, jvp: Callable, num_consts: int,
                         symbolic_zeros: bool) -> tuple[list, list]:
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise TypeError(
            "A custom_jvp function closes over a value that is being differentiated; the "
            "custom rule cannot see its tangent. Pass the value as an argument instead.")
    args = primals[num_consts:]
    arg_tangents = [instantiate(t) for t in tangents[num_consts:]]
    primal_out, tangent_out = jvp(args, arg_tangents)
    return list(primal_out), list(tangent_out)


def _custom_jvp_call_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                           jaxpr: ClosedJaxpr, jvp: Callable, num_consts: int,
                           symbolic_zeros: bool) -> tuple[list, list]:
    args = batch_at_front(args, dims, axis_size)
    inner = batch_jaxpr(jaxpr, axis_size, args, [0] * len(args))
    num_out = len(jaxpr.out_avals)

    def batched_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
        def flat(*a: Any) -> list[Any]:
            primal_out, tangent_out = jvp(a[:len(primals)], a[len(primals):])
            return list(primal_out) + list(tangent_out)
        n_in = len(primals) + len(tangents)
        outs = vmap_flat(flat, axis_size, list(primals) + list(tangents), [0] * n_in, 0)
        return outs[:num_out], outs[num_out:]
    outs = custom_jvp_call_p.bind(*args, jaxpr=inner, jvp=batched_jvp, num_consts=num_consts,
                                  symbolic_zeros=symbolic_zeros)
    return outs, [0] * len(outs)


custom_jvp_call_p.abstract_eval = _jaxpr_out_avals
custom_jvp_call_p.impl = _custom_jvp_call_impl
custom_jvp_call_p.reference = _custom_jvp_call_impl
custom_jvp_call_p.jvp = _custom_jvp_call_jvp
custom_jvp_call_p.batch = _custom_jvp_call_batch


# ---------------------------------------------------------------------- custom_vjp_call

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)


def _custom_vjp_call_impl(*args: Any, jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable,
                          num_consts: int) -> list[Any]:
    return _eval_closed(jaxpr, *args)


def _custom_vjp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                         jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable,
                         num_consts: int) -> tuple[list, list]:
    if not _is_partial_eval():
        raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function. "
                        "Use reverse mode (grad, vjp) or define a custom_jvp rule instead.")
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise TypeError(
            "A custom_vjp function closes over a value that is being differentiated; the "
            "custom rule cannot see its cotangent. Pass the value as an argument instead.")
    args = primals[num_consts:]
    outs, residuals = fwd(*args)
    arg_tangents = [instantiate(t) for t in tangents[num_consts:]]
    out_avals = tuple(tangent_aval(get_aval(o)) for o in outs)
    tangent_out = custom_lin_p.bind(*residuals, *arg_tangents, num_res=len(residuals),
                                    bwd=bwd, out_avals=out_avals)
    return list(outs), tangent_out


def _custom_vjp_call_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                           jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable,
                           num_consts: int) -> tuple[list, list]:
    args = batch_at_front(args, dims, axis_size)
    inner = batch_jaxpr(jaxpr, axis_size, args, [0] * len(args))

    def batched_fwd(*xs: Any) -> tuple[list, list]:
        num_outs: list[int] = []

        def flat(*a: Any) -> list[Any]:
            outs, res = fwd(*a)
            num_outs.append(len(outs))
            return list(outs) + list(res)
        results = vmap_flat(flat, axis_size, xs, [0] * len(xs), 0)
        return results[:num_outs[0]], results[num_outs[0]:]

    def batched_bwd(residuals: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        n_res = len(residuals)
        flat = lambda *a: list(bwd(a[:n_res], a[n_res:]))  # noqa: E731
        return vmap_flat(flat, axis_size, list(residuals) + list(cts),
                         [0] * (n_res + len(cts)), 0)
    outs = custom_vjp_call_p.bind(*args, jaxpr=inner, fwd=batched_fwd, bwd=batched_bwd,
                                  num_consts=num_consts)
    return outs, [0] * len(outs)


custom_vjp_call_p.abstract_eval = _jaxpr_out_avals
custom_vjp_call_p.impl = _custom_vjp_call_impl
custom_vjp_call_p.reference = _custom_vjp_call_impl
custom_vjp_call_p.jvp = _custom_vjp_call_jvp
custom_vjp_call_p.batch = _custom_vjp_call_batch


# --------------------------------------------------------------------------- custom_lin

custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_abstract_eval(*avals: ShapedArray, num_res: int, bwd: Callable,
                              out_avals: tuple) -> list:
    return list(out_avals)


def _custom_lin_impl(*args: Any, num_res: int, bwd: Callable, out_avals: tuple) -> list:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function. "
                    "Use reverse mode (grad, vjp) or define a custom_jvp rule instead.")


def _custom_lin_transpose(cts: Sequence[Any], *args: Any, num_res: int, bwd: Callable,
                          out_avals: tuple) -> list:
    residuals = args[:num_res]
    if any(is_undefined(r) for r in residuals):
        raise TypeError("custom_lin: residuals must be known in the backward pass")
    cts_in = bwd(residuals, [instantiate(ct) for ct in cts])
    return [None] * num_res + list(cts_in)


custom_lin_p.abstract_eval = _custom_lin_abstract_eval
custom_lin_p.impl = _custom_lin_impl
custom_lin_p.reference = _custom_lin_impl
custom_lin_p.transpose = _custom_lin_transpose
