"""Workloads of issue 12 (performance round 2): see benchmarks/workloads.py for the format.
Batched small linear algebra: vmapped solve / cholesky / inverse of many small matrices,
and a vmapped Newton solver (jacfwd + solve in a `while_loop`), all jitted, float32."""
from __future__ import annotations

import numpy as np

from workloads import Workload  # noqa: F401  (defined before this module is read)


def _well_conditioned(rng, batch, n):
    """Matrices with a dominant diagonal (solvable, pivoting still exercised)."""
    a = rng.standard_normal((batch, n, n)).astype(np.float32)
    return a + np.float32(n) * np.eye(n, dtype=np.float32)


def _spd(rng, batch, n):
    a = rng.standard_normal((batch, n, n)).astype(np.float32)
    return a @ np.swapaxes(a, -1, -2) + np.float32(n) * np.eye(n, dtype=np.float32)


def _solve(batch, n):
    def inputs(rng):
        return (_well_conditioned(rng, batch, n),
                rng.standard_normal((batch, n)).astype(np.float32))
    return inputs


def _vmapped(name):
    def build(jx):
        fn = {"solve": jx.numpy.linalg.solve, "cholesky": jx.numpy.linalg.cholesky,
              "inv": jx.numpy.linalg.inv}[name]
        return jx.jit(jx.vmap(fn))
    return build


def _newton_residual(jx, x, c):
    """A small nonlinear system F(x) = 0 with a known root near x = c / 4."""
    n = x.shape[0]
    coupling = jx.numpy.roll(x, 1) * 0.1
    return x * x * x + 3.0 * x + coupling - c + 0.01 * jx.numpy.sum(x) / n


def _newton(jx):
    def one(c):
        def body(state):
            x, i = state
            f = _newton_residual(jx, x, c)
            jac = jx.jacfwd(lambda y: _newton_residual(jx, y, c))(x)
            return x - jx.numpy.linalg.solve(jac, f), i + 1

        def cond(state):
            x, i = state
            return (i < 20) & (jx.numpy.max(jx.numpy.abs(_newton_residual(jx, x, c))) > 1e-5)
        x, _ = jx.lax.while_loop(cond, body, (jx.numpy.zeros_like(c), 0))
        return x
    return jx.jit(jx.vmap(one))


def _per_call_us(seconds):
    return seconds * 1e6, "us/call"


WORKLOADS: list = [
    Workload("batched_solve/3x3_b64", _solve(64, 3), _vmapped("solve"), None, _per_call_us),
    Workload("batched_solve/8x8_b1024", _solve(1024, 8), _vmapped("solve"), None,
             _per_call_us),
    Workload("batched_cholesky/16x16_b256", lambda rng: (_spd(rng, 256, 16),),
             _vmapped("cholesky"), None, _per_call_us),
    Workload("batched_inv/4x4_b4096", lambda rng: (_well_conditioned(rng, 4096, 4),),
             _vmapped("inv"), None, _per_call_us),
    Workload("batched_solve/32x32_b64", _solve(64, 32), _vmapped("solve"), None,
             _per_call_us),
    Workload("batched_cholesky/32x32_b1024", lambda rng: (_spd(rng, 1024, 32),),
             _vmapped("cholesky"), None, _per_call_us),
    Workload("batched_inv/32x32_b64", lambda rng: (_well_conditioned(rng, 64, 32),),
             _vmapped("inv"), None, _per_call_us),
    Workload("batched_solve/4x4_b1", _solve(1, 4), _vmapped("solve"), None, _per_call_us),
    Workload("batched_cholesky/8x8_b1", lambda rng: (_spd(rng, 1, 8),),
             _vmapped("cholesky"), None, _per_call_us),
    Workload("newton_vmap/n4_b256",
             lambda rng: (rng.uniform(-2, 2, (256, 4)).astype(np.float32),), _newton, None,
             _per_call_us),
]
