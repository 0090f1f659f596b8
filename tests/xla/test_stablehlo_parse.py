"""Reading StableHLO (jaxlite.export.from_stablehlo, jaxlite.xla.stablehlo.reader): modules
that real JAX 0.10.2 lowered (tests/xla/fixtures/stablehlo, written by
generate_stablehlo.py) run on jaxlite's CPU backend with JAX's recorded numbers; printed
again by jaxlite they reach a fixed point and run in real XLA (jaxlib, skipped without it)
with the same numbers; jaxlite's own printer output reads back to a program that computes
the same."""
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.export import from_stablehlo
from jaxlite.xla import parse_hlo, stablehlo
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import syntax
from jaxlite.xla.stablehlo.reader import parse_module
from stablehlo_xla import add_text_case, jax_python_or_skip, run_cases

FIXTURES = Path(__file__).parent / "fixtures"
MODULES = FIXTURES / "stablehlo"
BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "workloads.py"
PROGRAMS = sorted(p.stem for p in MODULES.glob("*.mlir") if not p.stem.startswith("bench_"))
BENCH_MODULES = sorted(p.stem for p in MODULES.glob("bench_*.mlir"))
# Normalized error max|a - b| / max|b| allowed per dtype (float32: a few roundings of
# differently ordered sums).
TOLERANCE = {np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5,
             np.dtype(np.float64): 1e-12, np.dtype(jnp.bfloat16): 1e-2}


def _bench_workloads():
    if not BENCH.exists():
        return {}
    spec = importlib.util.spec_from_file_location("bench_workloads", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"bench_" + w.key.replace("/", "_"): w for w in module.WORKLOADS}


WORKLOADS = _bench_workloads()


def _outputs(result):
    return result if isinstance(result, (tuple, list)) else (result,)


def _check_recorded(name, outputs, tolerance=None):
    """`outputs` match generate_stablehlo.py's record: every `stride`-th element."""
    recorded = np.load(MODULES / f"{name}.npz")
    assert len(outputs) == len([k for k in recorded if k.startswith("out_")])
    for i, out in enumerate(outputs):
        out = np.asarray(out)
        assert out.shape == tuple(recorded[f"shape_{i}"]), (i, out.shape)
        want = recorded[f"out_{i}"]
        got = out.reshape(-1)[::int(recorded[f"stride_{i}"])]
        if want.dtype.kind == "V":  # npz keeps bfloat16 as raw 2-byte values
            want = want.view(got.dtype)
        assert got.dtype == want.dtype, (i, got.dtype, want.dtype)
        if want.dtype.kind in "iub" or want.size == 0:
            np.testing.assert_array_equal(got, want)
            continue
        tol = tolerance or TOLERANCE[want.dtype]
        error = np.max(np.abs(got.astype(want.dtype).astype(np.complex128) - want)) / max(np.max(np.abs(want)),
                                                                     1e-30)
        assert error <= tol, (name, i, error)


@pytest.mark.parametrize("name", PROGRAMS)
def test_jax_lowered_fixture_programs_run_with_jax_numbers(name):
    exported = from_stablehlo((MODULES / f"{name}.mlir").read_text())
    recorded = np.load(MODULES / f"{name}.npz")
    inputs = [recorded[f"in_{i}"] for i in range(len(exported.in_avals))]
    assert [a.shape for a in exported.in_avals] == [x.shape for x in inputs]
    _check_recorded(name, _outputs(exported.call(*inputs)))


@pytest.mark.parametrize("name", BENCH_MODULES)
def test_jax_lowered_bench_workloads_run_with_jax_numbers(name):
    if name not in WORKLOADS:
        pytest.skip(f"no bench workload {name} at {BENCH}")
    workload = WORKLOADS[name]
    inputs = jax.tree_util.tree_leaves(workload.inputs(np.random.default_rng(0)))
    exported = from_stablehlo((MODULES / f"{name}.mlir").read_text())
    _check_recorded(name, _outputs(exported.call(*inputs)), workload.tol)


