"""jax.custom_batching: custom_vmap and sequential_vmap; the shared cases
(extend_cases.py) are compared with values and rule calls recorded from JAX 0.10.2."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.custom_batching import custom_vmap, sequential_vmap

import recorded


def test_rule_calls_and_values_as_in_jax():
    recorded.check("custom_vmap", allowed={
        # Under vmap of jvp JAX hands the rule in_batched=[False, False] (for a mapped x);
        # jaxlite hands it the flags of the mapped pair, [True, False]. Values agree.
        "custom_vmap.calls[2][1][0]": "jvp of a custom_vmap under vmap"})


def _with_rule(calls):
    @custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append([axis_size, list(in_batched)])
        xb, yb = in_batched
        return jnp.sin(x) * y + 1.0, xb or yb
    return f


def test_jit_of_vmap_uses_the_rule():
    calls = []
    f = _with_rule(calls)
    x = jnp.arange(3.)
    np.testing.assert_allclose(jax.jit(jax.vmap(f, in_axes=(0, None)))(x, 2.),
                               np.sin(x) * 2 + 1, rtol=1e-6)
    assert calls == [[3, [True, False]]]
    np.testing.assert_allclose(f(1., 2.), np.sin(1.) * 2, rtol=1e-6)


def test_reverse_mode_is_refused_as_in_jax():
    f = _with_rule([])
    with pytest.raises(ValueError, match="Linearization failed"):
        jax.grad(f)(1., 2.)


def test_rule_is_required_and_pytrees_work():
    @custom_vmap
    def g(tree):
        return {"s": tree["a"] + tree["b"]}
    with pytest.raises(AttributeError, match="def_vmap"):
        jax.vmap(g)({"a": jnp.ones(2), "b": jnp.ones(2)})

    @g.def_vmap
    def rule(axis_size, in_batched, tree):
        assert in_batched == [{"a": True, "b": False}]
        return {"s": tree["a"] * 0 + axis_size}, {"s": True}
    out = jax.vmap(g, in_axes=({"a": 0, "b": None},))({"a": jnp.ones(4), "b": 1.})
    np.testing.assert_allclose(out["s"], [4., 4., 4., 4.])


def test_sequential_vmap_outside_vmap():
    @sequential_vmap
    def g(x):
        return x.sum() * 2
    assert float(g(jnp.ones(4))) == 8.0
    np.testing.assert_allclose(jax.jit(jax.vmap(g))(jnp.ones((2, 3))), [6., 6.])
