"""jax.ffi on jaxlite: handlers written for XLA's typed FFI, built at test time with the
machine's compiler (examples/ffi), called eagerly, under jit (native thunk on the cpu
backend, the HLO evaluator on the interpreter backend), vmap and grad (custom_vjp),
compared with numpy."""
from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.config import enable_x64
from jaxlite.core.avals import ShapedArray
from jaxlite.errors import JaxRuntimeError
from jaxlite.export import from_stablehlo
from jaxlite.extend.core import Primitive
from jaxlite.interpreters import mlir
from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS
from jaxlite.xla.ffi import frames

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "ffi"


def _example(name: str):
    """examples/ffi/<name>.py, loaded under a name no installed package has."""
    spec = importlib.util.spec_from_file_location(f"ffi_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _example("build")
rms_norm_example = _example("rms_norm")

EPS = 1e-5


def _built(builder, folder: Path, source: str) -> Path:
    try:
        return builder(folder)
    except build.Unavailable as reason:
        pytest.skip(f"cannot build examples/ffi/{source}: {reason}")


@pytest.fixture(scope="module")
def rms_library(tmp_path_factory) -> Path:
    library = _built(build.build_rms_norm, tmp_path_factory.mktemp("ffi"), "rms_norm.cc")
    rms_norm_example.register(jax, library)
    return library


@pytest.fixture(scope="module")
def scale_library(tmp_path_factory) -> Path:
    library = _built(build.build_scale, tmp_path_factory.mktemp("ffi_c"), "scale.c")
    lib = ctypes.cdll.LoadLibrary(str(library))
    jax.ffi.register_ffi_target("scale", jax.ffi.pycapsule(lib.Scale), platform="cpu")
    jax.ffi.register_ffi_target("add_into", jax.ffi.pycapsule(lib.AddInto))
    return library


def reference(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS)


def rms_call(x, vmap_method=None):
    result = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("rms_norm", result, vmap_method=vmap_method)(x, eps=np.float32(EPS))


def sample(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


@pytest.mark.parametrize("mode", ["eager", "jit", "jit_interpreter"])
def test_rms_norm_matches_numpy(rms_library, mode):
    x = sample(5, 16)
    run = {"eager": rms_call, "jit": jax.jit(rms_call),
           "jit_interpreter": jax.jit(rms_call, backend="interpreter")}[mode]
    y = run(x)
    assert y.shape == (5, 16) and y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), reference(x), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all", "legacy_vectorized"])
def test_vmap_methods(rms_library, method):
    xs = np.stack([sample(3, 8, seed=s) * (s + 1) for s in range(4)])
    y = jax.jit(jax.vmap(lambda x: rms_call(x, method)))(xs)
    np.testing.assert_allclose(np.asarray(y), reference(xs), rtol=2e-6, atol=2e-6)
    # the batch axis elsewhere than first
    y = jax.vmap(lambda x: rms_call(x, method), in_axes=1, out_axes=1)(xs.transpose(1, 0, 2))
    np.testing.assert_allclose(np.asarray(y), reference(xs).transpose(1, 0, 2), rtol=2e-6,
                               atol=2e-6)


@pytest.mark.parametrize("method", ["sequential", "broadcast_all"])
def test_vmap_with_an_unbatched_argument(rms_library, method):
    x, dy = sample(4, 6), sample(3, 4, 6, seed=1)

    def bwd(d):
        result = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return jax.ffi.ffi_call("rms_norm_bwd", result, vmap_method=method)(
            x, d, eps=np.float32(EPS))
    got = jax.jit(jax.vmap(bwd))(dy)
    singles = [np.asarray(bwd(d)) for d in dy]
    np.testing.assert_allclose(np.asarray(got), np.stack(singles), rtol=1e-6, atol=1e-6)


def _numeric_grad(loss, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    grad = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[i] = h
        grad[i] = (loss(x + step) - loss(x - step)) / (2 * h)
    return grad


@pytest.mark.parametrize("vmap_method", ["broadcast_all", "sequential"])
def test_grad_through_custom_vjp(rms_library, vmap_method):
    norm = rms_norm_example.make_rms_norm(jax, vmap_method)
    x, w = sample(3, 7), sample(3, 7, seed=2)
    g = jax.jit(jax.grad(lambda v: (norm(v, EPS) * w).sum()))(x)
    expected = _numeric_grad(lambda v: (reference(v) * w).sum(), x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-4, atol=1e-5)
    # grad of a vmapped call: the backward handler batched too
    xs = np.stack([x, 2 * x - 1])
    gs = jax.grad(lambda v: (jax.vmap(lambda r: norm(r, EPS))(v) * w).sum())(xs)
    for k in range(2):
        np.testing.assert_allclose(
            np.asarray(gs[k]),
            _numeric_grad(lambda v: (reference(v) * w).sum(), xs[k].astype(np.float64)),
            rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["eager", "jit", "jit_interpreter"])
def test_attributes_of_every_kind(rms_library, mode):
    def affine(x):
        results = (jax.ShapeDtypeStruct(x.shape, np.float64), jax.ShapeDtypeStruct((), np.int64))
        return jax.ffi.ffi_call("affine", results)(
            x, factors=np.array([1, 2, 4], np.int64), flip=True, mode="plus_one",
            offset=np.int32(2))
    run = {"eager": affine, "jit": jax.jit(affine),
           "jit_interpreter": jax.jit(affine, backend="interpreter")}[mode]
    with enable_x64():
        x = np.arange(6.0).reshape(2, 3)
        out, count = run(jnp.asarray(x))
        assert isinstance(out, jax.Array) and out.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(out), -(x * 7 + 3))
        assert int(count) == 6


def test_handler_errors_are_jax_runtime_errors(rms_library):
    scalar = np.float32(2.0)
    for run in (rms_call, jax.jit(rms_call)):
        with pytest.raises(JaxRuntimeError) as info:
            run(scalar)
        assert str(info.value).startswith("INVALID_ARGUMENT: rms_norm: x must have at least")
    # an attribute of the wrong type: the header's own diagnostics
    with pytest.raises(JaxRuntimeError) as info:
        jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct((2, 3), np.float32))(
            sample(2, 3), eps=1e-5)
    assert "Wrong scalar data type: expected F32 but got F64" in str(info.value)
    # the program still runs after a failed call
    np.testing.assert_allclose(np.asarray(jax.jit(rms_call)(sample(2, 3))),
                               reference(sample(2, 3)), rtol=2e-6, atol=2e-6)


