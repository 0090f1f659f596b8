"""jax.custom_batching: custom_vmap and sequential_vmap, against values and rule calls
recorded from JAX 0.10.2 (tests/extend/record_jax_extend.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.custom_batching import custom_vmap, sequential_vmap

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" / "extend" /
                       "jax_expected.json").read_text())["custom_vmap"]


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


def test_rule_replaces_the_function_under_vmap():
    calls = []
    f = _with_rule(calls)
    x = jnp.arange(3.)
    np.testing.assert_allclose(f(1., 2.), np.sin(1.) * 2, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f, in_axes=(0, None))(x, 2.), EXPECTED["vmap"],
                               rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f)(x, x), EXPECTED["vmap_both"], rtol=1e-6)
    assert calls == EXPECTED["calls"][:2]
    np.testing.assert_allclose(jax.jit(jax.vmap(f, in_axes=(0, None)))(x, 2.),
                               EXPECTED["vmap"], rtol=1e-6)


def test_nested_vmap_applies_the_rule_innermost():
    calls = []
    f = _with_rule(calls)
    out = jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(0, None))(jnp.ones((2, 3)), 2.)
    np.testing.assert_allclose(out, EXPECTED["nested"], rtol=1e-6)
    assert calls == [EXPECTED["calls"][-1]]


def test_forward_mode_goes_through_the_rule():
    f = _with_rule([])
    out, t = jax.jvp(f, (1., 2.), (1., 0.))
    np.testing.assert_allclose([out, t], EXPECTED["jvp"], rtol=1e-6)
    primal, tangent = jax.vmap(lambda x: jax.jvp(f, (x, 2.), (1., 0.)))(jnp.arange(3.))
    np.testing.assert_allclose(primal, EXPECTED["vmap_jvp"][0], rtol=1e-6)
    np.testing.assert_allclose(tangent, EXPECTED["vmap_jvp"][1], rtol=1e-6)


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


def test_sequential_vmap_calls_the_function_per_example():
    shapes = []

    @sequential_vmap
    def g(x):
        shapes.append(list(x.shape))
        return x.sum() * 2
    np.testing.assert_allclose(jax.vmap(g)(jnp.ones((3, 4))), EXPECTED["sequential"])
    assert shapes[-1] == EXPECTED["sequential_shapes"][-1]
    assert float(g(jnp.ones(4))) == 8.0
