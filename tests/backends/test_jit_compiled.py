"""`jit` through the compiler: every primitive's test record compiled on the interpreter
backend (chosen by name; tests/backends/cpu runs the records on the cpu backend) against
eager; then, on the default backend (cpu), ahead-of-time lowering and compilation, cost and
memory analysis, donation, the compile cache per signature and backend, and
`jax_log_compiles`."""
from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.backends import registry
from jaxlite.backends.base import MemoryAnalysis
from jaxlite.backends.interpreter import InterpreterClient
from jaxlite.config import config
from jaxlite.test_util import VALUE_TOLERANCE
from jaxlite.xla.ir import HloModule
from records import all_records

RECORDS = all_records()
NAMES = sorted(RECORDS)
ALT = "interpreter_alt"  # a second backend, to check that caches are per backend


@pytest.fixture(scope="module", autouse=True)
def second_backend():
    if ALT not in registry.default_registry().registered():
        registry.register_backend_factory(ALT, lambda: InterpreterClient(ALT), priority=-100)


@pytest.fixture
def compile_log(caplog):
    caplog.set_level(logging.WARNING, logger="jaxlite")
    with config.override("jax_log_compiles", True):
        yield lambda: [r.getMessage() for r in caplog.records
                       if r.name == "jaxlite" and "Finished compiling" in r.getMessage()]


def _outputs(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _assert_same(actual, expected, what):
    assert isinstance(actual, jax.Array), what
    assert actual.dtype == np.asarray(expected).dtype, what
    assert actual.weak_type == getattr(expected, "weak_type", False), what
    tol = VALUE_TOLERANCE[np.dtype(actual.dtype)]
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, what
    if tol == 0:
        np.testing.assert_array_equal(a, e, err_msg=what)
    else:
        np.testing.assert_allclose(a.astype(np.complex128), e.astype(np.complex128), rtol=tol,
                                   atol=tol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=2)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_every_record_compiles_to_eager_values(name, seed, data):
    with config.override("jaxlite_verify_hlo", True):
        _check_record(name, seed, data)


def _check_record(name, seed, data):
    record = RECORDS[name]
    dtype = data.draw(st.sampled_from(list(record.dtypes)), label="dtype")
    case = record.make_case(np.random.default_rng(seed), dtype)
    eager = _outputs(case.fun(*case.args))
    jitted = jax.jit(case.fun, backend="interpreter")
    for a, e in zip(_outputs(jitted(*case.args)), eager):
        _assert_same(a, e, f"jit {name} on {dtype}")
    compiled = jitted.lower(*case.args).compile()
    assert "ENTRY" in compiled.as_text()
    for a, e in zip(_outputs(compiled(*case.args)), eager):
        _assert_same(a, e, f"compiled {name} on {dtype}")


def mlp(params, x):
    w, b = params
    return jnp.tanh(x @ w + b).sum()


def mlp_args():
    rng = np.random.default_rng(1)
    params = (rng.standard_normal((8, 4)).astype(np.float32), np.zeros(4, np.float32))
    return params, rng.standard_normal((5, 8)).astype(np.float32)


def test_lower_and_compile_texts():
    params, x = mlp_args()
    lowered = jax.jit(mlp).lower(params, x)
    text = lowered.as_text()
    assert text.startswith("HloModule jit_mlp") and "ENTRY" in text and "dot(" in text
    assert lowered.as_text(dialect="hlo") == text
    assert isinstance(lowered.compiler_ir().as_hlo_module(), HloModule)
    assert lowered.compiler_ir("hlo").as_hlo_text() == text  # JAX's XlaComputation method
    stablehlo = lowered.as_text(dialect="stablehlo")
    assert stablehlo.startswith("module @jit_mlp") and "stablehlo.dot_general" in stablehlo
    with pytest.raises(ValueError, match="dialect"):
        lowered.as_text(dialect="mhlo")
    compiled = lowered.compile()
    assert "ENTRY" in compiled.as_text()
    assert compiled.runtime_executable().text("hlo") == text
    np.testing.assert_allclose(np.asarray(compiled(params, x)), np.asarray(mlp(params, x)),
                               rtol=1e-6)
    assert lowered.out_tree == compiled.out_tree
    assert lowered.in_tree == compiled.in_tree
    w_aval = lowered.in_avals[0][0][0]
    assert (w_aval.shape, w_aval.dtype) == ((8, 4), np.float32)


def test_traced_lowers():
    params, x = mlp_args()
    traced = jax.jit(mlp).trace(params, x)
    assert traced.lower().as_text() == jax.jit(mlp).lower(params, x).as_text()


def test_compiled_calls_check_their_arguments():
    f = jax.jit(lambda x, n: x * n, static_argnums=1)
    x = np.ones((4, 8), np.float32)
    compiled = f.lower(x, 2).compile()
    np.testing.assert_array_equal(np.asarray(compiled(x)), 2 * x)  # static ones left out
    with pytest.raises(TypeError, match="input pytree does not match"):
        compiled(x, 2)
    with pytest.raises(TypeError, match="Argument 'x' compiled with float32\\[4,8\\] and "
                                        "called with float32\\[3\\]"):
        compiled(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="cannot be called on traced values"):
        jax.grad(lambda v: compiled(v).sum())(x)


def test_keyword_arguments_and_static_names():
    f = jax.jit(lambda x, *, scale, shift: x * scale + shift, static_argnames="scale")
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(x, scale=2.0, shift=1.0)), x * 2 + 1)
    compiled = f.lower(x, scale=3.0, shift=1.0).compile()
    np.testing.assert_array_equal(np.asarray(compiled(x, shift=2.0)), x * 3 + 2)


