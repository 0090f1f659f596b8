"""Which values the gpu program may overwrite, and where a result may take a donated
argument's memory (the gpu backend's small stand-in for XLA's buffer assignment of
in-place updates and input-output aliases).

The program holds every value as an array; layout changes may return views of their
operand, get-tuple-element returns the tuple's array, and parameters are the caller's.
So a value may be written by its user only when:

- it is *fresh*: made by a kernel, a dot, a host fallback or an update (new memory that
  nothing else views), and that user is its only one (it dies there); or
- it is a while body's state element that the loop owns (`loop_owned`): read by nothing
  but that user, and the body's result at that position is fresh again, so each
  iteration hands the next a buffer nobody else holds; the loop copies the initial value
  of such an element once, before the first iteration; or
- it is a donated entry parameter whose only user is that one.

A loop fusion's result may be written into a donated parameter's memory
(`donated_output`) when the fusion reads that parameter only at the position it writes
(through elementwise instructions of the result's shape), so each element is read
before it is overwritten, by the same thread.
"""
from __future__ import annotations

from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["donated_output", "fresh", "loop_owned", "overwritable"]

_O = Opcode
# results that may share memory with an operand, a caller's value or another result
_SHARING = frozenset({_O.PARAMETER, _O.CONSTANT, _O.GET_TUPLE_ELEMENT, _O.TUPLE, _O.WHILE,
                      _O.CONDITIONAL, _O.CALL, _O.BITCAST, _O.COPY, _O.TRANSPOSE,
                      _O.RESHAPE})
UPDATES = (_O.DYNAMIC_UPDATE_SLICE, _O.SCATTER)


def fresh(inst: HloInstruction) -> bool:
    """Whether the program makes `inst`'s value in new memory of its own."""
    return inst.opcode not in _SHARING and not inst.shape.is_tuple


def _use_counts(comp: HloComputation) -> dict[int, int]:
    counts: dict[int, int] = {}
    for inst in comp.instructions:
        for operand in inst.operands:
            counts[id(operand)] = counts.get(id(operand), 0) + 1
    return counts


def _users(comp: HloComputation, value: HloInstruction) -> list[HloInstruction]:
    return [i for i in comp.instructions for o in i.operands if o is value]


def loop_owned(loop: HloInstruction) -> frozenset[int]:
    """The state elements of while `loop` its body may update in place (see above)."""
    body = loop.called[1]
    state, root = body.parameters[0], body.root
    if not state.shape.is_tuple or root.opcode is not _O.TUPLE:
        return frozenset()
    readers = _users(body, state)
    if any(r.opcode is not _O.GET_TUPLE_ELEMENT for r in readers):
        return frozenset()
    owned = set()
    for k, result in enumerate(root.operands):
        elements = [r for r in readers if r.attr("index") == k]
        if len(elements) != 1 or not fresh(result) or \
                sum(o is result for o in root.operands) != 1:
            continue
        users = _users(body, elements[0])
        if len(users) == 1 and users[0].opcode in UPDATES and \
                users[0].operands[0] is elements[0] and \
                sum(o is elements[0] for o in users[0].operands) == 1:
            owned.add(k)
    return frozenset(owned)


def overwritable(comp: HloComputation, owned: frozenset[int] = frozenset(),
                 donated: frozenset[int] = frozenset()) -> frozenset[int]:
    """Ids of the values of `comp` their only user may overwrite: fresh ones, the loop's
    `owned` state elements (when `comp` is a while body) and `donated` parameters."""
    counts = _use_counts(comp)
    result = set()
    for inst in comp.instructions:
        if counts.get(id(inst), 0) != 1 or inst is comp.root:
            continue
        if fresh(inst) or (inst.opcode is _O.PARAMETER and inst.attr("number") in donated):
            result.add(id(inst))
        elif inst.opcode is _O.GET_TUPLE_ELEMENT and inst.attr("index") in owned and \
                inst.operands[0].opcode is _O.PARAMETER:
            result.add(id(inst))
    return frozenset(result)


def donated_output(fusion: HloInstruction, comp: HloComputation,
                   donated: frozenset[int]) -> int | None:
    """The position among `fusion`'s operands of a donated parameter of `comp` whose
    memory its (single) result may be written into, or None."""
    if fusion.shape.is_tuple:
        return None
    counts = _use_counts(comp)
    body = fusion.called[0]
    for j, operand in enumerate(fusion.operands):
        if operand.opcode is not _O.PARAMETER or operand.attr("number") not in donated or \
                counts.get(id(operand), 0) != 1 or operand.shape != fusion.shape:
            continue
        param = next(p for p in body.parameters if p.attr("number") == j)
        if _read_in_place(body, param, fusion.shape):
            return j
    return None


def _read_in_place(body: HloComputation, param: HloInstruction, shape) -> bool:
    """Whether every path from `param` to the root goes through elementwise instructions
    of `shape` (each output element reads the parameter at its own position only)."""
    stack, seen = [param], set()
    while stack:
        inst = stack.pop()
        if id(inst) in seen:
            continue
        seen.add(id(inst))
        if inst is not param and not (inst.opcode.is_elementwise and inst.shape.dims ==
                                      shape.dims and inst.shape.layout == shape.layout):
            return False
        stack.extend(_users(body, inst))
    return True
