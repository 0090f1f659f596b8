"""Shape inference: the result shape of an HLO instruction from its operands (mirrors
xla::ShapeInference).

`infer_shape(opcode, operand_shapes, attrs, called, declared, name)` gives the shape that an
instruction with these operands, attributes and called computations must have, or raises a
`ValueError` naming the instruction, the opcode, the rule broken and the shapes involved.
Opcodes whose result type is chosen rather than implied (parameter, constant, convert,
bitcast-convert, iota, reshape, broadcast, custom-call) take the instruction's declared
shape as `declared` and check it. Layouts play no part: results have the default layout.

This module holds the elementwise, structural and control-flow rules and the table; the
data-movement rules are in `shape_inference_arrays`, reductions and contractions in
`shape_inference_reductions`.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.xla import shape_inference_arrays as arrays
from jaxlite.xla import shape_inference_collectives as collectives
from jaxlite.xla import shape_inference_reductions as reductions
from jaxlite.xla.ir import HloComputation
from jaxlite.xla.opcodes import COMPARISON_DIRECTIONS, Kind, Opcode
from jaxlite.xla.reduce_precision import check_format
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference_base import PRED, RuleContext, describe, scalar

__all__ = ["element_kind", "infer_shape"]

_O = Opcode

# ------------------------------------------------------------------------ element kinds

PRED_K, INT_K, FLOAT_K, COMPLEX_K = "pred", "integer", "floating-point", "complex"
_NUMERIC = (INT_K, FLOAT_K, COMPLEX_K)
_INEXACT = (FLOAT_K, COMPLEX_K)
_LOGICAL = (PRED_K, INT_K)
_ANY = (PRED_K, INT_K, FLOAT_K, COMPLEX_K)


@functools.cache
def element_kind(dtype: np.dtype) -> str:
    """pred, integer, floating-point or complex: the classes XLA's type rules speak of."""
    if dtype == PRED:
        return PRED_K
    if dtypes.is_complex(dtype):
        return COMPLEX_K
    if dtypes.is_floating(dtype):
        return FLOAT_K
    return INT_K


# Which element kinds each elementwise opcode accepts (XLA's per-opcode type checks).
_UNARY_KINDS: dict[Opcode, tuple[str, ...]] = {
    _O.ABS: _NUMERIC, _O.NEGATE: _NUMERIC, _O.SIGN: _NUMERIC,
    _O.NOT: _LOGICAL, _O.POPCNT: (INT_K,), _O.IS_FINITE: (FLOAT_K,),
    _O.CEIL: (FLOAT_K,), _O.FLOOR: (FLOAT_K,), _O.ROUND_AFZ: (FLOAT_K,),
    _O.ROUND_EVEN: (FLOAT_K,), _O.CBRT: (FLOAT_K,), _O.REAL: _INEXACT, _O.IMAG: _INEXACT,
    _O.ERF: (FLOAT_K,), _O.ERFC: (FLOAT_K,), _O.ERF_INV: (FLOAT_K,), _O.LGAMMA: (FLOAT_K,),
    _O.DIGAMMA: (FLOAT_K,), _O.REDUCE_PRECISION: (FLOAT_K,),
}
for _op in (_O.COS, _O.SIN, _O.TAN, _O.TANH, _O.EXP, _O.EXPM1, _O.LOG, _O.LOG1P,
            _O.LOGISTIC, _O.SQRT, _O.RSQRT, _O.ACOS, _O.ACOSH, _O.ASIN, _O.ASINH, _O.ATAN,
            _O.ATANH, _O.COSH, _O.SINH, _O.EXP2):
    _UNARY_KINDS[_op] = _INEXACT

