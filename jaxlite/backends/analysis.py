"""Cost and memory analyses of an HLO module, shared by the backends.

`cost_analysis` estimates the work of a module the way `jax.stages.Compiled.cost_analysis`
reports it: floating-point (and integer) operations, transcendental function evaluations,
and bytes read and written at the top level of the entry computation. `memory_analysis`
sizes the arguments, the results, the results that may live in donated arguments, and takes
the peak temporary size from the backend (its buffer assignment).

Counting rules (ours; XLA's `HloCostAnalysis` is the model for what the numbers mean):
an elementwise instruction costs one flop per output element, or one transcendental for
exp, log, tanh, sin and their kin; a `dot` costs two flops per multiply-add; a `reduce`
applies its reducer once per input element that is folded into an output; a fusion or
call costs what its computation costs; a `while` body counts once (the trip count is not
known statically). Bytes accessed are each top-level instruction's operands plus its
result; parameters, constants, tuples and tuple elements move nothing by themselves.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from jaxlite.backends.base import MemoryAnalysis, entry_result_shapes
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.shape import Shape

TRANSCENDENTAL = frozenset({
    Opcode.EXP, Opcode.EXPM1, Opcode.EXP2, Opcode.LOG, Opcode.LOG1P, Opcode.LOGISTIC,
    Opcode.TANH, Opcode.SIN, Opcode.COS, Opcode.TAN, Opcode.ATAN2, Opcode.POWER,
    Opcode.RSQRT, Opcode.SQRT, Opcode.CBRT, Opcode.ERF, Opcode.ERFC, Opcode.ERF_INV,
    Opcode.LGAMMA, Opcode.DIGAMMA, Opcode.ACOS, Opcode.ACOSH, Opcode.ASIN, Opcode.ASINH,
    Opcode.ATAN, Opcode.ATANH, Opcode.COSH, Opcode.SINH,
})

# Instructions that read or write no memory of their own.
_NO_TRAFFIC = frozenset({Opcode.PARAMETER, Opcode.CONSTANT, Opcode.TUPLE,
                         Opcode.GET_TUPLE_ELEMENT})


def _elements(shape: Shape) -> int:
    if shape.is_tuple:
        return sum(_elements(s) for s in shape.tuple_shapes or ())
    return shape.size


def _first_array(shape: Shape) -> Shape:
    while shape.is_tuple:
        shape = (shape.tuple_shapes or (Shape(np.float32),))[0]
    return shape


class _Costs:
    """Running totals of one analysis."""

    def __init__(self) -> None:
        self.flops = 0.0
        self.transcendentals = 0.0

    def add_computation(self, comp: HloComputation, times: float = 1.0) -> None:
        for inst in comp.instructions:
            self.add_instruction(inst, times)

    def add_instruction(self, inst: HloInstruction, times: float) -> None:
        op = inst.opcode
        out = _elements(inst.shape)
        if op in TRANSCENDENTAL:
            self.transcendentals += times * out
        elif op.kind is Kind.ELEMENTWISE:
            self.flops += times * out
        elif op is Opcode.DOT:
            self.flops += times * 2 * out * _contracted_size(inst)
        elif op is Opcode.CONVOLUTION:
            self.flops += times * 2 * out * _kernel_size_per_output(inst)
        elif op in (Opcode.REDUCE, Opcode.REDUCE_WINDOW):
            self.add_reduction(inst, times)
        elif op is Opcode.SORT and inst.called:
            n = _first_array(inst.operands[0].shape).size
            compares = n * max(1.0, float(np.log2(max(n, 2))))
            self.add_computation(inst.called[0], times * compares)
        elif op is Opcode.SELECT_AND_SCATTER:
            self.flops += times * _elements(inst.operands[0].shape)
        elif op in (Opcode.FUSION, Opcode.CALL, Opcode.WHILE, Opcode.CUSTOM_CALL):
            for callee in inst.called:
                self.add_computation(callee, times)
        elif op is Opcode.CONDITIONAL and inst.called:
            # The most expensive branch, as only one runs.
            branches = []
            for callee in inst.called:
                costs = _Costs()
                costs.add_computation(callee, times)
                branches.append(costs)
            worst = max(branches, key=lambda c: c.flops + c.transcendentals)
            self.flops += worst.flops
            self.transcendentals += worst.transcendentals

    def add_reduction(self, inst: HloInstruction, times: float) -> None:
        num_inputs = max(1, len(inst.operands) // 2)
        inputs = sum(_first_array(o.shape).size for o in inst.operands[:num_inputs])
        outputs = _elements(inst.shape)
        if inst.opcode is Opcode.REDUCE_WINDOW:
            sizes = _window_sizes(inst.attr("window"))
            per_output = int(np.prod(sizes, dtype=np.int64)) if len(sizes) else 1
            applications = outputs * max(per_output - 1, 0)
        else:
            applications = max(inputs - outputs, 0) // num_inputs
        if inst.called:
            self.add_computation(inst.called[0], times * applications)
        else:
            self.flops += times * applications


def _window_sizes(window: Any) -> tuple[int, ...]:
    # The attribute is a mapping with XLA's text keys or an object with a `size` field.
    sizes = window.get("size") if isinstance(window, Mapping) else getattr(window, "size", ())
    return tuple(int(s) for s in sizes or ())


def _contracted_size(inst: HloInstruction) -> int:
    lhs = inst.operands[0].shape
    dims = inst.attr("lhs_contracting", ()) or ()
    return int(np.prod([lhs.dims[d] for d in dims], dtype=np.int64)) if dims else 1


def _kernel_size_per_output(inst: HloInstruction) -> int:
    """Multiply-adds per output element: the kernel's size without its output features."""
    rhs = inst.operands[1].shape
    labels = str(inst.attr("dim_labels", "") or "")
    try:
        rhs_labels = labels.split("->")[0].split("_")[1]
        out_features = rhs.dims[rhs_labels.index("o")]
    except (IndexError, ValueError):
        out_features = rhs.dims[-1] if rhs.dims else 1
    return rhs.size // max(out_features, 1)