def test_cost_and_memory_analysis():
    a = np.ones((4, 8), np.float32)
    b = np.ones((8, 16), np.float32)
    compiled = jax.jit(lambda a, b: jnp.tanh(a @ b).sum(axis=0)).lower(a, b).compile()
    costs = compiled.cost_analysis()
    assert {"flops", "bytes accessed", "transcendentals"} <= set(costs)
    assert costs["flops"] >= 2 * 4 * 16 * 8 and costs["transcendentals"] == 64
    assert costs["bytes accessed"] > 0
    stats = compiled.memory_analysis()
    assert isinstance(stats, MemoryAnalysis)
    assert stats.argument_size_in_bytes == 640 and stats.output_size_in_bytes == 64
    assert stats.alias_size_in_bytes == 0 and stats.temp_size_in_bytes >= 0
    lowered_costs = jax.jit(lambda x: x + 1).lower(a).cost_analysis()
    assert lowered_costs["flops"] == 32


def test_donate_argnums_reach_the_compile_options():
    x = np.ones((4, 8), np.float32)
    f = jax.jit(lambda x, y: (x + y, x * 2), donate_argnums=0)
    compiled = f.lower(x, x).compile()
    assert compiled.runtime_executable().options.donated_parameters == (0,)
    assert compiled.donate_argnums == (0,)
    assert compiled.memory_analysis().alias_size_in_bytes == 128
    g = jax.jit(lambda p, y: p["a"] + y, donate_argnames="y")
    assert g.lower({"a": x}, x).compile().runtime_executable().options \
        .donated_parameters == (1,)
    # As in JAX, the donated Array is deleted by the call (on every backend).
    donated = jax.device_put(x)
    out, _ = f(donated, x)
    np.testing.assert_array_equal(np.asarray(out), 2 * x)
    assert donated.is_deleted()
    with pytest.raises(RuntimeError, match="has been deleted"):
        np.asarray(donated)


def test_one_compilation_per_signature_and_backend(compile_log):
    def scale(x):
        return x * 3.0
    f = jax.jit(scale)
    f(np.ones(3, np.float32))
    f(np.zeros(3, np.float32))
    assert len(compile_log()) == 1
    f(np.ones(4, np.float32))
    assert len(compile_log()) == 2
    on_alt = jax.jit(scale, backend=ALT)
    np.testing.assert_array_equal(np.asarray(on_alt(np.ones(3, np.float32))), [3.0] * 3)
    on_alt(np.ones(3, np.float32))
    logs = compile_log()
    assert len(logs) == 3 and f"the {ALT} backend" in logs[-1]
    with config.override("jax_platforms", f"{ALT},interpreter"):
        f(np.ones(4, np.float32))  # the same trace, another default backend
    logs = compile_log()
    assert len(logs) == 4 and f"the {ALT} backend" in logs[-1]
    assert f._cache_size() == 2