def test_exported_signature_comes_from_main():
    exported = from_stablehlo((MODULES / "movement.mlir").read_text())
    assert exported.fun_name == "jit_movement"
    assert [(a.shape, a.dtype) for a in exported.in_avals] == [((6, 8), np.float32),
                                                               ((6, 5), np.float32)]
    assert [a.shape for a in exported.out_avals] == [(12, 5), (12, 10)]
    with pytest.raises(ValueError):  # the wrong number of arguments
        exported.call(np.ones((6, 8), np.float32))


def test_exported_calls_compose_with_jit():
    exported = from_stablehlo((MODULES / "softmax.mlir").read_text())
    x = np.load(MODULES / "softmax.npz")["in_0"]
    doubled = jax.jit(lambda a: exported.call(a) * 2)(x)
    np.testing.assert_allclose(doubled, 2 * np.asarray(exported.call(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(doubled).sum(axis=-1), 2.0, rtol=1e-5)


def test_parse_hlo_reads_xla_text():
    module = parse_hlo((FIXTURES / "softmax.lowered.hlo").read_text())
    recorded = np.load(FIXTURES / "softmax.npz")
    (out,) = _outputs(evaluate_module(module, [recorded["in_0"]]))
    np.testing.assert_allclose(out, recorded["out_0"], rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- round trips

ROUND_TRIP_PROGRAMS = {
    "sum_of_sine": (lambda x: jnp.sin(x).sum(), (np.linspace(-1, 1, 4, dtype=np.float32),)),
    "tuple_results": (lambda x, i: (x[i], x.astype(jnp.bfloat16), x > 0),
                      (np.linspace(-1, 1, 4, dtype=np.float32), np.int32(1))),
    "fori_loop": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2 + i, x),
                  (np.linspace(-1, 1, 4, dtype=np.float32),)),
    "switch": (lambda x, i: lax.switch(i, [jnp.sin, jnp.cos, lambda y: -y], x),
               (np.linspace(-1, 1, 4, dtype=np.float32), np.int32(1))),
    "cond": (lambda x: lax.cond(x.sum() > 0, lambda v: v + 1, lambda v: v * 3, x),
             (np.linspace(-1, 2, 4, dtype=np.float32),)),
    "matmul": (lambda x: x @ x.reshape(2, 2), (np.arange(4, dtype=np.float32).reshape(2, 2),)),
    "gather": (lambda x: x[jnp.array([1, 0])], (np.arange(4, dtype=np.float32).reshape(2, 2),)),
    "scatter": (lambda x: x.at[jnp.array([1])].add(2.0),
                (np.arange(4, dtype=np.float32).reshape(2, 2),)),
    "sort": (lambda x: jnp.sort(x, axis=0), (np.array([[3, 1], [0, 2]], np.float32),)),
    "argsort": (lambda x: jnp.argsort(x), (np.array([3, 1, 0, 2], np.float32),)),
    "cumsum": (lambda x: jnp.cumsum(x, axis=1), (np.arange(6, dtype=np.float32).reshape(2, 3),)),
    "conv": (lambda x: lax.conv_general_dilated(x[None, None], x[None, None], (1, 1), "SAME"),
             (np.arange(9, dtype=np.float32).reshape(3, 3),)),
    "pad": (lambda x: lax.pad(x, 0.5, [(1, 0, 1), (0, 2, 0)]),
            (np.arange(4, dtype=np.float32).reshape(2, 2),)),
    "fft": (lambda x: jnp.fft.fft(x), (np.arange(4, dtype=np.float32),)),
    "erf_inv": (lambda x: lax.erf_inv(x / 4), (np.arange(4, dtype=np.float32),)),
    "exp2": (lambda x: jnp.exp2(x), (np.arange(4, dtype=np.float32),)),
    "max_pool_grad": (jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2),
                                                           "VALID").sum()),
                      (np.arange(16, dtype=np.float32).reshape(4, 4) % 5,)),
    "integers": (lambda x: (x >> 1, x % 3, jnp.clip(x, 1, 4), jnp.argmax(x)),
                 (np.array([5, -3, 7, 2], np.int32),)),
    "complex": (lambda x: (x * (1 + 2j)).imag, (np.arange(3, dtype=np.float32),)),
}


