"""checkify rules for the primitives that carry jaxprs: jit, checkpoint, cond, while, scan
and the custom-derivative calls.

Each rule checkifies the inner jaxpr into one that takes the error's leaves as extra inputs
and returns them as extra outputs, and binds the same primitive on it. Control flow needs
the same error structure in as out (a loop carries it, the branches of a cond must agree),
so the error first gets a placeholder entry for every kind the inner jaxprs can report.
As in JAX, a custom derivative rule is not checked: under differentiation the error passes
through the rule unchanged.
"""
from __future__ import annotations

from typing import Any

from jaxlite.core.avals import get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.experimental.checkify._error_value import Error
from jaxlite.experimental.checkify._interpreter import (RULES, checkified_jaxpr,
                                                        checkify_closed, error_leaves,
                                                        trace_threaded, with_effects_of)
from jaxlite.interpreters.ad import Zero, tangent_aval
from jaxlite.interpreters.staging import hoist_tracer_consts
from jaxlite.lax.control_flow import cond_p
from jaxlite.lax.higher_order import checkpoint_p, custom_jvp_call_p, custom_vjp_call_p, jit_p
from jaxlite.lax.loops import while_p
from jaxlite.lax.scan import scan_p
from jaxlite.tree_util import tree_unflatten


def _without_tracer_consts(closed: ClosedJaxpr) -> ClosedJaxpr:
    # The inner jaxprs close over nothing traced (the interpreter's inputs arrive as
    # arguments), so a traced constant here would be a bug, not a case to handle.
    closed, hoisted = hoist_tracer_consts(closed)
    if hoisted:
        raise NotImplementedError("checkify: a checkified inner jaxpr closes over a traced "
                                  "value; please report this as a jaxlite bug.")
    return closed


def _call_rule(primitive: Primitive, error: Error, enabled_errors: frozenset, *args: Any,
               jaxpr: ClosedJaxpr, **params: Any) -> tuple[Error, list]:
    """jit and checkpoint: one call of the checkified jaxpr."""
    checked, out_tree, _ = checkified_jaxpr(jaxpr, enabled_errors, error, args)
    outs = primitive.bind(*error_leaves(error), *args,
                          jaxpr=_without_tracer_consts(checked), **params)
    return tree_unflatten(out_tree, outs)


def _cond_rule(primitive: Primitive, error: Error, enabled_errors: frozenset, index: Any,
               *operands: Any, branches: tuple) -> tuple[Error, list]:
    error = with_effects_of(branches, enabled_errors, error, operands)
    traced = [checkified_jaxpr(b, enabled_errors, error, operands) for b in branches]
    outs = primitive.bind(index, *error_leaves(error), *operands,
                          branches=tuple(_without_tracer_consts(t[0]) for t in traced))
    # Each branch numbers its own checks: the result knows the messages of all of them.
    error_out, values = tree_unflatten(traced[0][1], outs)
    metadata = dict(error_out._metadata)
    for _, tree, _ in traced[1:]:
        metadata.update(tree_unflatten(tree, outs)[0]._metadata)
    return error_out._replace(_metadata=metadata), values


def _scan_rule(primitive: Primitive, error: Error, enabled_errors: frozenset, *args: Any,
               jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, **params: Any
               ) -> tuple[Error, list]:
    consts, carry, xs = (args[:num_consts], args[num_consts:num_consts + num_carry],
                         args[num_consts + num_carry:])
    # The body sees one slice of each xs: trace it on stand-ins of that type.
    x_slices = [get_aval(x).update(shape=get_aval(x).shape[1:]) for x in xs]
    body_args = [*consts, *carry, *x_slices]
    error = with_effects_of([jaxpr], enabled_errors, error, body_args, num_consts)
    body, out_tree, _ = checkified_jaxpr(jaxpr, enabled_errors, error, body_args, num_consts)
    leaves = error_leaves(error)
    outs = primitive.bind(*consts, *leaves, *carry, *xs, jaxpr=_without_tracer_consts(body),
                          num_consts=num_consts, num_carry=num_carry + len(leaves), **params)
    return tree_unflatten(out_tree, outs)


