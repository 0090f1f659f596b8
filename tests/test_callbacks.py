"""jaxlite.pure_callback, jaxlite.experimental.io_callback and jaxlite.effects_barrier:
values, how often and in which order the Python function runs, and JAX 0.10.2's errors.

What the programs print (values seen by callbacks, vmap methods, orders) is compared with
JAX in tests/test_debug.py (tests/data/callbacks/programs.py); the checks here count calls,
look at the compiled program and exercise errors, eagerly and under jit on both backends.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.errors import JaxRuntimeError
from jaxlite.experimental import io_callback
from jaxlite.lax import callbacks
from jaxlite.xla.passes.scheduling import schedule
from jaxlite.xla.text_parser import parse_module

BACKENDS = ("cpu", "interpreter")
EAGER_AND_JIT = [pytest.param(lambda f: f, id="eager")] + [
    pytest.param(lambda f, b=b: jax.jit(f, backend=b), id=f"jit-{b}") for b in BACKENDS]


class Counter:
    """A callback that records its arguments and returns the first one (as numpy)."""

    def __init__(self):
        self.calls = []

    def __call__(self, x, *rest):
        self.calls.append(np.array(x))
        return np.asarray(x)


# --------------------------------------------------------------------------- values

@pytest.mark.parametrize("wrap", EAGER_AND_JIT)
def test_pure_callback_computes_with_numpy(wrap):
    x = jnp.linspace(-1.0, 1.0, 5)
    out = wrap(lambda v: jax.pure_callback(lambda a: np.sin(np.asarray(a)), v, v) * 2)(x)
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(np.asarray(x)), rtol=1e-6)
    assert out.dtype == np.float32


@pytest.mark.parametrize("wrap", EAGER_AND_JIT)
def test_results_follow_result_shape_dtypes(wrap):
    def host(a, b=None):
        return {"sum": np.asarray(a) + b, "count": (len(a),)}
    spec = {"sum": jax.ShapeDtypeStruct((3,), jnp.float32),
            "count": (jax.ShapeDtypeStruct((), jnp.int32),)}
    out = wrap(lambda v: jax.pure_callback(host, spec, v, b=np.float32(2)))(jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out["sum"]), [2.0, 3.0, 4.0])
    assert out["count"][0].dtype == np.int32 and int(out["count"][0]) == 3


@pytest.mark.parametrize("wrap", EAGER_AND_JIT)
def test_python_and_float64_results_are_canonicalized(wrap):
    # float64 becomes float32 without x64 (as JAX's canonicalize_value does)
    out = wrap(lambda v: (jax.pure_callback(lambda a: np.zeros(3), v, v),
                          jax.pure_callback(lambda a: 1.5, jax.ShapeDtypeStruct((), jnp.float32),
                                            v)))(jnp.arange(3.0))
    assert out[0].dtype == np.float32 and float(out[1]) == 1.5


@given(shape=st.lists(st.integers(0, 3), max_size=3),
       dtype=st.sampled_from([np.float32, np.int32, np.bool_, np.uint8, np.complex64,
                              np.float16]))
def test_jit_round_trip_of_shapes_and_dtypes(shape, dtype):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).astype(dtype)
    out = jax.jit(lambda v: jax.pure_callback(lambda a: np.roll(a, 1), v, v))(x)
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(out), np.roll(x, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_callbacks_in_control_flow(backend):
    count = Counter()

    def f(x):
        def body(c, i):
            return c + jax.pure_callback(count, c, c), io_callback(count, i, i)
        carry, ys = jax.lax.scan(body, x, jnp.arange(3))
        w = jax.lax.while_loop(lambda c: c < 100.0, lambda c: io_callback(count, c, c) * 3, carry)
        return jax.lax.cond(w > 200.0, lambda v: io_callback(count, v, v), lambda v: -v, w), ys
    out, ys = jax.jit(f, backend=backend)(jnp.float32(1.0))
    assert float(out) == 216.0  # 1 -> 8 after the scan, 8*3*3*3 = 216 is above 200
    np.testing.assert_array_equal(np.asarray(ys), [0, 1, 2])
    assert [float(c) for c in count.calls] == [1, 0, 2, 1, 4, 2, 8, 24, 72, 216]


def test_custom_jvp_makes_a_callback_differentiable():
    @jax.custom_jvp
    def host_sin(x):
        return jax.pure_callback(lambda a: np.sin(np.asarray(a)), x, x, vmap_method="sequential")

    @host_sin.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        cos = jax.pure_callback(lambda a: np.cos(np.asarray(a)), x, x, vmap_method="sequential")
        return host_sin(x), cos * t
    x = jnp.arange(3.0)
    grads = jax.jit(jax.vmap(jax.grad(host_sin)))(x)
    np.testing.assert_allclose(np.asarray(grads), np.cos(np.asarray(x)), rtol=1e-6)
    g = jax.jit(jax.grad(lambda v: jnp.sum(host_sin(v) ** 2)))(x)
    np.testing.assert_allclose(np.asarray(g), np.sin(2 * np.asarray(x)), rtol=1e-5, atol=1e-7)


# ------------------------------------------------------------------ calls and order

@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_pure_callback_is_dropped_and_io_callback_is_not(backend):
    pure, io = Counter(), Counter()
    jax.jit(lambda x: (jax.pure_callback(pure, x, x), x)[1], backend=backend)(1.0)
    jax.jit(lambda x: (io_callback(io, x, x), x)[1], backend=backend)(1.0)
    assert len(pure.calls) == 0 and len(io.calls) == 1
    hlo = jax.jit(lambda x: jax.pure_callback(pure, x, x)).lower(1.0).as_text()
    assert "custom_call_has_side_effect=false" in hlo


@pytest.mark.parametrize("backend", BACKENDS)
def test_io_callbacks_are_never_merged(backend):
    io = Counter()
    out = jax.jit(lambda x: io_callback(io, x, x) + io_callback(io, x, x), backend=backend)(2.0)
    assert float(out) == 4.0 and len(io.calls) == 2


@pytest.mark.parametrize("wrap", EAGER_AND_JIT)
def test_io_callbacks_run_in_program_order(wrap):
    order = []

    def record(tag):
        return lambda v: order.append(tag)

    def f(x):
        io_callback(record("a"), None, x)
        jax.debug.callback(record("b"), x)
        y = jax.lax.fori_loop(0, 2, lambda i, c: (io_callback(
            lambda v: order.append(f"loop{int(v)}"), None, i, ordered=True), c + 1.0)[1], x)
        io_callback(record("c"), None, y, ordered=True)
        return y
    assert float(wrap(f)(0.0)) == 2.0
    assert order == ["a", "b", "loop0", "loop1", "c"]


def test_io_callback_vmap_calls_once_per_element_in_order():
    io = Counter()
    out = jax.vmap(lambda x, y: io_callback(io, x, x, y), in_axes=(0, None))(
        jnp.arange(3.0), 7.0)
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0])
    assert [float(c) for c in io.calls] == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        jax.vmap(lambda x: io_callback(io, x, x, ordered=True))(jnp.arange(3.0))


def test_effects_barrier_returns_after_the_callbacks():
    seen = []
    jax.jit(lambda x: io_callback(seen.append, None, x))(1.0)
    assert jax.effects_barrier() is None and len(seen) == 1


# -------------------------------------------------------------------------- errors

@pytest.mark.parametrize("wrap", EAGER_AND_JIT)
@pytest.mark.parametrize("host, last_line", [
    (lambda a: np.zeros(2, np.float32),
     "RuntimeError: Incorrect output shape for return value #0: Expected: (3,), Actual: (2,)"),
    (lambda a: np.zeros(3, np.int32),
     "RuntimeError: Incorrect output dtype for return value #0: Expected: float32, "
     "Actual: int32"),
    (lambda a: (a, a),
     "RuntimeError: Mismatched number of outputs from callback. Expected: 1, Actual: 2"),
    (lambda a: 1 / 0, "ZeroDivisionError: division by zero"),
])
def test_bad_results_raise_jax_runtime_error(wrap, host, last_line, caplog):
    with pytest.raises(JaxRuntimeError) as info:
        wrap(lambda v: jax.pure_callback(host, v, v))(jnp.arange(3.0))
    text = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert text.startswith("INTERNAL: CpuCallback error calling callback: Traceback")
    assert text.rstrip().splitlines()[-1] == last_line


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failure_stops_later_callbacks_and_is_logged_as_jax_logs_it(backend, caplog):
    later = []

    def fail(a):
        raise ValueError("first")

    def f(x):
        y = jax.pure_callback(fail, x, x)
        return io_callback(lambda a: later.append(a) or np.asarray(a), y, y)
    with pytest.raises(JaxRuntimeError, match="ValueError: first"):
        jax.jit(f, backend=backend)(1.0)
    assert later == []
    failures = [r for r in caplog.records if r.name == "jax._src.callback"]
    assert [r.getMessage() for r in failures] == ["jax.pure_callback failed"]


def test_argument_errors_match_jax():
    x = jnp.arange(3.0)
    with pytest.raises(ValueError, match="result_shape_dtypes cannot specify 64-bit types"):
        jax.pure_callback(lambda a: a, np.zeros(3, np.float64), x)
    with pytest.raises(ValueError, match=r"vmap_method must be on of the allowed methods "
                                         r"\['sequential', .*None\], but got: foo"):
        jax.pure_callback(lambda a: a, x, x, vmap_method="foo")
    with pytest.raises(AttributeError, match="shape and dtype"):
        jax.pure_callback(lambda a: a, 1.0, x)


def test_vmap_without_vmap_method_raises():
    with pytest.raises(NotImplementedError,
                       match="vmap is only supported for the pure_callback primitive when "
                             "vmap_method is one of 'sequential'.*Got vmap_method=None."):
        jax.vmap(lambda v: jax.pure_callback(lambda a: a, v, v))(jnp.arange(3.0))


@pytest.mark.parametrize("transform", [
    lambda f: jax.grad(f)(1.0), lambda f: jax.jvp(f, (1.0,), (1.0,)),
    lambda f: jax.jit(jax.grad(f))(1.0)])
def test_callbacks_are_not_differentiable(transform):
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP. Please use "
                                         "`jax.custom_jvp`"):
        transform(lambda x: jax.pure_callback(lambda a: a, x, x))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
        transform(lambda x: io_callback(lambda a: a, x, x))
    # without a tangent flowing in, there is nothing to differentiate
    assert float(jax.grad(lambda x: x * jax.pure_callback(
        lambda a: np.asarray(a), x, jax.lax.stop_gradient(x)))(2.0)) == 2.0


# -------------------------------------------------------------------------- lifetime

def test_callables_live_as_long_as_their_programs():
    registry = callbacks._CALLBACKS
    before = len(registry)
    f = jax.jit(lambda x: jax.pure_callback(lambda a: np.asarray(a) + 1, x, x))
    assert float(f(1.0)) == 2.0
    gc.collect()
    assert float(f(2.0)) == 3.0  # the lambda is referenced by nothing but the program
    for _ in range(20):
        g = jax.jit(lambda x: jax.pure_callback(lambda a: np.asarray(a) * 2, x, x))
        assert float(g(1.0)) == 2.0
    del f, g
    gc.collect()
    assert len(registry) <= before + 1


# ------------------------------------------------------------------------ compiler

def test_scheduler_keeps_side_effects_in_program_order():
    # Computing `small` and its callback first would lower peak memory (the list
    # scheduler's choice without the rule), but the callbacks would then run as cb, ca.
    module = parse_module("""HloModule m

