"""Transformations outside `jit` that run compiled pieces: `grad` / `jvp` of Python
functions that call jitted functions (the jvp, linearization and transpose of each inner
jaxpr are made once per signature and compiled once), and the loop primitives called
eagerly (one compiled call per loop).

Expected values come from the same computation without the compiled pieces (the functions
un-jitted, or the loop as a Python loop), within float32 rounding (the compiled code may
contract multiply-adds); results of the cached path are compared bit for bit with the
first, uncached, step.
"""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.lax import higher_order
from jaxlite.lax._control_flow_util import JaxprCache
from jaxlite.runtime import dispatch

f32 = np.float32


def close(actual, expected, tol=2e-5):
    for a, e in zip(jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=tol, atol=tol)


def same_bits(actual, expected):
    for a, e in zip(jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)):
        assert np.asarray(a).tobytes() == np.asarray(e).tobytes()


@pytest.fixture
def compiles(monkeypatch):
    """A list that grows by one name per lowering and compilation of a jaxpr."""
    seen = []
    real = dispatch.lower_and_compile

    def counting(closed, name, *args, **kwargs):
        seen.append(name)
        return real(closed, name, *args, **kwargs)
    monkeypatch.setattr(dispatch, "lower_and_compile", counting)
    return seen


def pieces(wrap):
    """A loss built of small functions, each passed through `wrap` (jit or identity), with
    Python branches on concrete values between them."""
    layer = wrap(lambda w, b, x: jnp.tanh(w @ x + b))
    smooth = wrap(lambda x: x * 0.9 + 0.1 * jnp.sin(x))
    sharpen = wrap(lambda x: x * x * 0.5 + x)
    soft = wrap(lambda x: jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0.0))
    count = wrap(lambda x: (x > 0).sum())  # an integer output: no tangent
    energy = wrap(lambda x: (x * x).sum())

    def loss(params, x):
        w, b = params
        h = smooth(layer(w, b, x))
        h = sharpen(h) if h.sum() > 0 else soft(h)
        if count(h) > 3:
            h = soft(h) * 2.0
        return energy(smooth(layer(w, b, h)))
    return loss


def inputs(seed=0, n=16):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(f32)
    b = rng.standard_normal(n).astype(f32) * 0.1
    return (jnp.asarray(w), jnp.asarray(b)), jnp.asarray(rng.standard_normal(n).astype(f32))


def test_grad_of_jitted_pieces_matches_unjitted():
    jitted, plain = jax.grad(pieces(jax.jit)), jax.grad(pieces(lambda f: f))
    for seed in range(3):
        params, x = inputs(seed)
        close(jitted(params, x), plain(params, x))


def test_grad_of_jitted_pieces_compiles_once(compiles):
    grad = jax.grad(pieces(jax.jit))
    params, x = inputs()
    first = grad(params, x)
    assert compiles  # the known parts and the transposes of the inner jaxprs
    misses, count = higher_order.TRANSFORMED_CALLS.misses, len(compiles)
    for _ in range(3):
        same_bits(grad(params, x), first)
    assert higher_order.TRANSFORMED_CALLS.misses == misses
    assert len(compiles) == count


def test_value_and_grad_and_vjp_of_jitted_pieces():
    params, x = inputs(1)
    loss_j, loss_p = pieces(jax.jit), pieces(lambda f: f)
    value, grads = jax.value_and_grad(loss_j, argnums=(0, 1))(params, x)
    value_p, grads_p = jax.value_and_grad(loss_p, argnums=(0, 1))(params, x)
    close(value, value_p)
    close(grads, grads_p)
    out, pullback = jax.vjp(lambda x: loss_j(params, x), x)
    close(pullback(f32(2.0)), jax.vjp(lambda x: loss_p(params, x), x)[1](f32(2.0)))


def test_jvp_and_second_order_of_jitted_pieces():
    params, x = inputs(2)
    loss_j, loss_p = pieces(jax.jit), pieces(lambda f: f)
    t = jnp.ones_like(x)
    close(jax.jvp(lambda x: loss_j(params, x), (x,), (t,)),
          jax.jvp(lambda x: loss_p(params, x), (x,), (t,)))
    hvp = lambda loss: jax.grad(lambda x: jnp.vdot(jax.grad(loss, 1)(params, x), t))(x)
    close(hvp(loss_j), hvp(loss_p), tol=1e-4)
    close(jax.jacfwd(lambda x: loss_j(params, x))(x), jax.jacrev(lambda x: loss_p(params, x))(x))


