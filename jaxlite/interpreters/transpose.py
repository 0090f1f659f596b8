"""Transposition of linear jaxprs: reverse-mode differentiation (mirrors `ad.backward_pass`).

`backward_pass` takes a jaxpr that is linear in some of its inputs (the undefined primals)
and propagates output cotangents back to those inputs, calling each primitive's `transpose`
rule in reverse order. Equations that do not touch a linear input are evaluated forwards
first: after `checkpoint` they recompute residuals that were deliberately not saved.
"""
from __future__ import annotations

from typing import Any, Sequence

from jaxlite.core.jaxpr import Jaxpr, Literal, Var
from jaxlite.core.sharding_rules import lenient_types
from jaxlite.core.source_info import attributed_to
from jaxlite.interpreters.ad import UndefinedPrimal, Zero, add_tangents, instantiate

__all__ = ["UndefinedPrimal", "backward_pass", "is_undefined"]


def is_undefined(value: Any) -> bool:
    return isinstance(value, UndefinedPrimal)


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any],
                  cotangents_out: Sequence[Any]) -> list[Any]:
    """Cotangents of the `UndefinedPrimal` entries of `args`, given the outputs' cotangents.

    Entries of `args` that are defined values get `Zero` back.
    """
    known: dict[Var, Any] = dict(zip(jaxpr.constvars, consts))
    linear_vars: set[Var] = set()
    for var, arg in zip(jaxpr.invars, args):
        if is_undefined(arg):
            linear_vars.add(var)
        else:
            known[var] = arg

    def read(atom: Any) -> Any:
        if isinstance(atom, Literal):
            return atom.value
        if atom in linear_vars:
            return UndefinedPrimal(atom.aval)
        return known[atom]

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(isinstance(v, Var) and v in linear_vars for v in eqn.invars):
            linear_eqns.append(eqn)
            linear_vars.update(eqn.outvars)
        else:
            outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            known.update(zip(eqn.outvars, outs))

    cotangents: dict[Var, Any] = {}

    def accumulate(var: Any, ct: Any) -> None:
        if isinstance(var, Var) and var in linear_vars and not isinstance(ct, Zero) \
                and ct is not None:
            cotangents[var] = add_tangents(cotangents.get(var, Zero(var.aval)), ct)

    for var, ct in zip(jaxpr.outvars, cotangents_out):
        accumulate(var, ct)
    for eqn in reversed(linear_eqns):
        cts = [cotangents.pop(v, Zero(v.aval)) for v in eqn.outvars]
        if all(isinstance(ct, Zero) for ct in cts):
            continue
        if eqn.primitive.multiple_results:
            # Rules written for JAX (and custom_vjp's) take symbolic zeros as they are.
            keep = getattr(eqn.primitive.transpose, "takes_symbolic_zeros", False)
            ct_arg: Any = list(cts) if keep else [instantiate(ct) for ct in cts]
        else:
            ct_arg = cts[0]
        with attributed_to(eqn.source_info), lenient_types():
            in_cts = eqn.primitive.transpose(ct_arg, *map(read, eqn.invars), **eqn.params)
        for var, ct in zip(eqn.invars, in_cts):
            accumulate(var, ct)
    return [cotangents.get(v, Zero(v.aval)) if is_undefined(a) else Zero(v.aval)
            for v, a in zip(jaxpr.invars, args)]
