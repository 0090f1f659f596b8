"""`from_stablehlo` of shape-polymorphic modules (`tensor<?x4xf32>` arguments): modules that
real JAX 0.10.2 exported for `symbolic_shape("b, 4")` (tests/xla/fixtures/stablehlo_poly,
written by generate_stablehlo_poly.py) and that jaxlite's own `Exported.mlir_module()`
prints. Each call refines the module to its arguments' shapes
(jaxlite/xla/stablehlo/refinement.py); shapes that do not fit raise JAX's errors.
"""
import re
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import export
from jaxlite.export import from_stablehlo
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import syntax
from jaxlite.xla.stablehlo.reader import parse_module

MODULES = Path(__file__).parent / "fixtures" / "stablehlo_poly"
NAMES = sorted(p.stem for p in MODULES.glob("*.mlir"))
CALLS = 3  # batch sizes 1, 3 and 8 per program


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


def _recorded(name, call):
    recorded = np.load(MODULES / f"{name}.npz")
    count = lambda kind: len([k for k in recorded if k.startswith(f"{call}/{kind}_")])
    return ([recorded[f"{call}/in_{i}"] for i in range(count("in"))],
            [recorded[f"{call}/out_{i}"] for i in range(count("out"))])


def test_fixtures_exist():
    assert NAMES == ["consistency", "constrained", "constraints_three", "max_dim", "mlp",
                     "pad_max", "reshape_iota", "sin_sum", "two_args"]


def test_dynamic_sizes_parse_as_dynamic():
    assert syntax.parse_type("tensor<?x4xf32>").dims == (syntax.DYNAMIC, 4)
    assert syntax.parse_type("tensor<3x?xi32>").dims == (3, syntax.DYNAMIC)


@pytest.mark.parametrize("name", NAMES)
def test_jax_exported_modules_run_with_jax_numbers(name):
    exported = from_stablehlo((MODULES / f"{name}.mlir").read_text())
    assert exported.uses_shape_polymorphism
    assert str(exported.in_avals[0].shape[0]) == "b"  # the variable JAX passes along
    for call in range(CALLS):
        inputs, want = _recorded(name, call)
        got = _outputs(exported.call(*inputs))
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert np.shape(g) == w.shape, (name, call, i)
            np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-5)


def test_refined_calls_compose_with_jit():
    exported = from_stablehlo((MODULES / "sin_sum.mlir").read_text())
    x = np.linspace(-2, 2, 20, dtype=np.float32).reshape(5, 4)
    first, total = jax.jit(exported.call)(x)
    np.testing.assert_allclose(np.asarray(first), np.sin(x) * 2 + x.sum(0), rtol=1e-6)
    np.testing.assert_allclose(float(total), x[1:].sum(), rtol=1e-6)
    assert exported.out_avals_for([(6, 4)])[0].shape == (6, 4)


def _error(exported, *args):
    with pytest.raises(ValueError) as info:
        exported.call(*args)
    return str(info.value)


def test_mismatched_shapes_raise_jax_errors():
    exported = from_stablehlo((MODULES / "sin_sum.mlir").read_text())
    assert _error(exported, np.zeros((3, 5), np.float32)).startswith(
        "Shape mismatch for args[0].shape[1] (expected same constant): expected (b, 4) and "
        "called with (3, 5)")
    assert _error(exported, np.zeros((3,), np.float32)).startswith(
        "Rank mismatch for args[0]: expected (b, 4) and called with (3,)")
    assert _error(exported, np.zeros((0, 4), np.float32)).startswith(
        "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 "
        "for dimension variable 'b'.")


def test_shape_assertions_of_the_module_raise_jax_error():
    # JAX checks that both arguments have `b` rows by a shape_assertion in the module;
    # this is JAX 0.10.2's message, word for word.
    exported = from_stablehlo((MODULES / "two_args.mlir").read_text())
    message = _error(exported, np.zeros((3, 4), np.float32), np.zeros((2,), np.float32))
    assert message == (
        "Input shapes do not match the polymorphic shapes specification. Found inconsistency "
        "between dimension size args[1].shape[0] (= 2) and the specification 'b' (= 3). "
        "Using the following polymorphic shapes specifications: args[0].shape = (b, 4),"
        "args[1].shape = (b,). Obtained dimension variables: 'b' = 3 from specification 'b' "
        "for dimension args[0].shape[0] (= 3), . Please see https://docs.jax.dev/en/latest/"
        "export/shape_poly.html#shape-assertion-errors for more details.")


