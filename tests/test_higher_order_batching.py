"""vmap of calls (jit, checkpoint, custom_jvp, custom_vjp) keeps unbatched operands and the
outputs that depend only on them unbatched, as JAX does.

Regression: the custom-derivative calls broadcast every unbatched operand, so a `cond` on one
inside (equinox's `error_if`) became a select that ran both branches, callbacks included,
and an io_callback on unbatched operands ran once per member; out_axes=None for an output
that depends only on unbatched operands raised. Values and callback logs are JAX 0.10.2's
(tests/data/higher_order_batching, recorded by record.py there).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental import io_callback

DATA = Path(__file__).parent / "data" / "higher_order_batching"
sys.path.insert(0, str(DATA))
from programs import programs  # noqa: E402

EXPECTED = json.loads((DATA / "expected.json").read_text())
LOG: list = []
PROGRAMS = programs(jax, io_callback, LOG)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_jax(name):
    LOG.clear()
    leaves, tree = jax.tree_util.tree_flatten(PROGRAMS[name]())
    expected = EXPECTED[name]
    assert str(tree) == expected["tree"]
    assert LOG == expected["log"]  # which callbacks ran, and how often
    for leaf, value, dtype in zip(leaves, expected["leaves"], expected["dtypes"]):
        assert np.asarray(leaf).dtype == np.dtype(dtype)
        # float32; sin and cos may differ from XLA's by an ulp.
        np.testing.assert_allclose(np.asarray(leaf), np.asarray(value, dtype), rtol=3e-7,
                                   atol=1e-7)


def test_cond_inside_custom_jvp_stays_a_cond():
    @jax.custom_jvp
    def f(x, flag):
        return jax.lax.cond(flag, lambda: x * 2.0, lambda: x)
    f.defjvp(lambda p, t: (f(*p), t[0]))
    jaxpr = jax.make_jaxpr(jax.vmap(f, in_axes=(0, None)))(jnp.arange(3.0), True)
    inner = jaxpr.jaxpr.eqns[-1].params["jaxpr"]
    assert [e.primitive.name for e in inner.jaxpr.eqns if e.primitive.name in
            ("cond", "select_n")] == ["cond"]


def _vpair():
    @jax.custom_vjp
    def vpair(x, y):
        return x * y, jnp.sin(y)
    vpair.defvjp(lambda x, y: (vpair(x, y), (x, y)),
                 lambda r, g: (g[0] * r[1], g[0] * r[0] + g[1] * jnp.cos(r[1])))
    return vpair


@pytest.mark.parametrize("power", [1, 2])
def test_custom_vjp_unbatched_output_cotangent_counts_once(power):
    # Here jaxlite deliberately differs from JAX 0.10.2, whose batched bwd hands the whole
    # cotangent of the unbatched output sin(y) to every member and so multiplies its share
    # of dL/dy by the axis size (3.6366 instead of 3.2122 for power 1). The right value is
    # the gradient of the same function without the custom rule, and finite differences.
    vpair, xs = _vpair(), jnp.arange(3.0)

    def loss(f, y):
        return sum(jnp.sum(o ** power) for o in jax.vmap(f, in_axes=(0, None))(xs, y))
    plain = lambda x, y: (x * y, jnp.sin(y))  # noqa: E731
    y = np.float32(1.5)
    got = jax.grad(lambda y: loss(vpair, y))(y)
    want = jax.grad(lambda y: loss(plain, y))(y)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    y64 = 1.5
    x64 = np.arange(3.0)
    f64 = lambda y: sum(np.sum(o ** power) for o in (x64 * y, np.full(3, np.sin(y))))  # noqa
    fd = (f64(y64 + 1e-6) - f64(y64 - 1e-6)) / 2e-6
    np.testing.assert_allclose(got, fd, rtol=1e-5)
