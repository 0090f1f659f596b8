"""Common subexpression elimination (mirrors XLA's HloCSE).

Contract: `eliminate_common_subexpressions(module)` makes each computation compute every
value once. Two instructions of one computation are the same value when they have the same
opcode, shape (layout included), operands (after this pass merged theirs), attributes and
called computations, where called computations count as the same when they are equal up to
names, and constants compare by dtype, shape and bytes (so 0.0 and -0.0, or two NaNs with
different payloads, stay apart). The later of two equal instructions disappears and its
users read the earlier one; parameters and side-effecting instructions (custom-calls) are
never merged. Values are untouched, bit for bit. It returns the same module object when no
two instructions are equal.
"""
from __future__ import annotations

from collections.abc import Hashable

from jaxlite.xla.analysis import has_side_effects, instruction_key
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.rewriting import RewriteContext, rewrite_module

__all__ = ["eliminate_common_subexpressions"]


def eliminate_common_subexpressions(module: HloModule) -> HloModule:
    """`module` with duplicate instructions merged (see the module doc)."""
    fingerprints: dict[int, Hashable] = {}
    # One table per computation: values never merge across computations.
    tables: dict[int, dict[Hashable, HloInstruction]] = {}

    def merge(inst: HloInstruction, context: RewriteContext) -> HloInstruction | None:
        if inst.opcode is Opcode.PARAMETER or has_side_effects(inst):
            return None
        table = tables.setdefault(id(context.computation), {})
        key = instruction_key(inst, fingerprints)
        earlier = table.get(key)
        if earlier is None:
            table[key] = inst
            return None
        return earlier

    return rewrite_module(module, merge)