def test_grad_of_jit_under_jit_and_vmap():
    params, x = inputs(3)
    f = jax.jit(lambda x: jnp.sin(x) * x)
    g = lambda x: (f(x) * params[1]).sum()
    expected = jax.grad(lambda x: (jnp.sin(x) * x * params[1]).sum())(x)
    close(jax.grad(g)(x), expected)
    close(jax.jit(jax.grad(g))(x), expected)
    xs = jnp.stack([x, x * 2.0])
    close(jax.vmap(jax.grad(g))(xs),
          jax.vmap(jax.grad(lambda x: (jnp.sin(x) * x * params[1]).sum()))(xs))


def test_grad_of_jit_closing_over_an_outer_tracer():
    # The inner jaxpr takes the outer tracer as an argument; nothing stale is cached.
    def outer(y):
        f = jax.jit(lambda x: x * y)
        return jax.grad(lambda x: f(x).sum())(jnp.ones(3, f32)).sum() * y
    close(jax.grad(outer)(f32(3.0)), 6 * 3.0)
    close(jax.grad(outer)(f32(5.0)), 6 * 5.0)


def test_transformed_jaxprs_die_with_the_jitted_function():
    f = jax.jit(lambda x: jnp.cos(x) * 3.0)
    x = jnp.arange(4, dtype=f32)
    close(jax.grad(lambda x: f(x).sum())(x), -3.0 * np.sin(np.arange(4, dtype=f32)))
    (traced,) = f._cache.values()  # the one signature's trace
    source = weakref.ref(traced.jaxpr)
    before = len(higher_order.TRANSFORMED_CALLS)
    del f, traced
    gc.collect()
    assert source() is None
    assert len(higher_order.TRANSFORMED_CALLS) < before


def test_jaxpr_cache_is_bounded_per_jaxpr():
    cache = JaxprCache(per_source=2)
    source = jax.make_jaxpr(jnp.sin)(f32(1.0))
    computed = []

    def compute(key):
        computed.append(key)
        return key * 10, True
    for key in (1, 2, 3, 1):
        assert cache.get(source, key, lambda: compute(key)) == key * 10
    assert computed == [1, 2, 3, 1]  # 1 was dropped when 3 came
    assert len(cache) == 2
    assert cache.get(source, 3, lambda: compute(99)) == 30
    assert cache.get(source, 4, lambda: (0, False)) == 0  # uncacheable: not kept
    assert len(cache) == 2


# ------------------------------------------------------------------ loops outside jit

def scan_step(c, x):
    c = c * 0.999 + x
    return c, c * 2.0


def fori_body(i, c):
    return c * 0.999 + 0.001 * i.astype(f32)


def while_cond(state):
    return state[0] < 500


def while_body(state):
    i, c = state
    return i + 1, c * 0.999 + 0.001


def python_scan(c, xs):
    ys = []
    for x in np.asarray(xs):
        c = np.float32(c * f32(0.999) + x)
        ys.append(c * f32(2.0))
    return c, np.array(ys)


def test_loops_outside_jit_match_jit_and_python():
    xs = jnp.asarray(np.random.default_rng(0).standard_normal(300).astype(f32))
    eager = jax.lax.scan(scan_step, f32(1.0), xs)
    close(eager, jax.jit(lambda c, xs: jax.lax.scan(scan_step, c, xs))(f32(1.0), xs))
    close(eager, python_scan(f32(1.0), xs), tol=1e-4)
    assert eager[1].dtype == f32 and eager[1].shape == (300,)
    out = jax.lax.fori_loop(0, 300, fori_body, f32(1.0))
    c = f32(1.0)
    for i in range(300):
        c = f32(c * f32(0.999) + f32(0.001) * f32(i))
    close(out, c, tol=1e-4)
    close(out, jax.jit(lambda c: jax.lax.fori_loop(0, 300, fori_body, c))(f32(1.0)))
    i, c = jax.lax.while_loop(while_cond, while_body, (0, f32(1.0)))
    assert int(i) == 500 and i.dtype == jnp.int32 and i.weak_type
    close(c, jax.jit(lambda s: jax.lax.while_loop(while_cond, while_body, s))((0, f32(1.0)))[1])
    # Traced bounds: fori_loop is a while loop; integer carries are exact.
    total = jax.lax.fori_loop(jnp.int32(0), jnp.int32(100), lambda i, t: t + i * i,
                              jnp.int32(0))
    assert int(total) == sum(i * i for i in range(100))


