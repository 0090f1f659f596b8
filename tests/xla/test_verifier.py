"""The verifier (one test per rule, each checking that the message names the instruction)
and shape inference for each opcode family."""
from __future__ import annotations

import numpy as np
import pytest

from jaxlite.xla.ir import (
    ComputationBuilder,
    HloComputation,
    HloInstruction,
    HloModule,
    NameUniquer,
)
from jaxlite.xla.opcodes import Opcode as O
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference import infer_shape
from jaxlite.xla.shape_inference_base import Window
from jaxlite.xla.verifier import HloVerificationError, verify_module

F32, S32, PRED = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)


def arr(dtype, *dims, layout=None) -> Shape:
    return Shape(np.dtype(dtype), dims, layout)


def scalar_add(names: NameUniquer, dtype=F32, name="add") -> HloComputation:
    b = ComputationBuilder(name, names)
    x, y = b.parameter(arr(dtype)), b.parameter(arr(dtype))
    return b.build(b.add(O.ADD, arr(dtype), (x, y)))


def module_of(comp: HloComputation, computations=()) -> HloModule:
    return HloModule("m", comp, tuple(computations))


def verify_fails(module: HloModule, *fragments: str) -> str:
    with pytest.raises(HloVerificationError) as info:
        verify_module(module)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


# ------------------------------------------------------------------------------ verifier

def test_a_valid_module_passes_and_layouts_may_differ():
    names = NameUniquer()
    add = scalar_add(names)
    b = ComputationBuilder("main", names)
    x = b.parameter(arr(F32, 2, 3))
    t = b.add(O.TRANSPOSE, arr(F32, 3, 2, layout=(0, 1)), (x,), {"dimensions": (1, 0)})
    zero = b.add(O.CONSTANT, arr(F32), attrs={"literal": np.float32(0)})
    r = b.add(O.REDUCE, arr(F32, 3), (t, zero), {"dimensions": (1,)}, (add,))
    verify_module(module_of(b.build(r)))


def test_operands_must_be_defined_before_use():
    names = NameUniquer()
    b = ComputationBuilder("main", names)
    x = b.parameter(arr(F32, 4))
    neg = HloInstruction("negate.9", O.NEGATE, arr(F32, 4), (x,))
    exp = HloInstruction("exp.8", O.EXP, arr(F32, 4), (neg,))
    comp = HloComputation("main", (x, exp, neg), neg)
    verify_fails(module_of(comp), "%main", "%exp.8", "%negate.9", "not defined before")


def test_operands_from_another_computation_are_rejected():
    names = NameUniquer()
    other = ComputationBuilder("other", names)
    stray = other.parameter(arr(F32, 4))
    b = ComputationBuilder("main", names)
    b.parameter(arr(F32, 4))
    comp = b.build(b.add(O.NEGATE, arr(F32, 4), (stray,), name="neg"))
    verify_fails(module_of(comp), "%neg", "not defined before its use")


def test_names_are_unique_in_the_module():
    names = NameUniquer()
    add = scalar_add(names)
    b = ComputationBuilder("main", names)
    x = b.parameter(arr(F32, 4))
    zero = b.add(O.CONSTANT, arr(F32), attrs={"literal": np.float32(0)})
    r = b.add(O.REDUCE, arr(F32), (x, zero), {"dimensions": (0,)}, (add,))
    twin = HloInstruction(add.root.name, O.NEGATE, arr(F32), (r,))
    comp = HloComputation("main", tuple(b.instructions) + (twin,), twin)
    verify_fails(module_of(comp), f"%{add.root.name}", "already used in computation %add")


def test_parameter_numbers_have_no_gaps():
    names = NameUniquer()
    x = HloInstruction("x", O.PARAMETER, arr(F32), attrs={"number": 0})
    y = HloInstruction("y", O.PARAMETER, arr(F32), attrs={"number": 2})
    add = HloInstruction("sum", O.ADD, arr(F32), (x, y))
    verify_fails(module_of(HloComputation("main", (x, y, add), add)), "%main",
                 "parameter numbers must be 0..1", "[0, 2]")
    del names


