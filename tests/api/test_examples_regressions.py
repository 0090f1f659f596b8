"""Regression tests for what JAX's classic example programs (jax-ml/jax examples/) found
wrong in jaxlite, each against JAX 0.10.2.

Expected values were recorded from JAX 0.10.2 on cpu with
`JAX_PLATFORMS=cpu /tmp/jaxvenv/bin/python` running the expression each test names
(e.g. `jax.vmap(jax.grad(jnp.logaddexp, (0, 1)))(XS, YS)`), float32 printed in full.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.lax as lax
import jaxlite.numpy as jnp
import jaxlite.scipy as jsp

INF = np.inf
# Ties (0 = 0, -2 = -2, 3 = 3), a plain pair, and infinities on either side.
XS = np.array([0., 1., -2., 3., -INF, INF, 5.], np.float32)
YS = np.array([0., 3., -2., 3., 0., 1., INF], np.float32)

# JAX 0.10.2: jax.vmap(jax.grad(lambda a, b: jnp.logaddexp(a, b), (0, 1)))(XS, YS).
# JAX's rule t1 exp(x1 - out) + t2 exp(x2 - out) reads +inf as 0, hence e at (1, +inf)
# and e**5 at (5, +inf).
LOGADDEXP_GRADS = ([0.5, 0.11920291185379028, 0.5, 0.5, 0.0, 1.0, 148.4131622314453],
                   [0.5, 0.8807970285415649, 0.5, 0.5, 1.0, 2.7182817459106445, 1.0])
# The same for jnp.logaddexp2 (2**(x - out) per argument).
LOGADDEXP2_GRADS = ([0.5, 0.20000001788139343, 0.5, 0.5, 0.0, 1.0, 32.0],
                    [0.5, 0.8000000715255737, 0.5, 0.5, 1.0, 2.0, 1.0])


def _pair_grads(fun):
    return jax.vmap(jax.grad(lambda a, b: fun(a, b), (0, 1)))(XS, YS)


@pytest.mark.parametrize("fun,expected", [(jnp.logaddexp, LOGADDEXP_GRADS),
                                          (jnp.logaddexp2, LOGADDEXP2_GRADS)])
def test_logaddexp_derivative_is_jaxs_also_where_arguments_tie(fun, expected):
    # The formula max + log1p(exp(-|x - y|)) differentiated as written gives 0 and 1 at a
    # tie (|.|' is 1 at 0); JAX declares a rule that gives each argument one half. This
    # zeroed the softplus(0) gradients of the Gaussian-process example.
    for got, want in zip(_pair_grads(fun), expected):
        np.testing.assert_allclose(np.asarray(got), np.float32(want), rtol=2e-7)
    jitted = jax.jit(jax.grad(lambda a: jnp.sum(fun(a, YS))))(XS)
    np.testing.assert_allclose(np.asarray(jitted), np.float32(expected[0]), rtol=2e-7)


def test_softplus_and_second_derivative_at_zero():
    # JAX 0.10.2: jax.grad(jax.nn.softplus)(0.) == 0.5; grad of grad of logaddexp(x, 0) at
    # 0 == 0.25 (the logistic density at 0).
    assert float(jax.grad(jax.nn.softplus)(0.0)) == 0.5
    assert float(jax.grad(lambda x: jnp.logaddexp(x, 0.0))(0.0)) == 0.5
    assert float(jax.grad(jax.grad(lambda x: jnp.logaddexp(x, 0.0)))(0.0)) == 0.25
    assert float(jax.grad(lambda x: jnp.logaddexp(0.0, x))(0.0)) == 0.5


def test_logaddexp_values_unchanged_and_complex_as_jax():
    out = jnp.logaddexp(jnp.array([1., INF, -INF, np.nan]), jnp.array([1., INF, -INF, 0.]))
    np.testing.assert_array_equal(np.asarray(out), np.float32([1 + np.log(2), INF, -INF,
                                                               np.nan]))
    np.testing.assert_allclose(np.asarray(jnp.logaddexp(XS[:4], YS[:4])),
                               np.logaddexp(XS[:4], YS[:4]), rtol=1e-6)
    # JAX 0.10.2 takes complex arguments (imaginary part wrapped into [-pi, pi)):
    # jnp.logaddexp(1+1j, 2.), jnp.logaddexp2(1+1j, 2.), jnp.logaddexp(3+5j, 3-4j).
    for got, want in ((jnp.logaddexp(1 + 1j, 2.0), 2.2135701179504395 + 0.25271129608154297j),
                      (jnp.logaddexp2(1 + 1j, 2.0), 2.5069057941436768 + 0.32715511322021484j),
                      (jnp.logaddexp(3 + 5j, 3 - 4j), 2.136281967163086 - 2.6415927410125732j)):
        assert got.dtype == np.complex64
        np.testing.assert_allclose(complex(got), want, rtol=1e-6)


# Seven points and targets of the Gaussian-process example (random.uniform and
# random.normal of PRNGKey(0), as JAX 0.10.2 draws them).
GP_X = np.float32([4.790668, 4.9143195, 2.329166, 2.8746738, 3.2795548, 1.6620121,
                   2.2407784])[:, None]
GP_Y = np.float32([-0.8346735, -0.7771547, 0.6825988, 0.2558989, -0.11991586, 0.89863384,
                   0.73430294])[:, None]


def _gp_negative_marginal_likelihood(params, x, y):
    softplus = lambda v: jnp.logaddexp(v, 0.0)
    noise, amp, scale = (softplus(params[k]) for k in ("noise", "amplitude", "lengthscale"))
    y = y - jnp.mean(y)
    x = x / scale
    squared = lambda a, b: jnp.exp(-jnp.sum((a - b) ** 2))
    cov = jax.vmap(lambda a: jax.vmap(lambda b: squared(a, b))(x))(x)
    cov = amp * cov + jnp.eye(x.shape[0]) * (noise + 1e-6)
    chol = jsp.linalg.cholesky(cov, lower=True)
    alpha = jsp.linalg.solve_triangular(chol.T, jsp.linalg.solve_triangular(chol, y, lower=True))
    fit = -0.5 * jnp.dot(y.T, alpha) - jnp.sum(jnp.log(jnp.diag(chol)))
    prior = -0.5 * jnp.log(2 * 3.1415) - jnp.log(amp) ** 2
    return -jnp.sum(fit - x.shape[0] / 2.0 * jnp.log(2.0 * 3.1415) - prior)


def test_gaussian_process_hyperparameter_gradient_as_jax():
    # JAX 0.10.2, this function with amplitude = lengthscale = 0 and noise = -5 (shape
    # (1, 1) each): value 1.5976763, grads amplitude 1.7953899, lengthscale -2.6272063,
    # noise 0.5073086 (jit: 1.795387, -2.627205, 0.5073087). The Cholesky solves of a
    # covariance with noise 0.0067 cost a few float32 digits: compared at 2e-5.
    params = {"amplitude": jnp.zeros((1, 1)), "noise": jnp.zeros((1, 1)) - 5.0,
              "lengthscale": jnp.zeros((1, 1))}
    value = _gp_negative_marginal_likelihood(params, GP_X, GP_Y)
    np.testing.assert_allclose(float(value), 1.5976763, rtol=1e-5)
    expected = {"amplitude": 1.7953899, "lengthscale": -2.6272063, "noise": 0.5073086}
    for grad_fun in (jax.grad(_gp_negative_marginal_likelihood),
                     jax.jit(jax.grad(_gp_negative_marginal_likelihood))):
        grads = grad_fun(params, GP_X, GP_Y)
        for name, want in expected.items():
            assert grads[name].shape == (1, 1)
            np.testing.assert_allclose(float(grads[name][0, 0]), want, rtol=2e-5)


def test_static_index_past_the_end_clamps_as_in_jax():
    # JAX's control example reads spec.Q[T + 1] of an axis of length T + 1 (inside
    # fori_loop and eagerly); JAX clamps a static integer as its gathers do (numpy raises).
    # JAX 0.10.2: x[4] -> x[3], x[-5] -> x[0], x[1, 7] -> 5.0, x.at[5].get() -> x[3].
    x = jnp.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(np.asarray(x[4]), [9.0, 10.0, 11.0])
    np.testing.assert_array_equal(np.asarray(x[-5]), [0.0, 1.0, 2.0])
    assert float(x[1, 7]) == 5.0
    np.testing.assert_array_equal(np.asarray(x[10, None]), [[9.0, 10.0, 11.0]])
    np.testing.assert_array_equal(np.asarray(x.at[5].get()), [9.0, 10.0, 11.0])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a[4, 1:])(x)), [10.0, 11.0])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda r: r[5])(x)), [2.0, 5.0, 8.0, 11.0])
    grad = jax.grad(lambda a: a[9].sum())(x)
    np.testing.assert_array_equal(np.asarray(grad), np.float32([[0] * 3] * 3 + [[1] * 3]))
    # scatters still drop an out-of-bounds static index, as JAX's default mode does
    np.testing.assert_array_equal(np.asarray(x.at[4].set(-1.0)), np.asarray(x))
    with pytest.raises(IndexError, match="index is out of bounds for axis 0 with size 0"):
        jnp.zeros((0, 3))[0]

    def last_rows(carry_and_q):
        q = carry_and_q[1]
        return lax.fori_loop(0, 2, lambda i, c: (c[0] + q[q.shape[0]], q), carry_and_q)[0]

    q = jnp.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(np.asarray(last_rows((jnp.zeros(2), q))), [8.0, 10.0])


def test_private_util_names_of_the_optimizers_example():
    # JAX's examples/optimizers.py: `from jax._src.util import safe_zip, safe_map, unzip2`
    # (values as JAX 0.10.2 gives them).
    from jaxlite.compat._src import util

    assert util.safe_zip([1, 2], "ab") == [(1, "a"), (2, "b")]
    assert util.safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    assert util.unzip2([(1, 2), (3, 4)]) == ((1, 3), (2, 4))
    with pytest.raises(ValueError):
        util.safe_zip([1], [1, 2])
