"""The StableHLO printer (jaxlite.xla.stablehlo): golden text, one rule per opcode, SSA
form, types and constants. Real XLA reading the text is tests/xla/test_stablehlo_jaxlib.py."""
import re

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.core import dtypes
from jaxlite.xla import stablehlo
from jaxlite.xla.ir import ComputationBuilder, HloModule, NameUniquer
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.printer import ModuleWriter

F32 = np.ones(4, np.float32)

GOLDEN_SUM_OF_SINE = """\
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<f32>) {
    %0 = stablehlo.sine %arg0 : tensor<4xf32>
    %1 = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %3 = stablehlo.add %arg1, %arg2 : tensor<f32>
      "stablehlo.return"(%3) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %2 : tensor<f32>
  }
}
"""


def _text(fn, *args):
    return jax.jit(fn).lower(*args).as_text(dialect="stablehlo")


def _check_ssa(text):
    """Every value is defined once per function before it is used (a light MLIR check)."""
    defined = set()
    for line in text.splitlines():
        if line.strip().startswith("func.func"):
            defined = set(re.findall(r"(%arg\d+):", line))
            continue
        if line.strip().startswith("^bb0"):
            defined |= set(re.findall(r"(%arg\d+):", line))
            continue
        target, _, rest = line.partition(" = ") if re.match(r"\s*%\d", line) else ("", "",
                                                                                   line)
        for use in re.findall(r"%[\w#]+", rest):
            base = use.split("#")[0]
            assert base in defined or use in defined, f"{use} used before definition: {line}"
        for name in re.findall(r"%\d+", target):
            assert name not in defined, f"{name} defined twice: {line}"
            defined.add(name)


def test_golden_sum_of_sine():
    assert _text(lambda x: jnp.sin(x).sum(), F32) == GOLDEN_SUM_OF_SINE


def test_tuple_results_flatten_to_several_results():
    text = _text(lambda x, i: (x[i], x.astype(jnp.bfloat16), x > 0), F32, 1)
    assert ("func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> "
            "(tensor<f32>, tensor<4xbf16>, tensor<4xi1>) {") in text
    assert '"stablehlo.dynamic_slice"(%arg0, %4) <{slice_sizes = array<i64: 1>}>' in text
    assert "comparison_direction = #stablehlo<comparison_direction GT>" in text
    assert re.search(r"return %\d+, %\d+, %\d+ : tensor<f32>, tensor<4xbf16>, tensor<4xi1>",
                     text)
    _check_ssa(text)


def test_while_carries_the_leaves_of_its_state():
    text = _text(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2, x), F32)
    head = re.search(r'%(\d+):3 = "stablehlo.while"\((%\d+), (%\d+), %arg0\) \(\{', text)
    assert head, text
    cond, body = text.split('"stablehlo.while"')[1].split("}, {")[:2]
    assert "^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<4xf32>):" in cond
    assert "tensor<i1>) -> ()" in cond  # the condition returns a predicate
    assert "func.call" in body and "func.func private @" in text
    assert f"return %{head.group(1)}#2 : tensor<4xf32>" in text
    _check_ssa(text)


def test_switch_is_a_case_whose_branches_use_the_enclosing_values():
    text = _text(lambda x, i: lax.switch(i, [jnp.sin, jnp.cos, lambda y: -y], x), F32, 1)
    case = text.split('"stablehlo.case"')[1]
    assert case.count("}, {") == 2 and "^bb0" not in case.split("}) :")[0]
    assert re.search(r"\}\) : \(tensor<i32>\) -> tensor<4xf32>", case)
    _check_ssa(text)


