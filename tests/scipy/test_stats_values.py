"""jaxlite.scipy.stats against scipy.stats inside the supports, in float64 and float32;
derivatives of log densities in their parameters (check_grads, float64); jit and vmap.
Edge values, dtypes and weak types against JAX's recorded outputs are in
test_special_stats_jax.py."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import jaxlite as jax
from jaxlite.scipy import stats
from jaxlite.test_util import check_grads

RNG = np.random.default_rng(11)
X = np.concatenate([np.linspace(-4, 4, 17), RNG.normal(size=6) * 2])
POS = np.concatenate([np.geomspace(0.05, 30, 12), RNG.uniform(0.2, 5, 5)])
UNIT = np.linspace(0.02, 0.98, 13)
K = np.arange(0.0, 12.0)

# module -> ((variable, *shape parameters), scipy distribution); every function takes
# loc and scale.
LOC, SCALE = 0.3, 1.7
CONTINUOUS = {
    "beta": ((UNIT, 2.5, 0.7), st.beta),
    "cauchy": ((X,), st.cauchy),
    "chi2": ((POS, 3.5), st.chi2),
    "expon": ((POS,), st.expon),
    "gamma": ((POS, 2.2), st.gamma),
    "gumbel_l": ((X,), st.gumbel_l),
    "gumbel_r": ((X,), st.gumbel_r),
    "laplace": ((X,), st.laplace),
    "logistic": ((X,), st.logistic),
    "norm": ((X,), st.norm),
    "pareto": ((POS + 1, 2.5), st.pareto),
    "t": ((X, 4.5), st.t),
    "truncnorm": ((X / 2, -0.7, 1.9), st.truncnorm),
    "uniform": ((UNIT,), st.uniform),
}
FUNCTIONS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
QUANTILES = ("ppf", "isf")


def _pairs():
    for name in sorted(CONTINUOUS):
        module = getattr(stats, name)
        for function in FUNCTIONS:
            if hasattr(module, function):
                yield name, function


@pytest.mark.parametrize("name,function", list(_pairs()))
def test_continuous_against_scipy(name, function):
    (x, *shape), distribution = CONTINUOUS[name]
    x = UNIT if function in QUANTILES else x * SCALE + LOC
    expected = getattr(distribution(*shape, loc=LOC, scale=SCALE), function)(x)
    ours = getattr(getattr(stats, name), function)
    with jax.enable_x64(True):
        np.testing.assert_allclose(ours(x, *shape, loc=LOC, scale=SCALE), expected,
                                   rtol=2e-13, atol=1e-300)
    x32 = np.asarray(x, np.float32)
    expected32 = getattr(distribution(*shape, loc=LOC, scale=SCALE), function)(
        x32.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(ours(x32, *[np.float32(v) for v in shape], loc=LOC,
                                    scale=SCALE), expected32, rtol=5e-5, atol=1e-6)


DISCRETE = {
    ("bernoulli", "logpmf"): ((np.array([0.0, 1.0, 2.0]), 0.3), st.bernoulli(0.3).logpmf),
    ("bernoulli", "cdf"): ((np.array([-1.0, 0.0, 0.5, 1.0]), 0.3), st.bernoulli(0.3).cdf),
    ("bernoulli", "ppf"): ((UNIT, 0.3), st.bernoulli(0.3).ppf),
    ("binom", "logpmf"): ((K, 9.0, 0.35), st.binom(9, 0.35).logpmf),
    ("betabinom", "logpmf"): ((K, 9.0, 2.5, 0.8), st.betabinom(9, 2.5, 0.8).logpmf),
    ("geom", "logpmf"): ((K + 1, 0.3), st.geom(0.3).logpmf),
    ("nbinom", "logpmf"): ((K, 3.5, 0.4), st.nbinom(3.5, 0.4).logpmf),
    ("poisson", "logpmf"): ((K, 3.7), st.poisson(3.7).logpmf),
    ("poisson", "cdf"): ((K + 0.5, 3.7), st.poisson(3.7).cdf),
}


@pytest.mark.parametrize("key", sorted(DISCRETE))
def test_discrete_against_scipy(key):
    (args, reference) = DISCRETE[key]
    ours = getattr(getattr(stats, key[0]), key[1])
    expected = reference(args[0])
    with jax.enable_x64(True):
        np.testing.assert_allclose(ours(*args), expected, rtol=1e-13, atol=1e-13)
    pmf_name = key[1].replace("log", "")
    if hasattr(getattr(stats, key[0]), pmf_name) and pmf_name != key[1]:
        with jax.enable_x64(True):
            np.testing.assert_allclose(getattr(getattr(stats, key[0]), pmf_name)(*args),
                                       np.exp(expected), rtol=1e-13, atol=1e-300)


def test_other_distributions_against_scipy():
    with jax.enable_x64(True):
        x = np.linspace(-3, 3, 13)
        np.testing.assert_allclose(stats.gennorm.logpdf(x, 1.7), st.gennorm(1.7).logpdf(x),
                                   rtol=1e-13)
        np.testing.assert_allclose(stats.gennorm.cdf(x, 1.7), st.gennorm(1.7).cdf(x),
                                   rtol=1e-13)
        np.testing.assert_allclose(stats.vonmises.logpdf(x, 2.3), st.vonmises(2.3).logpdf(x),
                                   rtol=1e-13)
        theta = np.linspace(0.01, 6.2, 11)
        np.testing.assert_allclose(stats.wrapcauchy.logpdf(theta, 0.4),
                                   st.wrapcauchy(0.4).logpdf(theta), rtol=1e-13)
        alpha = np.array([1.5, 2.0, 0.7])
        simplex = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]).T
        np.testing.assert_allclose(stats.dirichlet.logpdf(simplex, alpha),
                                   st.dirichlet(alpha).logpdf(simplex), rtol=1e-13)
        counts, p = np.array([[1, 2, 0], [0, 1, 2]]), np.array([0.2, 0.5, 0.3])
        np.testing.assert_allclose(stats.multinomial.logpmf(counts[0], 3, p),
                                   st.multinomial(3, p).logpmf(counts[0]), rtol=1e-13)
        mean, cov = np.array([0.1, -0.2]), np.array([[2.0, 0.3], [0.3, 1.0]])
        points = RNG.normal(size=(5, 2))
        np.testing.assert_allclose(stats.multivariate_normal.logpdf(points, mean, cov),
                                   st.multivariate_normal(mean, cov).logpdf(points),
                                   rtol=1e-13)
        np.testing.assert_allclose(stats.multivariate_normal.pdf(points, mean, cov),
                                   st.multivariate_normal(mean, cov).pdf(points), rtol=1e-13)


def test_poisson_entropy_against_mpmath():
    mpmath = pytest.importorskip("mpmath")

    def exact(mu):
        with mpmath.workdps(30):
            total = mpmath.mpf(0)
            for k in range(int(mu + 40 * np.sqrt(mu) + 60)):
                log_p = k * mpmath.log(mu) - mu - mpmath.loggamma(k + 1)
                total -= mpmath.exp(log_p) * log_p
            return float(total)
    mus = np.array([0.3, 4.0, 60.0, 400.0, 2e4])  # the last by the asymptotic series
    with jax.enable_x64(True):
        np.testing.assert_allclose(stats.poisson.entropy(mus), [exact(m) for m in mus],
                                   rtol=1e-13)


def test_summaries_against_scipy():
    data = RNG.integers(0, 5, size=(7, 4)).astype(float)
    with jax.enable_x64(True):
        ours = stats.mode(data, axis=0)
        theirs = st.mode(data, axis=0)
        np.testing.assert_array_equal(ours.mode, theirs.mode)
        np.testing.assert_array_equal(ours.count, theirs.count)
        for method in ("average", "min", "max", "dense", "ordinal"):
            np.testing.assert_array_equal(stats.rankdata(data, method),
                                          st.rankdata(data, method))
        np.testing.assert_allclose(stats.sem(data), st.sem(data), rtol=1e-14)
        np.testing.assert_allclose(stats.sem(data, axis=None, ddof=0),
                                   st.sem(data, axis=None, ddof=0), rtol=1e-14)


def test_gaussian_kde_against_scipy():
    data = RNG.normal(size=(2, 30))
    weights = RNG.uniform(0.5, 2, 30)
    points = RNG.normal(size=(2, 7))
    with jax.enable_x64(True):
        for kwargs in ({}, {"bw_method": "silverman"}, {"weights": weights},
                       {"bw_method": 0.3}):
            ours, theirs = stats.gaussian_kde(data, **kwargs), st.gaussian_kde(data, **kwargs)
            np.testing.assert_allclose(ours(points), theirs(points), rtol=1e-12)
            np.testing.assert_allclose(ours.logpdf(points), theirs.logpdf(points), rtol=1e-12)
            np.testing.assert_allclose(ours.covariance, theirs.covariance, rtol=1e-12)
            np.testing.assert_allclose(
                ours.integrate_gaussian(np.zeros(2), np.eye(2)),
                theirs.integrate_gaussian(np.zeros(2), np.eye(2)), rtol=1e-12)
            other = st.gaussian_kde(data[:, :12])
            np.testing.assert_allclose(
                ours.integrate_kde(stats.gaussian_kde(data[:, :12])),
                theirs.integrate_kde(other), rtol=1e-12)
        one_d = st.gaussian_kde(data[0])
        np.testing.assert_allclose(stats.gaussian_kde(data[0]).integrate_box_1d(-0.5, 1.0),
                                   one_d.integrate_box_1d(-0.5, 1.0), rtol=1e-12)
        kde = stats.gaussian_kde(data)
        samples = kde.resample(jax.random.key(0), (500,))
        assert samples.shape == (2, 500)
        np.testing.assert_allclose(np.mean(samples, axis=1), np.mean(data, axis=1), atol=0.2)
        leaves, tree = jax.tree_util.tree_flatten(kde)
        rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
        np.testing.assert_allclose(jax.jit(lambda k: k(points))(rebuilt), kde(points),
                                   rtol=1e-14)


# log densities and distribution functions differentiated in their parameters
GRADS = {
    "gamma.logpdf": (stats.gamma.logpdf, [np.array([0.7, 3.0]), np.array([1.5, 2.5]),
                                          np.array([0.1, -0.2]), np.array([1.2, 0.8])]),
    "gamma.cdf": (stats.gamma.cdf, [np.array([0.7, 3.0]), np.array([1.5, 2.5])]),
    "beta.logpdf": (stats.beta.logpdf, [np.array([0.3, 0.6]), np.array([1.5, 2.5]),
                                        np.array([0.7, 3.0])]),
    "t.logpdf": (stats.t.logpdf, [np.array([0.3, -1.6]), np.array([1.5, 4.5]),
                                  np.array([0.1, 0.2]), np.array([1.1, 2.0])]),
    "chi2.sf": (stats.chi2.sf, [np.array([0.7, 3.0]), np.array([1.5, 2.5])]),
    "norm.logsf": (stats.norm.logsf, [np.array([0.7, -3.0]), np.array([0.1, 0.2]),
                                      np.array([1.5, 0.5])]),
    "truncnorm.logpdf": (stats.truncnorm.logpdf, [np.array([0.1, 0.5]), np.array([-1.0, 0.2]),
                                                  np.array([1.0, 2.0])]),
    "poisson.logpmf": (lambda mu: stats.poisson.logpmf(np.array([2.0, 5.0]), mu),
                       [np.array([1.5, 6.0])]),
    "nbinom.logpmf": (lambda n, p: stats.nbinom.logpmf(np.array([2.0, 5.0]), n, p),
                      [np.array([1.5, 6.0]), np.array([0.3, 0.6])]),
    "vonmises.logpdf": (stats.vonmises.logpdf, [np.array([0.3, 2.0]), np.array([0.5, 4.0])]),
    "multivariate_normal.logpdf": (
        lambda m: stats.multivariate_normal.logpdf(np.array([0.5, 1.0]), m,
                                                   np.array([[2.0, 0.3], [0.3, 1.0]])),
        [np.array([0.1, -0.2])]),
    "dirichlet.logpdf": (lambda a: stats.dirichlet.logpdf(np.array([0.2, 0.5, 0.3]), a),
                         [np.array([1.5, 2.0, 0.7])]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_parameter_derivatives(name):
    fun, args = GRADS[name]
    with jax.enable_x64(True):
        check_grads(fun, args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["gamma.logpdf", "beta.logpdf", "truncnorm.logpdf",
                                  "multivariate_normal.logpdf"])
def test_jit_and_vmap(name):
    fun, args = GRADS[name]
    with jax.enable_x64(True):
        eager = fun(*args)
        # compiled code contracts multiply-adds: a few ulps
        np.testing.assert_allclose(jax.jit(fun)(*args), eager, rtol=1e-14)
        if np.ndim(eager):
            batched = jax.vmap(fun)(*args)
            looped = [fun(*(a[i] for a in args)) for i in range(len(args[0]))]
            np.testing.assert_allclose(batched, looped, rtol=1e-15)
