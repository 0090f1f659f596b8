"""The ../shared/bench workloads' programs, shrunk, on the gpu backend: the same code
(an MLP's cross-entropy train step, a scanned RNN's value and gradient, an NHWC
convolution) against the cpu backend, and every step on the device (`text("kernels")`
lists no host fallback)."""
from __future__ import annotations

import numpy as np
import pytest
from gpu_testing import assert_close, gpu_backend

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.config import config


@pytest.fixture(scope="module")
def backend():
    return gpu_backend()


def _normal(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _xent(params, x, y):
    z = x
    for k, (w, b) in enumerate(params):
        z = z @ w + b
        if k < len(params) - 1:
            z = jnp.tanh(z)
    m = jax.lax.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
    lse = m + jnp.log(jnp.sum(jnp.exp(z - m), axis=-1, keepdims=True))
    return -jnp.mean(jnp.sum(y * (z - lse), axis=-1))


def _train_step(params, x, y):
    value, grads = jax.value_and_grad(_xent)(params, x, y)
    return value, [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def _rnn_loss(params, xs, h0):
    wx, wh, b = params

    def cell(h, x):
        h = jnp.tanh(x @ wx + h @ wh + b)
        return h, h
    _, hs = jax.lax.scan(cell, h0, xs)
    return jnp.mean(hs * hs)


def _conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _mlp_args():
    sizes = (12, 16, 16, 5)
    params = [(_normal((i, o), k, 1 / np.sqrt(i)), np.zeros(o, np.float32))
              for k, (i, o) in enumerate(zip(sizes[:-1], sizes[1:]))]
    y = np.eye(5, dtype=np.float32)[np.random.default_rng(9).integers(0, 5, 6)]
    return params, _normal((6, 12), 7), y


WORKLOADS = {
    "mlp_train_step": (_train_step, _mlp_args),
    "scan_rnn": (jax.value_and_grad(_rnn_loss),
                 lambda: ((_normal((4, 8), 1, 0.5), _normal((8, 8), 2, 0.35),
                           np.zeros(8, np.float32)), _normal((5, 3, 4), 3),
                          np.zeros((3, 8), np.float32))),
    "conv2d": (_conv, lambda: (_normal((2, 6, 6, 3), 4), _normal((3, 3, 3, 4), 5, 0.2))),
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_the_workload_runs_on_the_device_with_the_cpus_numbers(backend, name):
    fn, make_args = WORKLOADS[name]
    args = make_args()
    got = jax.jit(fn, backend=backend)(*args)
    with config.override("jax_platforms", ""):
        want = jax.jit(fn, backend="cpu")(*args)
    for k, (g, w) in enumerate(zip(jax.tree.leaves(got), jax.tree.leaves(want))):
        assert_close(np.asarray(g), np.asarray(w), f"{name} leaf {k}")
    plan = jax.jit(fn, backend=backend).lower(*args).compile().runtime_executable() \
        .text("kernels")
    assert "host" not in plan and "after a copy" not in plan, plan
