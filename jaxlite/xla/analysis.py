"""Analyses of HLO: plain functions that read the IR and return data (mirrors the helper
analyses XLA's passes consult: use counts, users, reachability, HloCostAnalysis).

Nothing here rewrites. Passes ask these functions questions (is this value still needed? are
these two instructions the same computation? how expensive is this?) and decide themselves.

- `use_counts`, `users`: who reads each instruction of a computation.
- `live_instructions`, `reachable_computations`: what the root (the entry) still needs.
- `freeze_attr`, `computation_fingerprint`, `instruction_key`: hashable keys that are equal
  exactly when two instructions (computations) compute the same thing, names aside;
  constants compare by their bytes, so 0.0 and -0.0 differ.
- `instruction_cost`, `computation_cost`, `module_cost`: flops, transcendentals and bytes
  accessed, estimated as XLA's cost analysis does (one flop per output element of an
  elementwise op, two per multiply-add of a dot, the combiner's cost per reduced element).
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule, post_order
from jaxlite.xla.ir import reachable_computations as _reachable
from jaxlite.xla.opcodes import Kind, Opcode

__all__ = [
    "TRANSCENDENTAL_OPCODES",
    "Cost",
    "computation_cost",
    "computation_fingerprint",
    "freeze_attr",
    "has_side_effects",
    "instruction_cost",
    "instruction_key",
    "live_instructions",
    "module_cost",
    "reachable_computations",
    "use_counts",
    "users",
]


# ------------------------------------------------------------------------------ uses

def use_counts(comp: HloComputation) -> dict[HloInstruction, int]:
    """How many operand slots read each instruction (`add(x, x)` counts 2 for `x`)."""
    counts = {inst: 0 for inst in comp.instructions}
    for inst in comp.instructions:
        for operand in inst.operands:
            counts[operand] += 1
    return counts


def users(comp: HloComputation) -> dict[HloInstruction, list[HloInstruction]]:
    """The distinct users of each instruction, in the computation's order."""
    result: dict[HloInstruction, list[HloInstruction]] = {i: [] for i in comp.instructions}
    for inst in comp.instructions:
        for operand in dict.fromkeys(inst.operands):
            result[operand].append(inst)
    return result


_CONTROL_OPCODES = (Opcode.WHILE, Opcode.CONDITIONAL, Opcode.CALL)


def has_side_effects(inst: HloInstruction) -> bool:
    """Whether removing, merging or reordering `inst` could change what the program does.

    A custom-call counts as side-effecting unless it says otherwise with
    `custom_call_has_side_effect=false` (XLA's attribute, whose absence XLA reads as pure;
    ours reads it as side-effecting, the safe side for targets written before it existed).
    Control flow counts when a computation it runs holds a side effect (a debug print in a
    loop body).
    """
    if inst.opcode is Opcode.CUSTOM_CALL:
        return bool(inst.attrs.get("custom_call_has_side_effect", True))
    if inst.opcode in _CONTROL_OPCODES:
        return any(has_side_effects(i) for comp in inst.called for i in comp.instructions)
    return False


def live_instructions(comp: HloComputation) -> list[HloInstruction]:
    """The instructions the root needs, plus every parameter and side-effecting instruction
    (with what they need), in the computation's order."""
    keep = [comp.root] + [i for i in comp.instructions
                          if i.opcode is Opcode.PARAMETER or has_side_effects(i)]
    live = {id(i) for i in post_order(keep)}
    return [i for i in comp.instructions if id(i) in live]


def reachable_computations(module: HloModule) -> list[HloComputation]:
    """The computations the entry calls, transitively, callees first (entry last)."""
    return _reachable(module.entry)


# ------------------------------------------------------------------------ equality keys

