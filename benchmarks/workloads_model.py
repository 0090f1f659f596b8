"""Workloads of issue 12 (performance round 2): see benchmarks/workloads.py for the format.
A model-sized training step beside the shared ones: a pre-LN transformer block."""
from __future__ import annotations

import numpy as np

from workloads import Workload  # noqa: F401  (defined before this module is read)

BATCH, SEQ, D, HEADS, HIDDEN = 8, 128, 256, 4, 1024


def _transformer_inputs(rng):
    def normal(*shape, scale):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    params = dict(g1=np.ones(D, np.float32), b1=np.zeros(D, np.float32),
                  wq=normal(D, D, scale=D ** -0.5), wk=normal(D, D, scale=D ** -0.5),
                  wv=normal(D, D, scale=D ** -0.5), wo=normal(D, D, scale=D ** -0.5),
                  g2=np.ones(D, np.float32), b2=np.zeros(D, np.float32),
                  w1=normal(D, HIDDEN, scale=D ** -0.5), c1=np.zeros(HIDDEN, np.float32),
                  w2=normal(HIDDEN, D, scale=HIDDEN ** -0.5), c2=np.zeros(D, np.float32))
    return params, normal(BATCH, SEQ, D, scale=1.0)


def _transformer_step(jx):
    jnp = jx.numpy

    def layer_norm(x, g, b):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * jx.lax.rsqrt(var + 1e-5) * g + b

    def split(t):
        return t.reshape(BATCH, SEQ, HEADS, D // HEADS).transpose(0, 2, 1, 3)

    def block(p, x):
        h = layer_norm(x, p["g1"], p["b1"])
        q, k, v = split(h @ p["wq"]), split(h @ p["wk"]), split(h @ p["wv"])
        s = q @ k.transpose(0, 1, 3, 2) / np.float32((D // HEADS) ** 0.5)
        s = jnp.exp(s - jx.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True)))
        a = (s / jnp.sum(s, axis=-1, keepdims=True)) @ v
        x = x + a.transpose(0, 2, 1, 3).reshape(BATCH, SEQ, D) @ p["wo"]
        h = layer_norm(x, p["g2"], p["b2"]) @ p["w1"] + p["c1"]
        h = 0.5 * h * (1 + jnp.tanh(0.7978846 * (h + 0.044715 * h ** 3)))
        return x + h @ p["w2"] + p["c2"]

    def step(params, x):
        grads = jx.grad(lambda p: jnp.mean(block(p, x) ** 2))(params)
        return jx.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    return jx.jit(step)


WORKLOADS: list = [
    Workload(f"transformer_step/b{BATCH}_s{SEQ}_d{D}", _transformer_inputs, _transformer_step),
]