_BINARY_KINDS: dict[Opcode, tuple[str, ...]] = {
    _O.ADD: _NUMERIC, _O.SUBTRACT: _NUMERIC, _O.MULTIPLY: _NUMERIC, _O.DIVIDE: _NUMERIC,
    _O.REMAINDER: (INT_K, FLOAT_K), _O.POWER: _NUMERIC, _O.MAXIMUM: _ANY, _O.MINIMUM: _ANY,
    _O.AND: _LOGICAL, _O.OR: _LOGICAL, _O.XOR: _LOGICAL, _O.SHIFT_LEFT: (INT_K,),
    _O.SHIFT_RIGHT_ARITHMETIC: (INT_K,), _O.SHIFT_RIGHT_LOGICAL: (INT_K,),
    _O.ATAN2: _INEXACT, _O.COMPLEX: (FLOAT_K,), _O.NEXT_AFTER: (FLOAT_K,), _O.COMPARE: _ANY,
}


def _check_kind(ctx: RuleContext, shape: Shape, kinds: Sequence[str]) -> None:
    if element_kind(shape.dtype) not in kinds:
        ctx.fail(f"operand {shape} has {element_kind(shape.dtype)} elements; this opcode "
                 f"takes {' or '.join(kinds)} elements")


# ------------------------------------------------------------------------ elementwise rules

def _unary_rule(ctx: RuleContext) -> Shape:
    x = ctx.array(0)
    _check_kind(ctx, x, _UNARY_KINDS[ctx.opcode])
    if ctx.opcode is _O.IS_FINITE:
        return Shape(PRED, x.dims)
    if ctx.opcode is _O.REDUCE_PRECISION:
        try:
            check_format(ctx.attr("exponent_bits"), ctx.attr("mantissa_bits"))
        except (TypeError, ValueError) as err:
            ctx.fail(str(err))
    if ctx.opcode in (_O.ABS, _O.REAL, _O.IMAG):
        return Shape(dtypes.real_dtype(x.dtype), x.dims)
    return Shape(x.dtype, x.dims)


def _binary_rule(ctx: RuleContext) -> Shape:
    x, y = ctx.array(0), ctx.array(1)
    if x.dims != y.dims or x.dtype != y.dtype:
        ctx.fail(f"operands must have equal dimensions and element types, got "
                 f"{describe([x, y])}")
    _check_kind(ctx, x, _BINARY_KINDS[ctx.opcode])
    if ctx.opcode is _O.COMPARE:
        direction = ctx.attr("direction")
        if direction not in COMPARISON_DIRECTIONS:
            ctx.fail(f"direction {direction!r} must be one of {COMPARISON_DIRECTIONS}")
        if element_kind(x.dtype) == COMPLEX_K and direction not in ("EQ", "NE"):
            ctx.fail(f"complex operands {x} can only be compared with EQ or NE, got "
                     f"{direction}")
        return Shape(PRED, x.dims)
    if ctx.opcode is _O.COMPLEX:
        if x.dtype not in (np.float32, np.float64):
            ctx.fail(f"complex takes f32 or f64 parts, got {x}")
        return Shape(np.complex64 if x.dtype == np.float32 else np.complex128, x.dims)
    return Shape(x.dtype, x.dims)


def _select_rule(ctx: RuleContext) -> Shape:
    pred, on_true, on_false = ctx.arrays()
    if pred.dtype != PRED:
        ctx.fail(f"the predicate must have pred elements, got {pred}")
    if not on_true.same_array(on_false):
        ctx.fail(f"both cases must have one shape, got {describe([on_true, on_false])}")
    if pred.dims != on_true.dims:
        ctx.fail(f"the predicate {pred} must have the dimensions of the cases {on_true}")
    return Shape(on_true.dtype, on_true.dims)


def _clamp_rule(ctx: RuleContext) -> Shape:
    low, x, high = ctx.arrays()
    if not low.dtype == x.dtype == high.dtype:
        ctx.fail(f"min, operand and max must share one element type, got "
                 f"{describe([low, x, high])}")
    for what, bound in (("min", low), ("max", high)):
        if bound.dims not in ((), x.dims):
            ctx.fail(f"{what} {bound} must be a scalar or have the operand's dimensions {x}")
    return Shape(x.dtype, x.dims)


