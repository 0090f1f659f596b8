"""HLO text: printing, parsing, the round trip, and XLA's own text (fixtures from real JAX)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jaxlite.core import dtypes
from jaxlite.test_util import tolerance
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import ComputationBuilder, HloComputation, HloModule, NameUniquer
from jaxlite.xla.opcodes import OPCODE_OF_TEXT, Opcode
from jaxlite.xla.shape import Shape, array_shape
from jaxlite.xla.text import Window, format_literal, parse_module, print_module

FIXTURES = Path(__file__).parent / "fixtures"
PROGRAMS = ["mlp_forward", "softmax", "layernorm", "reduce_max", "mlp_train_step", "movement",
            "assorted"]
F32 = np.dtype(np.float32)
O = Opcode


# ----------------------------------------------------------------------------- helpers

def same_literal(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and values, NaN equal to NaN, -0.0 distinct from 0.0."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    for x, y in ((a.astype(wide).real, b.astype(wide).real),
                 (a.astype(wide).imag, b.astype(wide).imag)):
        if not np.array_equal(x, y, equal_nan=True):
            return False
        numbers = ~np.isnan(x)  # NaNs read back without their sign; 0.0 and -0.0 differ
        if not np.array_equal(np.signbit(x[numbers]), np.signbit(y[numbers])):
            return False
    return True


def assert_same_structure(a: HloModule, b: HloModule) -> None:
    """Same computations, instructions, opcodes, shapes, attributes and operand structure."""
    assert a.name == b.name and a.entry.name == b.entry.name
    assert [c.name for c in a.computations] == [c.name for c in b.computations]
    for ca, cb in zip(a.computations, b.computations):
        assert ca.root.name == cb.root.name
        assert len(ca.instructions) == len(cb.instructions)
        for x, y in zip(ca.instructions, cb.instructions):
            where = f"{ca.name}/{x.name}"
            assert (x.name, x.opcode, x.shape) == (y.name, y.opcode, y.shape), where
            assert [o.name for o in x.operands] == [o.name for o in y.operands], where
            assert [c.name for c in x.called] == [c.name for c in y.called], where
            assert set(x.attrs) == set(y.attrs), where
            for key, value in x.attrs.items():
                if isinstance(value, np.ndarray):
                    assert same_literal(value, y.attrs[key]), where
                else:
                    assert value == y.attrs[key], (where, key)


def assert_round_trip(module: HloModule) -> str:
    text = print_module(module)
    parsed = parse_module(text)
    assert print_module(parsed) == text
    assert_same_structure(module, parsed)
    return text


def scalar_computation(names: NameUniquer, opcode: Opcode, dtype: np.dtype = F32,
                       name: str = "region") -> HloComputation:
    """`(x, y) -> opcode(x, y)` on scalars of `dtype` (a reduction's to_apply)."""
    b = ComputationBuilder(name, names)
    x, y = b.parameter(Shape(dtype), "x"), b.parameter(Shape(dtype), "y")
    out_dtype = np.dtype(np.bool_) if opcode is O.COMPARE else dtype
    attrs = {"direction": "LT"} if opcode is O.COMPARE else None
    return b.build(b.add(opcode, Shape(out_dtype), [x, y], attrs))


def const(b: ComputationBuilder, value: object, dtype: object = F32):
    literal = np.asarray(value, dtype=dtype)
    return b.add(O.CONSTANT, Shape(literal.dtype, literal.shape), attrs={"literal": literal})


# ----------------------------------------------------------------------------- golden text

def reduce_module() -> HloModule:
    names = NameUniquer()
    add = scalar_computation(names, O.ADD, name="add")
    b = ComputationBuilder("main", names)
    p = b.parameter(array_shape(F32, (4, 8)), "p")
    zero = const(b, 0.0)
    out = b.add(O.REDUCE, array_shape(F32, (4,)), [p, zero], {"dimensions": (1,)}, [add])
    return HloModule("m", b.build(out))


def test_golden_text_follows_xla():
    expected = """\
HloModule m, entry_computation_layout={(f32[4,8]{1,0})->f32[4]{0}}

%add (x.0: f32[], y.1: f32[]) -> f32[] {
  %x.0 = f32[] parameter(0)
  %y.1 = f32[] parameter(1)
  ROOT %add.2 = f32[] add(%x.0, %y.1)
}

ENTRY %main (p.3: f32[4,8]) -> f32[4] {
  %p.3 = f32[4,8]{1,0} parameter(0)
  %constant.4 = f32[] constant(0)
  ROOT %reduce.5 = f32[4]{0} reduce(%p.3, %constant.4), dimensions={1}, to_apply=%add
}
"""
    assert print_module(reduce_module()) == expected
    assert_round_trip(reduce_module())


@pytest.mark.parametrize("value, dtype, text", [
    (1.5, "float32", "1.5"), (2.0, "float32", "2"), ([1, 2, 3], "int32", "{1, 2, 3}"),
    ([[1, 2], [3, 4]], "int32", "{ { 1, 2 }, { 3, 4 } }"), (True, "bool", "true"),
    (False, "bool", "false"), ([True, False], "bool", "{1, 0}"),
    ([np.inf, -np.inf, np.nan], "float32", "{inf, -inf, nan}"), (0.1, "float32", "0.1"),
    (0.1, dtypes.bfloat16, "0.1"), (0.1, "float16", "0.1"), (1e-5, "float32", "1e-05"),
    (100.0, "float32", "100"), (-0.0, "float64", "-0"), (1 + 2j, "complex64", "(1, 2)"),
    (np.zeros((0, 3)), "float32", "{}"), (2**64 - 1, "uint64", "18446744073709551615"),
])
def test_literal_text(value, dtype, text):
    literal = np.asarray(value, dtype=dtype)
    assert format_literal(literal) == text
    names = NameUniquer()
    b = ComputationBuilder("main", names)
    assert_round_trip(HloModule("m", b.build(const(b, literal, literal.dtype))))


def test_f32_literals_use_the_fewest_digits_that_round_trip():
    values = np.array([0.1, 1 / 3, 3.4028235e38, 1.17549435e-38, 1e-45, 16777217.0], F32)
    text = format_literal(values)
    assert text.startswith("{0.1, 0.33333334, 3.4028235e+38, 1.1754944e-38, 1e-45, ")
    assert np.array_equal(np.array([float(v) for v in text[1:-1].split(",")], F32), values)


# ----------------------------------------------------------------------------- every attribute

def kitchen_sink() -> HloModule:
    """One instruction or more of each attribute form the text format knows."""
    names = NameUniquer()
    add = scalar_computation(names, O.ADD, name="add")
    less = scalar_computation(names, O.COMPARE, name="less")
    s32 = np.dtype(np.int32)
    # while: carries (i, x) until i < 3 fails
    carry = Shape.tuple([Shape(s32), array_shape(F32, (4, 8))])
    cb = ComputationBuilder("cond", names)
    state = cb.parameter(carry, "state")
    i = cb.add(O.GET_TUPLE_ELEMENT, Shape(s32), [state], {"index": 0})
    cond = cb.build(cb.add(O.COMPARE, Shape(np.bool_), [i, const(cb, 3, s32)],
                           {"direction": "LT"}))
    bb = ComputationBuilder("body", names)
    state = bb.parameter(carry, "state")
    i = bb.add(O.GET_TUPLE_ELEMENT, Shape(s32), [state], {"index": 0})
    x = bb.add(O.GET_TUPLE_ELEMENT, carry.tuple_shapes[1], [state], {"index": 1})
    i1 = bb.add(O.ADD, Shape(s32), [i, const(bb, 1, s32)])
    body = bb.build(bb.add(O.TUPLE, carry, [i1, bb.add(O.EXP, x.shape, [x])]))
    branches = []
    for opcode in (O.SIN, O.COS):
        br = ComputationBuilder("branch", names)
        arg = br.parameter(array_shape(F32, (4, 8)), "arg")
        branches.append(br.build(br.add(opcode, arg.shape, [arg])))
    fb = ComputationBuilder("fused_computation", names)
    a = fb.parameter(array_shape(F32, (4, 8)), "param")
    fused = fb.build(fb.add(O.TANH, a.shape, [fb.add(O.NEGATE, a.shape, [a])]))

    b = ComputationBuilder("main", names)
    x = b.parameter(array_shape(F32, (4, 8)), "x")
    xt = b.parameter(Shape(F32, (8, 4), layout=(0, 1)), "x-transposed")
    img = b.parameter(array_shape(F32, (1, 5, 5, 2)), "img")
    kernel = b.parameter(array_shape(F32, (3, 3, 2, 4)), "kernel")
    index = b.parameter(Shape(s32), "index")
    flag = b.parameter(Shape(np.bool_), "flag")
    zero = const(b, 0.0)
    updates = b.add(O.BROADCAST, array_shape(F32, (2, 8)), [zero], {"dimensions": ()})
    shape48 = x.shape
    outs = [
        b.add(O.SLICE, array_shape(F32, (2, 4)), [x],
              {"starts": (1, 0), "limits": (3, 8), "strides": (1, 2)}),
        b.add(O.SLICE, array_shape(F32, (2, 8)), [x],
              {"starts": (1, 0), "limits": (3, 8), "strides": (1, 1)}),
        b.add(O.PAD, array_shape(F32, (5, 12)), [x, zero], {"padding": ((0, 1, 0), (2, 2, 0))}),
        b.add(O.PAD, array_shape(F32, (8, 12)), [x, zero], {"padding": ((0, 1, 1), (2, 2, 0))}),
        b.add(O.TRANSPOSE, xt.shape, [x], {"dimensions": (1, 0)}),
        b.add(O.CONCATENATE, array_shape(F32, (8, 8)), [x, x], {"dimensions": (0,)}),
        b.add(O.BROADCAST, array_shape(F32, (3, 4, 8)), [x], {"dimensions": (1, 2)}),
        b.add(O.REVERSE, shape48, [x], {"dimensions": (0,)}),
        b.add(O.IOTA, array_shape(s32, (5,)), [], {"iota_dimension": 0}),
        b.add(O.DOT, array_shape(F32, (4, 4)), [x, xt],
              {"lhs_contracting": (1,), "rhs_contracting": (0,), "lhs_batch": (),
               "rhs_batch": ()}),
        b.add(O.COMPARE, Shape(np.bool_, (4, 8)), [x, x], {"direction": "GE",
                                                            "type": "TOTALORDER"}),
        b.add(O.DYNAMIC_SLICE, array_shape(F32, (2, 3)), [x, index, index], {"sizes": (2, 3)}),
        b.add(O.SORT, shape48, [x], {"dimension": 1, "is_stable": True}, [less]),
        b.add(O.REDUCE_WINDOW, array_shape(F32, (2, 9)), [x, zero],
              {"window": Window((2, 2), (2, 1), (0, 1), (1, 1), (1, 1), (1, 1),
                                (False, False))}, [add]),
        b.add(O.CONVOLUTION, array_shape(F32, (1, 9, 3, 4)), [img, kernel],
              {"window": Window((3, 3), (1, 2), (1, 1), (1, 1), (2, 1), (1, 1), (False, True)),
               "dim_labels": "b01f_01io->b01f", "feature_group_count": 1}),
        b.add(O.GATHER, array_shape(F32, (2, 8)), [x, const(b, [[0], [2]], s32)],
              {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
               "index_vector_dim": 1, "slice_sizes": (1, 8), "indices_are_sorted": False}),
        b.add(O.SCATTER, shape48, [x, const(b, [[1], [3]], s32), updates],
              {"update_window_dims": (1,), "inserted_window_dims": (0,),
               "scatter_dims_to_operand_dims": (0,), "index_vector_dim": 1}, [add]),
        b.add(O.FUSION, shape48, [x], {"kind": "kLoop", "tiling": {
            "tile": (1, 8), "order": ("rows", "columns"), "vector_width": 8,
            "parallel": True, "note": "two words"}}, [fused]),
        b.add(O.CUSTOM_CALL, shape48, [x], {"target": "my_kernel",
                                            "backend_config": '{"a": "b, c"}'}),
        b.add(O.CONDITIONAL, shape48, [flag, x, x], {}, branches),
        b.add(O.CONDITIONAL, shape48, [index, x, x], {}, branches),
        b.add(O.CALL, shape48, [x], {}, [fused], name="call-with.dots"),
        const(b, [[1.5, np.nan], [np.inf, -0.0]]),
        const(b, [0.1, 2], dtypes.bfloat16), const(b, [0.1], np.float16),
        const(b, True, np.bool_), const(b, [1 + 2j, -3.5j], np.complex64),
        const(b, [255, 0], np.uint8), const(b, -(2**63), np.int64),
    ]
    loop = b.add(O.WHILE, carry, [b.add(O.TUPLE, carry, [const(b, 0, s32), x])], {},
                 [cond, body])
    outs.append(b.add(O.GET_TUPLE_ELEMENT, carry.tuple_shapes[1], [loop], {"index": 1}))
    outs.append(b.add(O.ADD, shape48, [x, x], {"generic": ("LT", 1, 2.5, "needs quotes", True,
                                                           ((1, 2), ()), "1")}))
    root = b.add(O.TUPLE, Shape.tuple([o.shape for o in outs]), outs)
    return HloModule("kitchen-sink.1", b.build(root))


def test_every_attribute_form_round_trips():
    text = assert_round_trip(kitchen_sink())
    for piece in ["slice={[1:3:1], [0:8:2]}", "slice={[1:3], [0:8]}", "padding=0_1x2_2\n",
                  "padding=0_1_1x2_2_0", "dimensions={1,0}", "iota_dimension=0",
                  "lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_batch_dims={}",
                  "direction=GE, type=TOTALORDER", "dynamic_slice_sizes={2,3}",
                  "dimensions={1}, is_stable=true, to_apply=%less",
                  "window={size=2x2 stride=2x1 pad=0_1x1_1}, to_apply=%add",
                  "window={size=3x3 stride=1x2 pad=1_1x1_1 lhs_dilate=2x1 rhs_reversal=0x1}",
                  "dim_labels=b01f_01io->b01f", "offset_dims={1}, collapsed_slice_dims={0}",
                  "kind=kLoop, tiling={", "calls=%fused_computation", "index=1",
                  'custom_call_target="my_kernel", backend_config="{\\"a\\": \\"b, c\\"}"',
                  "true_computation=%branch", "branch_computations={%branch", "%call-with.dots",
                  "condition=%cond", "constant({ { 1.5, nan }, { inf, -0 } })",
                  "constant({(1, 2), (-0, -3.5)})", "constant(-9223372036854775808)",
                  "constant(true)", 'generic={LT,1,2.5,"needs quotes",true,{{1,2},{}},"1"}']:
        assert piece in text, piece


def test_window_mapping_prints_as_a_window():
    names = NameUniquer()
    add = scalar_computation(names, O.ADD)
    b = ComputationBuilder("main", names)
    x = b.parameter(array_shape(F32, (4, 8)))
    mapping = {"size": (2, 2), "stride": (2, 2), "pad": ((0, 0), (1, 0))}
    b.add(O.REDUCE_WINDOW, array_shape(F32, (2, 5)), [x, const(b, 0.0)],
          {"window": mapping}, [add])
    module = HloModule("m", b.build(b.instructions[-1]))
    parsed = parse_module(print_module(module))
    assert parsed.entry.root.attr("window") == Window((2, 2), (2, 2), (0, 1), (0, 0), (1, 1),
                                                      (1, 1), (False, False))
    assert print_module(parsed) == print_module(module)


# ----------------------------------------------------------------------------- XLA's text

def test_parses_xla_text_with_old_operands_comments_and_skipped_attributes():
    # Written by hand in the forms XLA prints: skipped attributes with nested braces and
    # quotes, the older operand style with shapes, `/*index=1*/` comments, tiled layouts.
    module = parse_module((FIXTURES / "xla_style.hlo").read_text())
    assert module.name == "jit_f" and module.entry.name == "main.10"
    assert [c.name for c in module.computations] == ["region_0.1", "main.10"]
    insts = {i.name: i for i in module.entry.instructions}
    assert [p.name for p in module.entry.parameters] == ["x.1", "b.2"]
    add = insts["my-op.with.dots"]
    assert [o.name for o in add.operands] == ["x.1", "broadcast.3"]
    assert add.shape.layout == (1, 0) and not add.attrs
    assert dict(insts["broadcast.3"].attrs) == {"dimensions": (1,)}
    assert dict(insts["r"].attrs) == {"dimensions": (1,)}
    assert insts["r"].called == (module.computations[0],)
    assert dict(insts["d"].attrs) == {"lhs_contracting": (1,), "rhs_contracting": (1,),
                                      "operand_precision": ("default", "highest")}
    assert module.entry.root is insts["t"]
    assert [o.name for o in insts["t"].operands] == ["my-op.with.dots", "r"]
    assert insts["t"].shape == Shape.tuple([array_shape(F32, (2, 3)), array_shape(F32, (2,))])
    assert "operand_precision={default,highest}" in print_module(module)
    assert_round_trip(module)


@pytest.mark.parametrize("body, message", [
    ("%y = f32[2]{0} frobnicate(%x)", "unknown HLO opcode 'frobnicate'.*frobnicate\\(%x\\)"),
    ("%y = f32[2]{0} add(%z, %x)\n  %z = f32[2]{0} negate(%x)",
     "operand %z is not defined before its use"),
    ("%y = f32[2]{0} constant({...})", "elided"),
    ("%y = f32[2]{0} constant({1, 2, 3})", "does not have shape"),
    ("%y = f32[] reduce(%x, %x), dimensions={0}, to_apply=%nowhere",
     "computation 'nowhere' is called but not defined"),
    ("%y = f32[2]{0} negate(%x)\n  %y = f32[2]{0} negate(%x)", "defined twice"),
    ("%y = f32[<=2]{0} negate(%x)", "dynamic shape"),
    ("%y = token[] negate(%x)", "unknown HLO element type 'token'"),
])
def test_parse_errors_name_the_problem_and_the_line(body, message):
    text = f"HloModule m\n\nENTRY %main {{\n  %x = f32[2]{{0}} parameter(0)\n  {body}\n}}\n"
    with pytest.raises(ValueError, match=message):
        parse_module(text)


def test_parse_errors_for_malformed_modules():
    with pytest.raises(ValueError, match="no 'HloModule <name>' header"):
        parse_module("ENTRY %main {\n  %x = f32[] parameter(0)\n}\n")
    with pytest.raises(ValueError, match="no closing"):
        parse_module("HloModule m\nENTRY %main {\n  %x = f32[] parameter(0)\n")


def test_print_errors_name_the_instruction():
    names = NameUniquer()
    b = ComputationBuilder("main", names)
    x = b.parameter(Shape(F32), "x")
    bad = b.add(O.NEGATE, Shape(F32), [x], {"extra": None})
    with pytest.raises(TypeError, match="negate.*no HLO text form"):
        print_module(HloModule("m", b.build(bad)))
    for reserved in ({"metadata": "x"}, {"body": 1}):
        skipped = bad.replace(attrs=reserved)
        with pytest.raises(ValueError, match="would not read back"):
            print_module(HloModule("m", HloComputation("main", (x, skipped), skipped)))
    spaced = bad.replace(name="has space", attrs={})
    with pytest.raises(ValueError, match="cannot be written"):
        print_module(HloModule("m", HloComputation("main", (x, spaced), spaced)))


# ----------------------------------------------------------------------------- fixtures

def fixture_arrays(program: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    data = np.load(FIXTURES / f"{program}.npz")
    count = {prefix: sum(1 for k in data.files if k.startswith(prefix)) for prefix in "io"}
    return ([data[f"in_{i}"] for i in range(count["i"])],
            [data[f"out_{i}"] for i in range(count["o"])])


@pytest.mark.parametrize("stage", ["hlo", "lowered.hlo"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_fixture_from_real_jax_parses(program, stage):
    text = (FIXTURES / f"{program}.{stage}").read_text()
    if "bitcast(" in text and "bitcast" not in OPCODE_OF_TEXT:
        # XLA's CPU pipeline writes `bitcast`, which our opcode table does not have yet.
        with pytest.raises(ValueError, match="unknown HLO opcode 'bitcast'"):
            parse_module(text)
        return
    module = parse_module(text)
    inputs, outputs = fixture_arrays(program)
    params = module.entry.parameters
    assert [(p.shape.dims, p.shape.dtype) for p in params] == [(a.shape, a.dtype)
                                                                for a in inputs]
    root = module.entry.root.shape
    results = root.tuple_shapes if root.is_tuple else (root,)
    assert [(s.dims, s.dtype) for s in results] == [(a.shape, a.dtype) for a in outputs]
    # XLA's metadata is read (op_name, source file and line; its other fields dropped).
    named = [i for c in module.computations for i in c.instructions if i.metadata]
    assert bool(named) == ("op_name=" in text)
    assert all(f'op_name="{i.metadata.op_name}"' in text for i in named)
    printed = print_module(module)
    assert print_module(parse_module(printed)) == printed


@pytest.mark.parametrize("stage", ["hlo", "lowered.hlo"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_fixture_evaluates_to_the_numbers_of_real_jax(program, stage):
    text = (FIXTURES / f"{program}.{stage}").read_text()
    if "bitcast(" in text and "bitcast" not in OPCODE_OF_TEXT:
        pytest.skip("XLA's `bitcast` is not in our opcode table yet")
    inputs, outputs = fixture_arrays(program)
    results = evaluate_module(parse_module(text), inputs)
    results = list(results) if isinstance(results, tuple) else [results]
    assert len(results) == len(outputs)
    for i, (got, want) in enumerate(zip(results, outputs)):
        tol = tolerance(want.dtype)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"output {i}")


def test_compiled_fixtures_hold_xla_fusions():
    module = parse_module((FIXTURES / "mlp_train_step.hlo").read_text())
    fusions = [i for i in module.entry.instructions if i.opcode is O.FUSION]
    assert fusions and all(f.attr("kind") in ("kLoop", "kInput", "kOutput", "kCustom")
                           for f in fusions)
    assert all(len(f.called) == 1 and f.called[0] in module.computations for f in fusions)


# ----------------------------------------------------------------------------- property

UNARY = [O.EXP, O.TANH, O.NEGATE, O.ABS, O.SQRT, O.LOG, O.SIN]
BINARY = [O.ADD, O.SUBTRACT, O.MULTIPLY, O.DIVIDE, O.MAXIMUM, O.MINIMUM, O.POWER]
CONSTANT_DTYPES = [np.float32, np.float64, np.float16, dtypes.bfloat16, np.int8, np.int32,
                   np.int64, np.uint8, np.uint32, np.bool_, np.complex64]
small_dims = st.lists(st.integers(1, 4), max_size=3).map(tuple)


@st.composite
def literals(draw) -> np.ndarray:
    dtype = np.dtype(draw(st.sampled_from(CONSTANT_DTYPES)))
    dims = draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    count = math.prod(dims)

    def many(elements):
        return draw(st.lists(elements, min_size=count, max_size=count))
    if dtype.kind == "b":
        values = many(st.booleans())
    elif dtype.kind in "iu":
        values = many(st.integers(int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)))
    elif dtype.kind == "c":
        values = [complex(a, b) for a, b in many(st.tuples(st.floats(width=32),
                                                           st.floats(width=32)))]
    else:
        values = many(st.floats(width=64 if dtype.itemsize == 8 else 32))
    with np.errstate(over="ignore"):  # large floats become inf in f16 and bf16
        return np.array(values).astype(dtype).reshape(dims)


class RandomProgram:
    """Builds a random well-typed f32 program, one drawn operation at a time."""

    def __init__(self, draw) -> None:
        self.draw = draw
        self.names = NameUniquer()
        self.regions = {op: scalar_computation(self.names, op, name=op.text)
                        for op in (O.ADD, O.MAXIMUM)}
        self.b = ComputationBuilder("main", self.names)
        self.values = [self.b.parameter(array_shape(F32, draw(small_dims)), "arg")]

    def other(self, like):
        """A value of `like`'s shape: an earlier one, or a broadcast scalar constant."""
        same = [v for v in self.values if v.shape.dims == like.shape.dims]
        if len(same) > 1 and self.draw(st.booleans()):
            return self.draw(st.sampled_from(same))
        scalar = const(self.b, self.draw(st.floats(-4, 4, width=32)))
        return self.b.add(O.BROADCAST, array_shape(F32, like.shape.dims), [scalar],
                          {"dimensions": ()})

    def step(self) -> None:
        v = self.draw(st.sampled_from(self.values))
        make = self.draw(st.sampled_from([
            self.unary, self.binary, self.broadcast, self.reduce, self.dot, self.slice,
            self.pad, self.concatenate, self.transpose, self.select, self.tuple, self.fusion]))
        self.values.append(make(v))

    def array(self, dims, layout=None):
        return Shape(F32, tuple(dims), layout)

    def unary(self, v):
        return self.b.add(self.draw(st.sampled_from(UNARY)), v.shape, [v])

    def binary(self, v):
        return self.b.add(self.draw(st.sampled_from(BINARY)), v.shape, [v, self.other(v)])

    def broadcast(self, v):
        if v.shape.rank >= 3:
            return self.unary(v)
        at = self.draw(st.integers(0, v.shape.rank))
        dims = v.shape.dims[:at] + (self.draw(st.integers(1, 3)),) + v.shape.dims[at:]
        kept = tuple(d for d in range(len(dims)) if d != at)
        return self.b.add(O.BROADCAST, self.array(dims), [v], {"dimensions": kept})

    def reduce(self, v):
        if v.shape.rank == 0:
            return self.unary(v)
        axes = tuple(sorted(self.draw(st.sets(st.integers(0, v.shape.rank - 1), min_size=1))))
        op = self.draw(st.sampled_from([O.ADD, O.MAXIMUM]))
        init = const(self.b, 0.0 if op is O.ADD else -np.inf)
        dims = [d for i, d in enumerate(v.shape.dims) if i not in axes]
        return self.b.add(O.REDUCE, self.array(dims), [v, init], {"dimensions": axes},
                          [self.regions[op]])

    def dot(self, v):
        if v.shape.rank not in (1, 2, 3):
            return self.unary(v)
        n = self.draw(st.integers(1, 4))
        *lead, k = v.shape.dims
        batch = tuple(lead[:1]) if len(lead) == 2 else ()
        rhs = self.b.parameter(self.array(batch + (k, n)), "weights")
        attrs = {"lhs_contracting": (v.shape.rank - 1,), "rhs_contracting": (len(batch),),
                 "lhs_batch": tuple(range(len(batch))), "rhs_batch": tuple(range(len(batch)))}
        return self.b.add(O.DOT, self.array(tuple(lead) + (n,)), [v, rhs], attrs)

    def slice(self, v):
        starts, limits, strides = [], [], []
        for size in v.shape.dims:
            start = self.draw(st.integers(0, size))
            starts.append(start)
            limits.append(self.draw(st.integers(start, size)))
            strides.append(self.draw(st.integers(1, 3)))
        dims = [-(-(e - s) // k) for s, e, k in zip(starts, limits, strides)]
        return self.b.add(O.SLICE, self.array(dims), [v], {
            "starts": tuple(starts), "limits": tuple(limits), "strides": tuple(strides)})

    def pad(self, v):
        config = tuple(self.draw(st.tuples(st.integers(0, 2), st.integers(0, 2),
                                           st.integers(0, 2))) for _ in v.shape.dims)
        dims = [lo + hi + d + max(d - 1, 0) * mid
                for (lo, hi, mid), d in zip(config, v.shape.dims)]
        return self.b.add(O.PAD, self.array(dims), [v, const(self.b, 0.0)],
                          {"padding": config})

    def concatenate(self, v):
        if v.shape.rank == 0:
            return self.unary(v)
        axis = self.draw(st.integers(0, v.shape.rank - 1))
        parts = [v] * self.draw(st.integers(2, 3))
        dims = list(v.shape.dims)
        dims[axis] *= len(parts)
        return self.b.add(O.CONCATENATE, self.array(dims), parts, {"dimensions": (axis,)})

    def transpose(self, v):
        perm = tuple(self.draw(st.permutations(range(v.shape.rank))))
        layout = tuple(self.draw(st.permutations(range(v.shape.rank))))
        dims = [v.shape.dims[p] for p in perm]
        return self.b.add(O.TRANSPOSE, self.array(dims, layout), [v], {"dimensions": perm})

    def select(self, v):
        other = self.other(v)
        direction = self.draw(st.sampled_from(["EQ", "NE", "LT", "LE", "GT", "GE"]))
        pred = self.b.add(O.COMPARE, Shape(np.bool_, v.shape.dims), [v, other],
                          {"direction": direction})
        return self.b.add(O.SELECT, v.shape, [pred, v, other])

    def tuple(self, v):
        parts = [v, self.other(v)]
        both = self.b.add(O.TUPLE, Shape.tuple([p.shape for p in parts]), parts)
        index = self.draw(st.integers(0, 1))
        return self.b.add(O.GET_TUPLE_ELEMENT, parts[index].shape, [both], {"index": index})

    def fusion(self, v):
        fb = ComputationBuilder("fused_computation", self.names)
        p = fb.parameter(v.shape, "param_0")
        fused = fb.build(fb.add(O.EXP, v.shape, [fb.add(O.NEGATE, v.shape, [p])]))
        tiling = {"tile": tuple(self.draw(st.lists(st.integers(1, 64), max_size=3))),
                  "vector_width": self.draw(st.sampled_from([1, 4, 8, 16])),
                  "order": self.draw(st.sampled_from(["rows", "columns"]))}
        return self.b.add(O.FUSION, v.shape, [v], {"kind": "kLoop", "tiling": tiling},
                          [fused])

    def module(self) -> HloModule:
        for _ in range(self.draw(st.integers(1, 8))):
            self.step()
        outs = [self.values[-1]] + [const(self.b, lit, lit.dtype)
                                    for lit in self.draw(st.lists(literals(), max_size=3))]
        if len(outs) == 1 and self.draw(st.booleans()):
            return HloModule("random", self.b.build(outs[0]))
        root = self.b.add(O.TUPLE, Shape.tuple([o.shape for o in outs]), outs)
        return HloModule("random", self.b.build(root))


@given(st.data())
def test_print_parse_print_is_the_identity(data):
    assert_round_trip(RandomProgram(data.draw).module())
