"""Workloads of issue 12 (performance round 2): see benchmarks/workloads.py for the format.
The slow kernels: a float32 tanh alone (the vector math library's rational, without the rest
of a GELU), and the gradient of a small MLP whose temporary memory issue 12 compares with
XLA's (`memory_analysis().temp_size_in_bytes`)."""
from __future__ import annotations

import numpy as np

from workloads import Workload  # noqa: F401  (defined before this module is read)

N_TANH = 1 << 22


def _tanh(jx):
    return jx.jit(jx.numpy.tanh)


def _mlp_grad(jx):
    def loss(params, x, labels):
        (w1, b1), (w2, b2) = params
        logits = jx.numpy.tanh(x @ w1 + b1) @ w2 + b2
        return -(labels * jx.nn.log_softmax(logits)).sum(axis=-1).mean()
    return jx.jit(jx.grad(loss))


def _mlp_inputs(rng):
    params = [(rng.standard_normal((784, 256)).astype(np.float32) / 28,
               np.zeros(256, np.float32)),
              (rng.standard_normal((256, 10)).astype(np.float32) / 16,
               np.zeros(10, np.float32))]
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    return params, rng.standard_normal((128, 784)).astype(np.float32), labels


WORKLOADS: list = [
    Workload("tanh/4M", lambda rng: (rng.uniform(-5, 5, N_TANH).astype(np.float32),), _tanh,
             lambda: np.tanh, lambda seconds: (8 * N_TANH / seconds / 1e9, "GB/s")),
    Workload("mlp_grad/784-256-10_b128", _mlp_inputs, _mlp_grad),
]
