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

__all__ = ["REDUCERS", "group_layouts", "group_of", "groups_text", "permute_pattern", "program",
           "reference_reduce", "all_gather_program", "reduce_scatter_program", "FLAT",
           "permute_program"]

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


PERMUTE_PATTERNS = ("ring", "swap", "partial")


def permute_pattern(name: str, n: int) -> list[tuple[int, int]]:
    """collective-permute's (source, target) pairs over n devices: a ring, neighbours
    swapping, or a few devices sending (so that others receive nothing)."""
    return {"ring": [(i, (i + 1) % n) for i in range(n)],
            "swap": [(i, i ^ 1) for i in range(n)],
            "partial": [(0, n - 1)] + ([(n - 1, 1)] if n > 2 else [])}[name]


def group_of(groups, device: int) -> tuple[int, ...]:
    return next(g for g in groups if device in g)


def reference_reduce(name: str, arrays) -> np.ndarray:
    return reduce(REDUCERS[name][2], arrays)


# Groups of global device ids (jit's programs: one replica, a partition per device).
FLAT = "channel_id=1, replica_groups={groups}, use_global_device_ids=true"


def all_gather_program(groups, dim: int, element: str = "f32"):
    """An all-gather of an `element[3,2]` along `dim` in `groups`."""
    size = len(groups[0])
    out = (3 * size, 2) if dim == 0 else (3, 2 * size)
    return program(f"all-gather(%x), {FLAT.format(groups=groups_text(groups))}, "
                   f"dimensions={{{dim}}}", f"{element}[3,2]", f"{element}[{out[0]},{out[1]}]")


def reduce_scatter_program(groups, reducer: str, block: int):
    """A reduce-scatter along dimension 1 of an f32[2, block * group size] in `groups`."""
    return program(f"reduce-scatter(%x), {FLAT.format(groups=groups_text(groups))}, "
                   f"dimensions={{1}}, to_apply=%{reducer}_fn",
                   f"f32[2,{block * len(groups[0])}]", f"f32[2,{block}]", reducer)


def permute_program(pairs, shape: str):
    """A collective-permute of an operand of `shape` (text) along (source, target) `pairs`."""
    return program(f"collective-permute(%x), channel_id=1, "
                   f"source_target_pairs={groups_text(pairs)}", shape, shape)
