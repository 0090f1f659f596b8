"""Reading StableHLO tokens and tuples (jaxlite/xla/stablehlo/tokens_parse.py): modules that
real JAX 0.10.2 lowered with `!stablehlo.token` values (tests/xla/fixtures/stablehlo_tokens,
written by generate_stablehlo_tokens.py) and hand-written ones with tokens threaded through
loops and branches and with `tuple<...>` values. A token reads as jaxlite's token (an empty
bool array); the ordered-effect tokens of `@main` (`jax.token = true`) leave the signature.
"""
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax
from jaxlite.export import from_stablehlo
from jaxlite.xla import stablehlo
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.stablehlo import syntax
from jaxlite.xla.stablehlo.parser import parse
from jaxlite.xla.stablehlo.reader import parse_module

MODULES = Path(__file__).parent / "fixtures" / "stablehlo_tokens"
RUNNABLE = sorted(p.stem for p in MODULES.glob("*.mlir") if not p.stem.startswith("callback_"))
CALLBACKS = sorted(p.stem for p in MODULES.glob("callback_*.mlir"))
TOKEN = (0,), np.dtype(np.bool_)


def _aval(aval):
    return tuple(aval.shape), np.dtype(aval.dtype)


def test_fixtures_exist():
    assert RUNNABLE == ["create_after_all", "nested_call", "token_argument"]
    assert CALLBACKS == ["callback_ordered_io", "callback_ordered_print"]


@pytest.mark.parametrize("name", RUNNABLE)
def test_jax_modules_with_tokens_run_with_jax_numbers(name):
    exported = from_stablehlo((MODULES / f"{name}.mlir").read_text())
    recorded = np.load(MODULES / f"{name}.npz")
    token_in, token_out = set(recorded["token_in"]), set(recorded["token_out"])
    args = []
    for i, aval in enumerate(exported.in_avals):
        if i in token_in:
            assert _aval(aval) == TOKEN
            args.append(lax.create_token())
        else:
            assert _aval(aval) == (recorded[f"in_{i}"].shape, recorded[f"in_{i}"].dtype)
            args.append(recorded[f"in_{i}"])
    outputs = exported.call(*args)
    assert len(outputs) == len(exported.out_avals) == 2
    for i, out in enumerate(outputs):
        if i in token_out:
            assert (out.shape, out.dtype) == TOKEN
        else:
            np.testing.assert_allclose(np.asarray(out), recorded[f"out_{i}"], rtol=1e-6)


@pytest.mark.parametrize("name", RUNNABLE)
def test_jax_modules_with_tokens_reprint_stably(name):
    once = stablehlo.print_module(parse_module((MODULES / f"{name}.mlir").read_text()))
    assert "!stablehlo.token" not in once and "tensor<0xi1>" in once
    assert stablehlo.print_module(parse_module(once)) == once


@pytest.mark.parametrize("name", CALLBACKS)
def test_ordered_effect_modules_read_up_to_the_python_callback(name):
    text = (MODULES / f"{name}.mlir").read_text()
    main = parse(text).functions["main"]
    assert main.argument_attrs[0] == {"jax.token": True}
    assert main.arguments[0][1] == syntax.TOKEN_SHAPE
    assert main.result_attrs[0] == {"jax.token": True}
    with pytest.raises(NotImplementedError) as info:
        from_stablehlo(text)
    assert "@xla_ffi_python_cpu_callback" in str(info.value)
    assert "Python function of the process that lowered" in str(info.value)


def _main(signature, body):
    return ("module @m {\n  func.func public @main" + signature + " {\n" + body +
            "  }\n}\n")


EFFECT_TOKENS = _main(
    "(%arg0: !stablehlo.token {jax.token = true}, %arg1: tensor<3xf32>) -> "
    "(!stablehlo.token {jax.token = true}, tensor<3xf32> {jax.result_info = \"result\"})",
    "    %0 = stablehlo.create_token : !stablehlo.token\n"
    "    %1 = stablehlo.after_all %arg0, %0 : !stablehlo.token\n"
    "    %2 = \"stablehlo.after_all\"(%1) : (!stablehlo.token) -> !stablehlo.token\n"
    "    %3 = stablehlo.add %arg1, %arg1 : tensor<3xf32>\n"
    "    return %2, %3 : !stablehlo.token, tensor<3xf32>\n")


def test_ordered_effect_tokens_leave_the_signature():
    exported = from_stablehlo(EFFECT_TOKENS)
    assert [_aval(a) for a in exported.in_avals] == [((3,), np.dtype(np.float32))]
    assert [_aval(a) for a in exported.out_avals] == [((3,), np.dtype(np.float32))]
    x = np.array([1.0, -2.0, 3.5], np.float32)
    np.testing.assert_array_equal(np.asarray(exported.call(x)), 2 * x)


