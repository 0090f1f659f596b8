"""jaxlite.nn functions: values against numpy/scipy formulas, JAX's derivatives at the kinks,
finite-difference gradients, dtypes as JAX gives them, and jit/vmap."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import scipy.stats

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import nn
from jaxlite.test_util import check_grads

X = np.array([-3.0, -1.0, -0.25, 0.3, 0.9, 2.0, 7.5], np.float32)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848, 1.0507009873554804934


def _np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


REFERENCES = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "sigmoid": (nn.sigmoid, scipy.special.expit),
    "softplus": (nn.softplus, lambda x: np.logaddexp(x, 0)),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "silu": (nn.silu, lambda x: x * scipy.special.expit(x)),
    "swish": (nn.swish, lambda x: x * scipy.special.expit(x)),
    "gelu_tanh": (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi)
                                                            * (x + 0.044715 * x**3)))),
    "gelu_exact": (lambda x: nn.gelu(x, approximate=False),
                   lambda x: x * scipy.stats.norm.cdf(x)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "celu": (lambda x: nn.celu(x, 1.5), lambda x: np.maximum(x, 0) +
             1.5 * np.expm1(np.minimum(x, 0) / 1.5)),
    "selu": (nn.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))),
    "leaky_relu": (lambda x: nn.leaky_relu(x, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -np.logaddexp(0, -x)),
    "mish": (nn.mish, lambda x: x * np.tanh(np.logaddexp(x, 0))),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "squareplus": (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    "softmax": (nn.softmax, _np_softmax),
    "log_softmax": (nn.log_softmax, lambda x: np.log(_np_softmax(x))),
    "logsumexp": (nn.logsumexp, scipy.special.logsumexp),
    "standardize": (nn.standardize, lambda x: (x - x.mean()) / np.sqrt(x.var() + 1e-5)),
    "glu": (lambda x: nn.glu(x[:6]), lambda x: x[:3] * scipy.special.expit(x[3:6])),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values(name):
    fun, reference = REFERENCES[name]
    np.testing.assert_allclose(fun(X), reference(X.astype(np.float64)), rtol=2e-6, atol=2e-6)
    with jax.enable_x64(True):
        x64 = X.astype(np.float64)
        np.testing.assert_allclose(fun(x64), reference(x64), rtol=1e-13, atol=1e-13)


SMOOTH = sorted(set(REFERENCES) - {"relu", "relu6", "hard_tanh", "hard_sigmoid", "hard_silu",
                                   "leaky_relu", "elu", "selu", "celu"})


@pytest.mark.parametrize("name", SMOOTH + ["relu", "relu6", "leaky_relu", "elu", "celu"])
def test_gradients_by_finite_differences(name):
    fun = REFERENCES[name][0]
    with jax.enable_x64(True):
        check_grads(fun, (X.astype(np.float64),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("fun,x,expected", [
    (nn.relu, 0.0, 0.0), (nn.relu6, 0.0, 0.0), (nn.relu6, 6.0, 0.0), (nn.relu6, 3.0, 1.0),
    (nn.softplus, 0.0, 0.5), (nn.elu, 0.0, 1.0), (nn.celu, 0.0, 1.0),
    (nn.leaky_relu, 0.0, 1.0), (nn.hard_tanh, 1.0, 1.0), (nn.hard_tanh, 1.5, 0.0),
    (nn.softplus, 100.0, 1.0), (nn.log_sigmoid, -100.0, 1.0), (nn.sigmoid, 0.0, 0.25),
])
def test_derivatives_at_kinks_as_jax(fun, x, expected):
    assert float(jax.grad(fun)(x)) == pytest.approx(expected, abs=1e-7)


def test_relu_keeps_nan_and_negative_zero_behaviour():
    out = np.asarray(nn.relu(np.array([np.nan, -0.0, -np.inf, np.inf], np.float32)))
    assert np.isnan(out[0]) and out[1] == 0 and out[2] == 0 and out[3] == np.inf
    assert float(jax.grad(nn.relu)(np.float32(np.nan))) == 0.0


@pytest.mark.parametrize("fun,x,dtype", [
    (nn.relu, np.int32(3), np.int32), (nn.relu6, np.int32(3), np.float32),
    (nn.sigmoid, np.float16(1), np.float16), (nn.softplus, 1, np.float32),
    (nn.gelu, np.int32(2), np.float32), (nn.hard_tanh, np.int32(3), np.int32),
    (nn.elu, np.int32(3), np.float32), (nn.silu, jnp.bfloat16(1), jnp.bfloat16),
])
def test_dtypes_as_jax(fun, x, dtype):
    assert fun(x).dtype == dtype


def test_softmax_axes_and_where():
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(nn.softmax(x, axis=0), _np_softmax(x, 0), rtol=1e-6)
    np.testing.assert_allclose(nn.log_softmax(x, axis=(0, 1)),
                               x - scipy.special.logsumexp(x), rtol=1e-5)
    where = np.array([True, False, True, True])
    masked = np.asarray(nn.softmax(x, where=where))
    assert np.all(masked[:, 1] == 0)
    np.testing.assert_allclose(masked.sum(-1), 1, rtol=1e-6)
    assert np.all(np.asarray(nn.log_softmax(x, where=where))[:, 1] == -np.inf)


def test_softmax_gradient_is_stable():
    with jax.enable_x64(True):
        x = np.array([1000.0, 1001.0, 999.0])
        g = jax.grad(lambda v: nn.log_softmax(v)[1])(x)
        p = _np_softmax(x)
        np.testing.assert_allclose(g, np.eye(3)[1] - p, rtol=1e-12)
        check_grads(lambda v: nn.softmax(v)[0], (x,), order=2)


def test_one_hot():
    out = nn.one_hot(np.array([0, 2, -1, 3]), 3)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    first = nn.one_hot(np.array([[1, 0]]), 2, axis=0, dtype=jnp.int32)
    assert first.shape == (2, 1, 2) and first.dtype == np.int32
    np.testing.assert_array_equal(first[:, 0, :], [[0, 1], [1, 0]])


def test_standardize_options():
    x = np.random.default_rng(1).normal(size=(4, 5)).astype(np.float32)
    stable = nn.standardize(x, axis=0, algorithm="stable")
    expected = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(stable, expected, rtol=1e-4, atol=1e-5)
    given = nn.standardize(x, mean=0.0, variance=1.0, epsilon=0.0)
    np.testing.assert_allclose(given, x, rtol=1e-6)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(x, algorithm="slow")


def test_glu_needs_even_axis():
    with pytest.raises(ValueError, match="even"):
        nn.glu(np.ones(3))


def test_jit_and_vmap():
    x = np.random.default_rng(2).normal(size=(3, 4)).astype(np.float32)
    # Compiled code computes tanh and exp with the cpu backend's own math library (a few ulp)
    # and fuses multiply-adds; gelu's 1 + tanh(...) cancels, so the absolute error is that of
    # the O(1) intermediate: two float32 epsilons.
    atol = 2 * float(np.finfo(np.float32).eps)
    for fun in (nn.gelu, nn.softmax, nn.relu, nn.log_sigmoid, nn.standardize):
        np.testing.assert_allclose(jax.jit(fun)(x), fun(x), rtol=1e-6, atol=atol)
        np.testing.assert_allclose(jax.vmap(fun)(x), np.stack([fun(r) for r in x]),
                                   rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(jax.jit(lambda i: nn.one_hot(i, 4))(np.array([1, 3])),
                                  np.eye(4)[[1, 3]])
