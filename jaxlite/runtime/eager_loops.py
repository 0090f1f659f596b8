"""Loops called outside `jit` run as one compiled call (mirrors JAX, whose eager
`apply_primitive` compiles every primitive, `scan` and `while` included).

The `scan` and `while` primitives' reference rules evaluate the body jaxpr once per
iteration, op by op: a 10,000-step loop then costs 10,000 Python passes over the body.
Importing this module sets their eager `impl` to a compiled call of one equation, the loop
itself, cached by the primitive, its parameters (the body jaxprs by identity: `lax.scan`
and `lax.while_loop` trace a function once per signature, so a loop called again with the
same function carries the same jaxprs), the arguments' types and the x64 flag. At most
`MAX_LOOPS` loops are remembered, least recently used dropped.

Compiling costs far more than a short loop run op by op (a loop built anew on every call,
as `check_grads` or a library's closures make, would compile every time), so a loop is
compiled once its calls would have dispatched about as many primitives op by op as
compiling it costs (`COMPILE_WORTH` plus `COMPILE_PER_EQUATION` per equation): a scan whose
length times the equations of its body reaches that, or a while loop still running after
that many equations' worth of iterations (it then continues, compiled, from the carry it
reached), compile on their first call; shorter loops run op by op until their calls with
the same jaxprs and types add up to that much work. The
results agree within the dtype's rounding (compiled code may contract a multiply and an
add into one fused operation), as `jit` and eager results agree.

The loop runs as before, with the reference rule, where compiling could change what the
user sees: bodies with host callbacks, debug prints or checks (their calls and exceptions
stay in Python, in order), under `jax_debug_nans` / `jax_debug_infs` (which name the
operation that made a NaN), under `jax_disable_jit`, and for any loop the compiler cannot
take (a primitive without a lowering).
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from jaxlite.backends.registry import get_backend
from jaxlite.config import config
from jaxlite.core.avals import get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import EVAL_HOOKS
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.lax._control_flow_util import nested_equations
from jaxlite.lax.loops import while_p
from jaxlite.lax.scan import scan_p
from jaxlite.runtime import dispatch, eager
from jaxlite.runtime.call_cache import LRUCache

__all__ = ["COMPILE_PER_EQUATION", "COMPILE_WORTH", "MAX_LOOPS", "LOOPS", "NESTED_WHILE_GUESS",
           "compiled_loop_impl"]

logger = logging.getLogger("jaxlite")

MAX_LOOPS = 256
# A loop is compiled once running it op by op would have dispatched about as many
# primitives over its calls as compiling it costs: COMPILE_WORTH, plus
# COMPILE_PER_EQUATION per equation of its jaxprs (a dispatch takes ~15 us; compiling,
# ~50 ms plus ~4 ms per equation). A nested while loop is guessed to run
# NESTED_WHILE_GUESS iterations per iteration of the outer loop.
COMPILE_WORTH = 4096
COMPILE_PER_EQUATION = 256
NESTED_WHILE_GUESS = 64
# (primitive, parameters, argument types, x64) -> (the one-equation jaxpr, its compiled
# call); the equations run op by op so far, while that is below COMPILE_WORTH; or None
# where the loop runs with its reference rule.
LOOPS: LRUCache = LRUCache(MAX_LOOPS)

# Primitives whose eager behaviour (Python calls, in order, with Python's exceptions) a
# compiled loop would change.
_KEPT_IN_PYTHON = frozenset({"pure_callback", "io_callback", "debug_callback", "check"})


def _needs_python(params: dict[str, Any]) -> bool:
    """Whether a jaxpr among `params` (or nested in one) calls back into Python."""
    return any(eqn.primitive.name in _KEPT_IN_PYTHON
               for eqn in nested_equations(*params.values()))


def _runs_in_python() -> bool:
    return bool(config.read("jax_disable_jit") or config.read("jax_debug_nans")
                or config.read("jax_debug_infs"))


def _compile(primitive: Primitive, params: dict[str, Any], avals: tuple
             ) -> tuple[ClosedJaxpr, dispatch.CompiledCall] | None:
    if _needs_python(params):
        return None
    closed = trace_to_jaxpr(lambda *xs: primitive.bind(*xs, **params), list(avals))
    try:
        compiled = dispatch.compiled_call(closed, primitive.name, get_backend())
    except Exception as error:  # noqa: BLE001  (the reference rule gives the answer)
        logger.debug("eager %s loop not compiled (%s: %s); running it op by op",
                     primitive.name, type(error).__name__, error)
        return None
    return closed, compiled


def _costs(params: dict[str, Any]) -> tuple[int, int]:
    """(equations in the loop's jaxprs, nested ones included: what compiling costs, in
    equations; equations one iteration dispatches when run op by op: a nested scan's body
    counts `length` times, a nested while's `NESTED_WHILE_GUESS` times)."""
    def walk(values: Sequence[Any]) -> tuple[int, int]:
        static = dynamic = 0
        for value in values:
            if isinstance(value, (tuple, list)):
                inner = walk(value)
            elif isinstance(value, (ClosedJaxpr, Jaxpr)):
                inner = (0, 0)
                for eqn in (value.jaxpr if isinstance(value, ClosedJaxpr) else value).eqns:
                    nested = walk(list(eqn.params.values()))
                    times = (eqn.params["length"] if eqn.primitive is scan_p else
                             NESTED_WHILE_GUESS if eqn.primitive is while_p else 1)
                    inner = (inner[0] + 1 + nested[0], inner[1] + 1 + times * nested[1])
            else:
                continue
            static, dynamic = static + inner[0], dynamic + inner[1]
        return static, dynamic
    static, dynamic = walk(list(params.values()))
    return max(static, 1), max(dynamic, 1)


def _reference(primitive: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    return EVAL_HOOKS["apply_primitive"](primitive, args, params)


def _while_start(args: Sequence[Any], params: dict[str, Any], iterations: int
                 ) -> tuple[list[Any], int, bool]:
    """At most `iterations` iterations of a `while` op by op, as its reference rule runs
    them: the carry reached, the iterations run and whether the loop ended."""
    cond, body = params["cond_jaxpr"], params["body_jaxpr"]
    num_cond, split = params["cond_nconsts"], params["cond_nconsts"] + params["body_nconsts"]
    values = [eager.to_numpy(a, get_aval(a)) for a in args]
    cond_consts, body_consts, carry = values[:num_cond], values[num_cond:split], values[split:]
    for done in range(iterations):
        if not bool(np.asarray(eval_jaxpr(cond.jaxpr, cond.consts, *cond_consts, *carry)[0])):
            return carry, done, True
        carry = eval_jaxpr(body.jaxpr, body.consts, *body_consts, *carry)
    return carry, iterations, False


def compiled_loop_impl(primitive: Primitive) -> Callable[..., Any]:
    """The eager `impl` of a loop primitive: one compiled call per loop (see above)."""
    def impl(*args: Any, **params: Any) -> Any:
        if _runs_in_python():
            return _reference(primitive, args, params)
        avals = tuple(get_aval(a) for a in args)
        key: Hashable = (primitive, tuple(params.items()), avals,
                         bool(config.read("jax_enable_x64")))
        try:
            entry = LOOPS.lookup(key)
        except TypeError:  # a parameter that cannot be a key
            return _reference(primitive, args, params)
        if type(entry) is tuple:
            return entry[1](args)
        if entry is None and key in LOOPS:  # runs in Python
            return _reference(primitive, args, params)
        if entry is None and _needs_python(params):
            LOOPS[key] = None
            return _reference(primitive, args, params)
        static, per_iteration = _costs(params)
        work, worth = entry or 0, COMPILE_WORTH + COMPILE_PER_EQUATION * static
        if primitive is while_p:
            budget = max((worth - work) // per_iteration, 1)
            carry, iterations, done = _while_start(args, params, budget)
            if done:
                LOOPS[key] = work + iterations * per_iteration
                out_avals = primitive.abstract_eval(*avals, **params)
                return [eager.wrap_output(c, a) for c, a in zip(carry, out_avals)]
            args = (*args[:len(args) - len(carry)], *carry)
        elif work + params["length"] * per_iteration < worth:
            LOOPS[key] = work + params["length"] * per_iteration
            return _reference(primitive, args, params)
        entry = LOOPS[key] = _compile(primitive, params, avals)
        if entry is None:
            return _reference(primitive, args, params)
        return entry[1](args)
    return impl


scan_p.impl = compiled_loop_impl(scan_p)
while_p.impl = compiled_loop_impl(while_p)