def _convert_rule(ctx: RuleContext) -> Shape:
    x, out = ctx.array(0), ctx.need_declared()
    if out.is_tuple or out.dims != x.dims:
        ctx.fail(f"convert keeps the dimensions: {x} cannot become {out}")
    return Shape(out.dtype, x.dims)


# ------------------------------------------------------------------- structural rules

def _declared_rule(ctx: RuleContext) -> Shape:
    return ctx.need_declared()


def _parameter_rule(ctx: RuleContext) -> Shape:
    number = ctx.attr("number")
    if not isinstance(number, (int, np.integer)) or number < 0:
        ctx.fail(f"the parameter number must be an integer >= 0, got {number!r}")
    return ctx.need_declared()


def _constant_rule(ctx: RuleContext) -> Shape:
    out = ctx.need_declared()
    literal = ctx.attr("literal", None)
    if literal is not None and not out.is_tuple:
        value = np.asarray(literal)
        if value.shape != out.dims or value.dtype != out.dtype:
            ctx.fail(f"the literal ({np.dtype(value.dtype).name}{list(value.shape)}) does "
                     f"not have the declared shape {out}")
    return out


def _tuple_rule(ctx: RuleContext) -> Shape:
    return Shape.tuple(list(ctx.operands))


def _get_tuple_element_rule(ctx: RuleContext) -> Shape:
    operand = ctx.operands[0]
    index = ctx.attr("index")
    if not operand.is_tuple:
        ctx.fail(f"the operand {operand} is not a tuple")
    elements = operand.tuple_shapes or ()
    if not isinstance(index, (int, np.integer)) or not 0 <= index < len(elements):
        ctx.fail(f"index {index!r} is out of range for the tuple {operand}")
    return elements[int(index)]


# ---------------------------------------------------------------------- control rules

def _call_rule(ctx: RuleContext) -> Shape:
    role = "fused" if ctx.opcode is _O.FUSION else "to_apply"
    comp = ctx.computation(0, role)
    ctx.check_signature(comp, role, ctx.operands, comp.root.shape)
    return comp.root.shape


def _while_rule(ctx: RuleContext) -> Shape:
    state = ctx.operands[0]
    condition, body = ctx.computation(0, "condition"), ctx.computation(1, "body")
    ctx.check_signature(condition, "condition", [state], scalar(PRED))
    ctx.check_signature(body, "body", [state], state)
    return state


def _conditional_rule(ctx: RuleContext) -> Shape:
    ctx.count(2)
    selector = ctx.array(0, "the branch selector")
    branches = ctx.called
    if selector.rank != 0 or not (selector.dtype == PRED or selector.dtype == np.int32):
        ctx.fail(f"the branch selector must be pred[] or s32[], got {selector}")
    if selector.dtype == PRED and len(branches) != 2:
        ctx.fail(f"a pred selector needs 2 branches (true, false), got {len(branches)}")
    if not branches or len(ctx.operands) != len(branches) + 1:
        ctx.fail(f"needs one branch operand per branch computation: {len(branches)} "
                 f"branches, {len(ctx.operands) - 1} branch operands")
    result = branches[0].root.shape
    for i, branch in enumerate(branches):
        ctx.check_signature(branch, f"branch {i}", [ctx.operands[i + 1]], result)
    return result


def _custom_call_rule(ctx: RuleContext) -> Shape:
    target = ctx.attr("target")
    if not isinstance(target, str) or not target:
        ctx.fail(f"the custom-call target must be a non-empty string, got {target!r}")
    return ctx.need_declared()


# --------------------------------------------------------------------------------- table