def test_arity_follows_the_opcode_table():
    x = HloInstruction("x", O.PARAMETER, arr(F32), attrs={"number": 0})
    neg = HloInstruction("neg.1", O.NEGATE, arr(F32), (x, x))
    verify_fails(module_of(HloComputation("main", (x, neg), neg)), "%neg.1",
                 "negate takes 1 operand(s), got 2")


def test_shapes_must_match_the_inferred_shape():
    x = HloInstruction("x", O.PARAMETER, arr(F32, 4), attrs={"number": 0})
    add = HloInstruction("add.3", O.ADD, arr(F32, 5), (x, x))
    verify_fails(module_of(HloComputation("main", (x, add), add)), "%add.3", "f32[5]{0}",
                 "does not match the shape f32[4]{0}")
    cmp = HloInstruction("lt.1", O.COMPARE, arr(F32, 4), (x, x), {"direction": "LT"})
    verify_fails(module_of(HloComputation("main", (x, cmp), cmp)), "%lt.1", "pred[4]{0}")


def test_shape_rules_are_reported_with_the_instruction():
    x = HloInstruction("x", O.PARAMETER, arr(F32, 4), attrs={"number": 0})
    y = HloInstruction("y", O.PARAMETER, arr(F32, 3), attrs={"number": 1})
    add = HloInstruction("add.3", O.ADD, arr(F32, 4), (x, y))
    verify_fails(module_of(HloComputation("main", (x, y, add), add)),
                 "in computation %main, instruction %add.3: add: operands must have equal",
                 "f32[4]{0}, f32[3]{0}")


def test_called_computations_must_be_in_the_module():
    names = NameUniquer()
    add = scalar_add(names)
    b = ComputationBuilder("main", names)
    x = b.parameter(arr(F32, 4))
    zero = b.add(O.CONSTANT, arr(F32), attrs={"literal": np.float32(0)})
    r = b.add(O.REDUCE, arr(F32), (x, zero), {"dimensions": (0,)}, (add,), name="sum")
    main = b.build(r)
    verify_fails(module_of(main, [main]), "%sum", "calls computation %add",
                 "not in the module")


def test_reduction_computations_take_scalars():
    names = NameUniquer()
    c = ComputationBuilder("vector_add", names)
    p, q = c.parameter(arr(F32, 4)), c.parameter(arr(F32, 4))
    vector_add = c.build(c.add(O.ADD, arr(F32, 4), (p, q)))
    b = ComputationBuilder("main", names)
    x = b.parameter(arr(F32, 4))
    zero = b.add(O.CONSTANT, arr(F32), attrs={"literal": np.float32(0)})
    r = b.add(O.REDUCE, arr(F32), (x, zero), {"dimensions": (0,)}, (vector_add,),
              name="sum")
    verify_fails(module_of(b.build(r)), "%sum", "to_apply computation %vector_add must take "
                 "(f32[], f32[])")


def test_while_body_keeps_the_carried_shape():
    names = NameUniquer()
    cond = ComputationBuilder("cond", names)
    cond_p = cond.parameter(arr(S32))
    condition = cond.build(cond.add(O.COMPARE, arr(PRED), (cond_p, cond_p),
                                    {"direction": "LT"}))
    body = ComputationBuilder("body", names)
    body_p = body.parameter(arr(S32))
    widen = body.build(body.add(O.CONVERT, arr(F32), (body_p,)))
    b = ComputationBuilder("main", names)
    x = b.parameter(arr(S32))
    loop = b.add(O.WHILE, arr(S32), (x,), called=(condition, widen), name="loop")
    verify_fails(module_of(b.build(loop)), "%loop", "body computation %body must return s32[]")


def test_entry_root_must_be_an_instruction():
    x = HloInstruction("x", O.PARAMETER, arr(F32), attrs={"number": 0})
    ghost = HloInstruction("ghost", O.NEGATE, arr(F32), (x,))
    verify_fails(module_of(HloComputation("main", (x,), ghost)), "%main", "root %ghost")


def test_the_entry_must_belong_to_the_module():
    names = NameUniquer()
    add = scalar_add(names)
    x = HloInstruction("x", O.PARAMETER, arr(F32), attrs={"number": 0})
    main = HloComputation("main", (x,), x)
    verify_fails(module_of(main, [add]), "entry computation %main")


def test_verification_error_is_a_value_error():
    assert issubclass(HloVerificationError, ValueError)


