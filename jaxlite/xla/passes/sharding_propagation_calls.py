"""How sharding propagation crosses into the computations that while, conditional and call
run (the call-graph part of XLA's ShardingPropagation).

Values on both sides of a call are *related*: a while, its body's parameter and root and its
condition's parameter are one loop-carried value; a conditional and its branches' roots are
one result. When propagation changes one member of such a group, the others are set to the
same sharding at once (XLA sets them outright, so a layout found inside a loop body or a
branch wins over the one the caller passed in). A branch's (or callee's) parameter sets the
operand passed to it the same way, but not the other way round. Computations are swept callees first, as XLA's
post order of the call graph does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["CallGraph", "call_graph"]

_CONTROL_FLOW = (Opcode.WHILE, Opcode.CALL, Opcode.CONDITIONAL)


@dataclass
class CallGraph:
    """The computations to annotate (callees first, the entry last) and their links."""

    computations: list[HloComputation] = field(default_factory=list)
    # id of a callee's parameter -> (the calling instruction, the operand it is)
    caller_of_parameter: dict[int, tuple[HloInstruction, int]] = field(default_factory=dict)
    # id of a callee whose root is the caller's result (not a while's condition) -> caller
    caller_of_root: dict[int, HloInstruction] = field(default_factory=dict)
    # id of an instruction -> the instructions set whenever it changes: the other members
    # of its groups, and for a branch's or callee's parameter, the operand passed to it
    related: dict[int, list[HloInstruction]] = field(default_factory=dict)

    def relate(self, group: list[HloInstruction]) -> None:
        for member in group:
            self.related.setdefault(id(member), []).extend(m for m in group if m is not member)


def call_graph(entry: HloComputation) -> CallGraph:
    """The entry and every computation that control flow runs from it, with their links."""
    graph = CallGraph()
    seen: set[int] = set()

    def visit(comp: HloComputation) -> None:
        seen.add(id(comp))
        for inst in comp.instructions:
            if inst.opcode not in _CONTROL_FLOW:
                continue
            for callee in inst.called:
                if id(callee) not in seen:
                    visit(callee)
            _link(graph, inst)
        graph.computations.append(comp)
    visit(entry)
    return graph


def _link(graph: CallGraph, inst: HloInstruction) -> None:
    if inst.opcode is Opcode.WHILE:
        condition, body = inst.called
        graph.caller_of_parameter[id(body.parameters[0])] = (inst, 0)
        graph.caller_of_parameter[id(condition.parameters[0])] = (inst, 0)
        graph.caller_of_root[id(body)] = inst
        graph.relate([inst, body.parameters[0], body.root, condition.parameters[0]])
        return
    graph.relate([inst] + [callee.root for callee in inst.called])
    for b, callee in enumerate(inst.called):
        graph.caller_of_root[id(callee)] = inst
        for k, param in enumerate(callee.parameters):
            operand = b + 1 if inst.opcode is Opcode.CONDITIONAL else k
            graph.caller_of_parameter[id(param)] = (inst, operand)
            graph.related.setdefault(id(param), []).append(inst.operands[operand])
