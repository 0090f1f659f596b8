"""dot_product_attention against JAX 0.10.2: data/attention_script.py computes it in every
configuration; data/attention_jax.npz and data/attention_jax_errors.txt are JAX's results
and errors. Tolerances: float32 rounding (bfloat16 and float16 results agree exactly)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp

DATA = Path(__file__).parent / "data"


def test_attention_matches_jax(tmp_path):
    out = tmp_path / "jaxlite.npz"
    result = subprocess.run([sys.executable, str(DATA / "attention_script.py"), "jaxlite",
                             str(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (DATA / "attention_jax_errors.txt").read_text()
    expected, actual = np.load(DATA / "attention_jax.npz"), np.load(out)
    assert sorted(expected.files) == sorted(actual.files)
    for key in expected.files:
        e, a = expected[key], actual[key]
        assert (a.shape, a.dtype) == (e.shape, e.dtype), key
        exact = key in ("bf16", "f16")
        np.testing.assert_allclose(a, e, rtol=0 if exact else 1e-5,
                                   atol=0 if exact else 3e-6, err_msg=key)


def test_attention_by_hand_and_refusals():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 3, 1, 4)).astype(np.float32) for _ in range(3))
    logits = np.einsum("th,sh->ts", q[0, :, 0], k[0, :, 0]) / 2.0
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(jax.nn.dot_product_attention(q, k, v)[0, :, 0],
                               weights @ v[0, :, 0], rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="cudnn implementation needs an NVIDIA GPU"):
        jax.nn.dot_product_attention(q, k, v, implementation="cudnn")


def test_scaled_products_and_small_functions():
    config = jax.nn.get_scaled_dot_general_config("mxfp8")
    assert (config.mode, config.block_size, config.global_scale) == ("mxfp8", 32, None)
    assert config.data_type == jnp.float8_e4m3fn and config.scale_type == jnp.float8_e8m0fnu
    nvfp4 = jax.nn.get_scaled_dot_general_config("nvfp4")
    assert (nvfp4.block_size, nvfp4.data_type) == (16, jnp.float4_e2m1fn)
    np.testing.assert_array_equal(nvfp4.global_scale, [1.0])
    with pytest.raises(ValueError, match="Unsupported mode: foo"):
        jax.nn.get_scaled_dot_general_config("foo")
    a = jnp.ones((1, 2, 32))
    out = jax.nn.scaled_dot_general(a, a, (((2,), (2,)), ((0,), (0,))))
    np.testing.assert_array_equal(out, np.full((1, 2, 2), 32.0))
    # JAX 0.10.2 on the CPU: "MLIR translation rule for primitive 'scaled_matmul' not found".
    with pytest.raises(NotImplementedError, match="not found for platform cpu"):
        jax.nn.scaled_dot_general(a, a, (((2,), (2,)), ((0,), (0,))), configs=[config] * 3)
    with pytest.raises(NotImplementedError, match="not found for platform cpu"):
        jax.nn.scaled_matmul(a, a, jnp.ones((1, 2, 1)), jnp.ones((1, 2, 1)))
    # JAX 0.10.2's values.
    assert float(jax.nn.tanh(1)) == pytest.approx(0.7615942, rel=1e-7)
    np.testing.assert_allclose(jax.nn.log1mexp(jnp.array([0.1, 1.0, 10.0])),
                               [-2.3521686, -0.45867515, -4.5400961e-05], rtol=1e-6)
    assert float(jax.nn.log1mexp(0.0)) == -np.inf
    assert float(jax.grad(jax.nn.log1mexp)(0.5)) == pytest.approx(1.541494, rel=1e-6)
    np.testing.assert_allclose(jax.nn.logmeanexp(jnp.array([[1.0, 2.0], [3.0, 4.0]]), axis=1),
                               [1.6201143, 3.6201143], rtol=1e-6)
    np.testing.assert_allclose(
        jax.nn.logmeanexp(jnp.arange(4.0), where=jnp.array([True, False, True, True])),
        2.2504, rtol=1e-6)
