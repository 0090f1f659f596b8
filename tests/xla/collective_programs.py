"""Helpers for the collective tests: one-instruction SPMD programs in HLO text, and the
numpy reference of what each device receives.

`program(op_text, operand, result)` is a module whose entry applies one collective line to
its parameter `%x`; `REDUCERS` are the `to_apply` computations by name with their numpy
functions; `group_layouts(n)` lists replica groups worth trying for a device count.
"""
from __future__ import annotations

from functools import reduce

import numpy as np

from jaxlite.xla.text import parse_module

__all__ = ["REDUCERS", "group_layouts", "group_of", "groups_text", "program", "reference_reduce"]

# name -> (HLO opcode of the reducer, element type, numpy function)
REDUCERS = {
    "add": ("add", "f32", np.add),
    "max": ("maximum", "f32", np.maximum),
    "min": ("minimum", "f32", np.minimum),
    "mul": ("multiply", "s32", np.multiply),
    "and": ("and", "pred", np.logical_and),
    "or": ("or", "pred", np.logical_or),
}


def _reducer_text(name: str) -> str:
    opcode, element, _ = REDUCERS[name]
    return (f"%{name}_fn (a: {element}[], b: {element}[]) -> {element}[] {{\n"
            f"  %a = {element}[] parameter(0)\n  %b = {element}[] parameter(1)\n"
            f"  ROOT %r = {element}[] {opcode}(%a, %b)\n}}\n\n")


def groups_text(groups) -> str:
    return "{" + ",".join("{" + ",".join(str(i) for i in g) + "}" for g in groups) + "}"


def program(op_text: str, operand: str, result: str, reducer: str | None = None):
    """The module `ROOT %c = result op_text` over `%x = operand parameter(0)`; `op_text`
    names the reducer computation `%<reducer>_fn` when it takes one."""
    text = "HloModule collective\n\n" + (_reducer_text(reducer) if reducer else "")
    text += (f"ENTRY %main (x: {operand}) -> {result} {{\n  %x = {operand} parameter(0)\n"
             f"  ROOT %c = {result} {op_text}\n}}\n")
    return parse_module(text)


def group_layouts(n: int) -> list[tuple[tuple[int, ...], ...]]:
    """Replica groups over n devices: all together, neighbours in pairs, pairs of devices
    n/2 apart, reversed halves, and each device alone."""
    everyone = (tuple(range(n)),)
    pairs = tuple((i, i + 1) for i in range(0, n, 2))
    strided = tuple((i, i + n // 2) for i in range(n // 2))
    halves = (tuple(reversed(range(n // 2))), tuple(reversed(range(n // 2, n))))
    alone = tuple((i,) for i in range(n))
    return [everyone, pairs, strided, halves, alone]


def group_of(groups, device: int) -> tuple[int, ...]:
    return next(g for g in groups if device in g)


def reference_reduce(name: str, arrays) -> np.ndarray:
    return reduce(REDUCERS[name][2], arrays)