@pytest.mark.parametrize("name", sorted(ROUND_TRIP_PROGRAMS))
def test_printer_output_reads_back(name):
    fn, args = ROUND_TRIP_PROGRAMS[name]
    text = jax.jit(fn).lower(*args).as_text(dialect="stablehlo")
    got = _outputs(from_stablehlo(text).call(*args))
    want = _outputs(jax.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        wide = np.complex128 if np.asarray(w).dtype.kind == "c" else np.float64
        np.testing.assert_allclose(np.asarray(g, wide), np.asarray(w, wide),
                                   rtol=1e-6, atol=1e-6)
    # print -> parse -> print reaches a fixed point after one round
    again = stablehlo.print_module(parse_module(text))
    assert stablehlo.print_module(parse_module(again)) == again


# ----------------------------------------------------------------------------- syntax

def _main(body, args="%arg0: tensor<3xf32>", results="tensor<3xf32>"):
    return (f"module @m {{\n  func.func public @main({args}) -> ({results}) {{\n{body}\n"
            "  }\n}\n")


def test_generic_and_pretty_forms_read_the_same():
    pretty = _main('    %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32> loc(#loc2)\n'
                   '    %1 = stablehlo.compare GT, %0, %arg0, FLOAT : (tensor<3xf32>, '
                   'tensor<3xf32>) -> tensor<3xi1>\n'
                   '    %2 = stablehlo.select %1, %0, %arg0 : tensor<3xi1>, tensor<3xf32>\n'
                   '    return %2 : tensor<3xf32> loc("x.py":3:0)')
    generic = _main('    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<3xf32>, tensor<3xf32>) '
                    '-> tensor<3xf32>\n'
                    '    %1 = "stablehlo.compare"(%0, %arg0) <{comparison_direction = '
                    '#stablehlo<comparison_direction GT>}> : (tensor<3xf32>, tensor<3xf32>) '
                    '-> tensor<3xi1>\n'
                    '    %2 = "stablehlo.select"(%1, %0, %arg0) : (tensor<3xi1>, '
                    'tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n'
                    '    "func.return"(%2) : (tensor<3xf32>) -> ()') + '#loc2 = loc("y")\n'
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    for text in (pretty, generic):
        (out,) = _outputs(evaluate_module(parse_module(text), [x]))
        np.testing.assert_array_equal(out, np.where(x + x > x, x + x, x))


def test_unknown_op_names_the_op_and_line():
    text = _main("    %0 = stablehlo.frobnicate %arg0 : tensor<3xf32>\n"
                 "    return %0 : tensor<3xf32>")
    with pytest.raises(NotImplementedError) as info:
        parse_module(text)
    assert "'stablehlo.frobnicate'" in str(info.value) and "line 3" in str(info.value)


def test_syntax_errors_and_undefined_values_name_the_line():
    with pytest.raises(SyntaxError) as info:
        parse_module(_main("    %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>\n"
                           '    %1 = "stablehlo.abs"(%0 : tensor<3xf32>'))
    assert "line 4" in str(info.value)
    with pytest.raises(ValueError) as info:
        parse_module(_main("    %0 = stablehlo.add %arg0, %9 : tensor<3xf32>\n"
                           "    return %0 : tensor<3xf32>"))
    assert "line 3" in str(info.value) and "%9" in str(info.value)


def test_unknown_custom_call_names_the_target():
    text = _main("    %0 = stablehlo.custom_call @my_kernel(%arg0) {backend_config = "
                 "{x = 1 : i64}} : (tensor<3xf32>) -> tensor<3xf32>\n"
                 "    return %0 : tensor<3xf32>")
    with pytest.raises(NotImplementedError) as info:
        parse_module(text)
    assert "@my_kernel" in str(info.value)


def test_sharding_custom_call_is_an_identity():
    text = _main('    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = '
                 '"{replicated}"} : (tensor<3xf32>) -> tensor<3xf32>\n'
                 "    return %0 : tensor<3xf32>")
    module = parse_module(text)
    assert module.entry.root.opcode is Opcode.PARAMETER


@pytest.mark.parametrize("text, dtype, dims, want", [
    ("dense<1.500000e+00>", np.float32, (2,), [1.5, 1.5]),
    ("dense<0xFF800000>", np.float32, (), -np.inf),
    ('dense<"0x0000C07F0000803F">', np.float32, (2,), [np.nan, 1.0]),
    ("dense<[[1, 2], [3, 4]]>", np.int32, (2, 2), [[1, 2], [3, 4]]),
    ("dense<[true, false]>", np.bool_, (2,), [True, False]),
    ("dense<(1.000000e+00,-2.000000e+00)>", np.complex64, (), 1 - 2j),
    ("dense<>", np.float32, (0, 2), np.zeros((0, 2))),
])
def test_dense_literals(text, dtype, dims, want):
    got = syntax.parse_dense(text, Shape(np.dtype(dtype), dims))
    assert got.dtype == dtype and got.shape == dims
    np.testing.assert_array_equal(got, np.asarray(want, dtype))


def test_tensor_types_and_locations():
    shape = syntax.parse_tensor_type("tensor<3x4xcomplex<f32>>")
    assert shape.dims == (3, 4) and shape.dtype == np.complex64
    assert syntax.parse_tensor_type("tensor<ui8>").dims == ()
    tokens = [t.text for t in syntax.tokenize('%0 = stablehlo.abs %a : tensor<f32> '
                                              'loc(fused["a", "b"](#loc1))\n#loc1 = loc("f")')]
    assert tokens == ["%0", "=", "stablehlo.abs", "%a", ":", "tensor<f32>"]
    assert re.fullmatch(r"b01f_01io->b01f",
                        syntax.conv_dim_labels("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"))


# ----------------------------------------------------------------------------- JAX -> jaxlite -> XLA

@pytest.mark.parametrize("name", PROGRAMS + BENCH_MODULES)
def test_jax_modules_reprint_stably(name):
    # LAPACK calls too: they read as calls that print back as the same LAPACK call.
    once = stablehlo.print_module(parse_module((MODULES / f"{name}.mlir").read_text()))
    twice = stablehlo.print_module(parse_module(once))
    assert once == twice


@pytest.fixture(scope="module")
def reprinted_in_xla(tmp_path_factory):
    """jaxlite's reprint of each JAX-lowered module, run by real XLA (jaxlib) on the
    recorded inputs (bench: on the regenerated ones)."""
    jax_python_or_skip()
    cases = {}
    for name in PROGRAMS + [n for n in BENCH_MODULES if n in WORKLOADS]:
        text = stablehlo.print_module(parse_module((MODULES / f"{name}.mlir").read_text()))
        if name in WORKLOADS:
            inputs = jax.tree_util.tree_leaves(WORKLOADS[name].inputs(np.random.default_rng(0)))
        else:
            recorded = np.load(MODULES / f"{name}.npz")
            inputs = [recorded[k] for k in sorted((k for k in recorded if k.startswith("in_")),
                                                  key=lambda k: int(k[3:]))]
        add_text_case(cases, name, text, inputs)
    return run_cases(cases, tmp_path_factory.mktemp("stablehlo_reprint"))


@pytest.mark.parametrize("name", PROGRAMS + BENCH_MODULES)
def test_jax_modules_reprinted_by_jaxlite_run_in_xla(name, reprinted_in_xla):
    if name.startswith("bench_") and name not in WORKLOADS:
        pytest.skip(f"no bench workload {name} at {BENCH}")
    results = reprinted_in_xla
    assert f"{name}/error" not in results, str(results.get(f"{name}/error"))
    recorded = np.load(MODULES / f"{name}.npz")
    count = len([k for k in recorded if k.startswith("out_")])
    outputs = [results[f"{name}/out{i}"] for i in range(count)]
    outputs = [o.view(jnp.bfloat16) if recorded[f"out_{i}"].dtype.kind == "V" else o
               for i, o in enumerate(outputs)]
    tolerance = WORKLOADS[name].tol if name in WORKLOADS else None
    _check_recorded(name, outputs, tolerance)
