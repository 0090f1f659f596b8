"""Workloads of issue 12 (performance round 2): see benchmarks/workloads.py for the format.
Filled by the work on this area; `suite.py` runs them beside the shared ones.

Transformations outside `jit`: `grad` of a Python function whose pieces are jitted (with
Python branches on concrete values between them), and the loop primitives called eagerly.
"""
from __future__ import annotations

import numpy as np

from workloads import Workload  # noqa: F401  (defined before this module is read)


def _grad_of_jitted_pieces(jx):
    jnp = jx.numpy

    @jx.jit
    def layer(w, b, x):
        return jnp.tanh(w @ x + b)

    @jx.jit
    def smooth(x):
        return x * 0.9 + 0.1 * jnp.sin(x)

    @jx.jit
    def sharpen(x):
        return x * x * 0.5 + x

    @jx.jit
    def normalize(x):
        return (x - x.mean()) / jnp.sqrt((x * x).mean() + 1e-3)

    @jx.jit
    def soft(x):
        return jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0.0)

    @jx.jit
    def mix(x, y):
        return x * 0.7 + y * 0.3

    @jx.jit
    def energy(x):
        return (x * x).sum()

    def loss(params, x):
        w, b = params
        h = layer(w, b, x)
        h = smooth(h)
        if h.sum() > 0:  # Python control flow on a concrete value, between jitted pieces
            h = sharpen(h)
        else:
            h = soft(h)
        h = normalize(h)
        h = mix(h, soft(h))
        h = layer(w, b, h)
        return energy(smooth(h))

    grad = jx.grad(loss)
    return lambda w, b, x: grad((w, b), x)


def _pieces_inputs(rng):
    w = (rng.standard_normal((128, 128)) / np.sqrt(128)).astype(np.float32)
    b = np.zeros(128, np.float32)
    x = rng.standard_normal(128).astype(np.float32)
    return w, b, x


def _fori_loop_eager(jx):
    return lambda x: jx.lax.fori_loop(0, 10_000, lambda i, c: c * 0.999 + 0.001, x)


def _scan_eager(jx):
    def step(c, x):
        c = c * 0.999 + x
        return c, c * 2.0
    return lambda c, xs: jx.lax.scan(step, c, xs)


def _while_loop_eager(jx):
    def cond(state):
        i, _ = state
        return i < 10_000

    def body(state):
        i, c = state
        return i + 1, c * 0.999 + 0.001
    return lambda x: jx.lax.while_loop(cond, body, (0, x))


WORKLOADS: list = [
    Workload("grad_of_jitted_pieces/mlp128", _pieces_inputs, _grad_of_jitted_pieces),
    Workload("fori_loop_eager/10k", lambda rng: (np.float32(1.0),), _fori_loop_eager),
    Workload("scan_eager/10k", lambda rng: (np.float32(1.0),
                                            rng.standard_normal(10_000).astype(np.float32)),
             _scan_eager),
    Workload("while_loop_eager/10k", lambda rng: (np.float32(1.0),), _while_loop_eager),
]