def test_loops_outside_jit_compile_once(compiles, monkeypatch):
    from jaxlite.runtime import eager_loops
    monkeypatch.setattr(eager_loops, "COMPILE_WORTH", 1)  # every loop compiles at once
    monkeypatch.setattr(eager_loops, "COMPILE_PER_EQUATION", 0)
    xs = jnp.arange(50, dtype=f32)
    step, body, cond = (lambda c, x: scan_step(c, x)), (lambda i, c: fori_body(i, c)), (
        lambda s: while_cond(s))  # functions no earlier test compiled
    run = lambda: (jax.lax.scan(step, f32(1.0), xs),
                   jax.lax.fori_loop(0, 40, body, f32(1.0)),
                   jax.lax.while_loop(cond, while_body, (0, f32(1.0))))
    first = run()
    assert sorted(compiles) == ["scan", "scan", "while"]  # one program per loop
    for _ in range(3):
        same_bits(run(), first)
    assert len(compiles) == 3
    jax.lax.scan(step, f32(1.0), jnp.arange(60, dtype=f32))  # a new signature
    assert len(compiles) == 4


def test_short_loops_compile_once_called_often_enough(compiles):
    from jaxlite.runtime import eager_loops
    xs = jnp.arange(8, dtype=f32)
    step = lambda c, x: scan_step(c, x)
    first = jax.lax.scan(step, f32(1.0), xs)  # op by op: short
    assert not compiles
    calls = 0
    while not compiles:
        close(jax.lax.scan(step, f32(1.0), xs), first, tol=1e-5)
        calls += 1
    assert compiles == ["scan"]
    # After about as many dispatches as compiling costs (scan_step is 3 equations).
    worth = eager_loops.COMPILE_WORTH + 3 * eager_loops.COMPILE_PER_EQUATION
    assert worth // (8 * 3) - 1 <= calls <= worth // (8 * 3) + 1
    jax.lax.scan(step, f32(1.0), xs)
    assert compiles == ["scan"]


def test_long_loops_compile_on_the_first_call(compiles):
    n = 20_000
    step = lambda c, x: (c * 0.5 + x, c)
    carry, ys = jax.lax.scan(step, f32(0.0), jnp.ones(n, f32))
    assert compiles == ["scan"]
    close(carry, 2.0)
    close(ys[:3], np.array([0.0, 1.0, 1.5], f32))
    # A while loop starts op by op and, still running after its budget, continues compiled
    # from the carry it reached.
    i, c = jax.lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 0.5 + 1.0),
                              (0, f32(0.0)))
    assert compiles == ["scan", "while"]
    assert int(i) == n and i.weak_type and float(c) == 2.0


def test_loop_body_is_traced_once_per_function_as_in_jax():
    # As JAX (checked with jax 0.10.2: 4.0 both times), a loop called again with the same
    # function reuses its trace, so a global it reads keeps its first value.
    global SCALE
    SCALE = 1.0

    def step(c, x):
        return c * SCALE + x, c
    assert float(jax.lax.scan(step, 1.0, jnp.arange(3.0))[0]) == 4.0
    SCALE = 2.0
    assert float(jax.lax.scan(step, 1.0, jnp.arange(3.0))[0]) == 4.0
    # A new function is traced anew (jax: 12.0).
    assert float(jax.lax.scan(lambda c, x: step(c, x), 1.0, jnp.arange(3.0))[0]) == 12.0


def test_eager_loop_cache_is_bounded(monkeypatch):
    from jaxlite.runtime import call_cache, eager_loops
    monkeypatch.setattr(eager_loops, "LOOPS", call_cache.LRUCache(2))
    for n in (5, 6, 7):
        xs = jnp.arange(n, dtype=f32)
        close(jax.lax.scan(scan_step, f32(1.0), xs), python_scan(f32(1.0), xs), tol=1e-4)
    assert len(eager_loops.LOOPS) == 2


