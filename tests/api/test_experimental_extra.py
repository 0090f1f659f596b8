"""jax.experimental.{random, rnn, sparse.linalg, shard_alike, compute_on, xla_metadata,
pjit, key_reuse} and jax.extend.core.primitives on jaxlite, against numpy/scipy and against
JAX 0.10.2's answers (recorded by record_with_jax.py experimental_extra from
experimental_extra_cases.py)."""
from __future__ import annotations

import importlib
import json
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental import random as xrandom
from jaxlite.experimental import rnn
from jaxlite.experimental.compute_on import compute_on, compute_on2
from jaxlite.experimental.shard_alike import shard_alike
from jaxlite.experimental.sparse import linalg as splinalg
from jaxlite.experimental.xla_metadata import current_xla_metadata, set_xla_metadata

sys.path.insert(0, str(Path(__file__).parent))  # the case module, shared with the recorder
import experimental_extra_cases as cases  # noqa: E402

EXPECTED = json.loads((Path(__file__).parents[1] / "data" / "api" /
                       "experimental_extra_jax.json").read_text())
API = SimpleNamespace(jax=jax, jnp=jnp, xrandom=xrandom, rnn=rnn, splinalg=splinalg)
F32 = dict(rtol=2e-5, atol=2e-6)


# ------------------------------------------------------------------- experimental.random

def test_stateful_rng_gives_jaxs_bits():
    assert cases.stateful_rng(API) == EXPECTED["stateful_rng"]


def test_stateful_rng_checks():
    split = xrandom.stateful_rng(0).split(2)
    with pytest.raises(ValueError, match="cannot operate on split stateful generator"):
        split.key()
    with pytest.raises(ValueError, match="Expected base_key to be a typed PRNG key"):
        xrandom.StatefulPRNG(1, 2)
    with pytest.raises(TypeError, match="requires an explicit seed"):
        jax.jit(lambda: xrandom.stateful_rng())()
    # Draws in traced code need refs under transformations, which jaxlite lacks: refused.
    rng = xrandom.stateful_rng(0)
    with pytest.raises(NotImplementedError, match="ref"):
        jax.jit(lambda: rng.uniform())()
    unseeded = xrandom.stateful_rng()
    assert 0.0 <= float(unseeded.uniform()) < 1.0


# --------------------------------------------------------------------- experimental.rnn

@pytest.mark.parametrize("name", sorted(cases.LSTM_CONFIGS))
def test_lstm_ref_matches_jax(name):
    got = cases.lstm(API)[name]
    want = EXPECTED["lstm"][name]
    assert got["count"] == want["count"] and got["swapped"] == want["swapped"]
    np.testing.assert_array_equal(got["weights"], want["weights"])
    for key in ("y", "h", "c"):
        np.testing.assert_allclose(got[key], want[key], **F32)


def test_lstm_gradient_matches_jax():
    np.testing.assert_allclose(cases.lstm(API)["grad_weights"],
                               EXPECTED["lstm"]["grad_weights"], rtol=1e-4, atol=1e-5)


