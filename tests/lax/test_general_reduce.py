"""lax.reduce and lax.reduce_window with general reducers, against values recorded from
JAX 0.10.2 (/tmp/jaxvenv/bin/python; the same calls on the same inputs). The reducer
`a * b + 1` is not associative, so the values pin down XLA's evaluation order: a row-major
fold into the initial value (eager and jit), a balanced tree under jvp, padding and
dilation holes skipped by reduce_window."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def affine(a, b):
    return a * b + 1


X = jnp.arange(1.0, 7.0).reshape(2, 3)
Y = jnp.arange(1.0, 13.0).reshape(3, 4)


@pytest.mark.parametrize("compiled", [False, True])
def test_reduce_order_matches_jax(compiled):
    def run(f):
        return (jax.jit(f) if compiled else f)(X)
    np.testing.assert_array_equal(run(lambda x: lax.reduce(x, 0.0, affine, (0,))), [5, 6, 7])
    np.testing.assert_array_equal(run(lambda x: lax.reduce(x, 0.0, affine, (1,))), [10, 37])
    assert float(run(lambda x: lax.reduce(x, 0.0, affine, (0, 1)))) == 1237.0
    assert float(lax.reduce(jnp.arange(1.0, 9.0), 0.0, affine, (0,))) == 69281.0


def test_reduce_jvp_is_jax_tree():
    primal, tangent = jax.jvp(lambda x: lax.reduce(x, 0.0, affine, (0, 1)), (X,), (X,))
    assert (float(primal), float(tangent)) == (97.0, 332.0)
    primal, tangent = jax.jvp(lambda x: lax.reduce(x, 0.0, affine, (1,)), (X,), (X,))
    np.testing.assert_array_equal(primal, [5, 26])
    np.testing.assert_array_equal(tangent, [6, 48])
    primal, tangent = jax.jvp(lambda x: lax.reduce(x, 0.0, affine, (0,)),
                              (jnp.arange(1.0, 9.0),), (jnp.ones(8),))
    assert (float(primal), float(tangent)) == (57191.0, 138420.0)


def test_reduce_pytrees_monoids_and_errors():
    pair = lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1]))  # noqa: E731
    sums, maxes = lax.reduce((X, X * 2), (0.0, -jnp.inf), pair, (1,))
    np.testing.assert_array_equal(sums, [6, 15])
    np.testing.assert_array_equal(maxes, [6, 12])
    batched = jax.vmap(lambda x: lax.reduce((x, x * 2), (0.0, -jnp.inf), pair, (0,)))(X)
    np.testing.assert_array_equal(batched[0], [6, 15])
    text = str(jax.make_jaxpr(lambda x: lax.reduce(x, 1.0, lax.mul, (0, 1)))(X))
    assert "reduce_prod" in text  # a recognized monoid, as in JAX
    text = str(jax.make_jaxpr(lambda x: lax.reduce(x, 2.0, lax.mul, (0, 1)))(X))
    assert "reduce[" in text  # 2 is not mul's identity
    grad = jax.grad(lambda x: lax.reduce(x, 1.0, lambda a, b: a * b, (0, 1)))(X)
    np.testing.assert_allclose(grad, 720.0 / np.asarray(X), rtol=1e-6)
    with pytest.raises(ValueError, match="Operands must have the same tree structure"):
        lax.reduce((X, X), 0.0, lax.add, (0,))
    with pytest.raises(TypeError, match="reduce operand dtypes should match"):
        lax.reduce(X, 0, affine, (0,))
    with pytest.raises(NotImplementedError, match="non-zero tangents for initial values"):
        jax.jvp(lambda i: lax.reduce(X, i, affine, (0,)), (0.0,), (1.0,))


@pytest.mark.parametrize("compiled", [False, True])
def test_reduce_window_matches_jax(compiled):
    def run(f, x=Y):
        return (jax.jit(f) if compiled else f)(x)
    np.testing.assert_array_equal(
        run(lambda x: lax.reduce_window(x, 0.0, affine, (2, 2), (1, 1), "VALID")),
        [[97, 176, 289], [641, 892, 1201]])
    np.testing.assert_array_equal(
        run(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), [(1, 0), (0, 1)])),
        [[2, 12], [60, 672], [2700, 7392]])
    # XLA skips padded places: the initial value 1 is added once, not once per pad.
    np.testing.assert_array_equal(
        run(lambda x: lax.reduce_window(x, 1.0, lax.add, (2, 2), (1, 1), "SAME")),
        [[15, 19, 23, 13], [31, 35, 39, 21], [20, 22, 24, 13]])
    np.testing.assert_array_equal(
        run(lambda x: lax.reduce_window(x, 0.0, affine, (2, 2), (1, 1), "VALID", (2, 1),
                                        (1, 2))),
        [[4, 5], [8, 9], [8, 9], [12, 13]])
    np.testing.assert_array_equal(
        run(lambda x: lax.reduce_window(x, 0.0, affine, (2, 2), (1, 1), "SAME", (2, 1),
                                        (1, 2))),
        [[1, 4, 5, 1], [1, 8, 9, 1], [1, 8, 9, 1], [1, 12, 13, 1], [1, 12, 13, 1]])


def test_reduce_window_jvp_vmap_and_pytrees():
    primal, tangent = jax.jvp(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2)), (Y,), (Y,))
    np.testing.assert_array_equal(primal, [[60, 252, 672], [2700, 4620, 7392]])
    np.testing.assert_array_equal(tangent, [[240, 1008, 2688], [10800, 18480, 29568]])
    batched = jax.vmap(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2,)))(Y)
    np.testing.assert_array_equal(batched, [[2, 6, 12], [30, 42, 56], [90, 110, 132]])
    pair = lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1]))  # noqa: E731
    sums, maxes = lax.reduce_window((Y, Y * 2), (0.0, -jnp.inf), pair, (2, 2), (1, 1), "VALID")
    np.testing.assert_array_equal(sums, [[14, 18, 22], [30, 34, 38]])
    np.testing.assert_array_equal(maxes, [[12, 14, 16], [20, 22, 24]])
