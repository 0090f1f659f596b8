"""Dead-code elimination on jaxprs (mirrors JAX's `pe.dce_jaxpr`).

An equation stays when one of its outputs is needed, or when it has side effects (a
callback); what it reads becomes needed in turn. A primitive may refine this with a rule in
`dce_rules`: `rule(used_outputs, eqn) -> (used_inputs, new_eqn or None)`, used for calls
whose inner jaxpr can drop outputs too.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var

DceRule = Callable[[list, JaxprEqn], "tuple[list[bool], JaxprEqn | None]"]
dce_rules: dict[Any, DceRule] = {}

# Primitives whose equations run for their effects, known by name (jaxlite's callbacks).
_EFFECTFUL_NAMES = frozenset({"io_callback", "debug_callback"})


def has_effects(eqn: JaxprEqn) -> bool:
    """Whether the equation must run even when nothing reads its outputs."""
    return bool(eqn.effects) or eqn.primitive.name in _EFFECTFUL_NAMES or \
        bool(getattr(eqn.primitive, "effectful", False))


def _as_list(flags: bool | Sequence[bool], n: int) -> list[bool]:
    return [flags] * n if isinstance(flags, bool) else list(flags)


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: bool | Sequence[bool],
              instantiate: bool | Sequence[bool] = False) -> tuple[Jaxpr, list[bool]]:
    """Drop the outputs not in `used_outputs` and everything only they need.

    Returns the new jaxpr (its inputs are those marked used, plus those `instantiate`
    keeps) and, per original input, whether it is still an input.
    """
    new, used_consts, used_inputs = dce_jaxpr_consts(
        jaxpr, used_outputs, [True] * len(jaxpr.constvars) + _as_list(instantiate,
                                                                        len(jaxpr.invars)))
    return new, used_inputs


def dce_jaxpr_consts(jaxpr: Jaxpr, used_outputs: Sequence[bool],
                     instantiate: bool | Sequence[bool] = False
                     ) -> tuple[Jaxpr, list[bool], list[bool]]:
    """`dce_jaxpr` that also drops unused constant variables; `instantiate` covers the
    constvars followed by the invars. Returns (jaxpr, used constvars, used invars)."""
    used_outputs = _as_list(used_outputs, len(jaxpr.outvars))
    keep = _as_list(instantiate, len(jaxpr.constvars) + len(jaxpr.invars))
    needed: set[Var] = {v for v, u in zip(jaxpr.outvars, used_outputs)
                        if u and isinstance(v, Var)}
    kept_eqns: list[JaxprEqn] = []
    for eqn in reversed(jaxpr.eqns):
        used = [v in needed for v in eqn.outvars]
        rule = dce_rules.get(eqn.primitive)
        if rule is not None and (any(used) or has_effects(eqn)):
            used_in, new_eqn = rule(used, eqn)
            if new_eqn is not None:
                kept_eqns.append(new_eqn)
                needed.update(v for v, u in zip(eqn.invars, used_in)
                              if u and isinstance(v, Var))
            continue
        if any(used) or has_effects(eqn):
            kept_eqns.append(eqn)
            needed.update(v for v in eqn.invars if isinstance(v, Var))
    n_const = len(jaxpr.constvars)
    used_consts = [v in needed or k for v, k in zip(jaxpr.constvars, keep[:n_const])]
    used_inputs = [v in needed or k for v, k in zip(jaxpr.invars, keep[n_const:])]
    new = jaxpr.replace(
        constvars=[v for v, u in zip(jaxpr.constvars, used_consts) if u],
        invars=[v for v, u in zip(jaxpr.invars, used_inputs) if u],
        outvars=[v for v, u in zip(jaxpr.outvars, used_outputs) if u],
        eqns=kept_eqns[::-1])
    return new, used_consts, used_inputs


def dce_closed_jaxpr(closed: ClosedJaxpr, used_outputs: Sequence[bool],
                     instantiate: bool | Sequence[bool] = False
                     ) -> tuple[ClosedJaxpr, list[bool]]:
    """`dce_jaxpr` on a closed jaxpr, dropping the constants nothing reads."""
    new, used_consts, used_inputs = dce_jaxpr_consts(
        closed.jaxpr, used_outputs,
        [False] * len(closed.jaxpr.constvars) + _as_list(instantiate, len(closed.jaxpr.invars)))
    consts = [c for c, u in zip(closed.consts, used_consts) if u]
    return ClosedJaxpr(new, consts), used_inputs


def _call_jaxpr_param(eqn: JaxprEqn) -> str:
    for name in ("call_jaxpr", "jaxpr"):
        if isinstance(eqn.params.get(name), (Jaxpr, ClosedJaxpr)):
            return name
    raise TypeError(f"the equation of '{eqn.primitive.name}' carries no jaxpr to prune.")


def dce_jaxpr_call_rule(used_outputs: list[bool], eqn: JaxprEqn
                        ) -> tuple[list[bool], JaxprEqn | None]:
    """DCE rule for a call whose inner jaxpr maps the equation's inputs to its outputs
    (mirrors `pe.dce_jaxpr_call_rule`): the inner jaxpr loses the unused outputs and the
    inputs only they needed."""
    name = _call_jaxpr_param(eqn)
    inner = eqn.params[name]
    if isinstance(inner, ClosedJaxpr):
        new_inner, used_inputs = dce_closed_jaxpr(inner, used_outputs)
    else:
        new_inner, used_inputs = dce_jaxpr(inner, used_outputs)
    if not any(used_outputs) and not any(has_effects(e) for e in new_inner.eqns):
        return [False] * len(eqn.invars), None
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params={**eqn.params, name: new_inner})
    return used_inputs, new_eqn


dce_jaxpr_closed_call_rule = dce_jaxpr_call_rule