# ---------------------------------------------------------------------- shape inference

def infer(opcode, *operands, called=(), declared=None, **attrs) -> Shape:
    return infer_shape(opcode, operands, attrs, called, declared, name="x.1")


def fails(match: str, opcode, *operands, called=(), declared=None, **attrs) -> None:
    with pytest.raises(ValueError, match=match) as info:
        infer(opcode, *operands, called=called, declared=declared, **attrs)
    assert str(info.value).startswith(f"%x.1 ({opcode.text}): ")


def test_elementwise_rules():
    f = arr(F32, 2, 3)
    assert infer(O.ADD, f, f) == f
    assert infer(O.COMPARE, f, f, direction="GE") == arr(PRED, 2, 3)
    assert infer(O.IS_FINITE, f) == arr(PRED, 2, 3)
    assert infer(O.ABS, arr(np.complex64, 2)) == arr(F32, 2)
    assert infer(O.COMPLEX, f, f) == arr(np.complex64, 2, 3)
    assert infer(O.SELECT, arr(PRED, 2, 3), f, f) == f
    assert infer(O.CLAMP, arr(F32), f, arr(F32)) == f
    assert infer(O.CONVERT, f, declared=arr(S32, 2, 3)) == arr(S32, 2, 3)
    fails("equal dimensions and element types", O.ADD, f, arr(S32, 2, 3))
    fails("takes floating-point or complex elements", O.EXP, arr(S32, 2))
    fails("takes integer elements", O.SHIFT_LEFT, f, f)
    fails("direction 'LESS'", O.COMPARE, f, f, direction="LESS")
    fails("only be compared with EQ or NE", O.COMPARE, arr(np.complex64), arr(np.complex64),
          direction="LT")
    fails(r"predicate pred\[2,1\]\{1,0\} must have the dimensions", O.SELECT, arr(PRED, 2, 1), f, f)
    fails(r"max f32\[2\]\{0\} must be a scalar", O.CLAMP, arr(F32), f, arr(F32, 2))
    fails("convert keeps the dimensions", O.CONVERT, f, declared=arr(S32, 3, 2))
    fails("takes 2 operand", O.ADD, f)


def test_movement_rules():
    x = arr(F32, 2, 3)
    assert infer(O.BROADCAST, x, declared=arr(F32, 3, 4, 2), dimensions=(2, 0)) == \
        arr(F32, 3, 4, 2)
    fails("maps to output dimension 1 of size 4", O.BROADCAST, x, declared=arr(F32, 2, 4),
          dimensions=(0, 1))
    assert infer(O.RESHAPE, x, declared=arr(F32, 6)) == arr(F32, 6)
    fails(r"cannot reshape f32\[2,3\]\{1,0\} \(6 elements\)", O.RESHAPE, x,
          declared=arr(F32, 4))
    assert infer(O.TRANSPOSE, x, dimensions=(1, 0)) == arr(F32, 3, 2)
    fails("not a permutation|must be a permutation", O.TRANSPOSE, x, dimensions=(0, 0))
    assert infer(O.REVERSE, x, dimensions=(1,)) == x
    assert infer(O.SLICE, x, starts=(0, 1), limits=(2, 3), strides=(2, 1)) == arr(F32, 1, 2)
    fails("dimension 1: need 0 <= start 2 <= limit 4 <= size 3", O.SLICE, x, starts=(0, 2),
          limits=(2, 4), strides=(1, 1))
    i = arr(S32)
    assert infer(O.DYNAMIC_SLICE, x, i, i, sizes=(1, 2)) == arr(F32, 1, 2)
    fails("needs 2 scalar start indices", O.DYNAMIC_SLICE, x, i, sizes=(1, 2))
    fails("start index 1 must be an integer scalar", O.DYNAMIC_SLICE, x, i, arr(F32),
          sizes=(1, 2))
    assert infer(O.DYNAMIC_UPDATE_SLICE, x, arr(F32, 1, 3), i, i) == x
    fails("must have the operand's rank and fit", O.DYNAMIC_UPDATE_SLICE, x, arr(F32, 3, 3),
          i, i)
    assert infer(O.CONCATENATE, x, arr(F32, 2, 5), dimensions=(1,)) == arr(F32, 2, 8)
    fails("may differ only in dimension 1", O.CONCATENATE, x, arr(F32, 3, 5),
          dimensions=(1,))
    assert infer(O.PAD, x, arr(F32), padding=((1, -1, 1), (-2, 0, 0))) == arr(F32, 3, 1)
    fails("padded size -1 >= 0", O.PAD, x, arr(F32), padding=((0, 0, 0), (-4, 0, 0)))
    assert infer(O.IOTA, declared=arr(S32, 4), iota_dimension=0) == arr(S32, 4)
    fails("iota_dimension 1", O.IOTA, declared=arr(S32, 4), iota_dimension=1)
    assert infer(O.BITCAST_CONVERT, x, declared=arr(np.uint8, 2, 3, 4)) == \
        arr(np.uint8, 2, 3, 4)
    fails("gives dimensions", O.BITCAST_CONVERT, x, declared=arr(np.uint8, 2, 3))


