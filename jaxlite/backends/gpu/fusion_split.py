"""Fusions the gpu kernel builders take in pieces: a multi-output fusion output by output,
and a fusion that reduces a reduction in two stages (the GPU side of XLA's choice not to
fuse what one kernel's iteration cannot hold; jaxlite's fusion pass, thinking of the cpu,
fuses them).

Each piece is a fusion instruction of its own with the operands of the original (the
second stage of a nested reduction takes the first stage's results as extra operands
after them); `build.build_fusion` builds the pieces and renames their buffers so that
they run as one fusion's kernels.
"""
from __future__ import annotations

from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion_decisions import INPUT, LOOP
from jaxlite.xla.shape import Shape

__all__ = ["split_nested_reductions", "split_outputs"]


def _reachable(root: HloInstruction) -> set[int]:
    seen, stack = set(), [root]
    while stack:
        inst = stack.pop()
        if id(inst) not in seen:
            seen.add(id(inst))
            stack.extend(inst.operands)
    return seen


def _piece(fusion: HloInstruction, name: str, body: HloComputation,
           operands: tuple[HloInstruction, ...] | None = None) -> HloInstruction:
    """A fusion instruction computing `body` (kind from its content, no tiling record)."""
    attrs = {a: v for a, v in fusion.attrs.items() if a != "tiling"}
    has_reduce = any(i.opcode is Opcode.REDUCE for i in body.instructions)
    attrs["kind"] = INPUT if has_reduce else LOOP
    return fusion.replace(name=name, shape=body.root.shape, attrs=attrs, called=(body,),
                          operands=fusion.operands if operands is None else operands)


def _computation(name: str, instructions: tuple, root: HloInstruction) -> HloComputation:
    """The instructions `root` needs (and every parameter, so numbering stays)."""
    kept = _reachable(root)
    return HloComputation(name, tuple(i for i in instructions
                                      if id(i) in kept or i.opcode is Opcode.PARAMETER), root)


def split_outputs(fusion: HloInstruction) -> list[HloInstruction]:
    """One single-output fusion per output of a multi-output fusion, each with all of its
    operands (a reduction and an elementwise result of another shape cannot share one
    kernel's iteration); the work outputs share is done again by each."""
    body = fusion.called[0]
    outputs = list(body.root.operands) if body.root.opcode is Opcode.TUPLE else [body.root]
    return [_piece(fusion, f"{fusion.name}.out{k}",
                   _computation(f"{body.name}.out{k}", body.instructions, output))
            for k, output in enumerate(outputs)]


def split_nested_reductions(fusion: HloInstruction) -> tuple | None:
    """(first, second) for a fusion in which a reduction reads another: `first` computes
    the inner reductions (those another reduction depends on), `second` the rest with
    them as parameters numbered after the fusion's operands; None without such nesting."""
    body = fusion.called[0]
    reduces = [i for i in body.instructions if i.opcode is Opcode.REDUCE]
    inner = [r for r in reduces
             if any(id(r) in _reachable(o) for other in reduces if other is not r
                    for o in other.operands)]
    if not inner:
        return None
    # the innermost first: an inner reduction that itself reads one waits for the next round
    inner = [r for r in inner if not any(id(o) in _reachable(r.operands[0])
                                         for o in inner if o is not r)]
    if len(inner) == 1:
        root = inner[0]
        instructions = body.instructions
    else:
        root = HloInstruction(f"{fusion.name}.inner", Opcode.TUPLE,
                              Shape.tuple(tuple(r.shape for r in inner)), tuple(inner))
        instructions = body.instructions + (root,)
    first = _piece(fusion, f"{fusion.name}.stage1",
                   _computation(f"{body.name}.stage1", instructions, root))
    count = len(fusion.operands)
    new: dict[int, HloInstruction] = {
        id(r): HloInstruction(f"{r.name}.value", Opcode.PARAMETER, r.shape,
                              attrs={"number": count + j}) for j, r in enumerate(inner)}
    rest = []
    for inst in body.instructions:  # (an inner reduction's place taken by its parameter)
        if id(inst) not in new:
            new[id(inst)] = inst.replace(operands=tuple(new[id(o)] for o in inst.operands))
        rest.append(new[id(inst)])
    second_body = _computation(f"{body.name}.stage2", tuple(rest), new[id(body.root)])
    operands = fusion.operands + tuple(_placeholder(r) for r in inner)
    second = _piece(fusion, f"{fusion.name}.stage2", second_body, operands)
    return first, second


def _placeholder(r: HloInstruction) -> HloInstruction:
    """An operand standing for a first-stage result (only its shape is read)."""
    return HloInstruction(f"{r.name}.result", Opcode.PARAMETER, r.shape, attrs={"number": 0})
