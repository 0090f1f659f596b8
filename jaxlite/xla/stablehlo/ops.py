"""Per-opcode rules of the StableHLO printer: which StableHLO (or CHLO) op each HLO
opcode becomes, with which properties.

A rule is `rule(writer, inst, operands) -> values`: `operands` holds the SSA values of each
operand (one per array leaf), and the rule returns the values of `inst`. The name tables
(`SAME_TYPE_OPS`, `GENERIC_ELEMENTWISE_OPS`, `CHLO_OPS`) are shared with a parser, which
reads them backwards. Control flow, regions and custom calls are in `ops_regions.py`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves

Rule = Callable[[FunctionWriter, HloInstruction, Sequence[Leaves]], Leaves]

_O = Opcode

# Elementwise ops StableHLO writes in its short form when all types agree.
SAME_TYPE_OPS: dict[Opcode, str] = {
    _O.ABS: "abs", _O.CBRT: "cbrt", _O.CEIL: "ceil", _O.COS: "cosine",
    _O.EXP: "exponential", _O.EXPM1: "exponential_minus_one", _O.FLOOR: "floor",
    _O.LOG: "log", _O.LOG1P: "log_plus_one", _O.LOGISTIC: "logistic", _O.NEGATE: "negate",
    _O.NOT: "not", _O.POPCNT: "popcnt", _O.ROUND_AFZ: "round_nearest_afz",
    _O.ROUND_EVEN: "round_nearest_even", _O.RSQRT: "rsqrt", _O.SIGN: "sign", _O.SIN: "sine",
    _O.SQRT: "sqrt", _O.TAN: "tan", _O.TANH: "tanh",
    _O.ADD: "add", _O.AND: "and", _O.ATAN2: "atan2", _O.DIVIDE: "divide",
    _O.MAXIMUM: "maximum", _O.MINIMUM: "minimum", _O.MULTIPLY: "multiply", _O.OR: "or",
    _O.POWER: "power", _O.REMAINDER: "remainder", _O.SHIFT_LEFT: "shift_left",
    _O.SHIFT_RIGHT_ARITHMETIC: "shift_right_arithmetic",
    _O.SHIFT_RIGHT_LOGICAL: "shift_right_logical", _O.SUBTRACT: "subtract", _O.XOR: "xor",
}

# Elementwise ops whose operand and result types differ, written in the generic form.
GENERIC_ELEMENTWISE_OPS: dict[Opcode, str] = {
    _O.CONVERT: "convert", _O.IMAG: "imag", _O.REAL: "real", _O.IS_FINITE: "is_finite",
    _O.COMPLEX: "complex", _O.SELECT: "select", _O.CLAMP: "clamp",
    _O.BITCAST_CONVERT: "bitcast_convert",
}

# Functions StableHLO leaves to the CHLO dialect, which XLA's StableHLO reader expands
# (our backends compute these directly: the opcodes marked `extension`).
CHLO_OPS: dict[Opcode, str] = {
    _O.ACOS: "acos", _O.ACOSH: "acosh", _O.ASIN: "asin", _O.ASINH: "asinh",
    _O.ATAN: "atan", _O.ATANH: "atanh", _O.COSH: "cosh", _O.SINH: "sinh",
    _O.ERF: "erf", _O.ERFC: "erfc", _O.ERF_INV: "erf_inv", _O.LGAMMA: "lgamma",
    _O.DIGAMMA: "digamma", _O.NEXT_AFTER: "next_after",
}

# Ops that are one StableHLO op with properties (the rules below say which).
STRUCTURED_OPS: dict[Opcode, str] = {
    _O.COMPARE: "compare", _O.CONSTANT: "constant", _O.RESHAPE: "reshape",
    _O.BROADCAST: "broadcast_in_dim", _O.TRANSPOSE: "transpose", _O.REVERSE: "reverse",
    _O.CONCATENATE: "concatenate", _O.SLICE: "slice", _O.PAD: "pad",
    _O.DYNAMIC_SLICE: "dynamic_slice", _O.DYNAMIC_UPDATE_SLICE: "dynamic_update_slice",
    _O.IOTA: "iota", _O.GATHER: "gather", _O.DOT: "dot_general",
    _O.CONVOLUTION: "convolution", _O.REDUCE_PRECISION: "reduce_precision",
}

# The comparison type HLO's `compare` writes explicitly (`type=TOTALORDER`) keeps its
# name in StableHLO; others are inferred from the element type (types.DEFAULT_COMPARE_TYPES).
COMPARISON_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")


def single_values(operands: Sequence[Leaves]) -> list[str]:
    """The single SSA value of each (array-shaped) operand."""
    values = []
    for leaves in operands:
        if len(leaves) != 1:
            raise TypeError(f"expected an array operand, got a tuple of {len(leaves)} arrays")
        values.append(leaves[0])
    return values


def _same_type(name: str) -> Rule:
    def rule(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
        return w.same_type(f"stablehlo.{name}", single_values(operands), inst.shape)
    return rule


def _generic(op: str) -> Rule:
    def rule(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
        return w.generic(op, single_values(operands), [inst.shape])
    return rule


def _compare(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    lhs = inst.operands[0].shape
    kind = inst.attr("type") or T.DEFAULT_COMPARE_TYPES[np.dtype(lhs.dtype).kind]
    if kind not in COMPARISON_TYPES:
        raise ValueError(f"unknown comparison type {kind!r}")
    props = {"comparison_direction": T.enum_attr("comparison_direction", inst.attr("direction")),
             "compare_type": T.enum_attr("comparison_type", kind)}
    return w.generic(_name(_O.COMPARE), single_values(operands), [inst.shape], props)


def _exp2(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    # StableHLO has no exp2: 2 ** x.
    two = w.constant(T.dense_literal(np.asarray(2, inst.shape.dtype)), inst.shape)
    return w.same_type("stablehlo.power", two + single_values(operands), inst.shape)


def _reduce_precision(w: FunctionWriter, inst: HloInstruction,
                      operands: Sequence[Leaves]) -> Leaves:
    props = {"exponent_bits": f"{int(inst.attr('exponent_bits'))} : i32",
             "mantissa_bits": f"{int(inst.attr('mantissa_bits'))} : i32"}
    return w.generic(_name(_O.REDUCE_PRECISION), single_values(operands), [inst.shape], props)


def _name(opcode: Opcode) -> str:
    return f"stablehlo.{STRUCTURED_OPS[opcode]}"


def _constant(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    literal = np.asarray(inst.attr("literal"), dtype=inst.shape.dtype).reshape(inst.shape.dims)
    return w.constant(T.dense_literal(literal), inst.shape)


def _tuple(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    return [value for leaves in operands for value in leaves]


def _get_tuple_element(w: FunctionWriter, inst: HloInstruction,
                       operands: Sequence[Leaves]) -> Leaves:
    parts = inst.operands[0].shape.tuple_shapes or ()
    index = inst.attr("index")
    start = sum(len(T.leaf_shapes(s)) for s in parts[:index])
    return list(operands[0][start:start + len(T.leaf_shapes(parts[index]))])


def _copy(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    return list(operands[0])  # values are immutable: a copy is the value itself


# ----------------------------------------------------------------------------- movement

def _props_rule(opcode: Opcode, props: Callable[[HloInstruction], dict[str, str]]) -> Rule:
    def rule(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
        return w.generic(_name(opcode), single_values(operands), [inst.shape], props(inst))
    return rule


def _bitcast(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    source = inst.operands[0].shape
    default = Shape(inst.shape.dtype, inst.shape.dims)
    if source.dtype != inst.shape.dtype or inst.shape.layout != default.layout or \
            source.layout != Shape(source.dtype, source.dims).layout:
        raise NotImplementedError(
            f"StableHLO printer: bitcast %{inst.name} changes the element type or a layout; "
            "StableHLO has no layouts (print the module before layout assignment)")
    return w.generic(_name(_O.RESHAPE), single_values(operands), [inst.shape])


def _slice_props(inst: HloInstruction) -> dict[str, str]:
    starts = inst.attr("starts")
    return {"start_indices": T.i64_array(starts),
            "limit_indices": T.i64_array(inst.attr("limits")),
            "strides": T.i64_array(inst.attr("strides") or (1,) * len(starts))}


def _pad_props(inst: HloInstruction) -> dict[str, str]:
    padding = inst.attr("padding")
    return {"edge_padding_low": T.i64_array(p[0] for p in padding),
            "edge_padding_high": T.i64_array(p[1] for p in padding),
            "interior_padding": T.i64_array(p[2] if len(p) > 2 else 0 for p in padding)}


def _concatenate_props(inst: HloInstruction) -> dict[str, str]:
    dims = inst.attr("dimensions")
    dim = dims if isinstance(dims, (int, np.integer)) else dims[0]
    return {"dimension": T.i64(dim)}


def _gather(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    a = inst.attr
    numbers = T.struct_attr("gather", [
        ("offset_dims", a("offset_dims")), ("collapsed_slice_dims", a("collapsed_slice_dims")),
        ("operand_batching_dims", a("operand_batching_dims", ())),
        ("start_indices_batching_dims", a("start_indices_batching_dims", ())),
        ("start_index_map", a("start_index_map")), ("index_vector_dim", a("index_vector_dim"))])
    props = {"dimension_numbers": numbers, "slice_sizes": T.i64_array(a("slice_sizes")),
             "indices_are_sorted": T.boolean(a("indices_are_sorted", False))}
    return w.generic(_name(_O.GATHER), single_values(operands), [inst.shape], props)


def _dot(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    a = inst.attr
    numbers = T.struct_attr("dot", [
        ("lhs_batching_dimensions", a("lhs_batch", ())),
        ("rhs_batching_dimensions", a("rhs_batch", ())),
        ("lhs_contracting_dimensions", a("lhs_contracting", ())),
        ("rhs_contracting_dimensions", a("rhs_contracting", ()))])
    return w.generic(_name(_O.DOT), single_values(operands), [inst.shape],
                     {"dot_dimension_numbers": numbers})


def conv_dimension_numbers(dim_labels: str) -> str:
    """`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>` from HLO's
    `b01f_01io->b01f`: the label of each dimension, in dimension order."""
    inputs, output = dim_labels.split("->")
    lhs, rhs = inputs.split("_")
    return "#stablehlo.conv<" + "x".join(
        "[" + ", ".join(part) + "]" for part in (lhs, rhs)) + "->[" + ", ".join(output) + "]>"


def window_fields(window: Any) -> dict[str, tuple]:
    """A `Window`, or the mapping with XLA's text keys that select-and-scatter uses, as
    per-dimension tuples: size, stride, pad_low, pad_high, base/window dilation, reversal."""
    if isinstance(window, dict) or hasattr(window, "keys"):
        size = tuple(window["size"])
        pads = window.get("pad") or ((0, 0),) * len(size)
        return {"size": size, "stride": tuple(window.get("stride") or (1,) * len(size)),
                "pad_low": tuple(p[0] for p in pads), "pad_high": tuple(p[1] for p in pads),
                "base_dilation": tuple(window.get("lhs_dilate") or (1,) * len(size)),
                "window_dilation": tuple(window.get("rhs_dilate") or (1,) * len(size)),
                "reversal": tuple(bool(r) for r in window.get("rhs_reversal") or
                                  (0,) * len(size))}
    return {name: tuple(getattr(window, name)) for name in (
        "size", "stride", "pad_low", "pad_high", "base_dilation", "window_dilation",
        "reversal")}


def _convolution(w: FunctionWriter, inst: HloInstruction,
                 operands: Sequence[Leaves]) -> Leaves:
    win = window_fields(inst.attr("window"))
    props = {"dimension_numbers": conv_dimension_numbers(inst.attr("dim_labels")),
             "feature_group_count": T.i64(inst.attr("feature_group_count", 1)),
             "batch_group_count": T.i64(inst.attr("batch_group_count", 1)),
             "window_strides": T.i64_array(win["stride"]),
             "padding": T.padding_attr(win["pad_low"], win["pad_high"]),
             "lhs_dilation": T.i64_array(win["base_dilation"]),
             "rhs_dilation": T.i64_array(win["window_dilation"]),
             "window_reversal": T.bool_array(win["reversal"])}
    return w.generic(_name(_O.CONVOLUTION), single_values(operands), [inst.shape], props)


def _dims(key: str, prop: str) -> Callable[[HloInstruction], dict[str, str]]:
    return lambda inst: {prop: T.i64_array(inst.attr(key))}


RULES: dict[Opcode, Rule] = {
    **{op: _same_type(name) for op, name in SAME_TYPE_OPS.items()},
    **{op: _generic(f"stablehlo.{name}") for op, name in GENERIC_ELEMENTWISE_OPS.items()},
    **{op: _generic(f"chlo.{name}") for op, name in CHLO_OPS.items()},
    _O.COMPARE: _compare,
    _O.EXP2: _exp2,
    _O.REDUCE_PRECISION: _reduce_precision,
    _O.CONSTANT: _constant,
    _O.TUPLE: _tuple,
    _O.GET_TUPLE_ELEMENT: _get_tuple_element,
    _O.COPY: _copy,
    _O.BITCAST: _bitcast,
    _O.RESHAPE: _generic(_name(_O.RESHAPE)),
    _O.BROADCAST: _props_rule(_O.BROADCAST, _dims("dimensions", "broadcast_dimensions")),
    _O.TRANSPOSE: _props_rule(_O.TRANSPOSE, _dims("dimensions", "permutation")),
    _O.REVERSE: _props_rule(_O.REVERSE, _dims("dimensions", "dimensions")),
    _O.CONCATENATE: _props_rule(_O.CONCATENATE, _concatenate_props),
    _O.SLICE: _props_rule(_O.SLICE, _slice_props),
    _O.PAD: _props_rule(_O.PAD, _pad_props),
    _O.DYNAMIC_SLICE: _props_rule(_O.DYNAMIC_SLICE, _dims("sizes", "slice_sizes")),
    _O.DYNAMIC_UPDATE_SLICE: _generic(_name(_O.DYNAMIC_UPDATE_SLICE)),
    _O.IOTA: _props_rule(_O.IOTA,
                         lambda inst: {"iota_dimension": T.i64(inst.attr("iota_dimension"))}),
    _O.GATHER: _gather,
    _O.DOT: _dot,
    _O.CONVOLUTION: _convolution,
}