def test_gather_and_scatter_rules():
    operand = arr(F32, 5, 7)
    gather = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                  index_vector_dim=1, slice_sizes=(1, 7))
    assert infer(O.GATHER, operand, arr(S32, 3, 1), **gather) == arr(F32, 3, 7)
    fails("slice_sizes", O.GATHER, operand, arr(S32, 3, 1), **{**gather,
                                                                "slice_sizes": (1, 8)})
    names = NameUniquer()
    add = scalar_add(names)
    scatter = dict(update_window_dims=(1,), inserted_window_dims=(0,),
                   scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    assert infer(O.SCATTER, operand, arr(S32, 3, 1), arr(F32, 3, 7), called=(add,),
                 **scatter) == operand
    fails("scatter dimensions of the updates", O.SCATTER, operand, arr(S32, 3, 1),
          arr(F32, 4, 7), called=(add,), **scatter)
    fails("to_apply computation %add", O.SCATTER, arr(S32, 5, 7), arr(S32, 3, 1),
          arr(S32, 3, 7), called=(add,), **scatter)


def test_reduction_rules():
    names = NameUniquer()
    add = scalar_add(names)
    x = arr(F32, 4, 6)
    assert infer(O.REDUCE, x, arr(F32), dimensions=(0,), called=(add,)) == arr(F32, 6)
    fails("initial value 0 must be a scalar", O.REDUCE, x, arr(S32), dimensions=(0,),
          called=(add,))
    window = Window((2, 3), (2, 1), (0, 1), (1, 1), (1, 1), (1, 1), (False, False))
    assert infer(O.REDUCE_WINDOW, x, arr(F32), window=window, called=(add,)) == arr(F32, 2, 6)
    b = ComputationBuilder("ge", names)
    p, q = b.parameter(arr(F32)), b.parameter(arr(F32))
    ge = b.build(b.add(O.COMPARE, arr(PRED), (p, q), {"direction": "GE"}))
    assert infer(O.SELECT_AND_SCATTER, x, arr(F32, 2, 6), arr(F32), window=window,
                 called=(ge, add)) == x
    fails("one element per window position", O.SELECT_AND_SCATTER, x, arr(F32, 2, 2),
          arr(F32), window=window, called=(ge, add))
    b = ComputationBuilder("lt", names)
    params = [b.parameter(arr(dt)) for dt in (F32, F32, S32, S32)]
    lt = b.build(b.add(O.COMPARE, arr(PRED), params[:2], {"direction": "LT"}))
    sorted_shape = infer(O.SORT, x, arr(S32, 4, 6), dimension=1, called=(lt,))
    assert sorted_shape == Shape.tuple([x, arr(S32, 4, 6)])
    fails("comparator computation %lt must take", O.SORT, x, dimension=1, called=(lt,))


def test_variadic_reduce_returns_a_tuple():
    names = NameUniquer()
    b = ComputationBuilder("pair", names)
    params = [b.parameter(arr(dt)) for dt in (F32, S32, F32, S32)]
    pair = b.build(b.add(O.TUPLE, Shape.tuple([arr(F32), arr(S32)]), params[:2]))
    out = infer(O.REDUCE, arr(F32, 3, 4), arr(S32, 3, 4), arr(F32), arr(S32), dimensions=(1,),
                called=(pair,))
    assert out == Shape.tuple([arr(F32, 3), arr(S32, 3)])


def test_contraction_rules():
    assert infer(O.DOT, arr(F32, 7, 2, 3), arr(F32, 7, 3, 5), lhs_batch=(0,), rhs_batch=(0,),
                 lhs_contracting=(2,), rhs_contracting=(1,)) == arr(F32, 7, 2, 5)
    assert infer(O.DOT, arr(np.int8, 2, 3), arr(np.int8, 3), lhs_contracting=(1,),
                 rhs_contracting=(0,), declared=arr(S32, 2)) == arr(S32, 2)
    fails(r"contracting dimensions \(1,\) of f32\[2,3\]", O.DOT, arr(F32, 2, 3),
          arr(F32, 4, 5), lhs_contracting=(1,), rhs_contracting=(0,))
    window = Window((3, 2), (2, 1), (1, 2), (-1, 0), (1, 2), (2, 1), (False, False))
    out = infer(O.CONVOLUTION, arr(F32, 2, 7, 5, 4), arr(F32, 3, 2, 2, 6), window=window,
                dim_labels="b01f_01io->bf01", feature_group_count=2)
    assert out == arr(F32, 2, 6, 2, 10)
    out = infer(O.CONVOLUTION, arr(F32, 2, 7, 5, 4), arr(F32, 2, 2, 4, 6),
                window={"size": (2, 2)}, dim_labels="b01f_01io->b01f", batch_group_count=2)
    assert out == arr(F32, 1, 6, 4, 6)
    fails("kernel input features 4", O.CONVOLUTION, arr(F32, 2, 7, 5, 4),
          arr(F32, 3, 2, 4, 6), window=window, dim_labels="b01f_01io->bf01",
          feature_group_count=2)
    fails("dim_labels must look like", O.CONVOLUTION, arr(F32, 2, 7, 5, 4),
          arr(F32, 3, 2, 2, 6), window=window, dim_labels="nhwc")


def test_control_and_structural_rules():
    names = NameUniquer()
    cond = ComputationBuilder("cond", names)
    s = cond.parameter(arr(S32))
    condition = cond.build(cond.add(O.COMPARE, arr(PRED), (s, s), {"direction": "LT"}))
    body = ComputationBuilder("body", names)
    s = body.parameter(arr(S32))
    step = body.build(body.add(O.ADD, arr(S32), (s, s)))
    assert infer(O.WHILE, arr(S32), called=(condition, step)) == arr(S32)
    fails("condition computation %cond must take", O.WHILE, arr(F32),
          called=(condition, step))
    assert infer(O.CONDITIONAL, arr(PRED), arr(S32), arr(S32), called=(step, step)) == arr(S32)
    fails("branch selector must be pred", O.CONDITIONAL, arr(F32), arr(S32),
          called=(step,))
    fails("a pred selector needs 2 branches", O.CONDITIONAL, arr(PRED), arr(S32),
          called=(step,))
    assert infer(O.CALL, arr(S32), called=(step,)) == arr(S32)
    assert infer(O.FUSION, arr(S32), called=(step,), kind="kLoop") == arr(S32)
    fails("fused computation %body must take", O.FUSION, arr(F32), called=(step,))
    pair = Shape.tuple([arr(F32, 2), arr(S32)])
    assert infer(O.TUPLE, arr(F32, 2), arr(S32)) == pair
    assert infer(O.GET_TUPLE_ELEMENT, pair, index=1) == arr(S32)
    fails("index 2 is out of range", O.GET_TUPLE_ELEMENT, pair, index=2)
    fails("must be an array, got the tuple", O.NEGATE, pair)
    assert infer(O.CUSTOM_CALL, pair, declared=arr(F32), target="f") == arr(F32)
    fails("custom-call target", O.CUSTOM_CALL, declared=arr(F32), target="")
    assert infer(O.PARAMETER, declared=pair, number=0) == pair
    fails("literal", O.CONSTANT, declared=arr(F32, 2), literal=np.zeros(3, np.float32))
    fails("pass the instruction's declared shape", O.IOTA, iota_dimension=0)


def test_every_opcode_has_a_rule():
    # infer_shape raises ValueError (a broken rule) rather than KeyError for any opcode.
    for opcode in O:
        try:
            infer_shape(opcode, [], {}, (), None)
        except ValueError:
            pass