def freeze_attr(value: Any) -> Hashable:
    """A hashable key of an attribute value; equal keys mean equal values.

    Arrays compare by dtype, shape and bytes (so -0.0 differs from 0.0 and a NaN equals the
    same NaN); numbers carry their type, so `1`, `1.0` and `True` differ.
    """
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.ascontiguousarray(value)
        return ("array", array.dtype, array.shape, array.tobytes())
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted((str(k), freeze_attr(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("sequence", tuple(freeze_attr(v) for v in value))
    if isinstance(value, float):
        return ("float", np.float64(value).tobytes())
    if isinstance(value, (bool, int, str)) or value is None:
        return (type(value).__name__, value)
    try:
        hash(value)
    except TypeError:
        return ("repr", type(value).__name__, repr(value))
    return (type(value).__name__, value)


def _attrs_key(inst: HloInstruction) -> Hashable:
    return tuple(sorted((name, freeze_attr(v)) for name, v in inst.attrs.items()))


def computation_fingerprint(comp: HloComputation,
                            cache: dict[int, Hashable] | None = None) -> Hashable:
    """A key equal for two computations that compute the same thing, names aside.

    `cache` (id of a computation -> its fingerprint) saves work across calls.
    """
    cache = {} if cache is None else cache
    if id(comp) in cache:
        return cache[id(comp)]
    index = {id(inst): i for i, inst in enumerate(comp.instructions)}
    body = tuple((inst.opcode, inst.shape, tuple(index[id(o)] for o in inst.operands),
                  _attrs_key(inst),
                  tuple(computation_fingerprint(c, cache) for c in inst.called))
                 for inst in comp.instructions)
    key = (body, index[id(comp.root)])
    cache[id(comp)] = key
    return key


def instruction_key(inst: HloInstruction,
                    cache: dict[int, Hashable] | None = None) -> Hashable:
    """A key equal for instructions with the same opcode, shape, operands (by identity),
    attributes and called computations (by fingerprint)."""
    return (inst.opcode, inst.shape, tuple(id(o) for o in inst.operands), _attrs_key(inst),
            tuple(computation_fingerprint(c, cache) for c in inst.called))


# -------------------------------------------------------------------------------- cost

TRANSCENDENTAL_OPCODES = frozenset({
    Opcode.EXP, Opcode.EXPM1, Opcode.EXP2, Opcode.LOG, Opcode.LOG1P, Opcode.LOGISTIC,
    Opcode.SIN, Opcode.COS, Opcode.TAN, Opcode.TANH, Opcode.SQRT, Opcode.RSQRT,
    Opcode.CBRT, Opcode.POWER, Opcode.ATAN2, Opcode.ERF, Opcode.ERFC, Opcode.ERF_INV,
    Opcode.LGAMMA, Opcode.DIGAMMA, Opcode.ACOS, Opcode.ACOSH, Opcode.ASIN, Opcode.ASINH,
    Opcode.ATAN, Opcode.ATANH, Opcode.COSH, Opcode.SINH})


@dataclass(frozen=True)
class Cost:
    """Estimated work of an instruction or computation (as XLA's HloCostAnalysis counts)."""

    flops: int = 0
    transcendentals: int = 0
    bytes_accessed: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.flops + other.flops, self.transcendentals + other.transcendentals,
                    self.bytes_accessed + other.bytes_accessed)

    def scaled(self, factor: int) -> Cost:
        return Cost(self.flops * factor, self.transcendentals * factor,
                    self.bytes_accessed * factor)


_NO_TRAFFIC = (Opcode.PARAMETER, Opcode.TUPLE, Opcode.GET_TUPLE_ELEMENT, Opcode.CONSTANT)


def _elements(inst: HloInstruction) -> int:
    shape = inst.shape
    if shape.is_tuple:
        return sum(s.size for s in shape.tuple_shapes or () if not s.is_tuple)
    return shape.size


def _traffic(inst: HloInstruction) -> int:
    if inst.opcode in _NO_TRAFFIC:
        return 0
    return sum(o.shape.nbytes for o in inst.operands) + inst.shape.nbytes


def _combiner_flops(comp: HloComputation) -> int:
    """Flops of one application of a reduction's combiner (at least 1)."""
    return max(1, computation_cost(comp).flops)


def _dot_flops(inst: HloInstruction) -> int:
    lhs = inst.operands[0].shape
    contracted = 1
    for d in inst.attr("lhs_contracting", ()):
        contracted *= lhs.dims[d]
    return 2 * inst.shape.size * contracted


def _convolution_flops(inst: HloInstruction) -> int:
    # dim_labels read like `b01f_01io->b01f`; `o` marks the kernel's output features. Each
    # output element is a sum over the kernel's other elements (one feature group's worth).
    kernel = inst.operands[1].shape
    labels = str(inst.attr("dim_labels", ""))
    kernel_labels = labels.split("_")[1].split("->")[0] if "_" in labels else ""
    out_features = kernel.dims[kernel_labels.index("o")] if "o" in kernel_labels else 1
    return 2 * inst.shape.size * (kernel.size // max(1, out_features))


def instruction_cost(inst: HloInstruction) -> Cost:
    """Estimated flops, transcendentals and bytes of one instruction (its callees included)."""
    op = inst.opcode
    traffic = _traffic(inst)
    if op.kind is Kind.ELEMENTWISE:
        if op in TRANSCENDENTAL_OPCODES:
            return Cost(0, _elements(inst), traffic)
        return Cost(_elements(inst), 0, traffic)
    if op in (Opcode.REDUCE, Opcode.REDUCE_WINDOW):
        inputs = inst.operands[:len(inst.operands) // 2]
        reduced = inputs[0].shape.size if op is Opcode.REDUCE else _elements(inst) * max(
            1, int(np.prod(inst.attr("window").size)))
        return Cost(reduced * _combiner_flops(inst.called[0]), 0, traffic)
    if op is Opcode.DOT:
        return Cost(_dot_flops(inst), 0, traffic)
    if op is Opcode.CONVOLUTION:
        return Cost(_convolution_flops(inst), 0, traffic)
    if op is Opcode.FUSION:
        inner = computation_cost(inst.called[0])
        return Cost(inner.flops, inner.transcendentals, traffic)
    if op in (Opcode.CALL, Opcode.WHILE, Opcode.CONDITIONAL):
        # The trip count of a while and the branch taken are unknown: count each callee once.
        total = Cost()
        for callee in inst.called:
            total = total + computation_cost(callee)
        return total
    return Cost(0, 0, traffic)


def computation_cost(comp: HloComputation) -> Cost:
    """The summed cost of the instructions of `comp`."""
    total = Cost()
    for inst in comp.instructions:
        total = total + instruction_cost(inst)
    return total


def module_cost(module: HloModule) -> Cost:
    """The cost of running the module's entry once."""
    return computation_cost(module.entry)