def _numpy_lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One layer, one direction, full-length sequences, in float64 numpy."""
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    ys = []
    for t in range(x.shape[1]):
        gates = x[:, t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = np.split(gates, 4, axis=1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        ys.append(h)
    return np.stack(ys, axis=1), h, c


def test_lstm_ref_against_numpy():
    x, h0, c0, w, seq = cases.lstm_inputs(API, *cases.LSTM_CONFIGS["one_layer"])
    unpacked = rnn.unpack_lstm_weights(w, 3, 4, 1, False)
    y, h, c = rnn.lstm_ref(x, h0, c0, *unpacked, seq, 3, 4, 1, 0.0, False)
    ref = _numpy_lstm(*(np.asarray(a, np.float64) for a in (x, h0[0], c0[0])),
                      *(np.asarray(d[0], np.float64) for d in unpacked))
    for got, want in zip((y, h[0], c[0]), ref):
        np.testing.assert_allclose(got, want, **F32)


def test_lstm_weight_layout():
    assert rnn.get_num_params_in_lstm(3, 4, 1, False) == 4 * 4 * (3 + 4) + 2 * 16
    w = jnp.arange(rnn.get_num_params_in_lstm(2, 3, 2, True), dtype=jnp.float32)
    w_ih, w_hh, b_ih, b_hh = rnn.unpack_lstm_weights(w, 2, 3, 2, True)
    assert [w_ih[i].shape for i in range(4)] == [(12, 2), (12, 2), (12, 6), (12, 6)]
    assert all(w_hh[i].shape == (12, 3) and b_ih[i].shape == (12,) for i in range(4))
    assert float(w_hh[0][0, 0]) == 24.0 and float(b_hh[3][-1]) == w.shape[0] - 1


def test_cudnn_lstm_raises_as_on_jaxs_cpu():
    x, h0, c0, w, seq = cases.lstm_inputs(API, *cases.LSTM_CONFIGS["one_layer"])
    for call in (lambda: rnn.lstm(x, h0, c0, w, seq, 3, 4, 1, 0.0, False),
                 lambda: jax.jit(rnn.lstm, static_argnums=(5, 6, 7, 8, 9))(
                     x, h0, c0, w, seq, 3, 4, 1, 0.0, False)):
        with pytest.raises(AttributeError, match="cuDNN"):
            call()
    with pytest.raises(NotImplementedError, match="int32"):
        rnn.lstm(x, h0, c0, w, seq.astype(jnp.float32), 3, 4, 1, 0.0, False)
    with pytest.raises(NotImplementedError, match="bfloat16"):
        rnn.lstm(x, h0, c0, w, seq, 3, 4, 1, 0.0, False, precision=jax.lax.Precision.DEFAULT)
    unpacked = rnn.unpack_lstm_weights(w, 3, 4, 1, False)
    with pytest.raises(NotImplementedError, match="Dropout"):
        rnn.lstm_ref(x, h0, c0, *unpacked, seq, 3, 4, 1, 0.5, False)


# ------------------------------------------------------------- experimental.sparse.linalg

def test_spsolve_matches_scipy_and_jax():
    got = cases.spsolve(API)
    matrix, b = cases.sparse_matrix()
    np.testing.assert_allclose(got["x"], np.linalg.solve(matrix.toarray().astype(np.float64),
                                                         b), **F32)
    for key in ("x", "jit", "grad_b", "grad_data", "jvp_data"):
        np.testing.assert_allclose(got[key], EXPECTED["spsolve"][key], **F32)


def test_spsolve_checks_and_has_no_vmap():
    matrix, b = cases.sparse_matrix()
    args = [jnp.asarray(a) for a in (matrix.data, matrix.indices, matrix.indptr)]
    with pytest.raises(ValueError, match="data types do not match"):
        splinalg.spsolve(*args, jnp.ones(6, jnp.int32))
    with pytest.raises(ValueError, match="Invalid CSR buffer sizes"):
        splinalg.spsolve(*args, jnp.ones(5))
    with pytest.raises(ValueError, match="reorder=5 not valid"):
        splinalg.spsolve(*args, jnp.ones(6), reorder=5)
    with pytest.raises(NotImplementedError):
        jax.vmap(splinalg.spsolve, (None, None, None, 0))(*args, jnp.ones((2, 6)))


def test_lobpcg_finds_the_top_eigenpairs():
    a, x = cases.symmetric_problem()
    theta, u, steps = splinalg.lobpcg_standard(jnp.asarray(a), jnp.asarray(x))
    exact = np.linalg.eigvalsh(a.astype(np.float64))[::-1][:3]
    np.testing.assert_allclose(theta, exact, rtol=1e-6 * 30)
    np.testing.assert_allclose(theta, EXPECTED["lobpcg"]["theta"], rtol=1e-6 * 30)
    u = np.asarray(u, np.float64)
    np.testing.assert_allclose(u.T @ u, np.eye(3), atol=1e-5)
    np.testing.assert_allclose(a @ u, u * np.asarray(theta), atol=2e-4 * np.abs(a).max())
    # Stopping at convergence: JAX takes 24 steps here; rounding may move that by a step.
    assert abs(int(steps) - EXPECTED["lobpcg"]["steps"]) <= 2


def test_lobpcg_with_an_operator_and_few_steps():
    got = cases.lobpcg(API)
    assert got["steps_m5"] == EXPECTED["lobpcg"]["steps_m5"] == 5
    np.testing.assert_allclose(got["theta_m5"], EXPECTED["lobpcg"]["theta_m5"], rtol=1e-5)


def test_lobpcg_checks():
    a, x = cases.symmetric_problem()
    with pytest.raises(ValueError, match="search dim > 0"):
        splinalg.lobpcg_standard(jnp.asarray(a), jnp.asarray(x[:, :0]))
    with pytest.raises(ValueError, match=r"search dim \* 5 < matrix dim"):
        splinalg.lobpcg_standard(jnp.asarray(a), jnp.ones((30, 6)))
    with pytest.raises(ValueError, match="same dtypes"):
        splinalg.lobpcg_standard(lambda v: v.astype(jnp.int32), jnp.asarray(x))


# ------------------------------------------- shard_alike, compute_on, xla_metadata, pjit

def test_shard_alike():
    x, y = shard_alike(jnp.ones(3), jnp.zeros(3))
    np.testing.assert_array_equal(x, np.ones(3)) and np.testing.assert_array_equal(y, 0)
    x, y = shard_alike(1.0, 2)
    assert x.dtype == jnp.float32 and x.weak_type and y.dtype == jnp.int32
    with pytest.raises(ValueError, match="leaves shapes of `x` and `y` should match"):
        shard_alike(jnp.ones(3), jnp.zeros(4))
    with pytest.raises(ValueError, match="Trees should be equal"):
        shard_alike((jnp.ones(3),), [jnp.zeros(3)])
    out = jax.vmap(shard_alike, (0, None))(jnp.ones((2, 3)), jnp.zeros(3))
    assert out[0].shape == out[1].shape == (2, 3)
    g = jax.grad(lambda x: shard_alike(x, 2 * x)[1].sum())(jnp.ones(3))
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])


def test_compute_on():
    for kind in ("device_host", "device", "tpu_sparsecore", "gpu_stream:1"):
        with compute_on(kind):
            assert float(jax.jit(lambda x: x * 2)(3.0)) == 6.0
    assert float(compute_on("device_host")(lambda x: x + 1)(1.0)) == 2.0
    with pytest.raises(ValueError, match="Invalid compute type cpu"):
        compute_on("cpu").__enter__()
    with pytest.raises(TypeError, match="must be a string"):
        compute_on(3).__enter__()
    f = compute_on2(compute_type="device", out_memory_spaces=jax.memory.Space.Device)(
        lambda x: x * x)
    np.testing.assert_array_equal(jax.vmap(f)(jnp.arange(3.0)), [0.0, 1.0, 4.0])
    assert float(jax.grad(f)(3.0)) == 6.0
    with pytest.raises(AssertionError):
        compute_on2(compute_type="device_host", out_memory_spaces=None)(lambda x: x)(1.0)


def test_set_xla_metadata_changes_nothing():
    with set_xla_metadata(a="b"):
        assert current_xla_metadata() == {"a": "b"}
        assert float(jax.jit(lambda x: x * 2)(3.0)) == 6.0
    assert current_xla_metadata() == {}
    tagged = set_xla_metadata({"a": 1.0, "b": np.ones(2)}, k=1)
    assert tagged["a"].weak_type and tagged["b"].dtype == jnp.float32
    assert float(jax.grad(lambda x: set_xla_metadata(x * x, k="v"))(3.0)) == 6.0
    assert float(set_xla_metadata(a=1)(lambda x: x + 1)(2.0)) == 3.0


def test_pjit_is_deprecated_jit_and_key_reuse_imports():
    module = importlib.import_module("jaxlite.experimental.pjit")
    with pytest.warns(DeprecationWarning, match="pjit has been deprecated"):
        pjit = module.pjit
    assert int(pjit(lambda x: x + 1)(1)) == 2
    importlib.import_module("jaxlite.experimental.key_reuse")


def test_extend_primitives_name_jaxlites_primitives():
    from jaxlite.extend.core import primitives
    closed = jax.make_jaxpr(lambda b: jax.lax.custom_linear_solve(
        lambda x: 2 * x, b, lambda mv, b: b / 2))(1.0)
    assert closed.eqns[0].primitive is primitives.linear_solve_p
