"""Reading StableHLO's tokens and tuples (`!stablehlo.token`, `tuple<...>`).

Tokens order side effects. jaxlite keeps side effects in program order and has no token
type, so a token is an empty bool array (`syntax.TOKEN_SHAPE`, as `jaxlite.lax.create_token`
makes it): `create_token` and `after_all` make a new one, and tokens flow through
`while`, `case` and calls like any value. The tokens of `@main` that JAX adds for ordered
effects (`{jax.token = true}`) are dropped from its signature by the builder.

Tuples become HLO tuples: `stablehlo.tuple` a `tuple` instruction, `get_tuple_element`
(`%t[1]` in the pretty form) a `get-tuple-element`.
"""
from __future__ import annotations

from typing import Callable, Sequence

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo.builder import FunctionBuilder
from jaxlite.xla.stablehlo.parser import Op

__all__ = ["PYTHON_CALLBACK_TARGETS", "RULES", "python_callback_error"]

# The targets through which JAX calls back into Python (`jax.debug.print`, `io_callback`,
# `pure_callback`): the function lives in the process that lowered the module, known there
# only by its index (`mhlo.backend_config = {index = 0 : ui64}`).
PYTHON_CALLBACK_TARGETS = ("xla_ffi_python_cpu_callback", "xla_python_cpu_callback",
                           "xla_ffi_partitioned_python_cpu_callback")

Values = list[HloInstruction]
Rule = Callable[[FunctionBuilder, Op, Values, Sequence[Shape]], Values]


def _new_token(fb: FunctionBuilder, op: Op, operands: Values,
               types: Sequence[Shape]) -> Values:
    """`create_token` and `after_all`: program order already puts this point after
    every effect before it."""
    return [fb.token()]


def _tuple(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    return [fb.tuple(operands)]


def _get_tuple_element(fb: FunctionBuilder, op: Op, operands: Values,
                       types: Sequence[Shape]) -> Values:
    if "index" in op.attrs:
        index = int(op.attrs["index"])
    else:  # `%t[1]`: the bracket's text, as the parser keeps it
        index = int(str(op.positional[0]).strip("[] "))
    (value,) = operands
    if not value.shape.is_tuple or not 0 <= index < len(value.shape.tuple_shapes):
        raise ValueError(f"get_tuple_element {index} of a value of type {value.shape}")
    return [fb.element(value, index)]


RULES: dict[str, Rule] = {
    "stablehlo.create_token": _new_token,
    "stablehlo.after_all": _new_token,
    "stablehlo.tuple": _tuple,
    "stablehlo.get_tuple_element": _get_tuple_element,
}


def python_callback_error(target: str, line: int) -> NotImplementedError:
    """The error for a module that calls back into the Python of the process that
    lowered it."""
    return NotImplementedError(
        f"from_stablehlo: custom call @{target} at line {line} calls a Python function of "
        "the process that lowered the module (jax.debug.print, io_callback or "
        "pure_callback), which a module's text cannot carry; lower the function with "
        "jaxlite instead, or without the callback")