def test_jax_errors(rms_library):
    x = sample(2, 3)
    with pytest.raises(JaxRuntimeError) as info:
        jax.jit(lambda v: jax.ffi.ffi_call("no_such_target", jax.ShapeDtypeStruct((2, 3),
                                                                                  np.float32))(v))(x)
    assert str(info.value).startswith("NOT_FOUND: No FFI handler registered for no_such_target")
    with pytest.raises(NotImplementedError) as info:
        jax.vmap(rms_call)(np.stack([x, x]))
    assert "Got vmap_method=None" in str(info.value)
    with pytest.raises(ValueError) as info:
        jax.grad(lambda v: rms_call(v).sum())(x)
    assert str(info.value).startswith("The FFI call to `rms_norm` cannot be differentiated")
    with pytest.raises(ValueError) as info:
        jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct((2, 3), np.float32),
                         vmap_method="nope")
    assert str(info.value).startswith("vmap_method must be on of the allowed methods")


def test_compiled_calls_reach_the_handler_without_python(rms_library, monkeypatch):
    def python_path(*args, **kwargs):
        raise AssertionError("the compiled program called the handler through Python")
    monkeypatch.setattr(frames, "call_target", python_path)
    monkeypatch.setitem(CUSTOM_CALL_TARGETS, "rms_norm", python_path)
    x = sample(11, 13)  # a shape no other test compiles
    y = jax.jit(lambda v: rms_call(v) * 2.0)(x)
    np.testing.assert_allclose(np.asarray(y), 2 * reference(x), rtol=2e-6, atol=2e-6)


def test_unused_calls_are_dropped_unless_they_have_side_effects(rms_library):
    x = sample(2, 5)

    def f(v, side_effect):
        jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(v.shape, v.dtype),
                         has_side_effect=side_effect)(v, eps=np.float32(EPS))
        return v + 1
    pure = jax.jit(lambda v: f(v, False)).lower(x).compile().as_text()
    effectful = jax.jit(lambda v: f(v, True)).lower(x).compile().as_text()
    assert 'custom_call_target="rms_norm"' not in pure
    assert 'custom_call_target="rms_norm"' in effectful


