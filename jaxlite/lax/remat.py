"""What `checkpoint` saves for the backward pass: names and policies (mirrors JAX's
`ad_checkpoint.checkpoint_name` and the `policy` argument of `jax.checkpoint`).

Without a policy, a checkpointed function saves only its inputs and the backward pass
recomputes everything else. A policy is asked about each equation of the function,
`policy(primitive, *input_avals, **params)`, and the outputs of the equations it approves
(True, `Saveable` or `Offloadable`) are saved too when the backward pass needs them:
linearizing the checkpoint gives a known call that also returns those values, and a
tangent call that takes them instead of recomputing them. `checkpoint_name(x, name)` marks a value for the name-based policies.

A policy sees the equations of the checkpointed function itself; the inside of a nested
call (a `jit` within it) is one equation to it, saved or recomputed whole.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import Zero, jvp_jaxpr
from jaxlite.interpreters.dce import dce_closed_jaxpr
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.tree_util import tree_map
from jaxlite.xla.ir import HloInstruction

__all__ = ["name_p", "checkpoint_name", "Saveable", "Recompute", "Offloadable",
           "linearize_with_policy"]

# ------------------------------------------------------------------------- checkpoint_name

name_p = Primitive("name")


def _name_abstract_eval(x: ShapedArray, *, name: str) -> ShapedArray:
    return x


def _name_reference(x: Any, *, name: str) -> Any:
    return x


def _name_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str) -> tuple:
    return name_p.bind(primals[0], name=name), tangents[0]


def _name_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                name: str) -> tuple[Any, Any]:
    return name_p.bind(args[0], name=name), dims[0]


def _name_lower(ctx: LoweringContext, x: HloInstruction, *, name: str) -> HloInstruction:
    return x


name_p.abstract_eval = _name_abstract_eval
name_p.reference = _name_reference
name_p.jvp = _name_jvp
name_p.batch = _name_batch
name_p.lower = _name_lower


def checkpoint_name(x: Any, name: str) -> Any:
    """`x` itself, marked `name` for checkpoint policies (mirrors
    `jax.ad_checkpoint.checkpoint_name`); `x` may be a pytree."""
    return tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


# ------------------------------------------------------------------------------ decisions

class RecomputeType:
    """A policy's answer: recompute the value in the backward pass (JAX's `Recompute`)."""

    def __repr__(self) -> str:
        return "Recompute"


class SaveableType:
    """A policy's answer: save the value for the backward pass (JAX's `Saveable`)."""

    def __repr__(self) -> str:
        return "Saveable"


Recompute = RecomputeType()
Saveable = SaveableType()


@dataclasses.dataclass(frozen=True)
class Offloadable:
    """A policy's answer: save the value in another memory (mirrors
    `jax.ad_checkpoint.Offloadable`). jaxlite has one memory, so it is saved."""

    src: Any
    dst: Any


def saves(decision: Any) -> bool:
    """Whether a policy's answer means "save"."""
    if decision is True or decision is Saveable or isinstance(decision, Offloadable):
        return True
    if decision is False or decision is Recompute or decision is None:
        return False
    raise TypeError(f"A checkpoint policy returned {decision!r}; it must return a bool, "
                    "Saveable, Recompute or Offloadable.")


# ---------------------------------------------------------------- linearizing with a policy
#
# As JAX does, the policy is asked about the equations of the function's jvp that compute
# primal values (the function's own, and those its jvp rules add, as the `cos` of `sin`'s
# derivative). Those whose values the tangent computation uses are saved when the policy
# approves, and recomputed in the tangent computation otherwise.

def _run(jaxpr: Jaxpr, env: dict[Any, Any], skip: Callable[[JaxprEqn], bool]) -> None:
    """Bind the equations of `jaxpr` not skipped, reading and writing `env`."""
    read = lambda v: v.value if isinstance(v, Literal) else env[v]  # noqa: E731
    for eqn in jaxpr.eqns:
        if skip(eqn):
            continue
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))


def _read(env: dict[Any, Any], atom: Any) -> Any:
    return atom.value if isinstance(atom, Literal) else env[atom]


def _known_equations(jaxpr: Jaxpr, unknown_inputs: Sequence[Var]) -> set[int]:
    """Ids of the equations that do not depend on `unknown_inputs` (the tangents)."""
    unknown = set(unknown_inputs)
    known = set()
    for eqn in jaxpr.eqns:
        if any(isinstance(v, Var) and v in unknown for v in eqn.invars):
            unknown.update(eqn.outvars)
        else:
            known.add(id(eqn))
    return known


def linearize_with_policy(prim: Primitive, primals: Sequence[Any], tangents: Sequence[Any],
                          jaxpr: ClosedJaxpr, params: dict[str, Any]) -> tuple[list, list]:
    """The jvp of a checkpoint call under linearize, saving what `params["policy"]` approves.

    One call of `prim` computes the outputs and the saved values now; a second, staged
    into the linear jaxpr, computes the output tangents from the inputs, the saved values
    and the input tangents, recomputing what was not saved.
    """
    policy = params["policy"]
    nonzero = [not isinstance(t, Zero) for t in tangents]
    given = [t for t in tangents if not isinstance(t, Zero)]
    num_in, num_out = len(primals), len(jaxpr.out_avals)
    jvp = jvp_jaxpr(jaxpr, nonzero)
    j = jvp.jaxpr
    known = _known_equations(j, j.invars[num_in:])
    candidates = [v for eqn in j.eqns if id(eqn) in known and saves(
        policy(eqn.primitive, *[a.aval for a in eqn.invars], **eqn.params)) for v in eqn.outvars]
    is_saved = set(candidates)

    def fresh_env(primal_values: Sequence[Any]) -> dict[Any, Any]:
        env = dict(zip(j.constvars, jvp.consts))
        env.update(zip(j.invars[:num_in], primal_values))
        return env

    def tangent_fun(*xs: Any) -> list[Any]:
        env = fresh_env(xs[:num_in])
        env.update(zip(candidates, xs[num_in:num_in + len(candidates)]))
        env.update(zip(j.invars[num_in:], xs[num_in + len(candidates):]))
        _run(j, env, lambda eqn: all(v in is_saved for v in eqn.outvars))
        return [_read(env, v) for v in j.outvars[num_out:]]
    in_avals = [get_aval(p) for p in primals]
    avals = in_avals + [v.aval for v in candidates] + [get_aval(t) for t in given]
    keep = [True] * num_in + [False] * len(candidates) + [True] * len(given)
    tangent_jaxpr, used = dce_closed_jaxpr(trace_to_jaxpr(tangent_fun, avals),
                                           [True] * num_out, instantiate=keep)
    residual_vars = [v for v, u in zip(candidates, used[num_in:]) if u]

    def known_fun(*xs: Any) -> list[Any]:
        env = fresh_env(xs)
        _run(j, env, lambda eqn: id(eqn) not in known)
        return [_read(env, v) for v in j.outvars[:num_out]] + [env[v] for v in residual_vars]
    results = prim.bind(*primals, jaxpr=trace_to_jaxpr(known_fun, in_avals), **params)
    primal_out, residuals = list(results[:num_out]), list(results[num_out:])
    tangent_out = prim.bind(*primals, *residuals, *given, jaxpr=tangent_jaxpr, **params)
    # Tangents of integer outputs come back as float0 arrays: keep them symbolic.
    return primal_out, [Zero(get_aval(t)) if get_aval(t).dtype == dtypes.float0 else t
                        for t in tangent_out]
