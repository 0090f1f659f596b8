"""custom_linear_solve and custom_root against values recorded from JAX 0.10.2
(/tmp/jaxvenv/bin/python running the same script; the numbers below are its output)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

A = jnp.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]])
B = jnp.array([1.0, 2.0, 3.0])


def solve_with(A, b):
    return lax.custom_linear_solve(lambda x: A @ x, b, lambda mv, y: jnp.linalg.solve(A, y),
                                   lambda vm, y: jnp.linalg.solve(A.T, y))


def test_custom_linear_solve_values_and_derivatives():
    expected = [0.22222222, 0.11111108, 1.4444445]
    np.testing.assert_allclose(solve_with(A, B), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(solve_with)(A, B), expected, rtol=1e-6)
    grad_a, grad_b = jax.grad(lambda A, b: solve_with(A, b).sum(), argnums=(0, 1))(A, B)
    np.testing.assert_allclose(grad_a, [[-0.04938272, -0.02469135, -0.32098767],
                                        [-0.02469136, -0.01234568, -0.16049384],
                                        [-0.09876543, -0.04938271, -0.64197534]],
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(grad_b, [0.22222222, 0.11111111, 0.44444445], rtol=1e-6)
    _, tangent = jax.jvp(solve_with, (A, B), (jnp.ones_like(A), jnp.ones_like(B)))
    np.testing.assert_allclose(tangent, [-0.17283954, -0.08641977, -0.34567907], rtol=1e-5)
    batched = jax.vmap(solve_with, in_axes=(None, 0))(A, jnp.stack([B, 2 * B]))
    np.testing.assert_allclose(batched[1], 2 * np.asarray(expected), rtol=1e-5)
    batched = jax.vmap(solve_with, in_axes=(0, None))(jnp.stack([A, A + 1]), B)
    np.testing.assert_allclose(batched[1], [0.0, 0.0, 1.0], atol=1e-6)


def test_custom_linear_solve_aux_symmetric_and_errors():
    def g(A, b):
        return lax.custom_linear_solve(lambda x: A @ x, b,
                                       lambda mv, y: (jnp.linalg.solve(A, y), jnp.sum(y)),
                                       symmetric=True, has_aux=True)
    x, aux = g(A, B)
    assert float(aux) == 6.0
    grad = jax.grad(lambda A: g(A, B)[0].sum())(A)
    np.testing.assert_allclose(grad[0], [-0.04938272, -0.02469135, -0.32098767], rtol=1e-5)
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: A @ x, B, lambda mv, y: y[:2])
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
        jax.grad(lambda b: lax.custom_linear_solve(
            lambda x: A @ x, b, lambda mv, y: jnp.linalg.solve(A, y)).sum())(B)
    text = str(jax.make_jaxpr(solve_with)(A, B))
    assert "custom_linear_solve[" in text
    assert "const_lengths=_LinearSolveTuple(matvec=1, vecmat=1, solve=1, transpose_solve=1)" \
        in text


def square_root(p):
    def newton(f, x0):
        return lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2 * x), x0)
    return lax.custom_root(lambda x: x ** 2 - p, 1.0, newton, lambda g, y: y / g(1.0))


def test_custom_root():
    np.testing.assert_allclose(square_root(2.0), 1.4142135, rtol=1e-7)
    np.testing.assert_allclose(jax.grad(square_root)(2.0), 0.35355338, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(square_root))(3.0), 0.28867513, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(square_root)(jnp.array([2.0, 9.0])), [1.4142135, 3.0],
                               rtol=1e-7)
    assert "name=_custom_root" in str(jax.make_jaxpr(square_root)(2.0))