TOKEN_LOOP = _main(
    "(%arg0: tensor<3xf32>, %arg1: !stablehlo.token) -> (tensor<3xf32>, !stablehlo.token)",
    "    %c = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %c4 = stablehlo.constant dense<4> : tensor<i32>\n"
    "    %0:3 = stablehlo.while(%i = %c, %t = %arg1, %v = %arg0) : tensor<i32>, "
    "!stablehlo.token, tensor<3xf32>\n"
    "     cond {\n"
    "      %1 = stablehlo.compare  LT, %i, %c4,  SIGNED : (tensor<i32>, tensor<i32>) -> "
    "tensor<i1>\n"
    "      stablehlo.return %1 : tensor<i1>\n"
    "    } do {\n"
    "      %1 = stablehlo.add %i, %c1 : tensor<i32>\n"
    "      %2 = stablehlo.after_all %t : !stablehlo.token\n"
    "      %3 = stablehlo.add %v, %v : tensor<3xf32>\n"
    "      stablehlo.return %1, %2, %3 : tensor<i32>, !stablehlo.token, tensor<3xf32>\n"
    "    }\n"
    "    %p = stablehlo.constant dense<true> : tensor<i1>\n"
    "    %4:2 = \"stablehlo.if\"(%p) ({\n"
    "      %5 = stablehlo.after_all %0#1 : !stablehlo.token\n"
    "      stablehlo.return %5, %0#2 : !stablehlo.token, tensor<3xf32>\n"
    "    }, {\n"
    "      stablehlo.return %0#1, %arg0 : !stablehlo.token, tensor<3xf32>\n"
    "    }) : (tensor<i1>) -> (!stablehlo.token, tensor<3xf32>)\n"
    "    return %4#1, %4#0 : tensor<3xf32>, !stablehlo.token\n")


def test_tokens_flow_through_while_and_if():
    exported = from_stablehlo(TOKEN_LOOP)
    assert [_aval(a) for a in exported.in_avals] == [((3,), np.dtype(np.float32)), TOKEN]
    x = np.array([1.0, 0.5, -3.0], np.float32)
    value, token = exported.call(x, lax.create_token())
    np.testing.assert_array_equal(np.asarray(value), 16 * x)
    assert (token.shape, token.dtype) == TOKEN


TUPLES = _main(
    "(%arg0: tensor<3xf32>, %arg1: tuple<tensor<f32>, tuple<tensor<2xi32>>>) -> "
    "(tensor<3xf32>, tuple<tensor<2xi32>, tensor<f32>>)",
    "    %0 = stablehlo.tuple %arg0, %arg1 : tuple<tensor<3xf32>, tuple<tensor<f32>, "
    "tuple<tensor<2xi32>>>>\n"
    "    %1 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<3xf32>, tuple<tensor<f32>, "
    "tuple<tensor<2xi32>>>>) -> tuple<tensor<f32>, tuple<tensor<2xi32>>>\n"
    "    %2 = \"stablehlo.get_tuple_element\"(%1) {index = 0 : i32} : (tuple<tensor<f32>, "
    "tuple<tensor<2xi32>>>) -> tensor<f32>\n"
    "    %3 = stablehlo.get_tuple_element %arg1[1] : (tuple<tensor<f32>, "
    "tuple<tensor<2xi32>>>) -> tuple<tensor<2xi32>>\n"
    "    %4 = stablehlo.get_tuple_element %3[0] : (tuple<tensor<2xi32>>) -> tensor<2xi32>\n"
    "    %5 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<3xf32>\n"
    "    %6 = stablehlo.multiply %arg0, %5 : tensor<3xf32>\n"
    "    %7 = \"stablehlo.tuple\"(%4, %2) : (tensor<2xi32>, tensor<f32>) -> "
    "tuple<tensor<2xi32>, tensor<f32>>\n"
    "    return %6, %7 : tensor<3xf32>, tuple<tensor<2xi32>, tensor<f32>>\n")


def test_tuple_types_parse_nested():
    shape = syntax.parse_type("tuple<tensor<f32>, tuple<tensor<2x3xi32>, !stablehlo.token>>")
    assert shape.is_tuple and len(shape.tuple_shapes) == 2
    inner = shape.tuple_shapes[1]
    assert inner.tuple_shapes[0].dims == (2, 3) and inner.tuple_shapes[1] == syntax.TOKEN_SHAPE
    assert syntax.parse_type("tuple<>").tuple_shapes == ()


def test_tuples_read_as_hlo_tuples():
    module = parse_module(TUPLES)
    x = np.array([1.0, 2.0, -1.0], np.float32)
    scale, ints = np.float32(3.0), np.array([7, -9], np.int32)
    # the entry's tuple argument and result are flattened to their arrays
    assert [p.shape.dims for p in module.entry.parameters] == [(3,), (), (2,)]
    out = evaluate_module(module, [x, scale, ints])
    np.testing.assert_array_equal(out[0], x * scale)
    np.testing.assert_array_equal(out[1], ints)
    assert out[2] == scale
    exported = from_stablehlo(TUPLES)
    got = exported.call(x, scale, ints)
    np.testing.assert_array_equal(np.asarray(got[0]), x * scale)
    np.testing.assert_array_equal(np.asarray(got[1]), ints)


def test_tuple_module_reprints_stably():
    once = stablehlo.print_module(parse_module(TUPLES))
    assert "tuple<" not in once
    assert stablehlo.print_module(parse_module(once)) == once


def test_get_tuple_element_out_of_range_names_the_line():
    text = _main("(%arg0: tuple<tensor<f32>>) -> tensor<f32>",
                 "    %0 = stablehlo.get_tuple_element %arg0[2] : (tuple<tensor<f32>>) -> "
                 "tensor<f32>\n"
                 "    return %0 : tensor<f32>\n")
    with pytest.raises(ValueError) as info:
        parse_module(text)
    assert "line 3" in str(info.value) and "get_tuple_element 2" in str(info.value)


def test_jaxlite_printed_token_program_reads_back():
    def f(x, t):
        return jax.numpy.sin(x), lax.after_all(t, lax.create_token())
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    text = jax.jit(f).lower(x, lax.create_token()).as_text(dialect="stablehlo")
    value, token = from_stablehlo(text).call(x, lax.create_token())
    np.testing.assert_allclose(np.asarray(value), np.sin(x), rtol=1e-6)
    assert (token.shape, token.dtype) == TOKEN