def test_loops_with_callbacks_stay_in_python(compiles):
    seen = []

    def body(c, x):
        jax.debug.callback(lambda v: seen.append(float(v)), x)
        return c + x, c
    carry, _ = jax.lax.scan(body, f32(0.0), jnp.arange(4, dtype=f32))
    assert seen == [0.0, 1.0, 2.0, 3.0] and float(carry) == 6.0
    assert not compiles

    def failing(v):
        raise ValueError("from the callback")

    def bad_body(c, x):
        return c + jax.pure_callback(failing, jax.ShapeDtypeStruct((), f32), x), c
    with pytest.raises(jax.errors.JaxRuntimeError, match="from the callback"):  # as before
        jax.lax.scan(bad_body, f32(0.0), jnp.arange(3, dtype=f32))


def test_loops_under_debug_nans_name_the_operation():
    def body(c, x):
        return c + jnp.log(x), c
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match="log"):
            jax.lax.scan(body, f32(0.0), jnp.asarray([1.0, -1.0, 2.0], f32))


def test_typed_keys_through_eager_loops():
    key = jax.random.key(0)

    def body(i, k):
        return jax.random.split(k)[0]
    eager = jax.lax.fori_loop(0, 5, body, key)
    jitted = jax.jit(lambda k: jax.lax.fori_loop(0, 5, body, k))(key)
    assert np.array_equal(jax.random.key_data(eager), jax.random.key_data(jitted))
    expected = key
    for _ in range(5):
        expected = jax.random.split(expected)[0]
    assert np.array_equal(jax.random.key_data(eager), jax.random.key_data(expected))


def test_grad_and_vmap_of_eager_loops():
    xs = jnp.arange(1.0, 6.0, dtype=f32)
    loss = lambda c: jax.lax.scan(scan_step, c, xs)[1].sum()
    plain = lambda c: python_scan_traced(c, xs)
    close(jax.grad(loss)(f32(1.5)), jax.grad(plain)(f32(1.5)), tol=1e-4)
    cs = jnp.asarray([1.0, 2.0, 3.0], f32)
    close(jax.vmap(loss)(cs), jnp.stack([loss(c) for c in cs]))


def python_scan_traced(c, xs):
    total = 0.0
    for i in range(xs.shape[0]):
        c, y = scan_step(c, xs[i])
        total = total + y
    return total


def test_jaxpr_cache_is_bounded_in_total_and_drops_dead_sources():
    cache = JaxprCache(per_source=4, total=3)
    sources = [jax.make_jaxpr(jnp.sin)(f32(i)) for i in range(3)]
    for i, source in enumerate(sources):
        cache.get(source, "a", lambda: (i, True))
        cache.get(source, "b", lambda: (i, True))
    assert len(cache) == 3
    assert cache.get(sources[2], "b", lambda: (None, True)) == 2  # the newest stay
    del sources[2], source
    gc.collect()
    assert len(cache) == 1
    assert cache.get(abs, "key", lambda: ("builtin", True)) == "builtin"  # no weak reference


def test_map_and_fori_loop_trace_once_per_function():
    from jaxlite.lax._control_flow_util import TRACES
    f = lambda x: jnp.sin(x) * 2.0
    xs = jnp.arange(12, dtype=f32).reshape(6, 2)
    first = [jax.lax.map(f, xs), jax.lax.map(f, xs, batch_size=4),
             jax.lax.fori_loop(0, 5, fori_body, f32(2.0)),
             jax.lax.fori_loop(jnp.int32(0), jnp.int32(5), fori_body, f32(2.0))]
    misses = TRACES.misses
    again = [jax.lax.map(f, xs), jax.lax.map(f, xs, batch_size=4),
             jax.lax.fori_loop(0, 5, fori_body, f32(2.0)),
             jax.lax.fori_loop(jnp.int32(0), jnp.int32(5), fori_body, f32(2.0))]
    assert TRACES.misses == misses
    same_bits(again, first)
    expected = np.sin(np.arange(12, dtype=f32).reshape(6, 2)) * 2
    close(first[0], expected)
    close(first[1], expected)
    close(first[2], first[3])