# Programs exported with symbolic constraints: (function, specs, constraints, the start of
# JAX's message for the recorded failing call).
CONSTRAINED = {
    "constrained": (lambda x: x * 2, ["b, 4"], ("b >= 2",),
                    "Input shapes do not match the symbolic shape constraint b >= 2. "
                    "Expected 'b - 2' to be greater or equal to 0, but found -1."),
    "constraints_three": (lambda x, y: (x * 2, y + 1), ["b, 4", "c"],
                          ("b <= 12", "c >= b + 1", "2*b >= c"),
                          "Input shapes do not match the symbolic shape constraint c >= b + 1."
                          " Expected 'c - b - 1' to be greater or equal to 0, but found -1."),
    "consistency": (lambda x, y, z: (x * 2, y + 1, z), ["b, c", "c", "2*b, b"], ("c >= b",),
                    "Input shapes do not match the polymorphic shapes specification. Found "
                    "inconsistency between dimension size args[2].shape[0] (= 5) and the "
                    "specification '2*b' (= 4)."),
}


@pytest.mark.parametrize("name", sorted(CONSTRAINED))
def test_symbolic_constraints_are_checked_by_the_module(name):
    # JAX writes each check as a shape_assertion; its message, recorded from JAX.
    exported = from_stablehlo((MODULES / f"{name}.mlir").read_text())
    recorded = np.load(MODULES / f"{name}.npz")
    inputs = [recorded[f"error/in_{i}"] for i in range(len(exported.in_avals))]
    message = _error(exported, *inputs)
    assert message == str(recorded["error"])
    assert message.startswith(CONSTRAINED[name][3])


@pytest.mark.parametrize("name", sorted(CONSTRAINED))
def test_jaxlite_prints_the_constraints_as_jax(name):
    fn, specs, constraints, _ = CONSTRAINED[name]
    scope = export.SymbolicScope(constraints)
    structs = [jax.ShapeDtypeStruct(export.symbolic_shape(s, scope=scope), np.float32)
               for s in specs]
    text = export.export(jax.jit(fn))(*structs).mlir_module()
    theirs = _assertion_messages((MODULES / f"{name}.mlir").read_text())
    assert _assertion_messages(text) == theirs
    # a variable >= 1 each, each dimension not read as a variable, each constraint
    assert len(theirs) == {"constrained": 2, "constraints_three": 5, "consistency": 6}[name]
    recorded = np.load(MODULES / f"{name}.npz")
    shapes = [Shape(np.float32, recorded[f"error/in_{i}"].shape) for i in range(len(specs))]
    with pytest.raises(ValueError) as info:
        parse_module(text, shapes)
    assert str(info.value) == str(recorded["error"])


def test_max_of_sizes_refines():
    # `jnp.zeros((core.max_dim(b, 3),))`: a `stablehlo.maximum` of the size and 3 feeds a
    # dynamic_broadcast_in_dim; the result has max(b, 3) elements.
    exported = from_stablehlo((MODULES / "max_dim.mlir").read_text())
    for b in (1, 3, 5):
        x = np.arange(1, b + 1, dtype=np.float32)
        out = np.asarray(exported.call(x))
        np.testing.assert_array_equal(out, np.full((max(b, 3),), 1.0, np.float32))


def _softmax_rows(x, w):
    return jax.nn.softmax(jnp.tanh(x @ w), axis=1), jnp.arange(x.shape[0]) * 2


JAXLITE_PROGRAMS = {
    "sin_sum": (lambda x: (jnp.sin(x) * 2 + x.sum(axis=0), x[1:].sum()), ["b, 4"]),
    "softmax_rows": (_softmax_rows, ["b, 4", "4, 3"]),
    "reshape_pad": (lambda x: (jnp.pad(x, ((1, 0), (0, 0))).reshape(-1), jnp.flip(x, 0).T),
                    ["b, 4"]),
}


@pytest.mark.parametrize("name", sorted(JAXLITE_PROGRAMS))
def test_jaxlite_exported_modules_read_back(name):
    fn, specs = JAXLITE_PROGRAMS[name]
    scope = export.SymbolicScope()
    structs = [jax.ShapeDtypeStruct(export.symbolic_shape(s, scope=scope), np.float32)
               for s in specs]
    exported = export.export(jax.jit(fn))(*structs)
    text = exported.mlir_module()
    assert "tensor<?x4xf32>" in text
    again = from_stablehlo(text)
    rng = np.random.default_rng(3)
    for batch in (1, 2, 7):
        args = [rng.normal(size=tuple(batch if d == "b" else int(d) for d in s.split(", ")))
                .astype(np.float32) for s in specs]
        want = _outputs(exported.call(*args))
        got = _outputs(again.call(*args))
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_parse_module_needs_the_argument_shapes():
    text = (MODULES / "sin_sum.mlir").read_text()
    with pytest.raises(ValueError) as info:
        parse_module(text)
    assert "dynamic sizes" in str(info.value)
    module = parse_module(text, [Shape(np.float32, (2, 4))])
    x = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
    first, total = evaluate_module(module, [x])
    np.testing.assert_allclose(first, np.sin(x) * 2 + x.sum(0), rtol=1e-6)
    assert total == 26.0


