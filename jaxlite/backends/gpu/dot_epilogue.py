"""Output fusions (a dot or a convolution and the elementwise work on its result) split in
two for the gpu backend: the dot through the array module (`device_ops.dot`: cuBLAS /
hipBLAS via CuPy) or the convolution as im2col and a GEMM (`convolution`), then its
epilogue as a loop fusion whose kernel reads the product as one more operand.

`split_dot_fusion(fusion)` returns the dot and the epilogue's fusion instruction, or None
when the fusion is not of that form (the dot or convolution must read two of the
fusion's parameters directly and be the fused computation's only one).
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion_decisions import LOOP

__all__ = ["DotSplit", "split_dot_fusion"]


@dataclass(frozen=True)
class DotSplit:
    """The dot of an output fusion and the rest of it.

    dot : the fused dot (its operands are parameters of the fused computation).
    operands : the positions, among the fusion's operands, of the dot's lhs and rhs.
    epilogue : a loop fusion taking the fusion's operands and then the dot's product, or
        None when the fusion's result is the product itself.
    """
    dot: HloInstruction
    operands: tuple[int, int]
    epilogue: HloInstruction | None


def split_dot_fusion(fusion: HloInstruction) -> DotSplit | None:
    """The dot and the epilogue of an output fusion, or None (see the module docstring)."""
    body = fusion.called[0]
    dots = [i for i in body.instructions if i.opcode in (Opcode.DOT, Opcode.CONVOLUTION)]
    if len(dots) != 1 or fusion.shape.is_tuple:
        return None
    dot = dots[0]
    if any(o.opcode is not Opcode.PARAMETER for o in dot.operands):
        return None
    operands = (dot.operands[0].attr("number"), dot.operands[1].attr("number"))
    if body.root is dot:
        return DotSplit(dot, operands, None)
    product = HloInstruction(f"{dot.name}.product", Opcode.PARAMETER, dot.shape,
                             attrs={"number": len(fusion.operands)})
    new: dict[int, HloInstruction] = {id(dot): product}
    instructions = []
    for inst in body.instructions:
        if inst is not dot:
            new[id(inst)] = inst.replace(operands=tuple(new[id(o)] for o in inst.operands))
        instructions.append(new[id(inst)])
    epilogue_body = HloComputation(f"{body.name}.epilogue", tuple(instructions),
                                   new[id(body.root)])
    # the product enters the fusion as an operand of its own (only its shape is read)
    placeholder = HloInstruction(f"{dot.name}.result", Opcode.PARAMETER, dot.shape,
                                 attrs={"number": 0})
    attrs = {k: v for k, v in fusion.attrs.items() if k != "tiling"}
    attrs["kind"] = LOOP
    epilogue = fusion.replace(operands=fusion.operands + (placeholder,), attrs=attrs,
                              called=(epilogue_body,))
    return DotSplit(dot, operands, epilogue)
