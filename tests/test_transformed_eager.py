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
    cache = JaxprCache(per_jaxpr=2)
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
