"""Calling a shape-polymorphic `Exported`: the values of its dimension variables, and its
module specialized to them (what JAX's shape refinement does to the StableHLO at call time).

An Exported for `ShapeDtypeStruct((b, 4), ...)` keeps its program as jaxlite's HLO text with
symbolic sizes (`f32[b,4]`, `slice={[0:b - 1]}`, `s32[] constant(b)` where a size is used
as a value). A call first solves the variables from the arguments' shapes (`dimension_values`,
with JAX's errors for a shape that does not fit), then reads the text with every size
evaluated (`specialize`): an ordinary module of concrete shapes that jit compiles.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from jaxlite.core import shape_poly
from jaxlite.core.avals import ShapedArray
from jaxlite.core.shape_poly import DimExpr
from jaxlite.core.shape_poly_parse import SymbolicScope, evaluate, linear_in, parse
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import parse_module

__all__ = ["dimension_values", "specialize", "symbolic_module", "scope_of"]

_HELP = ("Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
         "#shape-assertion-errors for more details.")


def scope_of(avals: Sequence[ShapedArray]) -> SymbolicScope | None:
    """The scope of the symbolic dimensions of `avals` (None if there are none)."""
    for aval in avals:
        for d in aval.shape:
            if isinstance(d, DimExpr):
                return d.scope
    return None


def symbolic_module(hlo_text: str, scope: SymbolicScope | None) -> HloModule:
    """The module of the text with its symbolic sizes as `DimExpr`s (for printing)."""
    return parse_module(hlo_text, read_dimension=lambda text: parse(text, scope))


def specialize(hlo_text: str, env: Mapping[str, int]) -> HloModule:
    """The module of the text with every symbolic size evaluated at `env`."""
    return parse_module(hlo_text, read_dimension=lambda text: evaluate(
        parse(text), env))


def dimension_values(in_avals: Sequence[ShapedArray], shapes: Sequence[tuple[int, ...]]
                     ) -> dict[str, int]:
    """The value of each dimension variable given the arguments' concrete `shapes`; raises
    JAX's ValueErrors for a rank, a constant size or a variable that does not fit."""
    specs = ",".join(f"args[{i}].shape = {_shape_text(a.shape)}"
                     for i, a in enumerate(in_avals))
    for i, (aval, shape) in enumerate(zip(in_avals, shapes)):
        if len(shape) != len(aval.shape):
            raise ValueError(f"Rank mismatch for args[{i}]: expected "
                             f"{_shape_text(aval.shape)} and called with {tuple(shape)}")
        for k, (want, got) in enumerate(zip(aval.shape, shape)):
            if not isinstance(want, DimExpr) and want != got:
                raise ValueError(f"Shape mismatch for args[{i}].shape[{k}] (expected same "
                                 f"constant): expected {_shape_text(aval.shape)} and called "
                                 f"with {tuple(shape)}")
    env, found = _solve(in_avals, shapes, specs)
    obtained = "".join(f"'{name}' = {value} from {where}, " for name, (value, where)
                       in found.items())
    context = (f"Using the following polymorphic shapes specifications: {specs}. Obtained "
               f"dimension variables: {obtained}. {_HELP}")
    for i, (aval, shape) in enumerate(zip(in_avals, shapes)):
        for k, (want, got) in enumerate(zip(aval.shape, shape)):
            value = evaluate(want, env)
            if value != got:
                raise ValueError(
                    "Input shapes do not match the polymorphic shapes specification. Found "
                    f"inconsistency between dimension size args[{i}].shape[{k}] (= {got}) "
                    f"and the specification '{want}' (= {value}). {context}")
    _check_constraints(in_avals, env, context)
    return env


def _solve(in_avals: Sequence[ShapedArray], shapes: Sequence[tuple[int, ...]], specs: str
           ) -> tuple[dict[str, int], dict[str, tuple[int, str]]]:
    """Values from the dimensions that are linear in one unknown variable (`b`, `2*b`,
    `b + 1`), repeated until no more can be found."""
    env: dict[str, int] = {}
    found: dict[str, tuple[int, str]] = {}
    progress = True
    while progress:
        progress = False
        for i, (aval, shape) in enumerate(zip(in_avals, shapes)):
            for k, (want, got) in enumerate(zip(aval.shape, shape)):
                unknown = shape_poly.dimension_variables([want]) - set(env)
                if not isinstance(want, DimExpr) or len(unknown) != 1:
                    continue
                name = unknown.pop()
                solved = _solve_linear(want, name, got, env)
                if solved is None:
                    continue
                value, remainder = solved
                if remainder:
                    raise ValueError(
                        "Input shapes do not match the polymorphic shapes specification. "
                        f"Division had remainder {remainder} when computing the value of "
                        f"'{name}'. Using the following polymorphic shapes specifications: "
                        f"{specs}. Obtained dimension variables: . {_HELP}")
                env[name] = value
                found[name] = (value, f"specification '{want}' for dimension "
                                      f"args[{i}].shape[{k}] (= {got})")
                progress = True
    return env, found


def _solve_linear(dim: DimExpr, name: str, value: int, env: Mapping[str, int]
                  ) -> tuple[int, int] | None:
    """(v, remainder) with dim == value at name = v, if `dim` is `k*name + rest`."""
    linear = linear_in(dim, name)
    if linear is None:
        return None
    coefficient, rest = linear
    return divmod(value - evaluate(rest, env), coefficient)


def _check_constraints(in_avals: Sequence[ShapedArray], env: Mapping[str, int],
                       context: str) -> None:
    for name, value in env.items():
        if value < 1:
            raise ValueError("Input shapes do not match the polymorphic shapes specification. "
                             f"Expected value >= 1 for dimension variable '{name}'. {context}")
    scope = scope_of(in_avals)
    if scope is None:
        return
    for text, expr in zip([c for c in scope.constraints_str if "==" not in c],
                          scope.nonnegative):
        value = evaluate(expr, env)
        if value < 0:
            raise ValueError(f"Input shapes do not match the symbolic shape constraint {text}. "
                             f"Expected '{expr}' to be greater or equal to 0, but found "
                             f"{value}.  {context}")


def _shape_text(shape: Sequence[Any]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