def test_a_size_computed_from_values_is_not_refined():
    text = ("module @m {\n  func.func public @main(%arg0: tensor<?xf32>, %arg1: tensor<1xi32>)"
            " -> tensor<?xf32> {\n"
            "    %0 = stablehlo.dynamic_broadcast_in_dim %arg0, %arg1, dims = [0] : "
            "(tensor<?xf32>, tensor<1xi32>) -> tensor<?xf32>\n"
            "    return %0 : tensor<?xf32>\n  }\n}\n")
    with pytest.raises(NotImplementedError) as info:
        parse_module(text, [Shape(np.float32, (1,)), Shape(np.int32, (1,))])
    assert "line 3" in str(info.value) and "depends on the values" in str(info.value)


def _assertion_messages(text):
    return re.findall(r'error_message = "((?:[^"\\]|\\.)*)"', text)


def test_jaxlite_prints_jax_shape_assertions():
    # jaxlite's mlir_module() checks each dimension variable as JAX's does: the same
    # message as JAX's module of the same export.
    fn, specs = JAXLITE_PROGRAMS["sin_sum"]
    structs = [jax.ShapeDtypeStruct(export.symbolic_shape(s), np.float32) for s in specs]
    text = export.export(jax.jit(fn))(*structs).mlir_module()
    theirs = _assertion_messages((MODULES / "sin_sum.mlir").read_text())
    assert _assertion_messages(text) == theirs and len(theirs) == 1
    with pytest.raises(ValueError) as info:
        parse_module(text, [Shape(np.float32, (0, 4))])
    assert str(info.value) == theirs[0].format(0)


def test_every_variable_is_asserted_with_all_values():
    scope = export.SymbolicScope()
    structs = [jax.ShapeDtypeStruct(export.symbolic_shape(s, scope=scope), np.float32)
               for s in ("b, c", "c")]
    text = export.export(jax.jit(lambda x, y: x * y))(*structs).mlir_module()
    # JAX 0.10.2's first two messages for these specs (the third checks that args[1] has
    # c elements)
    using = ("Using the following polymorphic shapes specifications: args[0].shape = (b, c),"
             "args[1].shape = (c,). Obtained dimension variables: 'b' = {0} from "
             "specification 'b' for dimension args[0].shape[0] (= {0}), ")
    tail = ". Please see https://docs.jax.dev/en/latest/export/shape_poly.html" \
        "#shape-assertion-errors for more details."
    head = "Input shapes do not match the polymorphic shapes specification. Expected value " \
        ">= 1 for dimension variable "
    messages = _assertion_messages(text)
    assert messages[:2] == [
        head + "'b'. " + using + tail,
        head + "'c'. " + using + "'c' = {1} from specification 'c' for dimension "
        "args[0].shape[1] (= {1}), " + tail]
    assert len(messages) == 3 and "between dimension size args[1].shape[0]" in messages[2]
    with pytest.raises(ValueError) as info:
        parse_module(text, [Shape(np.float32, (2, 0)), Shape(np.float32, (0,))])
    assert "Expected value >= 1 for dimension variable 'c'" in str(info.value)
    assert "'b' = 2 from specification 'b' for dimension args[0].shape[0] (= 2), 'c' = 0 " \
        "from specification 'c' for dimension args[0].shape[1] (= 0), ." in str(info.value)


@pytest.mark.parametrize("name, specs, constraints", [
    ("two_args", ["(b, 4)", "(b,)"], []),
    ("consistency", ["(b, c)", "(c,)", "(2*b, b)"], ["c >= b"]),
    ("constraints_three", ["(b, 4)", "(c,)"], ["b <= 12", "c >= b + 1", "2*b >= c"]),
])
def test_argument_specifications_come_from_the_assertions(name, specs, constraints):
    # as JAX's Exported.in_avals of the export: the assertions' messages name them
    exported = from_stablehlo((MODULES / f"{name}.mlir").read_text())
    spelled = ["(" + ", ".join(str(d) for d in a.shape) + ("," if a.ndim == 1 else "") + ")"
               for a in exported.in_avals]
    assert spelled == specs
    assert list(exported.in_avals[0].shape[0].scope.constraints_str) == constraints


def test_jaxlite_modules_name_their_variables():
    scope = export.SymbolicScope(("c >= b",))
    structs = [jax.ShapeDtypeStruct(export.symbolic_shape(s, scope=scope), np.float32)
               for s in ("b, c", "2*b")]
    mine = export.export(jax.jit(lambda x, y: (x.sum(), y * 2)))(*structs)
    again = from_stablehlo(mine.mlir_module())
    assert [str(a.shape) for a in again.in_avals] == [str(a.shape) for a in mine.in_avals]
    total, doubled = again.call(np.ones((2, 3), np.float32), np.ones((4,), np.float32))
    assert float(total) == 6.0 and np.asarray(doubled).tolist() == [2.0] * 4
    with pytest.raises(ValueError) as info:
        again.call(np.ones((2, 3), np.float32), np.ones((5,), np.float32))
    with pytest.raises(ValueError) as theirs:
        mine.call(np.ones((2, 3), np.float32), np.ones((5,), np.float32))
    assert str(info.value) == str(theirs.value)
    assert "Found inconsistency between dimension size args[1].shape[0] (= 5)" in \
        str(info.value)