def test_plain_c_handler(scale_library):
    def scale(x, factor):
        return jax.ffi.ffi_call("scale", jax.ShapeDtypeStruct(x.shape, x.dtype),
                                vmap_method="broadcast_all")(x, factor=factor)
    with enable_x64():
        x = np.linspace(-1, 1, 12).reshape(3, 4)
        for run in (scale, jax.jit(scale, static_argnums=1)):
            np.testing.assert_array_equal(np.asarray(run(x, 2.5)), x * 2.5)
        np.testing.assert_array_equal(
            np.asarray(jax.vmap(lambda v: scale(v, -3.0))(x)), x * -3.0)
        with pytest.raises(JaxRuntimeError) as info:
            jax.jit(scale, static_argnums=1)(x, np.float32(2.5))
        assert str(info.value).startswith(
            "INVALID_ARGUMENT: scale: attribute factor must be a float64 scalar")


def test_registration_refuses_handlers_of_an_unknown_api_version():
    # A handler that answers XLA's metadata query with nothing: version 0.0, as XLA refuses.
    silent = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(lambda frame: None)
    with pytest.raises(JaxRuntimeError) as info:
        jax.ffi.register_ffi_target("silent", jax.ffi.pycapsule(silent))
    assert "handler's API version (0.0) is incompatible" in str(info.value)


def test_public_names():
    assert jax.ffi.register_ffi_target_as_batch_partitionable("x") is None
    with pytest.raises(ValueError):
        jax.ffi.register_ffi_type_id("t", None)
    try:
        folder = Path(jax.ffi.include_dir())
    except RuntimeError as error:
        assert "jaxlib" in str(error)
    else:
        assert (folder / "xla" / "ffi" / "api" / "ffi.h").is_file()
    capsule = jax.ffi.pycapsule(ctypes.CFUNCTYPE(None)(lambda: None))
    assert type(capsule).__name__ == "PyCapsule"


@pytest.fixture(scope="module")
def counter(rms_library):
    """count(base): the example's stateful "counter" handler (instantiate, then execute)."""
    lib = ctypes.cdll.LoadLibrary(str(rms_library))
    lib.CounterTypeId.restype = lib.CounterTypeInfo.restype = ctypes.c_void_p
    jax.ffi.register_ffi_type("counter", {"type_id": jax.ffi.pycapsule(lib.CounterTypeId()),
                                          "type_info": jax.ffi.pycapsule(lib.CounterTypeInfo())})
    jax.ffi.register_ffi_target("counter", {
        "instantiate": jax.ffi.pycapsule(lib.CounterInstantiate),
        "execute": jax.ffi.pycapsule(lib.CounterExecute)})

    def count(base):
        return jax.ffi.ffi_call("counter", jax.ShapeDtypeStruct((), np.int32))(base=base)
    return count


def test_instantiate_stage_and_state(counter):
    count = counter
    # Instantiated once per call site, its state kept between calls (JAX gives the same).
    counted = jax.jit(lambda: count(10))
    assert [int(counted()) for _ in range(3)] == [10, 11, 12]
    assert [int(count(20)) for _ in range(3)] == [20, 21, 22]
    # A new function each time is a new executable: JAX gives 30 each time.
    assert [int(jax.jit(lambda: count(30), backend="interpreter")()) for _ in range(2)] == \
        [30, 30]


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_state_is_per_call_site_of_each_compiled_function(counter, backend):
    # The counts JAX 0.10.2 gives for these calls: XLA keeps a handler's state per call
    # site of each executable, so equal programs of two jitted functions count apart, one
    # function lowered for new shapes starts afresh, and eager calls keep their own.
    count = counter
    jit = lambda f: jax.jit(f, backend=backend)  # noqa: E731
    first, second = jit(lambda: count(10)), jit(lambda: count(10))
    assert [int(first()) for _ in range(3)] == [10, 11, 12]
    assert [int(second()) for _ in range(3)] == [10, 11, 12]
    assert [int(first()) for _ in range(2)] == [13, 14]
    both = jit(lambda: (count(10), count(10)))
    assert [tuple(int(v) for v in both()) for _ in range(2)] == [(10, 10), (11, 11)]
    shifted = jit(lambda x: count(10) + x)
    assert [int(shifted(np.float32(0))) for _ in range(2)] == [10, 11]
    assert [int(shifted(np.int32(0))) for _ in range(2)] == [10, 11]
    assert [int(shifted(np.float32(0))) for _ in range(2)] == [12, 13]
    looped = jit(lambda: jax.lax.fori_loop(0, 3, lambda i, c: c + count(100), 0))
    assert [int(looped()) for _ in range(2)] == [303, 312]
    eager_base = {"cpu": 40, "interpreter": 50}[backend]  # eager state outlives the test
    assert [int(count(eager_base)) for _ in range(2)] == [eager_base, eager_base + 1]
    assert int(jit(lambda: count(eager_base))()) == eager_base
    assert int(count(eager_base)) == eager_base + 2


