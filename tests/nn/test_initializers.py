"""jaxlite.nn.initializers: shapes, dtypes, fans and variances (values against JAX are in
tests/random/test_against_jax.py)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import random
from jaxlite.nn import initializers

KEY = random.PRNGKey(0)


@pytest.mark.parametrize("factory,scale,mode,distribution", [
    (initializers.glorot_uniform, 1.0, "fan_avg", "uniform"),
    (initializers.glorot_normal, 1.0, "fan_avg", "truncated_normal"),
    (initializers.lecun_uniform, 1.0, "fan_in", "uniform"),
    (initializers.lecun_normal, 1.0, "fan_in", "truncated_normal"),
    (initializers.he_uniform, 2.0, "fan_in", "uniform"),
    (initializers.he_normal, 2.0, "fan_in", "truncated_normal"),
])
def test_variance_of_named_initializers(factory, scale, mode, distribution):
    shape = (200, 300)
    w = np.asarray(factory()(KEY, shape))
    assert w.shape == shape and w.dtype == np.float32
    fan = {"fan_in": 200, "fan_avg": 250}[mode]
    np.testing.assert_allclose(w.var(), scale / fan, rtol=0.03)
    assert abs(w.mean()) < 0.01
    if distribution == "uniform":
        assert np.abs(w).max() <= np.sqrt(3 * scale / fan)
    else:
        assert np.abs(w).max() <= 2 * np.sqrt(scale / fan) / 0.87962566103423978


def test_receptive_field_and_axes():
    # A convolution kernel HWIO: fan_in = 3 * 3 * 16.
    w = np.asarray(initializers.he_normal()(KEY, (3, 3, 16, 64)))
    np.testing.assert_allclose(w.var(), 2.0 / (3 * 3 * 16), rtol=0.05)
    custom = initializers.variance_scaling(1.0, "fan_out", "normal", in_axis=0, out_axis=1)
    w = np.asarray(custom(KEY, (64, 128, 4)))
    np.testing.assert_allclose(w.var(), 1.0 / (128 * 4), rtol=0.05)
    batched = initializers.variance_scaling(1.0, "fan_in", "normal", batch_axis=0)
    np.testing.assert_allclose(np.asarray(batched(KEY, (10, 100, 50))).var(), 0.01, rtol=0.05)


def test_simple_initializers():
    assert np.all(np.asarray(initializers.zeros(KEY, (2, 3))) == 0)
    assert initializers.ones(KEY, (2,), np.float16).dtype == np.float16
    np.testing.assert_array_equal(initializers.constant(0.5)(KEY, (2,)), [0.5, 0.5])
    u = np.asarray(initializers.uniform(3.0)(KEY, (1000,)))
    assert u.min() >= 0 and u.max() < 3
    n = np.asarray(initializers.normal(0.5)(KEY, (4000,)))
    np.testing.assert_allclose(n.std(), 0.5, rtol=0.05)
    t = np.asarray(initializers.truncated_normal(1.0)(KEY, (4000,)))
    assert np.abs(t).max() < 2
    with jax.enable_x64(True):
        assert initializers.glorot_normal()(KEY, (2, 2)).dtype == np.float64


def test_errors():
    with pytest.raises(ValueError, match="at least 2D"):
        initializers.glorot_normal()(KEY, (5,))
    with pytest.raises(ValueError, match="invalid mode"):
        initializers.variance_scaling(1.0, "fan_sideways", "normal")(KEY, (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        initializers.variance_scaling(1.0, "fan_in", "binomial")(KEY, (2, 2))


def test_orthogonal():
    w = np.asarray(initializers.orthogonal(2.0)(KEY, (5, 3)))
    np.testing.assert_allclose(w.T @ w, 4 * np.eye(3), atol=1e-5)
    rows = np.asarray(initializers.orthogonal(column_axis=0)(KEY, (3, 5)))
    np.testing.assert_allclose(rows @ rows.T, np.eye(3), atol=1e-5)


def test_initializers_under_jit():
    init = initializers.lecun_normal()
    np.testing.assert_allclose(jax.jit(lambda k: init(k, (3, 4)))(KEY), init(KEY, (3, 4)),
                               rtol=1e-6)


def test_delta_orthogonal_matches_jax():
    # JAX 0.10.2: delta_orthogonal()(random.key(42), (3, 3, 3), float32) is zero but for
    # the centre slice, an orthogonal matrix (QR of the same normal draw).
    inits = initializers
    out = np.asarray(inits.delta_orthogonal()(jax.random.key(42), (3, 3, 3), np.float32))
    np.testing.assert_array_equal(out[0], 0)
    np.testing.assert_array_equal(out[2], 0)
    np.testing.assert_allclose(out[1] @ out[1].T, np.eye(3), atol=1e-6)
    np.testing.assert_allclose(out[1, 0], [-0.01953, 0.995268, 0.095189], atol=1e-5)
    out = np.asarray(inits.delta_orthogonal(2.0, column_axis=-2)(jax.random.key(1), (3, 3, 3)))
    np.testing.assert_allclose(out[1].ravel()[:3], [-0.143482, -0.144038, 1.98964], atol=1e-5)
    with pytest.raises(ValueError, match="requires a 3D, 4D or 5D shape"):
        inits.delta_orthogonal()(jax.random.key(0), (3, 3))
    with pytest.raises(ValueError, match="`fan_in` must be less or equal than `fan_out`"):
        inits.delta_orthogonal()(jax.random.key(0), (3, 4, 3))
    assert isinstance(inits.Initializer, type)
    assert inits.zeros(jax.random.key(0), (2,), out_sharding=None).shape == (2,)