@pytest.mark.parametrize("fn, pieces", [
    (lambda x: x @ x.reshape(2, 2), ["#stablehlo.dot<lhs_contracting_dimensions = [1], "
                                     "rhs_contracting_dimensions = [0]>"]),
    (lambda x: x[jnp.array([1, 0])], ["#stablehlo.gather<offset_dims = [1], "
                                      "collapsed_slice_dims = [0], start_index_map = [0], "
                                      "index_vector_dim = 1>", "slice_sizes = array<i64: 1, 2>"]),
    (lambda x: x.at[jnp.array([1])].add(2.0), ["#stablehlo.scatter<update_window_dims = [1], "
                                               "inserted_window_dims = [0]"]),
    (lambda x: jnp.sort(x, axis=0), ['"stablehlo.sort"', "dimension = 0 : i64",
                                     "is_stable = true"]),
    (lambda x: jnp.cumsum(x, axis=1), ['"stablehlo.reduce_window"',
                                       "padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>"]),
    (lambda x: lax.conv_general_dilated(x[None, None], x[None, None], (1, 1), "SAME"),
     ["dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>",
      "window_reversal = array<i1: false, false>"]),
    (lambda x: lax.pad(x, 0.0, [(1, 0, 1), (0, 2, 0)]),
     ["edge_padding_high = array<i64: 0, 2>", "interior_padding = array<i64: 1, 0>"]),
    (lambda x: jnp.fft.fft(x), ['"stablehlo.fft"', "fft_type = #stablehlo<fft_type FFT>"]),
    (lambda x: lax.erf_inv(x / 2), ['"chlo.erf_inv"']),
    (lambda x: jnp.exp2(x), ["stablehlo.constant dense<2.0> : tensor<2x2xf32>",
                             "stablehlo.power"]),
])
def test_op_syntax(fn, pieces):
    text = _text(fn, np.arange(4, dtype=np.float32).reshape(2, 2) / 4)
    for piece in pieces:
        assert piece in text, text
    _check_ssa(text)


def test_custom_calls_keep_target_config_and_side_effect():
    x = np.ones((3, 4), np.float32)
    text = _text(lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x),
                 x)
    assert re.search(r'%\d+ = "stablehlo.custom_call"\(%\d+, %arg0\) <\{api_version = 1 : '
                     r'i32, backend_config = "pure_callback", call_target_name = '
                     r'"jaxlite_host_callback", has_side_effect = false\}>', text), text


def test_lapack_kernels_become_xla_lapack_calls():
    spd = np.eye(40, dtype=np.float32) * 2
    text = _text(jnp.linalg.eigh, spd)
    assert re.search(r'%\d+:3 = "stablehlo.custom_call"\(%\d+\) <\{api_version = 1 : i32, '
                     r'backend_config = "", call_target_name = "lapack_ssyevd_ffi", '
                     r'has_side_effect = false, operand_layouts = \[dense<\[0, 1\]> : '
                     r'tensor<2xindex>\]', text), text
    assert "{mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}" in text
    _check_ssa(text)


def test_every_opcode_has_a_rule():
    structural = {Opcode.PARAMETER}  # block arguments, not ops
    assert set(Opcode) - structural <= set(stablehlo.RULES)
    assert (len(stablehlo.RULES) + len(structural)) == len(Opcode)


def test_op_names_read_back_to_their_opcodes():
    table = stablehlo.OPCODES_OF_OP_NAME
    assert table["stablehlo.add"] == (Opcode.ADD,)
    assert table["chlo.erf_inv"] == (Opcode.ERF_INV,)
    assert table["stablehlo.dot_general"] == (Opcode.DOT,)
    assert set(table["func.call"]) == {Opcode.CALL, Opcode.FUSION}
    assert set(table["stablehlo.reshape"]) == {Opcode.RESHAPE, Opcode.BITCAST}
    named = {op for opcodes in table.values() for op in opcodes}
    printed_otherwise = {Opcode.PARAMETER, Opcode.TUPLE, Opcode.GET_TUPLE_ELEMENT, Opcode.COPY,
                         Opcode.EXP2}
    assert named | printed_otherwise == set(Opcode)


def _module_of(opcode, shape, operand_shapes, attrs=None):
    builder = ComputationBuilder("main", NameUniquer())
    params = [builder.parameter(s) for s in operand_shapes]
    return HloModule("m", builder.build(builder.add(opcode, shape, params, attrs)))


def test_an_op_without_rule_raises_naming_it():
    module = _module_of(Opcode.ADD, Shape(np.float32, (2,)), [Shape(np.float32, (2,))] * 2)
    with pytest.raises(NotImplementedError) as info:
        ModuleWriter({}).module(module)
    assert "no rule for HLO opcode 'add'" in str(info.value)


