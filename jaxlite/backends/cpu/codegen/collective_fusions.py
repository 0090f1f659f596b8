"""Fused computations that compute a collective's result from its group's operands (for
`collectives.py`): the combiner applied elementwise, concatenations, blocks at a run-time
position, copies; compiled by the loop-fusion kernel emitter like any loop fusion."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["FusionBuilder"]

_O = Opcode


class FusionBuilder:
    """The instructions of a fused computation, added in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.instructions: list[HloInstruction] = []
        self.params: list[HloInstruction] = []
        self._names = itertools.count()

    def add(self, opcode: Opcode, shape: Shape, operands: list[HloInstruction],
            **attrs: Any) -> HloInstruction:
        inst = HloInstruction(f"{opcode.text}.{next(self._names)}", opcode, shape,
                              tuple(operands), attrs)
        self.instructions.append(inst)
        return inst

    def param(self, shape: Shape) -> HloInstruction:
        param = self.add(_O.PARAMETER, shape, [], number=len(self.params))
        self.params.append(param)
        return param

    def fold(self, combiner: HloComputation, values: list[HloInstruction],
             shape: Shape) -> HloInstruction:
        """`values` combined left to right by the scalar `combiner`, elementwise."""
        total = values[0]
        for value in values[1:]:
            total = self.apply(combiner, [total, value], shape)
        if total.opcode is _O.PARAMETER:  # a group of one: its own operand
            total = self.add(_O.COPY, shape, [total])
        return total

    def apply(self, comp: HloComputation, args: list[HloInstruction],
              shape: Shape) -> HloInstruction:
        """The scalar computation `comp` applied to arrays `args` elementwise."""
        values: dict[int, HloInstruction] = {}
        for inst in comp.instructions:
            like = Shape(inst.shape.dtype, shape.dims, shape.layout) \
                if not inst.shape.is_tuple else inst.shape
            if inst.opcode is _O.PARAMETER:
                value = args[inst.attr("number")]
            elif inst.opcode is _O.CONSTANT:
                scalar = self.add(_O.CONSTANT, inst.shape, [], literal=inst.attr("literal"))
                value = self.add(_O.BROADCAST, like, [scalar], dimensions=())
            elif inst.opcode is _O.FUSION:  # the pipeline fused the combiner's body
                value = self.apply(inst.called[0], [values[id(o)] for o in inst.operands],
                                   shape)
            elif inst.opcode.is_elementwise:
                value = self.add(inst.opcode, like, [values[id(o)] for o in inst.operands],
                                 **dict(inst.attrs))
            elif inst.opcode in (_O.BITCAST, _O.RESHAPE, _O.COPY) and inst.shape.rank == 0:
                value = values[id(inst.operands[0])]
            else:
                raise NotImplementedError(f"the cpu backend cannot apply {inst.opcode.text} "
                                          f"({inst.name}) of {comp.name} in a collective yet")
            values[id(inst)] = value
        return values[id(comp.root)]

    def block(self, value: HloInstruction, dim: int, start: HloInstruction,
              shape: Shape) -> HloInstruction:
        """The block of `shape` of `value` starting at `start` along `dim`."""
        zero = self.add(_O.CONSTANT, start.shape, [], literal=np.int32(0))
        starts = [start if d == dim else zero for d in range(shape.rank)]
        return self.add(_O.DYNAMIC_SLICE, shape, [value, *starts], sizes=shape.dims)

    def fusion(self, root: HloInstruction) -> HloInstruction:
        comp = HloComputation(f"{self.name}.computation", tuple(self.instructions), root)
        return HloInstruction(self.name, _O.FUSION, root.shape, tuple(self.params),
                              {"kind": "kLoop"}, (comp,))
