"""The checkify interpreter: runs a jaxpr equation by equation, threading an `Error`.

Each equation is bound again under the current trace, as `eval_jaxpr` would, except where
its primitive has a checkify rule: `check` merges its error into the threaded one (the
discharge), the automatic checks add a test after the primitives that can fail, and the
primitives that carry jaxprs (jit, cond, while, scan, ...) get jaxprs that thread the
error themselves. Rules take `(error, enabled_errors, *args, **params)` and return
`(error, outputs)`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlite.core.avals import get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from jaxlite.core.primitive import Primitive, registry
from jaxlite.experimental.checkify._error_value import Error, check_p, update_error
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.tree_util import tree_flatten, tree_unflatten

Rule = Callable[..., "tuple[Error, Any]"]

# Rules for particular primitive objects (checkify's own and the higher-order ones).
RULES: dict[Primitive, Rule] = {}
# Rules for jaxlite's lax primitives, by name: the automatic checks name JAX's primitives,
# and a library's own primitive that happens to share a name must not match.
RULES_BY_NAME: dict[str, Rule] = {}


def rule_for(primitive: Primitive) -> Rule | None:
    rule = RULES.get(primitive)
    if rule is None and registry.get(primitive.name) is primitive:
        rule = RULES_BY_NAME.get(primitive.name)
    return rule


def checkify_jaxpr_flat(jaxpr: Jaxpr, consts: Sequence[Any], enabled_errors: frozenset,
                        error: Error, args: Sequence[Any]) -> tuple[Error, list[Any]]:
    """Evaluate `jaxpr` under the current trace, returning the threaded error and the
    outputs."""
    env: dict[Any, Any] = {}

    def read(atom: Any) -> Any:
        return atom.value if isinstance(atom, Literal) else env[atom]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        args_in = [read(v) for v in eqn.invars]
        rule = rule_for(eqn.primitive)
        if rule is None:
            outs = eqn.primitive.bind(*args_in, **eqn.params)
        else:
            error, outs = rule(eqn.primitive, error, enabled_errors, *args_in, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        env.update(zip(eqn.outvars, outs))
    return error, [read(v) for v in jaxpr.outvars]


def checkify_closed(closed: ClosedJaxpr, enabled_errors: frozenset, error: Error,
                    args: Sequence[Any]) -> tuple[Error, list[Any]]:
    return checkify_jaxpr_flat(closed.jaxpr, closed.consts, enabled_errors, error, args)


def trace_threaded(fun: Callable[[Error, list], "tuple[Error, list]"], error: Error,
                   args: Sequence[Any], error_at: int = 0, keep_error: bool = True
                   ) -> tuple[ClosedJaxpr, Any, set]:
    """`fun(error, values) -> (error, outputs)` traced into a jaxpr.

    The jaxpr's inputs are `args` (values or avals) with the error's leaves inserted at
    position `error_at`; its outputs are the error's leaves (unless `keep_error` is False)
    followed by the outputs. Returns the jaxpr, the treedef of `(error, outputs)` and the
    kinds of error the result can hold.
    """
    leaves, error_tree = tree_flatten(error)
    n = len(leaves)
    found: dict[str, Any] = {}

    def threaded(*flat: Any) -> list[Any]:
        err = tree_unflatten(error_tree, flat[error_at:error_at + n])
        err, outs = fun(err, [*flat[:error_at], *flat[error_at + n:]])
        out_leaves, found["tree"] = tree_flatten((err, outs))
        found["effects"] = set(err._pred)
        return out_leaves if keep_error else list(outs)
    values = [*args[:error_at], *leaves, *args[error_at:]]
    jaxpr = trace_to_jaxpr(threaded, [get_aval(v) for v in values])
    return jaxpr, found["tree"], found["effects"]


def checkified_jaxpr(closed: ClosedJaxpr, enabled_errors: frozenset, error: Error,
                     args: Sequence[Any], error_at: int = 0
                     ) -> tuple[ClosedJaxpr, Any, set]:
    """`closed` as a jaxpr that threads an error like `error` (see `trace_threaded`)."""
    return trace_threaded(
        lambda err, values: checkify_closed(closed, enabled_errors, err, values),
        error, args, error_at)


def with_effects_of(closed_jaxprs: Sequence[ClosedJaxpr], enabled_errors: frozenset,
                    error: Error, args: Sequence[Any], error_at: int = 0) -> Error:
    """`error` with a (never failing) entry for every kind the jaxprs can report, so that
    it has the same structure going into control flow as coming out."""
    effects: set = set()
    for closed in closed_jaxprs:
        effects |= checkified_jaxpr(closed, enabled_errors, error, args, error_at)[2]
    return error._add_placeholder_effects(effects)


def error_leaves(error: Error) -> list[Any]:
    return tree_flatten(error)[0]


def _discharge_check(primitive: Primitive, error: Error, enabled_errors: frozenset,
                     *args: Any, err_tree: Any, debug: bool) -> tuple[Error, list]:
    # The enabled kinds of the check's error join the threaded error; as in JAX, the others
    # are dropped rather than raised.
    new = tree_unflatten(err_tree, args)
    for effect in new._pred:
        if effect.error_type in enabled_errors:
            error = update_error(error, new._pred[effect], new._code[effect], {},
                                 new._payload[effect], effect)
    return error._replace(_metadata={**new._metadata, **error._metadata}), []


RULES[check_p] = _discharge_check