def test_transformed_jits_reuse_executables_of_the_same_program(compile_log):
    g = jax.grad(jax.jit(lambda x: jnp.sin(x).sum()))
    x = np.linspace(0, 1, 3).astype(np.float32)
    g(x)
    first = len(compile_log())
    assert first >= 1
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(g(x)), np.cos(x), rtol=1e-6)
    assert len(compile_log()) == first  # new jaxprs each call, the same modules


def test_log_compiles_names_the_function_backend_and_time(compile_log):
    def my_function(x):
        return lax.sin(x)
    jax.jit(my_function, backend="cpu")(np.ones(2, np.float32))
    (message,) = compile_log()
    assert "jit(my_function)" in message and "cpu backend" in message
    assert " s" in message and "f32[2]" in message


def test_no_log_without_the_flag(caplog):
    caplog.set_level(logging.WARNING, logger="jaxlite")
    jax.jit(lambda x: x - 1)(np.ones(2, np.float32))
    assert not [r for r in caplog.records if r.name == "jaxlite"]


def test_inner_jits_are_not_compiled_under_transformations(compile_log):
    inner = jax.jit(lambda x: jnp.sin(x) * 2)
    outer = jax.jit(lambda x: inner(x) + 1)
    x = np.ones(3, np.float32)
    np.testing.assert_allclose(np.asarray(outer(x)), np.sin(x) * 2 + 1, rtol=1e-6)
    assert [m.split()[2] for m in compile_log()] == ["jit(<lambda>)"]
    jaxpr = jax.make_jaxpr(inner)(x)
    assert "jit[" in str(jaxpr) and len(compile_log()) == 1


def test_grad_and_vmap_of_jit_compile_the_transformed_program():
    f = jax.jit(lambda x: jnp.sum(jnp.sin(x) ** 2))
    x = np.linspace(0, 1, 5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x)), np.sin(2 * x), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(x[:, None])), np.sin(x) ** 2,
                               rtol=1e-6)


def test_jit_on_a_device_and_errors():
    device = jax.devices()[0]
    f = jax.jit(lambda x: x + 1, device=device)
    assert np.asarray(f(np.zeros(2, np.float32))).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="either device or backend"):
        jax.jit(lambda x: x, device=device, backend="interpreter")
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        jax.jit(lambda x: x, backend="tpu")(1.0)


def test_device_put_and_get():
    device = jax.devices()[0]
    tree = {"a": np.arange(3.0), "b": 2}
    put = jax.device_put(tree, device)
    assert isinstance(put["a"], jax.Array) and put["a"].dtype == np.float32
    assert put["b"].weak_type
    got = jax.device_get(put)
    assert isinstance(got["a"], np.ndarray) and got["a"].tolist() == [0.0, 1.0, 2.0]
    assert jax.block_until_ready(put) is not None
    with pytest.raises(TypeError, match="expected a Device, a Sharding or a PartitionSpec"):
        jax.device_put(1.0, "cpu")


def test_weak_types_and_float0_outputs():
    f = jax.jit(lambda x, y: (x * 2, y))
    out_weak, out_int = f(1.0, np.int32(3))
    assert out_weak.weak_type and out_weak.dtype == np.float32
    assert not out_int.weak_type and out_int.dtype == np.int32
    # Tangents of integer inputs are float0 and come back from a compiled call as such.
    _, tangent = jax.jvp(jax.jit(lambda n: n * 2), (np.int32(3),),
                         (np.zeros((), jax.dtypes.float0),))
    assert tangent.dtype == jax.dtypes.float0


def test_dump_dir_receives_the_module_after_each_pass(tmp_path):
    with config.override("jaxlite_dump_dir", str(tmp_path)):
        jax.jit(lambda x: x * 1.0 + 0.0, backend="interpreter")(np.ones(2, np.float32))
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files and files[0].startswith("jit__lambda.0000.")
    assert "HloModule jit__lambda" in (tmp_path / files[0]).read_text()
