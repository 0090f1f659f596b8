"""Derivatives of jaxlite.scipy functions against finite differences (jaxlite.test_util.
check_grads in float64), in the modes JAX supports for each: forward and reverse for
closed-form computations and solves, forward only through while loops (polar, minimize
wrt data is not differentiable in reverse mode, as in JAX). Equality with JAX's own
gradients is tested by the "grad." cases of test_jax_agreement.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy as jsp
from jaxlite.test_util import check_grads

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 3)) * 0.5
SPD = A @ A.T + 3 * np.eye(3)
B = RNG.standard_normal(3)
UPPER = np.triu(RNG.standard_normal((3, 3))) + 3 * np.eye(3)
SIGNAL = RNG.standard_normal(16)
KERNEL = RNG.standard_normal(3)
IMAGE = RNG.standard_normal((4, 5))
POINTS = np.array([[0.5, 1.5], [2.2, 3.1], [1.1, 0.4]])
ROTVEC = RNG.standard_normal(3)

BOTH = ("fwd", "rev")


def _sym(a):
    return (a + a.T) / 2
CASES = {
    "expm": (lambda a: jsp.linalg.expm(a), (A,), BOTH),
    "expm_frechet": (lambda a, e: jsp.linalg.expm_frechet(a, e, compute_expm=False),
                     (A, SPD), BOTH),
    "solve": (lambda a, b: jsp.linalg.solve(a, b), (SPD, B), BOTH),
    # Cholesky reads one triangle while its derivative (as JAX's) takes the whole tangent,
    # so these are checked along symmetric directions.
    "solve_pos": (lambda a, b: jsp.linalg.solve(_sym(a), b, assume_a="pos"), (SPD, B), BOTH),
    "cho_solve": (lambda a, b: jsp.linalg.cho_solve(jsp.linalg.cho_factor(_sym(a)), b),
                  (SPD, B), BOTH),
    "lu_solve": (lambda a, b: jsp.linalg.lu_solve(jsp.linalg.lu_factor(a), b, trans=2),
                 (SPD, B), BOTH),
    "solve_triangular": (lambda a, b: jsp.linalg.solve_triangular(a, b, lower=False),
                         (UPPER, B), BOTH),
    "det_inv": (lambda a: jsp.linalg.det(a) * jsp.linalg.inv(a), (SPD,), BOTH),
    "polar": (lambda a: jsp.linalg.polar(a)[0], (SPD + A,), ("fwd",)),
    "toeplitz": (lambda c, r: jsp.linalg.toeplitz(c, r), (B, B[::-1]), BOTH),
    "cg": (lambda a, b: jsp.sparse.linalg.cg(a, b, tol=1e-13)[0], (SPD, B), BOTH),
    "gmres": (lambda b: jsp.sparse.linalg.gmres(SPD + A, b, tol=1e-13)[0], (B,), BOTH),
    "minimize_fwd": (lambda c: jsp.optimize.minimize(
        lambda x: jnp.sum((x - c) ** 2 + 0.1 * x ** 4), jnp.zeros(3), method="BFGS",
        options=dict(gtol=1e-10)).x, (B,), ("fwd",)),
    "dct": (lambda x: jsp.fft.dctn(x, norm="ortho"), (IMAGE,), BOTH),
    "idct": (lambda x: jsp.fft.idct(x, n=20), (SIGNAL,), BOTH),
    "convolve": (lambda x, k: jsp.signal.convolve(x, k, mode="same"), (SIGNAL, KERNEL), BOTH),
    "fftconvolve": (lambda x, k: jsp.signal.fftconvolve(x, k), (SIGNAL, KERNEL), BOTH),
    "welch": (lambda x: jsp.signal.welch(x, nperseg=8)[1], (SIGNAL,), BOTH),
    "stft": (lambda x: jnp.abs(jsp.signal.stft(x, nperseg=8)[2]) ** 2, (SIGNAL,), BOTH),
    "detrend": (lambda x: jsp.signal.detrend(x, bp=[5]), (SIGNAL,), BOTH),
    "trapezoid": (lambda y, x: jsp.integrate.trapezoid(y, x), (SIGNAL, np.cumsum(
        np.abs(SIGNAL))), BOTH),
    "map_coordinates": (lambda img, c: jsp.ndimage.map_coordinates(
        img, [c, jnp.array([0.3, 3.5, 1.1])], order=1, mode="mirror"),
        (IMAGE, np.array([0.5, 1.2, 2.7])), BOTH),
    "interpolate": (lambda v, x: jsp.interpolate.RegularGridInterpolator(
        (np.arange(4.0), np.arange(5.0)), v)(x), (IMAGE, POINTS), BOTH),
    "vq": (lambda o: jsp.cluster.vq.vq(o, IMAGE[:2] + 3)[1], (IMAGE,), BOTH),
    "rotation": (lambda v: jsp.spatial.transform.Rotation.from_rotvec(v).as_quat(),
                 (ROTVEC,), BOTH),
    "euler": (lambda v: jsp.spatial.transform.Rotation.from_rotvec(v).as_euler("xzy"),
              (ROTVEC,), BOTH),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_derivatives_against_finite_differences(name):
    fun, args, modes = CASES[name]
    with jaxlite.enable_x64(True):
        check_grads(fun, args, order=1, modes=modes)
