"""Samplers against their distributions: Kolmogorov-Smirnov tests and moments (scipy oracle).

Keys are fixed, so the tests are deterministic; the thresholds leave room for any key.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite import random
from random_cases import DATA, decode, expected, ids

KEY = random.PRNGKey(1701)
N = 20000


def _ks(samples, distribution, *args):
    result = scipy.stats.kstest(np.asarray(samples, np.float64).ravel(), distribution, args)
    assert result.pvalue > 1e-4, f"{distribution}{args}: {result}"


@pytest.mark.parametrize("name,sample,distribution,args", [
    ("uniform", lambda k: random.uniform(k, (N,), minval=-2.0, maxval=3.0), "uniform", (-2, 5)),
    ("normal", lambda k: random.normal(k, (N,)), "norm", ()),
    ("exponential", lambda k: random.exponential(k, (N,)), "expon", ()),
    ("laplace", lambda k: random.laplace(k, (N,)), "laplace", ()),
    ("logistic", lambda k: random.logistic(k, (N,)), "logistic", ()),
    ("gumbel", lambda k: random.gumbel(k, (N,)), "gumbel_r", ()),
    ("gumbel_high", lambda k: random.gumbel(k, (N,), mode="high"), "gumbel_r", ()),
    ("cauchy", lambda k: random.cauchy(k, (N,)), "cauchy", ()),
    ("truncated_normal", lambda k: random.truncated_normal(k, -0.5, 1.5, (N,)),
     "truncnorm", (-0.5, 1.5)),
    ("gamma_small", lambda k: random.gamma(k, 0.4, (4000,)), "gamma", (0.4,)),
    ("gamma_large", lambda k: random.gamma(k, 5.0, (4000,)), "gamma", (5.0,)),
    ("loggamma", lambda k: jnp.exp(random.loggamma(k, 2.0, (4000,))), "gamma", (2.0,)),
    ("beta", lambda k: random.beta(k, 2.0, 0.5, (4000,)), "beta", (2.0, 0.5)),
    ("t", lambda k: random.t(k, 4.0, (4000,)), "t", (4.0,)),
])
def test_continuous_distributions(name, sample, distribution, args):
    _ks(sample(KEY), distribution, *args)


def test_float64_normal_and_uniform():
    with jax.enable_x64(True):
        _ks(random.normal(KEY, (N,)), "norm")
        u = np.asarray(random.uniform(KEY, (N,)))
        assert u.dtype == np.float64 and u.min() >= 0 and u.max() < 1
        # float64 uniforms use 52 random mantissa bits, not 23.
        assert len(np.unique(u * 2**30 % 1)) > N // 2


def test_uniform_bounds_and_low_precision():
    for dtype in (np.float16, jnp.bfloat16, np.float32):
        u = np.asarray(random.uniform(KEY, (N,), dtype, minval=1.0, maxval=2.0))
        assert u.dtype == dtype and u.min() >= 1 and u.max() < 2
        assert abs(u.astype(np.float64).mean() - 1.5) < 0.01


def test_complex_normal_has_unit_variance():
    z = np.asarray(random.normal(KEY, (N,), np.complex64))
    assert z.dtype == np.complex64
    np.testing.assert_allclose([z.real.var(), z.imag.var()], [0.5, 0.5], rtol=0.05)


def test_truncated_normal_stays_inside():
    x = np.asarray(random.truncated_normal(KEY, -0.01, 0.01, (N,)))
    assert np.all((x > -0.01) & (x < 0.01))
    per_element = np.asarray(random.truncated_normal(KEY, jnp.array([0.0, 5.0]),
                                                     jnp.array([1.0, 6.0]), (100, 2)))
    assert np.all((per_element[:, 0] > 0) & (per_element[:, 0] < 1))
    assert np.all((per_element[:, 1] > 5) & (per_element[:, 1] < 6))


def test_randint_range_and_frequencies():
    x = np.asarray(random.randint(KEY, (N,), -3, 4))
    assert x.min() == -3 and x.max() == 3
    counts = np.bincount(x + 3)
    assert scipy.stats.chisquare(counts).pvalue > 1e-4
    full = np.asarray(random.randint(KEY, (N,), 0, 256, np.uint8))
    assert full.dtype == np.uint8 and full.max() == 255 and full.min() == 0
    empty_range = np.asarray(random.randint(KEY, (10,), 5, 2))
    np.testing.assert_array_equal(empty_range, 5)


def test_bernoulli_frequency():
    for mode in ("low", "high"):
        x = np.asarray(random.bernoulli(KEY, 0.3, (N,), mode=mode))
        assert x.dtype == np.bool_ and abs(x.mean() - 0.3) < 0.015
    per_element = np.asarray(random.bernoulli(KEY, jnp.array([0.0, 1.0]), (50, 2)))
    assert not per_element[:, 0].any() and per_element[:, 1].all()


def test_categorical_frequencies():
    probabilities = np.array([0.1, 0.6, 0.3])
    x = np.asarray(random.categorical(KEY, np.log(probabilities), shape=(N,)))
    counts = np.bincount(x, minlength=3)
    assert scipy.stats.chisquare(counts, probabilities * N).pvalue > 1e-4
    batched = np.asarray(random.categorical(KEY, jnp.log(jnp.array([[1.0, 0.0], [0.0, 1.0]]))))
    np.testing.assert_array_equal(batched, [0, 1])


@pytest.mark.skipif(not hasattr(lax, "sort_key_val"), reason="needs lax.sort_key_val")
def test_permutation_and_choice_without_replacement():
    p = np.asarray(random.permutation(KEY, 50))
    np.testing.assert_array_equal(np.sort(p), np.arange(50))
    rows = np.asarray(random.permutation(KEY, jnp.arange(12).reshape(4, 3)))
    np.testing.assert_array_equal(np.sort(rows[:, 0]), [0, 3, 6, 9])
    np.testing.assert_array_equal(rows - rows[:, :1], np.tile([0, 1, 2], (4, 1)))
    c = np.asarray(random.choice(KEY, 30, (10,), replace=False))
    assert len(set(c.tolist())) == 10


def test_choice_with_probabilities():
    p = np.array([0.5, 0.0, 0.2, 0.3])
    x = np.asarray(random.choice(KEY, 4, (N,), p=p))
    counts = np.bincount(x, minlength=4)
    assert counts[1] == 0
    assert scipy.stats.chisquare(counts[[0, 2, 3]], p[[0, 2, 3]] * N).pvalue > 1e-4
    values = np.asarray(random.choice(KEY, jnp.array([10.0, 20.0, 30.0]), (6,)))
    assert set(values.tolist()) <= {10.0, 20.0, 30.0}


@pytest.mark.parametrize("lam", [0.7, 4.0, 30.0])
def test_poisson(lam):
    x = np.asarray(random.poisson(KEY, lam, (N,)))
    assert x.dtype == np.int32 and x.min() >= 0
    assert abs(x.mean() - lam) < 5 * np.sqrt(lam / N)
    assert abs(x.var() / lam - 1) < 0.05
    np.testing.assert_array_equal(random.poisson(KEY, 0.0, (5,)), 0)


def test_dirichlet_moments():
    alpha = np.array([0.5, 2.0, 3.0])
    x = np.asarray(random.dirichlet(KEY, alpha, (4000,)))
    np.testing.assert_allclose(x.sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(x.mean(0), alpha / alpha.sum(), atol=0.01)


def test_gamma_moments_per_element():
    a = np.array([0.2, 1.0, 7.0])
    x = np.asarray(random.gamma(KEY, a, (3000, 3)))
    np.testing.assert_allclose(x.mean(0), a, rtol=0.06)
    np.testing.assert_allclose(x.var(0), a, rtol=0.15)


def test_vmap_matches_a_loop_over_keys():
    keys = random.split(KEY, 3)
    for sample in (lambda k: random.gamma(k, jnp.array([0.5, 3.0])),
                   lambda k: random.poisson(k, jnp.array([2.0, 40.0])),
                   lambda k: random.randint(k, (4,), 0, 10),
                   lambda k: random.categorical(k, jnp.zeros(5), shape=(3,))):
        batched = np.asarray(jax.vmap(sample)(keys))
        np.testing.assert_allclose(batched, np.stack([np.asarray(sample(k)) for k in keys]),
                                   rtol=1e-6)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_covariance(method):
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = np.asarray(random.multivariate_normal(KEY, jnp.array([1.0, -1.0]), cov, (N,),
                                              method=method))
    np.testing.assert_allclose(x.mean(0), [1, -1], atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


def test_orthogonal():
    q = np.asarray(random.orthogonal(KEY, 4, (2,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)


def test_shape_errors():
    with pytest.raises(ValueError, match="broadcast-compatible"):
        random.uniform(KEY, (3,), minval=jnp.zeros(4))
    with pytest.raises(ValueError, match="float"):
        random.normal(KEY, (2,), np.int32)
    with pytest.raises(TypeError, match="integer"):
        random.randint(KEY, (2,), 0, 3, np.float32)
    with pytest.raises(ValueError, match="larger sample"):
        random.choice(KEY, 3, (4,), replace=False)


# ------------------------------------------------------------- the distributions of issue 10

@pytest.mark.parametrize("name,sample,distribution,args", [
    ("pareto", lambda k: random.pareto(k, 3.0, (N,)), "pareto", (3.0,)),
    ("maxwell", lambda k: random.maxwell(k, (N,)), "maxwell", ()),
    ("double_sided_maxwell", lambda k: jnp.abs(random.double_sided_maxwell(k, 1.0, 2.0, (N,))
                                               - 1.0) / 2.0, "maxwell", ()),
    ("weibull_min", lambda k: random.weibull_min(k, 2.0, 1.5, (N,)), "weibull_min",
     (1.5, 0, 2.0)),
    ("generalized_normal", lambda k: random.generalized_normal(k, 1.5, (4000,)), "gennorm",
     (1.5,)),
    ("rayleigh", lambda k: random.rayleigh(k, 2.0, (N,)), "rayleigh", (0, 2.0)),
    ("wald", lambda k: random.wald(k, 0.7, (N,)), "invgauss", (0.7,)),
    ("triangular", lambda k: random.triangular(k, -1.0, 0.5, 2.0, (N,)), "triang",
     (0.5, -1.0, 3.0)),
    ("lognormal", lambda k: random.lognormal(k, 0.6, (N,)), "lognorm", (0.6,)),
    ("chisquare", lambda k: random.chisquare(k, 3.0, (4000,)), "chi2", (3.0,)),
    ("f", lambda k: random.f(k, 4.0, 7.0, (4000,)), "f", (4.0, 7.0)),
])
def test_new_continuous_distributions(name, sample, distribution, args):
    _ks(sample(KEY), distribution, *args)


def test_discrete_distributions_of_issue_10():
    signs = np.asarray(random.rademacher(KEY, (N,)))
    assert set(np.unique(signs)) == {-1, 1} and abs(signs.mean()) < 0.03
    counts = np.asarray(random.geometric(KEY, 0.3, (N,)))
    assert counts.min() >= 1 and counts.dtype == np.int32
    assert abs(counts.mean() - 1 / 0.3) < 0.1
    for n, p in ((12, 0.3), (200, 0.6)):  # inversion and BTRS
        draws = np.asarray(random.binomial(KEY, n, p, (N,)))
        assert draws.dtype == np.float32 and np.all(draws == np.floor(draws))
        assert abs(draws.mean() - n * p) < 0.05 * np.sqrt(n * p) + 0.05
        assert abs(draws.var() / (n * p * (1 - p)) - 1) < 0.05
    multi = np.asarray(random.multinomial(KEY, 30.0, jnp.array([0.2, 0.5, 0.3]), shape=(N, 3)))
    np.testing.assert_array_equal(multi.sum(-1), 30.0)
    np.testing.assert_allclose(multi.mean(0), [6.0, 15.0, 9.0], rtol=0.02)


def test_ball_points_are_uniform_in_the_ball():
    points = np.asarray(random.ball(KEY, 3, shape=(N,)))
    radius = np.linalg.norm(points, axis=-1)
    assert points.shape == (N, 3) and radius.max() <= 1.0
    _ks(radius ** 3, "uniform", 0, 1)  # the volume inside radius r grows as r^3
    l1 = np.abs(np.asarray(random.ball(KEY, 2, 1.0, (1000,)))).sum(-1)
    assert l1.max() <= 1.0


JITTED_GRADS = {"gamma", "truncated_normal", "pareto", "wald", "triangular"}


@pytest.mark.parametrize("case", DATA["grads"], ids=ids(DATA["grads"]))
def test_reparameterized_gradients_as_jax(case):
    values = [decode(a) for a in case["args"]]
    argnum = case["argnum"]

    def objective(param):
        call = list(values)
        call[argnum] = param
        out = getattr(random, case["fn"])(random.PRNGKey(case["seed"]), *call,
                                          **case["kwargs"])
        return jnp.sum(out * jnp.arange(1, out.size + 1, dtype=out.dtype).reshape(out.shape))
    param = jnp.asarray(values[argnum], jnp.float32)
    want = expected(case)
    # Gradients through samples: a few ulps of the sample and of the gradient formulas.
    np.testing.assert_allclose(jax.grad(objective)(param), want, rtol=2e-5, atol=1e-6)
    if case["fn"] in JITTED_GRADS:  # compiling the gamma loops' derivatives takes seconds
        np.testing.assert_allclose(jax.jit(jax.grad(objective))(param), want, rtol=2e-5,
                                   atol=1e-6)
