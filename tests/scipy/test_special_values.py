"""Values of jaxlite.scipy.special against scipy.special inside the functions' domains, in
float64 (under enable_x64) and float32, for the functions added beside the original 17
(those are in test_special.py). Edge values, dtypes and weak types against JAX's recorded
outputs are in test_special_stats_jax.py.

Kernel-backed functions are scipy's values rounded to the dtype, so float64 agrees to a
few ulps and float32 to half an ulp; composed functions (gammasgn, factorial, comb, the
entropies, boxcox, softmax, sph_harm_y, ...) to a few ulps of their operations.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import jaxlite as jax
from jaxlite.scipy import special

RNG = np.random.default_rng(7)
REAL = np.concatenate([np.linspace(-9, 9, 37), RNG.normal(size=10) * 4])
POSITIVE = np.concatenate([np.geomspace(1e-3, 80, 25), RNG.uniform(0.1, 6, 8)])
NONINTEGER = REAL[np.abs(REAL - np.round(REAL)) > 1e-3]
F64, F32 = 2e-14, 1e-6

# name -> (jaxlite function, scipy function, argument grids, float64 rtol)
CASES = {
    "erfcx": (special.erfcx, sp.erfcx, (REAL,), F64),
    "dawsn": (special.dawsn, sp.dawsn, (REAL,), F64),
    "expi": (special.expi, sp.expi, (REAL[REAL != 0],), F64),
    "exp1": (special.exp1, sp.exp1, (POSITIVE,), F64),
    "spence": (special.spence, sp.spence, (POSITIVE,), F64),
    "gamma": (special.gamma, sp.gamma, (NONINTEGER,), F64),
    "gammasgn": (special.gammasgn, sp.gammasgn, (NONINTEGER,), 0),
    "loggamma": (special.loggamma, sp.loggamma, (POSITIVE,), F64),
    "factorial": (special.factorial, lambda n: sp.factorial(n, exact=False),
                  (np.array([0.0, 1, 2, 5, 10.5, 20, 100, 170]),), F64),
    "i0": (special.i0, sp.i0, (REAL,), 4e-15),
    "i1": (special.i1, sp.i1, (REAL,), 4e-15),
    "gammainc": (special.gammainc, sp.gammainc, np.meshgrid(POSITIVE, POSITIVE), F64),
    "gammaincc": (special.gammaincc, sp.gammaincc, np.meshgrid(POSITIVE, POSITIVE), F64),
    "beta": (special.beta, sp.beta, np.meshgrid(NONINTEGER[::4], POSITIVE), F64),
    "poch": (special.poch, sp.poch, np.meshgrid(POSITIVE[::3], NONINTEGER[::5] / 3), F64),
    "kl_div": (special.kl_div, sp.kl_div, np.meshgrid(POSITIVE, POSITIVE), 4e-15),
    "rel_entr": (special.rel_entr, sp.rel_entr, np.meshgrid(POSITIVE, POSITIVE), 4e-15),
    # (both cancel p log p against p log q: absolute errors of eps |p log p| near p = q)
    "boxcox": (special.boxcox, sp.boxcox, np.meshgrid(POSITIVE, REAL[::4] / 4), 1e-13),
    "boxcox1p": (special.boxcox1p, sp.boxcox1p, np.meshgrid(POSITIVE - 0.5, REAL[::4] / 4),
                 1e-13),
    "owens_t": (special.owens_t, sp.owens_t, np.meshgrid(REAL[::3] / 2, REAL[::3] / 2), F64),
    "zeta": (special.zeta, sp.zeta, np.meshgrid(POSITIVE + 1.01, POSITIVE), F64),
    "betainc": (special.betainc, sp.betainc,
                np.meshgrid(POSITIVE[::4], POSITIVE[::4], np.linspace(0, 1, 9)), F64),
    "hyp1f1": (special.hyp1f1, sp.hyp1f1,
               np.meshgrid(np.array([-3.0, -0.5, 0.7, 2.0]), np.array([0.5, 1.5, 4.0]),
                           np.array([-300.0, -20.0, -1.0, 0.3, 5.0, 40.0])), 1e-13),
    "hyp2f1": (special.hyp2f1, sp.hyp2f1,
               np.meshgrid(np.array([-2.0, 0.5, 1.3]), np.array([-0.7, 0.9]),
                           np.array([0.4, 2.5, -1.5]),
                           np.array([-5.0, -0.5, 0.0, 0.3, 0.9, 0.999])), 1e-13),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_against_scipy(name):
    fun, reference, grids, rtol = CASES[name]
    args = [np.asarray(g, np.float64).ravel() for g in grids]
    expected = reference(*args)
    atol = 1e-13 if name in ("kl_div", "rel_entr") else 0
    with jax.enable_x64(True):
        np.testing.assert_allclose(fun(*args), expected, rtol=rtol, atol=atol, equal_nan=True)
    args32 = [a.astype(np.float32) for a in args]
    with np.errstate(over="ignore"):
        expected32 = reference(*[a.astype(np.float64) for a in args32]).astype(np.float32)
    # float32 results are float64 values rounded (kernels) or float32 arithmetic
    # (compositions): relative error near float32's epsilon, absolute near zeros.
    np.testing.assert_allclose(fun(*args32), expected32, rtol=2e-5 if rtol > F64 else F32,
                               atol=max(F32, atol * 1e9), equal_nan=True)  # eps32 / eps64


def test_polygamma_and_multigammaln():
    n = np.array([0, 1, 2, 3, 5])[:, None]
    x = np.concatenate([POSITIVE, NONINTEGER[NONINTEGER < 0][:5]])[None, :]
    with jax.enable_x64(True):
        np.testing.assert_allclose(special.polygamma(n, x), sp.polygamma(n, x), rtol=1e-13)
        for d in (1, 2, 4):
            a = POSITIVE + d
            # sums of lgammas: absolute errors of eps |lgamma| where the sum nears 0
            np.testing.assert_allclose(special.multigammaln(a, d), sp.multigammaln(a, d),
                                       rtol=1e-13, atol=1e-15)


def test_expn_and_sici_and_fresnel():
    with jax.enable_x64(True):
        for n in (0, 1, 2, 7, 30):
            np.testing.assert_allclose(special.expn(n, POSITIVE), sp.expn(n, POSITIVE),
                                       rtol=F64)
        for ours, theirs in zip(special.sici(REAL), sp.sici(REAL)):
            np.testing.assert_allclose(ours, theirs, rtol=F64, atol=1e-300)
        for ours, theirs in zip(special.fresnel(REAL), sp.fresnel(REAL)):
            np.testing.assert_allclose(ours, theirs, rtol=F64)


def test_generalized_expn_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    orders, xs = np.meshgrid(np.array([0.5, 2.5, 7.25]), np.array([1.5, 3.0, 30.0]))
    expected = np.vectorize(lambda n, x: float(mpmath.expint(n, x)))(orders, xs)
    with jax.enable_x64(True):
        np.testing.assert_allclose(special.expn(orders, xs), expected, rtol=1e-13)
        assert np.all(np.isnan(special.expn(np.array([2.5]), np.array([0.5]))))


def test_complex_functions():
    z = np.array([0.3 + 0.2j, 1 + 1j, -2.5 + 0.5j, 3 - 4j, -0.5 - 7j, 12 + 0.1j])
    with jax.enable_x64(True):
        np.testing.assert_allclose(special.wofz(z), sp.wofz(z), rtol=F64)
        np.testing.assert_allclose(special.erfcx(z), sp.erfcx(z), rtol=F64)
        np.testing.assert_allclose(special.gamma(z), sp.gamma(z), rtol=F64)
        np.testing.assert_allclose(special.loggamma(z), sp.loggamma(z), rtol=F64)
    assert special.wofz(np.float32(1.0)).dtype == np.complex64


def test_comb_and_bernoulli():
    n, k = np.meshgrid(np.array([0.0, 1, 5, 10, 30.5, 60]), np.array([0.0, 1, 3, 5.5, 30]))
    with jax.enable_x64(True):
        np.testing.assert_allclose(special.comb(n, k), sp.comb(n, k), rtol=1e-13)
        np.testing.assert_allclose(special.comb(n, k, repetition=True),
                                   sp.comb(n, k, repetition=True), rtol=1e-13)
        np.testing.assert_allclose(special.bernoulli(30), sp.bernoulli(30), rtol=1e-14)


def test_bessel_jn_against_scipy():
    z = np.concatenate([REAL, [0.0, 55.0, 120.0]])
    with jax.enable_x64(True):
        out = special.bessel_jn(z, v=5)
    expected = np.stack([sp.jv(k, z) for k in range(6)])
    assert out.shape == (6,) + z.shape
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-15)


def test_sph_harm_y_against_scipy():
    rng = np.random.default_rng(3)
    n = rng.integers(0, 9, 40)
    m = rng.integers(-9, 10, 40)
    theta, phi = rng.uniform(0, np.pi, 40), rng.uniform(0, 2 * np.pi, 40)
    with jax.enable_x64(True):
        ours = special.sph_harm_y(n, m, theta, phi)
    np.testing.assert_allclose(ours, sp.sph_harm_y(n, m, theta, phi), rtol=1e-12,
                               atol=1e-13)


def test_softmax_and_log_softmax():
    x = RNG.normal(size=(3, 4)) * 5
    with jax.enable_x64(True):
        np.testing.assert_allclose(special.softmax(x), sp.softmax(x), rtol=1e-14)
        np.testing.assert_allclose(special.log_softmax(x, axis=1),
                                   sp.log_softmax(x, axis=1), rtol=1e-14)