def test_ffi_lowering_of_a_library_primitive(rms_library):
    # A primitive declared as JAX libraries do, lowered with jax.ffi.ffi_lowering: its
    # parameters become the handler's attributes.
    rms = Primitive("library_rms_norm")
    rms.def_abstract_eval(lambda x, eps: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(rms, jax.ffi.ffi_lowering("rms_norm"), platform="cpu")
    x = sample(3, 10)
    y = jax.jit(lambda v: rms.bind(v, eps=np.float32(EPS)))(x)
    np.testing.assert_allclose(np.asarray(y), reference(x), rtol=2e-6, atol=2e-6)


def test_results_as_a_list_or_a_tuple(rms_library):
    x = sample(2, 4)
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    as_list = jax.ffi.ffi_call("rms_norm", [shape])(x, eps=np.float32(EPS))
    as_tuple = jax.jit(lambda v: jax.ffi.ffi_call("rms_norm", (shape,))(v, eps=np.float32(EPS)))(x)
    assert isinstance(as_list, list) and isinstance(as_tuple, tuple)
    np.testing.assert_array_equal(np.asarray(as_list[0]), np.asarray(as_tuple[0]))


# Real XLA runs the StableHLO jaxlite prints for FFI calls, with the same library.
_JAX_RUNNER = """
import ctypes, sys
import numpy as np
import jax
from jax._src import xla_bridge
from jaxlib import _jax
jax.config.update("jax_enable_x64", True)
backend = xla_bridge.get_backend("cpu")
lib = ctypes.cdll.LoadLibrary(sys.argv[1])
for pair in sys.argv[4:]:
    name, symbol = pair.split("=")
    jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(lib, symbol)))
case = np.load(sys.argv[2])
devices = _jax.DeviceList(tuple(backend.local_devices()[:1]))
program = backend.compile_and_load(str(case["text"]), devices, _jax.CompileOptions())
args = [case[f"arg{i}"] for i in range(int(case["count"]))]
results = program.execute_sharded([jax.device_put(a) for a in args])
outs = [np.asarray(r[0]) for r in results.disassemble_into_single_device_arrays()]
np.savez(sys.argv[3], *outs)
"""


@functools.lru_cache(maxsize=None)
def _jax_python() -> str | None:
    """The python with jax, or None. Probed once per process: the probe imports jax (about
    2 s of CPU) and its answer does not change during a run."""
    python = os.environ.get("JAXLITE_JAX_PYTHON", "/tmp/jaxvenv/bin/python")
    probe = subprocess.run([python, "-c", "import jax, jaxlib"], capture_output=True) \
        if os.path.exists(python) else None
    return python if probe is not None and probe.returncode == 0 else None


def _run_in_xla(tmp_path: Path, library: Path, text: str, args: list,
                targets: tuple[str, ...] = ("rms_norm=RmsNorm", "affine=Affine")
                ) -> list[np.ndarray]:
    python = _jax_python()
    if python is None:
        pytest.skip("no python with jax (set JAXLITE_JAX_PYTHON) to run StableHLO in XLA")
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "runner.py").write_text(_JAX_RUNNER)
    np.savez(tmp_path / "case.npz", text=np.array(text), count=np.array(len(args)),
             **{f"arg{i}": np.asarray(a) for i, a in enumerate(args)})
    done = subprocess.run([python, str(tmp_path / "runner.py"), str(library),
                           str(tmp_path / "case.npz"), str(tmp_path / "out.npz"), *targets],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    outs = np.load(tmp_path / "out.npz")
    return [outs[f"arr_{i}"] for i in range(len(outs.files))]


def test_stablehlo_of_ffi_calls_runs_in_xla(rms_library, tmp_path):
    x = sample(4, 6)

    def program(v):
        return rms_call(v) * 2.0 + 1.0
    text = jax.jit(program).lower(x).as_text(dialect="stablehlo")
    assert "mhlo.backend_config = {eps = 0x3727C5AC : f32}" in text
    [xla_result] = _run_in_xla(tmp_path / "rms", rms_library, text, [x])
    np.testing.assert_array_equal(xla_result, np.asarray(jax.jit(program)(x)))


def test_stablehlo_attributes_of_every_kind_run_in_xla(rms_library, tmp_path):
    def affine(x):
        results = (jax.ShapeDtypeStruct(x.shape, np.float64), jax.ShapeDtypeStruct((), np.int64))
        return jax.ffi.ffi_call("affine", results)(
            x, factors=np.array([1, 2, 4], np.int64), flip=False, mode="plus_one",
            offset=np.int32(-2))
    with enable_x64():
        x = np.linspace(-2, 2, 10).reshape(2, 5)
        text = jax.jit(affine).lower(x).as_text(dialect="stablehlo")
        ours = [np.asarray(r) for r in jax.jit(affine)(x)]
    theirs = _run_in_xla(tmp_path / "affine", rms_library, text, [x])
    np.testing.assert_array_equal(theirs[0], ours[0])
    np.testing.assert_array_equal(theirs[0], x * 7 - 1)
    assert int(theirs[1]) == int(ours[1]) == 10


def test_stages_run_as_xlas_cpu_runtime_runs_them(scale_library):
    # Registered for all four stages, the handler sees what XLA's CPU runtime does (JAX
    # 0.10.2 gives these counts): instantiate once per call site, execute per call, never
    # prepare or initialize.
    lib = ctypes.cdll.LoadLibrary(str(scale_library))
    stages = jax.ffi.pycapsule(lib.Stages)
    jax.ffi.register_ffi_target("stages", {s: stages for s in
                                           ("instantiate", "prepare", "initialize", "execute")})

    def call():
        return jax.ffi.ffi_call("stages", jax.ShapeDtypeStruct((4,), np.int32),
                                has_side_effect=True)()
    counted = jax.jit(call)
    jitted = [np.asarray(counted()).tolist() for _ in range(3)]
    eager = [np.asarray(call()).tolist() for _ in range(2)]
    assert jitted == [[1, 0, 0, 1], [1, 0, 0, 2], [1, 0, 0, 3]]
    assert eager == [[2, 0, 0, 4], [2, 0, 0, 5]]


def add_into(x, acc):
    """AddInto (examples/ffi/scale.c) adds x into its output, which aliases acc * 2."""
    return jax.ffi.ffi_call("add_into", jax.ShapeDtypeStruct(acc.shape, acc.dtype),
                            input_output_aliases={1: 0})(x, acc * 2)


@pytest.mark.parametrize("mode", ["eager", "jit", "jit_interpreter"])
def test_input_output_aliases(scale_library, mode):
    # The aliased output starts as its input (XLA's shared buffer): AddInto adds into it.
    run = {"eager": add_into, "jit": jax.jit(add_into),
           "jit_interpreter": jax.jit(add_into, backend="interpreter")}[mode]
    with enable_x64():
        x, acc = np.arange(4.0), np.full(4, 10.0)
        np.testing.assert_array_equal(np.asarray(run(x, acc)), [20.0, 21.0, 22.0, 23.0])
        np.testing.assert_array_equal(acc, 10.0)  # the caller's array is untouched


def test_concurrent_calls(rms_library):
    # Each call builds its frame on its own stack (compiled) or holds its site (eager).
    norm = jax.jit(rms_call)
    inputs = [sample(6, 32, seed=s) for s in range(8)]
    with ThreadPoolExecutor(4) as pool:
        compiled = list(pool.map(lambda x: np.asarray(norm(x)), inputs * 4))
        eager = list(pool.map(lambda x: np.asarray(rms_call(x)), inputs * 4))
    for got in (compiled, eager):
        for k, y in enumerate(got):
            np.testing.assert_allclose(y, reference(inputs[k % 8]), rtol=2e-6, atol=2e-6)


def _column_major_rms(x: np.ndarray, in_layout, out_layout) -> np.ndarray:
    """What rms_norm computes on buffers stored in those (major-to-minor) orders: it reads
    the stored bytes as a row-major array of x's logical shape and writes its result the
    same way into the output's storage."""
    stored = x.transpose(in_layout) if in_layout else x
    seen = np.ascontiguousarray(stored).reshape(x.shape)
    written = reference(seen).reshape(-1)
    if not out_layout:
        return written.reshape(x.shape)
    return written.reshape([x.shape[a] for a in out_layout]).transpose(np.argsort(out_layout))


@pytest.mark.parametrize("layouts", [((1, 0), (1, 0)), ((1, 0), None), (None, (1, 0)),
                                     ((0, 1), (0, 1)), ((2, 0, 1), (1, 2, 0))])
def test_input_and_output_layouts(rms_library, layouts):
    in_layout, out_layout = layouts
    x = sample(*(2, 3, 4)[-len(in_layout or out_layout):])

    def call(v):
        return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(v.shape, v.dtype),
                                input_layouts=[in_layout], output_layouts=out_layout,
                                vmap_method="broadcast_all")(v, eps=np.float32(EPS))
    expected = _column_major_rms(x, in_layout if in_layout != (0, 1) else None,
                                 out_layout if out_layout != (0, 1) else None)
    for run in (call, jax.jit(call), jax.jit(call, backend="interpreter")):
        np.testing.assert_allclose(np.asarray(run(x)), expected, rtol=2e-6, atol=2e-6)
    xs = np.stack([x, 2 * x + 1])
    batched = np.asarray(jax.vmap(call)(xs))
    np.testing.assert_allclose(batched[1], np.asarray(call(xs[1])), rtol=2e-6, atol=2e-6)


