"""Whole programs whose dots reach the cpu backend's GEMM, checked against numpy and the
interpreter backend.

- An MLP in equinox's style (a vmapped `W @ x + b` per sample) with a batch of one: its
  matrix-vector and one-row products take the GEMM's swapped and dot-product paths, whose
  kernels once ran with shifted work ranges (the loss was NaN from the first step).
- The gradient of a `cho_solve`-like loss: two chained triangular solves, whose backward pass
  has several dots with the same GEMM; their kernels each declared the GEMM's range
  function, and LLVM rejected the module ("invalid redefinition of function").
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.config import config

CPU = jax.devices("cpu")[0]
# Relative to the largest reference value: a few roundings of a length-128 dot product.
TOLERANCE = {np.float32: 3e-5, np.float64: 1e-12}


@pytest.fixture(autouse=True)
def both_backends():
    with config.override("jax_platforms", "interpreter,cpu"):
        yield


def assert_close(got, expected, dtype, what=""):
    got = np.asarray(got)
    assert got.dtype == dtype, what
    assert np.isfinite(got).all(), f"{what}: {np.size(got) - np.isfinite(got).sum()} non-finite"
    scale = max(np.abs(expected).max(), np.finfo(dtype).tiny)
    np.testing.assert_allclose(got, expected, rtol=TOLERANCE[dtype],
                               atol=TOLERANCE[dtype] * scale, err_msg=what)


# ------------------------------------------------------------------------- the MLP

SIZES = (32, 128, 128, 1)   # in, two hidden layers, out


def init_mlp(rng, dtype):
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        w = rng.uniform(-1, 1, (fan_out, fan_in)) / np.sqrt(fan_in)
        b = rng.uniform(-1, 1, fan_out) / np.sqrt(fan_in)
        params.append((w.astype(dtype), b.astype(dtype)))
    return params


def mlp_one(params, x):
    """One sample, as equinox's `Linear` computes it: `weight @ x + bias`."""
    for w, b in params[:-1]:
        x = jnp.tanh(w @ x + b)
    w, b = params[-1]
    return w @ x + b


def mlp_loss(params, x, t):
    return jnp.mean((jax.vmap(mlp_one, in_axes=(None, 0))(params, x) - t) ** 2)


def mlp_loss_rows(params, x, t):
    """The same network written on batches of rows: `x @ W.T + b`."""
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w.T + b)
    w, b = params[-1]
    return jnp.mean((x @ w.T + b - t) ** 2)


def numpy_mlp_loss_and_grads(params, x, t):
    """Forward and backward in float64 numpy (the reference)."""
    params = [(w.astype(np.float64), b.astype(np.float64)) for w, b in params]
    hs = [x.astype(np.float64)]
    for w, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ w.T + b))
    y = hs[-1] @ params[-1][0].T + params[-1][1]
    loss = np.mean((y - t) ** 2)
    dy = 2 * (y - t) / y.size
    grads = []
    for layer in range(len(params) - 1, -1, -1):
        w, _ = params[layer]
        grads.append((dy.T @ hs[layer], dy.sum(0)))
        if layer:
            dy = (dy @ w) * (1 - hs[layer] ** 2)
    return loss, grads[::-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("loss_fn", [mlp_loss, mlp_loss_rows], ids=["vmapped", "rows"])
def test_mlp_forward_and_backward_under_jit(loss_fn, batch, dtype):
    rng = np.random.default_rng(batch)
    params = init_mlp(rng, dtype)
    x = rng.standard_normal((batch, SIZES[0])).astype(dtype)
    t = rng.standard_normal((batch, SIZES[-1])).astype(dtype)
    loss, grads = numpy_mlp_loss_and_grads(params, x, t)
    step = jax.value_and_grad(loss_fn)
    with jax.enable_x64(dtype == np.float64):
        cpu_loss, cpu_grads = jax.jit(step, device=CPU)(params, x, t)
        ref_loss, ref_grads = jax.jit(step, backend="interpreter")(params, x, t)
    assert_close(cpu_loss, loss, dtype, "loss")
    assert_close(cpu_loss, np.asarray(ref_loss, np.float64), dtype, "loss vs interpreter")
    for layer, ((gw, gb), (rw, rb), (ew, eb)) in enumerate(zip(cpu_grads, ref_grads, grads)):
        assert_close(gw, ew, dtype, f"d loss / d W{layer}")
        assert_close(gb, eb, dtype, f"d loss / d b{layer}")
        assert_close(gw, np.asarray(rw, np.float64), dtype, f"W{layer} vs interpreter")
        assert_close(gb, np.asarray(rb, np.float64), dtype, f"b{layer} vs interpreter")


# ------------------------------------------------------------- cho_solve's gradient

def cho_loss(chol, b):
    """sum(x**2) for x = (L L^T)^{-1} b, by two triangular solves (scipy's cho_solve)."""
    y = lax.linalg.triangular_solve(chol, b, left_side=True, lower=True)
    x = lax.linalg.triangular_solve(chol, y, left_side=True, lower=True, transpose_a=True)
    return jnp.sum(x ** 2)


def cho_loss_gradients(chol, b):
    """The closed form in float64: with Y = L^-1 B, X = L^-T Y, U = L^-1 X, W = L^-T U,
    d/dB = 2 W and d/dL = tril(-2 (X U^T + W Y^T)) (the solve reads L's lower triangle)."""
    chol, b = chol.astype(np.float64), b.astype(np.float64)
    y = np.linalg.solve(chol, b)
    x = np.linalg.solve(chol.T, y)
    u = np.linalg.solve(chol, x)
    w = np.linalg.solve(chol.T, u)
    outer = np.outer if b.ndim == 1 else (lambda p, q: p @ q.T)
    return np.tril(-2 * (outer(x, u) + outer(w, y))), 2 * w


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("n, rhs", [(64, (16,)), (64, (64,)), (96, ()), (40, (3,))])
def test_cho_solve_gradient_under_jit(n, rhs, dtype):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n))
    chol = np.linalg.cholesky(a @ a.T / n + np.eye(n)).astype(dtype)
    b = rng.standard_normal((n, *rhs)).astype(dtype)
    expected = cho_loss_gradients(chol, b)
    with jax.enable_x64(dtype == np.float64):
        for argnums in (0, 1, (0, 1)):
            got = jax.jit(jax.grad(cho_loss, argnums=argnums), device=CPU)(chol, b)
            got = got if isinstance(argnums, tuple) else (got,)
            wanted = [expected[i] for i in np.atleast_1d(argnums)]
            for g, e, i in zip(got, wanted, np.atleast_1d(argnums)):
                assert_close(g, e, dtype, f"argnums={argnums}: d/d{'Lb'[i]}")
