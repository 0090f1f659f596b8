"""The select-and-scatter family and max-pooling derivatives against values recorded from
JAX 0.10.2 (/tmp/jaxvenv/bin/python: the same calls, JAX's private
`windowed_reductions._select_and_scatter`, `_select_and_scatter_add` and
`_select_and_gather_add` for the primitives)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.lax.select_scatter import _select_and_scatter

X = jnp.array([[1.0, 5.0, 5.0, 2.0], [np.nan, 3.0, -np.inf, -np.inf], [0.0, 0.0, 7.0, 7.0]])
OP = jnp.array([[1.0, 9.0, 2.0, 3.0], [4.0, 1.0, 8.0, 8.0], [5.0, 5.0, 0.0, 1.0]])


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "SAME")


@pytest.mark.parametrize("compiled", [False, True])
def test_max_pool_gradient_with_ties_nan_and_infinities(compiled):
    grad = jax.grad(lambda x: (max_pool(x) * jnp.arange(12.0).reshape(3, 4)).sum())
    out = (jax.jit(grad) if compiled else grad)(X)
    np.testing.assert_array_equal(out, [[0, 1, 2, 3], [0, 4, 0, 0], [8, 0, 30, 18]])
    text = str(jax.make_jaxpr(jax.grad(lambda x: max_pool(x).sum()))(X))
    assert "select_and_scatter_add[" in text and "select_prim=ge" in text
    batched = jax.vmap(jax.grad(lambda x: max_pool(x).sum()))(jnp.stack([X, -X]))
    np.testing.assert_array_equal(batched, [[[0, 1, 1, 1], [0, 2, 0, 0], [1, 0, 4, 2]],
                                            [[0, 0, 0, 0], [0, 1, 4, 2], [2, 1, 1, 1]]])


def test_min_pool_jvp_with_dilation():
    def g(x):
        return lax.reduce_window(x, jnp.inf, lax.min, (2, 1), (1, 1), [(1, 0), (0, 0)], (1, 2),
                                 (1, 1))
    _, tangent = jax.jvp(g, (X,), (jnp.arange(12.0).reshape(3, 4),))
    np.testing.assert_array_equal(tangent, [[0, 0, 1, 0, 2, 0, 3], [4, 0, 5, 0, 6, 0, 7],
                                            [8, 0, 9, 0, 6, 0, 7]])


@pytest.mark.parametrize("compiled", [False, True])
def test_select_and_scatter_family_matches_jax(compiled):
    wrap = jax.jit if compiled else (lambda f: f)
    src = jnp.arange(1.0, 7.0).reshape(2, 3)
    src12 = jnp.arange(1.0, 13.0).reshape(3, 4)
    out = wrap(lambda op: _select_and_scatter(op, lax.ge, (2, 2), (1, 1), [(0, 0), (0, 0)],
                                              src, 0.0, lax.add))(OP)
    np.testing.assert_array_equal(out, [[0, 3, 0, 0], [0, 0, 14, 0], [4, 0, 0, 0]])
    out = wrap(lambda op: _select_and_scatter(op, lax.ge, (2, 2), (1, 1), [(0, 1), (1, 0)],
                                              src12, 0.0, lax.add))(OP)
    np.testing.assert_array_equal(out, [[0, 5, 0, 0], [1, 0, 19, 0], [30, 11, 0, 12]])
    out = wrap(lambda op: _select_and_scatter(op, lax.le, (2, 2), (1, 2), [(1, 0), (0, 0)],
                                              src.reshape(3, 2), 10.0, lax.mul))(OP)
    np.testing.assert_array_equal(out, [[30, 10, 80, 10], [10, 50, 10, 10], [10, 10, 60, 10]])
    out = wrap(lambda op: lax.select_and_scatter_add_p.bind(
        src12, op, select_prim=lax.ge_p, window_dimensions=(2, 2), window_strides=(1, 1),
        padding=((0, 1), (1, 0))))(OP)
    np.testing.assert_array_equal(out, [[0, 5, 0, 0], [1, 0, 19, 0], [30, 11, 0, 12]])
    out = wrap(lambda op: lax.select_and_gather_add_p.bind(
        jnp.arange(12.0).reshape(3, 4), op, select_prim=lax.le_p, window_dimensions=(2, 2),
        window_strides=(1, 2), padding=((1, 0), (0, 1)), base_dilation=(1, 2),
        window_dilation=(2, 1)))(OP)
    np.testing.assert_array_equal(out, [[4, 5, 6, 7], [0, 9, 10, 11]])


def test_select_and_scatter_jvp_and_errors():
    src = jnp.arange(1.0, 7.0).reshape(2, 3)

    def f(source, init):
        return _select_and_scatter(OP, lax.ge, (2, 2), (1, 1), [(0, 0), (0, 0)], source, init,
                                   lax.add)
    _, tangent = jax.jvp(f, (src, 0.0), (jnp.ones((2, 3)), 1.0))
    # An additive scatter is linear in (source, init): the tangent is f of the tangents.
    np.testing.assert_array_equal(tangent, f(jnp.ones((2, 3)), 1.0))
    np.testing.assert_array_equal(tangent, [[1, 3, 1, 1], [1, 1, 4, 1], [2, 1, 1, 1]])
    with pytest.raises(NotImplementedError, match="window dilation"):
        jax.grad(lambda t: lax.select_and_gather_add_p.bind(
            t, OP, select_prim=lax.ge_p, window_dimensions=(2, 2), window_strides=(1, 1),
            padding=((0, 0), (0, 0)), base_dilation=(1, 1), window_dilation=(2, 1)).sum())(OP)
    with pytest.raises(TypeError, match="select_prim must be lax.ge_p or lax.le_p"):
        lax.select_and_scatter_add_p.bind(src, OP, select_prim=lax.eq_p,
                                          window_dimensions=(2, 2), window_strides=(1, 1),
                                          padding=((0, 0), (0, 0)))
