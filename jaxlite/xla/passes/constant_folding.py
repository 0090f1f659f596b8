"""Constant folding (mirrors XLA's HloConstantFolding).

Contract: `fold_constants(module)` replaces every instruction whose operands are all
constants (and iotas, which have no operands) by a constant holding the value the evaluator
computes for it, so folding gives the same bits as running the instruction, and every
instruction with a zero-element array result (not a control-flow op or custom-call, which
may have effects) by an empty constant whatever its operands. It keeps the instruction's
name and shape. It leaves alone: parameters, constants, tuples and tuple
shaped results, control flow and custom-calls (whose effects or trip counts are not ours to
run at compile time), results of more than `MAX_FOLDED_ELEMENTS` elements, and broadcasts
and iotas of more than `MAX_EXPANDED_ELEMENTS` elements (a large constant costs memory and
bandwidth where the broadcast or iota costs nothing, as XLA reasons too). The constant
operands left unused are removed by DCE. It returns the same module object when nothing
folds.
"""
from __future__ import annotations

import numpy as np

from jaxlite.xla.evaluator import evaluate_computation
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.passes.rewriting import RewriteContext, rewrite_module

__all__ = ["MAX_EXPANDED_ELEMENTS", "MAX_FOLDED_ELEMENTS", "fold_constants"]

MAX_FOLDED_ELEMENTS = 1 << 16
"""Results larger than this stay computed at run time (folding would bloat the program)."""

MAX_EXPANDED_ELEMENTS = 16
"""Broadcasts and iotas larger than this stay: they make big constants out of small ones."""

_NEVER_FOLDED = {Opcode.PARAMETER, Opcode.CONSTANT, Opcode.TUPLE, Opcode.GET_TUPLE_ELEMENT}
_EXPANDING = {Opcode.BROADCAST, Opcode.IOTA}


def _foldable(inst: HloInstruction) -> bool:
    if inst.opcode in _NEVER_FOLDED or inst.opcode.kind in (Kind.CONTROL, Kind.COLLECTIVE):
        return False  # a collective's value depends on the device that runs it
    if not all(o.opcode is Opcode.CONSTANT for o in inst.operands):
        return False
    if inst.shape.is_tuple or inst.shape.size > MAX_FOLDED_ELEMENTS:
        return False
    if inst.opcode in _EXPANDING and inst.shape.size > MAX_EXPANDED_ELEMENTS:
        return False
    return all(o.opcode is Opcode.CONSTANT for o in inst.operands)


def _value(inst: HloInstruction) -> np.ndarray:
    """What `inst` computes, run alone by the evaluator (its operands are constants)."""
    operands = tuple(dict.fromkeys(inst.operands))
    comp = HloComputation(f"fold_{inst.name}", operands + (inst,), inst)
    return np.asarray(evaluate_computation(comp, []))


def _empty(inst: HloInstruction) -> bool:
    """A zero-element array result: its value is known whatever its operands, so it folds
    in one round (a long chain over an empty array was peeled one op per round)."""
    return (not inst.shape.is_tuple and 0 in inst.shape.dims
            and inst.opcode not in _NEVER_FOLDED and inst.opcode.kind is not Kind.CONTROL)


def _fold(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    if _empty(inst):
        value = np.empty(inst.shape.dims, inst.shape.dtype)
    elif _foldable(inst):
        value = _value(inst).astype(inst.shape.dtype, copy=False).reshape(inst.shape.dims)
    else:
        return None
    return HloInstruction(inst.name, Opcode.CONSTANT, inst.shape, (), {"literal": value},
                          metadata=inst.metadata)


def fold_constants(module: HloModule) -> HloModule:
    """`module` with computations on constants replaced by their values (see the doc)."""
    return rewrite_module(module, _fold)
