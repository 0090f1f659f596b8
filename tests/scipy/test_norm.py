"""jaxlite.scipy.stats.norm against scipy.stats.norm: values, loc/scale broadcasting,
gradients, dtypes, jit and vmap."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import jaxlite as jax
from jaxlite.scipy.stats import norm
from jaxlite.test_util import check_grads

X = np.array([-40.0, -8.0, -2.5, -0.3, 0.0, 0.7, 3.0, 9.0])
LOC = np.array([[0.0], [1.5]])
SCALE = np.array([0.5, 2.0, 1.0, 3.0, 1.0, 0.1, 1.0, 4.0])
FUNCTIONS = ["pdf", "logpdf", "cdf", "logcdf"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_values(name):
    ours, theirs = getattr(norm, name), getattr(scipy.stats.norm, name)
    with jax.enable_x64(True):
        np.testing.assert_allclose(ours(X), theirs(X), rtol=1e-12, atol=1e-300)
        # (logcdf near 0 is log(1 - tiny), as in JAX: absolute accuracy only)
        np.testing.assert_allclose(ours(X, LOC, SCALE), theirs(X, LOC, SCALE), rtol=1e-11,
                                   atol=1e-15)
    x32 = X.astype(np.float32)
    out = ours(x32, 0.5, 2.0)
    assert out.dtype == np.float32 and out.shape == X.shape
    np.testing.assert_allclose(out, theirs(x32.astype(np.float64), 0.5, 2.0), rtol=2e-5,
                               atol=1e-7)


def test_ppf():
    q = np.array([0.0, 1e-12, 0.025, 0.5, 0.8, 1 - 1e-9, 1.0])
    with jax.enable_x64(True):
        np.testing.assert_allclose(norm.ppf(q), scipy.stats.norm.ppf(q), rtol=1e-12)
        np.testing.assert_allclose(norm.ppf(q[1:-1], 3.0, 0.5),
                                   scipy.stats.norm.ppf(q[1:-1], 3.0, 0.5), rtol=1e-12)
        assert norm.ppf(0.3).dtype == np.float64
    assert norm.ppf(0.3).dtype == np.float32
    np.testing.assert_allclose(norm.cdf(norm.ppf(np.float32(0.2))), 0.2, rtol=1e-6)


@pytest.mark.parametrize("name", FUNCTIONS + ["ppf"])
def test_gradients(name):
    fun = getattr(norm, name)
    point = np.array([0.1, 0.4, 0.7]) if name == "ppf" else np.array([-3.0, 0.2, 1.5])
    with jax.enable_x64(True):
        check_grads(lambda x, loc, scale: fun(x, loc, scale),
                    (point, np.array(0.3), np.array(1.7)), order=2)


def test_integer_arguments_promote():
    assert norm.pdf(1).dtype == np.float32
    assert norm.logcdf(np.int32(1), 0, 2).dtype == np.float32


def test_jit_and_vmap():
    x = np.linspace(-3, 3, 7).astype(np.float32)
    for name in FUNCTIONS:
        fun = getattr(norm, name)
        np.testing.assert_allclose(jax.jit(fun)(x, 1.0, 2.0), fun(x, 1.0, 2.0), rtol=1e-6)
        np.testing.assert_allclose(jax.vmap(fun, in_axes=(0, None, None))(x, 1.0, 2.0),
                                   fun(x, 1.0, 2.0), rtol=1e-6)
