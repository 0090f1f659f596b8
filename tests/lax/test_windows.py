"""reduce_window against values and gradients computed with JAX 0.10.2 (written here)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax

X = ((np.arange(30) * 7) % 30).reshape(5, 6).astype(np.float32)  # distinct values
W = np.arange(1, 100.0, dtype=np.float32)

FUNS = {
    "max": lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 3), (2, 1), "SAME"),
    "min": lambda x: lax.reduce_window(x, np.inf, lax.min, (3, 2), (1, 2), ((1, 1), (0, 1))),
    "sum": lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 3), (2, 2), ((1, 0), (0, 2)),
                                       (1, 2), (2, 1)),
}
EXPECTED = {
    "max": ([[19, 26, 26, 28, 28, 28], [24, 24, 27, 27, 29, 29], [25, 25, 25, 16, 23, 23]],
            [[0, 0, 0, 0, 15, 0], [0, 1, 5, 0, 0, 0], [15, 0, 0, 0, 0, 23],
             [0, 0, 0, 19, 0, 0], [0, 42, 0, 0, 16, 35]]),
    "min": ([[0, 3, 5], [0, 3, 5], [1, 3, 4], [1, 2, 4], [6, 2, 4]],
            [[5, 0, 0, 0, 0, 9], [0, 0, 0, 15, 0, 0], [0, 17, 0, 0, 0, 0],
             [13, 0, 0, 0, 36, 0], [0, 0, 25, 0, 0, 0]]),
    "sum": ([[31, 45, 29, 13, 27, 17], [50, 78, 76, 44, 42, 28]],
            [[0, 0, 0, 0, 0, 0], [8, 18, 22, 26, 30, 34], [0, 0, 0, 0, 0, 0],
             [7, 15, 17, 19, 21, 23], [0, 0, 0, 0, 0, 0]]),
}


@pytest.mark.parametrize("kind", sorted(FUNS))
@pytest.mark.parametrize("compiled", [False, True])
def test_values_and_gradients_match_jax(kind, compiled):
    fun = FUNS[kind]

    def weighted(x):
        out = fun(x)
        return (out * W[:out.size].reshape(out.shape)).sum()
    grad = jax.grad(weighted)
    if compiled:
        fun, grad = jax.jit(fun), jax.jit(grad)
    values, grads = EXPECTED[kind]
    np.testing.assert_allclose(np.asarray(fun(X)), values)
    np.testing.assert_allclose(np.asarray(grad(X)), grads)


def test_max_pool_gradient_goes_to_the_maximum():
    y = np.arange(16.0).reshape(4, 4)[::-1].copy()
    pool = lambda y: lax.reduce_window(y, -np.inf, lax.max, (2, 2), (2, 2), "VALID")
    grad = jax.grad(lambda y: (pool(y) * np.array([[1.0, 2], [3, 4]])).sum())(y)
    np.testing.assert_array_equal(np.asarray(grad), [[0, 1, 0, 2], [0, 0, 0, 0],
                                                     [0, 3, 0, 4], [0, 0, 0, 0]])


def test_padtype_to_pads_matches_jax():
    assert [tuple(p) for p in lax.padtype_to_pads((5, 7), (2, 3), (2, 2), "SAME")] == \
        [(0, 1), (1, 1)]
    assert [tuple(p) for p in lax.padtype_to_pads((5, 7), (2, 3), (2, 2), "SAME_LOWER")] == \
        [(1, 0), (1, 1)]
    assert [tuple(p) for p in lax.padtype_to_pads((5, 7), (2, 3), (2, 2), "VALID")] == \
        [(0, 0), (0, 0)]


def test_max_with_a_non_identity_init_value():
    out = lax.reduce_window(np.arange(6.0).reshape(2, 3), 2.5, lax.max, (1, 2), (1, 1),
                            "VALID")
    np.testing.assert_array_equal(np.asarray(out), [[2.5, 2.5], [4.0, 5.0]])


def test_any_computation_is_reduced():
    # lax.mul has no window primitive of its own: the general reduce_window computes it.
    out = lax.reduce_window(np.arange(1.0, 5.0), 1.0, lax.mul, (2,), (1,), "VALID")
    np.testing.assert_array_equal(np.asarray(out), [2.0, 6.0, 12.0])


def test_sum_transpose_matches_vjp_of_dense_formula():
    x = np.random.default_rng(0).standard_normal((4, 5))
    args = {"window_dimensions": (3, 2), "window_strides": (2, 3),
            "padding": ((2, 1), (0, 3)), "base_dilation": (2, 1), "window_dilation": (1, 2)}
    fun = lambda x: lax.reduce_window_sum_p.bind(x, **args)
    out, vjp = jax.vjp(fun, x)
    ct = np.random.default_rng(1).standard_normal(np.shape(out))
    (grad,) = vjp(ct)
    # <ct, f(x)> = <f^T(ct), x> for the linear f, checked on the basis of x
    basis = np.eye(x.size).reshape(x.size, *x.shape)
    dense = np.array([np.sum(ct * np.asarray(fun(e))) for e in basis]).reshape(x.shape)
    np.testing.assert_allclose(np.asarray(grad), dense, rtol=1e-5, atol=1e-5)