def _bytes_accessed(comp: HloComputation) -> float:
    total = 0
    for inst in comp.instructions:
        if inst.opcode in _NO_TRAFFIC:
            continue
        total += inst.shape.nbytes + sum(o.shape.nbytes for o in inst.operands)
    return float(total)


def cost_analysis(module: HloModule) -> dict[str, float]:
    """Estimated work of `module`: 'flops', 'transcendentals', 'bytes accessed'.

    Also 'bytes accessed{i}' for the bytes of entry parameter i and 'bytes accessedout{}'
    for the result's bytes, as XLA names them.
    """
    costs = _Costs()
    costs.add_computation(module.entry)
    result = {"flops": costs.flops, "transcendentals": costs.transcendentals,
              "bytes accessed": _bytes_accessed(module.entry)}
    for i, param in enumerate(module.entry.parameters):
        result[f"bytes accessed{i}{{}}"] = float(param.shape.nbytes)
    result["bytes accessedout{}"] = float(module.entry.root.shape.nbytes)
    return result


def aliased_bytes(module: HloModule, donated: Sequence[int]) -> int:
    """Bytes of results that can be written into donated parameters.

    Each donated parameter can hold one result of the same element type and dimensions;
    results are matched greedily in order, as input/output aliasing for `donate_argnums`
    pairs them.
    """
    params = module.entry.parameters
    free = [params[i].shape for i in sorted(set(donated)) if 0 <= i < len(params)]
    total = 0
    for shape in entry_result_shapes(module):
        for j, candidate in enumerate(free):
            if candidate.same_array(shape):
                total += shape.nbytes
                del free[j]
                break
    return total


def memory_analysis(module: HloModule, donated: Sequence[int],
                    temp_size_in_bytes: int = 0,
                    generated_code_size_in_bytes: int = 0) -> MemoryAnalysis:
    """Argument, output and alias sizes of `module`'s entry; temporaries as given."""
    arguments = sum(p.shape.nbytes for p in module.entry.parameters)
    outputs = sum(s.nbytes for s in entry_result_shapes(module))
    return MemoryAnalysis(argument_size_in_bytes=int(arguments),
                          output_size_in_bytes=int(outputs),
                          alias_size_in_bytes=aliased_bytes(module, donated),
                          temp_size_in_bytes=int(temp_size_in_bytes),
                          generated_code_size_in_bytes=int(generated_code_size_in_bytes))
