"""jaxlite.scipy.special under transformations: derivatives against finite differences
(check_grads in float64) and, for parameter derivatives JAX defines by series, against
mpmath; JAX's errors where it does not differentiate; jit against eager; vmap against a
loop."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.scipy import special
from jaxlite.test_util import check_grads

mpmath.mp.dps = 30

# name -> (function of float arrays, points) for first-order checks in both modes
SMOOTH = {
    "erfcx": (special.erfcx, [np.array([-1.5, 0.3, 4.0])]),
    "dawsn": (special.dawsn, [np.array([-2.0, 0.4, 3.0])]),
    "expi": (special.expi, [np.array([-2.0, 0.5, 3.0])]),
    "exp1": (special.exp1, [np.array([0.2, 1.5, 6.0])]),
    "expn": (lambda x: special.expn(3, x), [np.array([0.2, 1.5, 6.0])]),
    "spence": (special.spence, [np.array([0.3, 1.0, 2.5])]),
    "gamma": (special.gamma, [np.array([-1.5, 0.7, 4.2])]),
    "loggamma": (special.loggamma, [np.array([0.3, 2.0, 9.0])]),
    "factorial": (special.factorial, [np.array([0.5, 3.0])]),
    "i0": (special.i0, [np.array([-2.0, 0.5, 9.0])]),
    "i1": (special.i1, [np.array([-2.0, 0.5, 9.0])]),
    "gammainc": (special.gammainc, [np.array([0.5, 2.0, 7.0]), np.array([0.3, 2.5, 9.0])]),
    "gammaincc": (special.gammaincc, [np.array([0.5, 2.0]), np.array([0.3, 2.5])]),
    "beta": (special.beta, [np.array([0.5, 2.5]), np.array([1.5, 0.7])]),
    "poch": (special.poch, [np.array([0.5, 2.5]), np.array([1.5, -0.7])]),
    "comb": (special.comb, [np.array([5.5, 9.0]), np.array([2.5, 3.0])]),
    "kl_div": (special.kl_div, [np.array([0.5, 2.5]), np.array([1.5, 0.7])]),
    "rel_entr": (special.rel_entr, [np.array([0.5, 2.5]), np.array([1.5, 0.7])]),
    "boxcox": (special.boxcox, [np.array([0.5, 2.5]), np.array([1.5, -0.7])]),
    "boxcox1p": (special.boxcox1p, [np.array([0.5, 2.5]), np.array([1.5, -0.7])]),
    "owens_t": (special.owens_t, [np.array([0.5, -1.5]), np.array([0.7, 2.0])]),
    "zeta": (special.zeta, [np.array([2.5, 4.0]), np.array([0.5, 3.0])]),
    "betainc_x": (lambda x: special.betainc(2.0, 3.5, x), [np.array([0.1, 0.5, 0.9])]),
    "polygamma_x": (lambda x: special.polygamma(2, x), [np.array([0.5, 3.0])]),
    "hyp1f1": (special.hyp1f1, [np.array([0.5, 1.5]), np.array([1.5, 2.5]),
                                np.array([-3.0, 2.0])]),
    "hyp2f1": (special.hyp2f1, [np.array([0.5, 1.5]), np.array([1.5, -0.5]),
                                np.array([2.5, 3.0]), np.array([-0.7, 0.4])]),
    "sici": (lambda x: special.sici(x)[0] + 2 * special.sici(x)[1],
             [np.array([0.5, 3.0, 12.0])]),
    "fresnel": (lambda x: special.fresnel(x)[0] + 2 * special.fresnel(x)[1],
                [np.array([-0.5, 1.2, 3.0])]),
    "bessel_jn": (lambda z: special.bessel_jn(z, v=3), [np.array([0.5, 3.0, 20.0])]),
    "sph_harm_y": (lambda t, p: jnp.real(special.sph_harm_y(
        np.array([2, 3]), np.array([1, -2]), t, p)) + 3 * jnp.imag(special.sph_harm_y(
            np.array([2, 3]), np.array([1, -2]), t, p)),
                   [np.array([0.4, 2.0]), np.array([0.3, 4.0])]),
    "erfcx_complex": (lambda x: jnp.real(special.erfcx(x + 0.5j)), [np.array([0.3, -1.0])]),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_first_derivatives(name):
    fun, args = SMOOTH[name]
    with jax.enable_x64(True):
        check_grads(fun, args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["gammainc", "zeta", "hyp1f1", "expi", "gamma"])
def test_second_derivatives_in_the_variable(name):
    fun, args = SMOOTH[name]
    last = len(args) - 1

    def in_last(x):
        return fun(*args[:last], x)
    with jax.enable_x64(True):
        check_grads(in_last, [args[last]], order=2, modes=("fwd", "rev"))


def _mp_derivative(fun, args, index):
    def moved(s):
        values = list(args)
        values[index] = s
        return fun(*values)
    return float(mpmath.diff(moved, args[index]))


@pytest.mark.parametrize("args", [(0.7, 2.5, -40.0), (-1.5, 0.8, 3.0), (2.0, 3.0, 0.5)])
def test_hyp1f1_parameter_derivatives_against_mpmath(args):
    with jax.enable_x64(True):
        grads = jax.grad(special.hyp1f1, argnums=(0, 1, 2))(*args)
    for index, g in enumerate(grads):
        np.testing.assert_allclose(g, _mp_derivative(mpmath.hyp1f1, args, index), rtol=1e-12)


# Where the derivatives' series alternate and cancel (a < 0 for x > 0, b - a < 0 for
# x < 0): the float64 sums were off by up to 1.5 (d/da 1F1(-20.5; 25.3; 30) by 6e-5); the
# double-double ones give mpmath's values (a, b, x, d/da, d/db from mpmath.diff, 50 digits).
_HYP1F1_CANCELLING = [
    [-20.5, 25.3, 30.0, 2.7983474840358653e-07, 6.233782117884132e-08],
    [-35.21, 23.57, 18.725, 3.704603430527187e-09, 3.6435762458992583e-09],
    [-42.96, -15.77, 32.195, -9.494381599602053e+18, 2.9141135037814157e+19],
    [-41.08, -8.49, 30.323, 1464106806586158.2, -500606714974760.4],
    [-46.0, -1.76, 7.859, -3477.8361731498558, 317412.25983005704],
    [19.74, -28.73, -58.626, 743.6534234561336, 387576.4332192232],
    [39.47, 3.83, -17.922, -4.938976647866728e-09, 1.4994538761371626e-08],
    [23.93, -14.89, -40.968, -6892.281649467571, 41703.42694573897],
]


@pytest.mark.parametrize("a,b,x,d_a,d_b", _HYP1F1_CANCELLING)
def test_hyp1f1_parameter_derivatives_where_their_series_cancel(a, b, x, d_a, d_b):
    with jax.enable_x64(True):
        grads = jax.grad(special.hyp1f1, argnums=(0, 1))(a, b, x)
    np.testing.assert_allclose(grads, [d_a, d_b], rtol=1e-12)


def test_hyp1f1_parameter_derivatives_are_nan_beyond_double_double():
    # d/da: terms 1e22 and more above the sum, no digit known (the float64 sums gave
    # d/da 1F1(-37.14; 54.46; 52.149) = 1.2e6 times mpmath's value)
    a, b, x = np.array([-37.14, -36.2]), np.array([54.46, 2.96]), np.array([52.149, 78.647])
    with jax.enable_x64(True):
        d_a = jax.vmap(jax.grad(special.hyp1f1))(a, b, x)
    assert np.isnan(np.asarray(d_a)).all(), d_a
    exact = _mp_derivative(mpmath.hyp1f1, (-37.14, 54.46, 52.149), 0)
    assert np.isfinite(exact) and exact != 0


@pytest.mark.parametrize("args", [(0.7, 2.5, 1.3, -4.0), (-1.5, 0.8, 3.0, 0.9),
                                  (2.0, -3.0, 4.5, 0.5)])
def test_hyp2f1_parameter_derivatives_against_mpmath(args):
    with jax.enable_x64(True):
        grads = jax.grad(special.hyp2f1, argnums=(0, 1, 2, 3))(*args)
    for index, g in enumerate(grads):
        np.testing.assert_allclose(g, _mp_derivative(mpmath.hyp2f1, args, index), rtol=1e-11)


@pytest.mark.parametrize("a,x", [(0.5, 0.2), (3.0, 5.0), (40.0, 35.0), (1e-3, 2.0)])
def test_incomplete_gamma_derivative_in_a_against_mpmath(a, x):
    def p(s):
        return mpmath.gammainc(s, 0, x, regularized=True)
    expected = float(mpmath.diff(p, a))
    with jax.enable_x64(True):
        np.testing.assert_allclose(jax.grad(special.gammainc)(a, x), expected, rtol=1e-12)
        np.testing.assert_allclose(jax.grad(special.gammaincc)(a, x), -expected, rtol=1e-12)
        density = float(mpmath.exp(-x) * mpmath.power(x, a - 1) / mpmath.gamma(a))
        np.testing.assert_allclose(lax.random_gamma_grad(a, x), -expected / density,
                                   rtol=1e-12)


def test_zeta_derivative_in_x_against_mpmath():
    for x, q in [(2.5, 0.5), (1.2, 3.0), (7.0, 1.0)]:
        expected = float(mpmath.diff(lambda s: mpmath.zeta(s, q), x))
        with jax.enable_x64(True):
            np.testing.assert_allclose(jax.grad(special.zeta)(x, q), expected, rtol=1e-13)


def test_complex_loggamma_derivative():
    z = 1.5 + 2.0j
    with jax.enable_x64(True):
        out, tangent = jax.jvp(special.loggamma, (z,), (1.0 + 0.0j,))
    np.testing.assert_allclose(tangent, complex(mpmath.digamma(z)), rtol=1e-13)


def test_jax_errors_for_missing_derivatives():
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        jax.grad(special.betainc)(2.0, 3.0, 0.5)
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        jax.grad(lax.polygamma)(1.0, 2.0)
    with pytest.raises(NotImplementedError):
        jax.grad(jax.grad(special.gammainc))(2.0, 1.0)


JIT_CASES = {name: SMOOTH[name] for name in
             ("gammainc", "zeta", "hyp1f1", "hyp2f1", "expi", "owens_t", "bessel_jn",
              "sph_harm_y", "sici", "gamma", "comb", "kl_div")}


@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_jit_matches_eager(name):
    fun, args = JIT_CASES[name]
    with jax.enable_x64(True):
        np.testing.assert_array_equal(jax.jit(fun)(*args), fun(*args))


@pytest.mark.parametrize("name", ["gammainc", "hyp2f1", "bessel_jn", "sph_harm_y"])
def test_vmap_matches_loop(name):
    fun, args = JIT_CASES[name]
    with jax.enable_x64(True):
        batched = jax.vmap(fun)(*args)
        looped = np.stack([np.asarray(fun(*(a[i] for a in args)))
                           for i in range(len(args[0]))])
        np.testing.assert_allclose(batched, looped, rtol=1e-15)


def test_vmap_of_grad_of_hyp1f1_parameters():
    a = np.array([0.5, 2.0, -1.5])
    with jax.enable_x64(True):
        batched = jax.vmap(jax.grad(special.hyp1f1))(a, np.full(3, 1.5), np.full(3, -2.0))
        looped = [jax.grad(special.hyp1f1)(v, 1.5, -2.0) for v in a]
    np.testing.assert_allclose(batched, looped, rtol=1e-15)
