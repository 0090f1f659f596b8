"""Matrix-vector products on the cpu backend: a dot with one result column and many rows,
large enough for the GEMM path, once gave garbage (NaN, 1e36) there; the MLP demo's last
layer, [256, 32] @ [32, 1], is such a dot. (The GEMM computes it in dot-product form, which
needs no scratch memory; its kernel still took a scratch parameter that its caller did not
pass, so it ran with a shifted work range and left the result unwritten.)"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from cpu_testing import TOLERANCE
from jaxlite.backends.cpu.codegen.dot_kernel import MIN_GEMM_FLOPS

CPU = jax.devices("cpu")[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k", [(64, 32), (100, 64), (256, 32), (33, 128)])
def test_one_result_column_matches_numpy(m, k, dtype):
    assert 2 * m * k >= MIN_GEMM_FLOPS  # large enough for the GEMM path
    rng = np.random.default_rng(m * k)
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, 1)).astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        for fun, expected in ((lambda x, y: x @ y, a @ b),
                              (lambda x, y: x @ y[:, 0], a @ b[:, 0])):
            got = np.asarray(jax.jit(fun, device=CPU)(a, b))
            tol = TOLERANCE[np.dtype(dtype)] * np.sqrt(k)
            np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_mlp_with_one_output_matches_eager():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (256, 1)).astype(np.float32)
    w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((1, 32), (32, 1)))

    def predict(x):
        return jnp.tanh(x @ w1) @ w2
    got = np.asarray(jax.jit(predict, device=CPU)(x))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, np.asarray(predict(x)), rtol=1e-5, atol=1e-5)