def test_stablehlo_with_layouts_runs_in_xla(rms_library, tmp_path):
    x = sample(3, 5)

    def program(v):
        return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(v.shape, v.dtype),
                                input_layouts=[(1, 0)], output_layouts=None)(
            v, eps=np.float32(EPS))
    text = jax.jit(program).lower(x).as_text(dialect="stablehlo")
    [xla_result] = _run_in_xla(tmp_path / "layouts", rms_library, text, [x])
    np.testing.assert_allclose(xla_result, np.asarray(jax.jit(program)(x)), rtol=1e-6,
                               atol=1e-6)


def test_stablehlo_with_aliases_runs_in_xla(scale_library, tmp_path):
    with enable_x64():
        x, acc = np.arange(5.0), np.full(5, 3.0)
        text = jax.jit(add_into).lower(x, acc).as_text(dialect="stablehlo")
        ours = np.asarray(jax.jit(add_into)(x, acc))
    assert "output_operand_aliases" in text
    [theirs] = _run_in_xla(tmp_path / "aliases", scale_library, text, [x, acc],
                           ("add_into=AddInto",))
    np.testing.assert_array_equal(theirs, ours)
    np.testing.assert_array_equal(theirs, x + 6.0)


# StableHLO of an FFI call as JAX 0.10.2 lowers it (jax.jit(f).lower(x).as_text(), f calling
# jax.ffi.ffi_call(TARGET, ...)(x, eps=np.float32(1e-5))).
JAX_FFI_MODULE = """module @jit__lambda attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @TARGET(%arg0) {backend_config = "", mhlo.backend_config = {eps = 9.99999974E-6 : f32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
"""


def test_from_stablehlo_reads_typed_ffi_calls(rms_library):
    x = sample(2, 3)
    exported = from_stablehlo(JAX_FFI_MODULE.replace("TARGET", "rms_norm"))
    np.testing.assert_allclose(np.asarray(exported.call(x)), reference(x), rtol=2e-6,
                               atol=2e-6)
    # jaxlite's own StableHLO of an FFI call reads back to the same call
    text = jax.jit(rms_call).lower(x).as_text(dialect="stablehlo")
    again = from_stablehlo(text).call(x)
    np.testing.assert_array_equal(np.asarray(again), np.asarray(jax.jit(rms_call)(x)))


def test_from_stablehlo_names_unknown_ffi_targets():
    with pytest.raises(NotImplementedError) as error:
        from_stablehlo(JAX_FFI_MODULE.replace("TARGET", "nobody_registered_this"))
    message = str(error.value)
    assert "@nobody_registered_this at line 3 is a typed FFI call of a target jaxlite does " \
           "not know" in message
    assert "jaxlite.ffi.register_ffi_target('nobody_registered_this'" in message