def _while_rule(primitive: Primitive, error: Error, enabled_errors: frozenset, *args: Any,
                cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                body_nconsts: int) -> tuple[Error, list]:
    if getattr(cond_jaxpr, "batched_predicate", False):
        # vmap gave the loop a batched predicate: the body also runs for members that have
        # finished, where a check could fail that the program never really evaluates.
        raise ValueError("Checkify does not support batched while-loops "
                         "(checkify-of-vmap-of-while). \nHint: if possible, move the vmap "
                         "to the outer level to get vmap-of-checkify-of-while.")
    split = cond_nconsts + body_nconsts
    cond_consts, body_consts, carry = args[:cond_nconsts], args[cond_nconsts:split], \
        args[split:]
    # The predicate's first evaluation here; then each step runs the body and the predicate
    # on its result, so that every evaluation of the predicate is checked once.
    error, _ = checkify_closed(cond_jaxpr, enabled_errors, error, [*cond_consts, *carry])

    def step(err: Error, values: list) -> tuple[Error, list]:
        c_consts, b_consts, old = values[:cond_nconsts], values[cond_nconsts:split], \
            values[split:]
        err, new = checkify_closed(body_jaxpr, enabled_errors, err, [*b_consts, *old])
        err, _ = checkify_closed(cond_jaxpr, enabled_errors, err, [*c_consts, *new])
        return err, new

    def predicate(err: Error, values: list) -> tuple[Error, list]:
        return checkify_closed(cond_jaxpr, enabled_errors, err, values)
    step_args = [*cond_consts, *body_consts, *carry]
    error = error._add_placeholder_effects(trace_threaded(step, error, step_args, split)[2])
    body, out_tree, _ = trace_threaded(step, error, step_args, split)
    cond, _, _ = trace_threaded(predicate, error, [*cond_consts, *carry], cond_nconsts,
                                keep_error=False)
    outs = primitive.bind(*cond_consts, *cond_consts, *body_consts, *error_leaves(error),
                          *carry, cond_jaxpr=_without_tracer_consts(cond),
                          body_jaxpr=_without_tracer_consts(body), cond_nconsts=cond_nconsts,
                          body_nconsts=split)
    return tree_unflatten(out_tree, outs)


def _float0_zeros(values: list) -> list:
    return [Zero(tangent_aval(get_aval(v))) for v in values]


def _custom_jvp_rule(primitive: Primitive, error: Error, enabled_errors: frozenset,
                     *args: Any, jaxpr: ClosedJaxpr, jvp: Any, num_consts: int,
                     **params: Any) -> tuple[Error, list]:
    # The error goes in after the constants, so that the rule's arguments stay last.
    error = with_effects_of([jaxpr], enabled_errors, error, args, num_consts)
    checked, out_tree, _ = checkified_jaxpr(jaxpr, enabled_errors, error, args, num_consts)
    n = len(error_leaves(error))

    def jvp_passing_error(primals: list, tangents: list) -> tuple[list, list]:
        outs, tangents_out = jvp(primals[n:], tangents[n:])
        return [*primals[:n], *outs], [*_float0_zeros(primals[:n]), *tangents_out]
    jvp_passing_error.__name__ = getattr(jvp, "__name__", "jvp")
    consts, rest = args[:num_consts], args[num_consts:]
    outs = primitive.bind(*consts, *error_leaves(error), *rest,
                          jaxpr=_without_tracer_consts(checked), jvp=jvp_passing_error,
                          num_consts=num_consts, **params)
    return tree_unflatten(out_tree, outs)


def _custom_vjp_rule(primitive: Primitive, error: Error, enabled_errors: frozenset,
                     *args: Any, jaxpr: ClosedJaxpr, fwd: Any, bwd: Any, num_consts: int,
                     **params: Any) -> tuple[Error, list]:
    error = with_effects_of([jaxpr], enabled_errors, error, args, num_consts)
    checked, out_tree, _ = checkified_jaxpr(jaxpr, enabled_errors, error, args, num_consts)
    leaves = error_leaves(error)
    n = len(leaves)

    def fwd_passing_error(*xs: Any, perturbed: list) -> tuple[list, list]:
        outs, residuals = fwd(*xs[n:], perturbed=list(perturbed)[n:])
        return [*xs[:n], *outs], residuals

    def bwd_skipping_error(residuals: Any, cts: list) -> list:
        return [*_float0_zeros(leaves), *bwd(residuals, list(cts)[n:])]
    fwd_passing_error.__name__ = getattr(fwd, "__name__", "fwd")
    bwd_skipping_error.__name__ = getattr(bwd, "__name__", "bwd")
    consts, rest = args[:num_consts], args[num_consts:]
    outs = primitive.bind(*consts, *leaves, *rest, jaxpr=_without_tracer_consts(checked),
                          fwd=fwd_passing_error, bwd=bwd_skipping_error,
                          num_consts=num_consts, **params)
    return tree_unflatten(out_tree, outs)


RULES[jit_p] = _call_rule
RULES[checkpoint_p] = _call_rule
RULES[cond_p] = _cond_rule
RULES[scan_p] = _scan_rule
RULES[while_p] = _while_rule
RULES[custom_jvp_call_p] = _custom_jvp_rule
RULES[custom_vjp_call_p] = _custom_vjp_rule
