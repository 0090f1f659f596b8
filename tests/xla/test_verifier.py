"""The verifier (one test per rule, each checking that the message names the instruction)
and shape inference for each opcode family."""
from __future__ import annotations

import numpy as np
import pytest

from jaxlite.xla.ir import ComputationBuilder, HloComputation, HloInstruction, HloModule
from jaxlite.xla.ir import NameUniquer
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
