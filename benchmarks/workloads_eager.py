"""Workloads of issue 12 (performance round 2): see benchmarks/workloads.py for the format.
Filled by the work on this area; `suite.py` runs them beside the shared ones.

Eager dispatch and the argument path of `jit` calls: an un-jitted elementwise chain (per
operation), and jitted calls whose arguments `jnp.zeros` made (zero-stride views in
jaxlite until they are first passed).
"""
from __future__ import annotations

import numpy as np

from workloads import Workload  # noqa: F401  (defined before this module is read)

CHAIN_STEPS = 100  # each step is three operations: sin, multiply by a scalar, add


def _chain(xp):
    def run(y):
        for _ in range(CHAIN_STEPS):
            y = xp.sin(y) * 0.5 + y
        return y
    return run


def _per_op_us(seconds):
    return seconds / (3 * CHAIN_STEPS) * 1e6, "us/op"


def _per_call_us(seconds):
    return seconds * 1e6, "us/call"


def _dict_of_zeros(jx):
    tree = {f"leaf{i:02d}": jx.numpy.zeros((32, 32), jx.numpy.float32) for i in range(20)}
    step = jx.jit(lambda t: {k: v + 1.0 for k, v in t.items()})
    return lambda: step(tree)


def _big_zeros(jx):
    zeros = jx.numpy.zeros((4000, 4000), jx.numpy.float32)
    corner = jx.jit(lambda x: x[0, :8] + 1.0)
    return lambda: corner(zeros)


WORKLOADS = [
    Workload("eager_chain/sin_mul_add_f32[64]",
             lambda rng: (rng.uniform(-1, 1, 64).astype(np.float32),),
             lambda jx: _chain(jx.numpy), lambda: _chain(np), _per_op_us),
    Workload("eager_jit_args/dict20_zeros_32x32", lambda rng: (), _dict_of_zeros, None,
             _per_call_us),
    Workload("eager_jit_args/zeros_4000x4000", lambda rng: (), _big_zeros, None,
             _per_call_us),
]