def test_bitcast_that_reinterprets_raises():
    module = _module_of(Opcode.BITCAST, Shape(np.int32, (2,)), [Shape(np.float32, (2,))])
    with pytest.raises(NotImplementedError) as info:
        stablehlo.print_module(module)
    assert "bitcast" in str(info.value)


def test_hand_built_ops_the_lowering_does_not_emit():
    # copy is the value itself; a plain bitcast is a reshape; a pred conditional is an if
    builder = ComputationBuilder("main", NameUniquer())
    x = builder.parameter(Shape(np.float32, (2, 2)))
    copy = builder.add(Opcode.COPY, x.shape, [x])
    flat = builder.add(Opcode.BITCAST, Shape(np.float32, (4,)), [copy])
    pred = builder.parameter(Shape(np.bool_, ()))
    branch = ComputationBuilder("branch", builder.names)
    arg = branch.parameter(Shape(np.float32, (4,)))
    negated = branch.build(branch.add(Opcode.NEGATE, arg.shape, [arg]))
    out = builder.add(Opcode.CONDITIONAL, flat.shape, [pred, flat, flat], called=[negated,
                                                                                  negated])
    text = stablehlo.print_module(HloModule("m", builder.build(out)))
    assert '%0 = "stablehlo.reshape"(%arg0) : (tensor<2x2xf32>) -> tensor<4xf32>' in text
    assert '"stablehlo.if"(%arg1) ({' in text and "stablehlo.negate %0 : tensor<4xf32>" in text
    _check_ssa(text)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64, np.float16,
                                   dtypes.bfloat16, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_element_types_read_back(dtype):
    name = T.element_type(np.dtype(dtype))
    assert T.dtype_of_element_type(name) == np.dtype(dtype)


def test_tensor_types():
    assert T.tensor_type(Shape(np.float32, (3, 4))) == "tensor<3x4xf32>"
    assert T.tensor_type(Shape(np.uint8, ())) == "tensor<ui8>"
    assert T.tensor_type(Shape(np.complex128, (0,))) == "tensor<0xcomplex<f64>>"
    with pytest.raises(TypeError):
        T.tensor_type(Shape.tuple([Shape(np.float32, ())]))


@pytest.mark.parametrize("array, text", [
    (np.float32(0.1), "dense<0.1>"),
    (np.float32(1e20), "dense<1.0e+20>"),
    (np.zeros((2, 3), np.float32), "dense<0.0>"),
    (np.array([0.0, -0.0], np.float32), "dense<[0.0, -0.0]>"),
    (np.arange(4, dtype=np.int32).reshape(2, 2), "dense<[[0, 1], [2, 3]]>"),
    (np.array([1 + 2j], np.complex64), "dense<(1.0, 2.0)>"),
    (np.array([True, False]), "dense<[true, false]>"),
    (np.array([np.nan, 1.0], np.float32), 'dense<"0x0000C07F0000803F">'),
    (np.array([255], np.uint8), "dense<255>"),
    (np.zeros((0, 2), np.float32), "dense<>"),
])
def test_dense_literals(array, text):
    assert T.dense_literal(array) == text


def test_float_literals_read_back_exactly():
    values = np.random.default_rng(1).normal(size=50) * 10.0 ** np.arange(-25, 25)
    for dtype in (np.float16, dtypes.bfloat16, np.float32, np.float64):
        with np.errstate(over="ignore"):  # too large for float16: inf, skipped
            narrowed = values.astype(dtype)
        for value in narrowed:
            if np.isfinite(value):
                text = T.dense_literal(np.asarray(value))[len("dense<"):-1]
                assert np.asarray(float(text)).astype(dtype) == value, (dtype, value, text)


def test_strings_escape_quotes_and_control_characters():
    assert T.string('a"b\\c\n') == '"a\\22b\\5Cc\\0A"'


def test_lowered_as_text_and_compiler_ir():
    lowered = jax.jit(lambda x: x * 2).lower(F32)
    text = lowered.as_text(dialect="stablehlo")
    assert str(lowered.compiler_ir("stablehlo")) == text
    assert lowered.compiler_ir(dialect="stablehlo").operation.get_asm() == text
    assert lowered.as_text().startswith("HloModule")  # jaxlite's default stays HLO
    with pytest.raises(ValueError) as info:
        lowered.as_text(dialect="mhlo")
    assert "Unknown dialect 'mhlo'" in str(info.value)