_RULES: dict[Opcode, Callable[[RuleContext], Shape]] = {
    _O.SELECT: _select_rule, _O.CLAMP: _clamp_rule, _O.CONVERT: _convert_rule,
    _O.BITCAST: arrays.bitcast_rule, _O.BITCAST_CONVERT: arrays.bitcast_convert_rule, _O.BROADCAST: arrays.broadcast_rule,
    _O.CONCATENATE: arrays.concatenate_rule, _O.COPY: arrays.copy_rule,
    _O.DYNAMIC_SLICE: arrays.dynamic_slice_rule,
    _O.DYNAMIC_UPDATE_SLICE: arrays.dynamic_update_slice_rule,
    _O.GATHER: arrays.gather_rule, _O.IOTA: arrays.iota_rule, _O.PAD: arrays.pad_rule,
    _O.RESHAPE: arrays.reshape_rule, _O.REVERSE: arrays.reverse_rule,
    _O.SCATTER: arrays.scatter_rule, _O.SLICE: arrays.slice_rule,
    _O.TRANSPOSE: arrays.transpose_rule,
    _O.REDUCE: reductions.reduce_rule, _O.REDUCE_WINDOW: reductions.reduce_window_rule,
    _O.SELECT_AND_SCATTER: reductions.select_and_scatter_rule, _O.SORT: reductions.sort_rule,
    _O.DOT: reductions.dot_rule, _O.CONVOLUTION: reductions.convolution_rule,
    _O.CALL: _call_rule, _O.FUSION: _call_rule, _O.CONDITIONAL: _conditional_rule,
    _O.CUSTOM_CALL: _custom_call_rule, _O.WHILE: _while_rule,
    _O.CONSTANT: _constant_rule, _O.PARAMETER: _parameter_rule, _O.TUPLE: _tuple_rule,
    _O.GET_TUPLE_ELEMENT: _get_tuple_element_rule,
}
_RULES.update(collectives.RULES)
_RULES.update({op: _unary_rule for op in _UNARY_KINDS})
_RULES.update({op: _binary_rule for op in _BINARY_KINDS})
assert set(_RULES) == set(Opcode), set(Opcode) - set(_RULES)

# Opcodes whose operands may be tuples; every other opcode takes arrays only.
_TUPLE_OPERANDS = {_O.TUPLE, _O.GET_TUPLE_ELEMENT, _O.WHILE, _O.CALL, _O.FUSION,
                   _O.CONDITIONAL, _O.CUSTOM_CALL}


def infer_shape(opcode: Opcode, operand_shapes: Sequence[Shape],
                attrs: Mapping[str, Any] | None = None,
                called: Sequence[HloComputation] = (), declared: Shape | None = None,
                name: str | None = None) -> Shape:
    """The shape an instruction must have, given its operands (mirrors xla::ShapeInference).

    Parameters
    ----------
    opcode : the instruction's opcode.
    operand_shapes : the shapes of its operands, in order.
    attrs : its attributes, named as in ir.py's docstring.
    called : the computations it calls (to_apply, condition and body, branches, ...).
    declared : the instruction's own shape, needed by opcodes whose result type is chosen
        rather than implied (parameter, constant, convert, bitcast-convert, iota, reshape,
        broadcast, custom-call) and used as the preferred result type of dot/convolution.
    name : the instruction's name, for error messages.

    Returns
    -------
    Shape
        The inferred shape, with the default layout.

    Raises
    ------
    ValueError
        When a rule of the opcode is broken; the message names the instruction (when
        `name` is given), the opcode, the rule and the shapes involved.
    """
    ctx = RuleContext(opcode, tuple(operand_shapes), attrs or {}, tuple(called), declared,
                      name)
    arity = opcode.arity
    if arity is not None and len(ctx.operands) != arity:
        ctx.fail(f"takes {arity} operand(s), got {len(ctx.operands)}")
    if opcode.kind is Kind.ELEMENTWISE or opcode not in _TUPLE_OPERANDS:
        for i in range(len(ctx.operands)):
            ctx.array(i)
    return _RULES[opcode](ctx)