ENTRY %main (p: f32[100000], q: f32[1]) -> s64[] {
  %p = f32[100000] parameter(0)
  %q = f32[1] parameter(1)
  %big = f32[100000] sine(%p)
  %small = f32[1] cosine(%q)
  %k = s64[] constant(1)
  %ca = () custom-call(%k, %big), custom_call_target="t", custom_call_has_side_effect=true
  %cb = () custom-call(%k, %small), custom_call_target="t", custom_call_has_side_effect=true
  ROOT %r = s64[] constant(2)
}
""")
    names = [i.name for i in schedule(module).entry.instructions]
    assert names.index("ca") < names.index("cb")


@pytest.mark.parametrize("fun, error, message", [
    (lambda p, x: jax.lax.cond(p, lambda v: io_callback(lambda a: np.asarray(a), v, v),
                               lambda v: v, x), NotImplementedError,
     "IO effect not supported in vmap-of-cond."),
    (lambda p, x: jax.lax.while_loop(lambda c: c < 3,
                                     lambda c: io_callback(lambda a: np.asarray(a) + 1, c, c),
                                     x), Exception,
     "Unordered IO effects not supported in while_loop with batched predicate"),
    (lambda p, x: jax.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, io_callback(lambda a: np.asarray(a), c[1],
                                                             c[1], ordered=True)), (0, x)),
     Exception, "Ordered IO effects not supported in vmap."),
])
def test_io_callbacks_in_vmapped_control_flow_are_refused_as_in_jax(fun, error, message):
    with pytest.raises(error, match=message):
        jax.vmap(fun)(jnp.array([True, False]), jnp.arange(2.0))
    # an unbatched trip count is fine (every member runs the same iterations)
    out = jax.vmap(lambda x: jax.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, io_callback(lambda a: np.asarray(a) * 2,
                                                             c[1], c[1])), (0, x)))(
        jnp.arange(2.0))
    np.testing.assert_array_equal(np.asarray(out[1]), [0.0, 8.0])


def test_pure_kernels_are_dropped_when_unused_and_side_effects_are_not():
    # fft and linear-algebra custom-calls say they are pure; a print in a nested jit stays
    def f(x):
        jnp.fft.fft(x)
        inner = jax.jit(lambda v: (jax.debug.print("inner {}", v), v * 2)[1])
        return inner(x)
    text = jax.jit(f).lower(jnp.arange(4.0)).compile().as_text()
    assert "jaxlite_fft" not in text and "jaxlite_host_callback" in text
