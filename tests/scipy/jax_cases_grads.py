"""Derivatives through jax.scipy functions, for the JAX agreement harness (see
jax_cases.py): gradients and Jacobians recorded from JAX in 64 bits, and the errors JAX
raises where it has no derivative (Schur-based functions, reverse mode through loops)."""
from __future__ import annotations

import numpy as np

from jax_cases import JaxCase, normal

A3 = normal("g_a3", (3, 3)) * 0.5
SPD = (lambda x: x @ x.T + 3 * np.eye(3))(normal("g_spd", (3, 3)))
B3 = normal("g_b3", (3,))
UPPER = np.triu(normal("g_upper", (3, 3))) + 3 * np.eye(3)
SIGNAL = normal("g_signal", (20,))
KERNEL = normal("g_kernel", (4,))
IMAGE = normal("g_image", (4, 5))
COORDS = [np.array([0.5, 1.2, 2.7]), np.array([0.3, 3.5, 1.1])]
ROTVEC = normal("g_rotvec", (3,))


def _g(name, call, **kw):
    kw.setdefault("rtol", {"x64": 1e-9})
    return JaxCase("grad." + name, call, modes=("x64",), **kw)


def _sum(J, f):
    return lambda *args: J.numpy.sum(J.numpy.abs(f(*args)) ** 2)


CASES = [
    _g("linalg.expm", lambda J: J.grad(_sum(J, J.scipy.linalg.expm))(A3)),
    _g("linalg.expm_upper", lambda J: J.jacfwd(lambda a: J.scipy.linalg.expm(
        a, upper_triangular=True))(np.triu(A3))),
    _g("linalg.expm_frechet", lambda J: J.grad(_sum(J, lambda a: J.scipy.linalg.expm_frechet(
        a, np.eye(3), compute_expm=False)))(A3)),
    _g("linalg.solve", lambda J: J.grad(_sum(J, J.scipy.linalg.solve), argnums=(0, 1))(
        SPD, B3)),
    _g("linalg.solve_pos", lambda J: J.grad(_sum(J, lambda a, b: J.scipy.linalg.solve(
        a, b, assume_a="pos")), argnums=(0, 1))(SPD, B3)),
    _g("linalg.cho_solve", lambda J: J.grad(_sum(J, lambda a, b: J.scipy.linalg.cho_solve(
        J.scipy.linalg.cho_factor(a), b)), argnums=(0, 1))(SPD, B3)),
    _g("linalg.lu_solve", lambda J: J.grad(_sum(J, lambda a, b: J.scipy.linalg.lu_solve(
        J.scipy.linalg.lu_factor(a), b, trans=1)), argnums=(0, 1))(SPD, B3)),
    _g("linalg.solve_triangular", lambda J: J.grad(_sum(
        J, lambda a, b: J.scipy.linalg.solve_triangular(a, b, trans="T")), argnums=(0, 1))(
        UPPER, B3)),
    _g("linalg.det_inv", lambda J: J.grad(lambda a: J.scipy.linalg.det(a)
                                          + J.numpy.sum(J.scipy.linalg.inv(a)))(SPD)),
    _g("linalg.cholesky", lambda J: J.grad(_sum(J, J.scipy.linalg.cholesky))(SPD)),
    _g("linalg.eigh_values", lambda J: J.grad(lambda a: J.numpy.sum(
        J.scipy.linalg.eigh(a, eigvals_only=True) ** 3))(SPD)),
    _g("linalg.svd_values", lambda J: J.grad(lambda a: J.numpy.sum(
        J.scipy.linalg.svd(a, compute_uv=False)))(A3)),
    _g("linalg.polar_jvp", lambda J: J.jvp(lambda a: J.scipy.linalg.polar(a)[1], (SPD,),
                                           (A3,))[1]),
    _g("linalg.polar_grad", lambda J: J.grad(_sum(J, lambda a: J.scipy.linalg.polar(a)[0]))(
        SPD)),
    _g("linalg.qr_wide", lambda J: J.jacfwd(lambda a: J.scipy.linalg.qr(a))(
        normal("g_wide", (2, 4)))),
    _g("linalg.qr_full_tall", lambda J: J.jacrev(lambda a: J.scipy.linalg.qr(a))(
        normal("g_tall", (4, 2)))),
    _g("linalg.qr_full_tall_complex", lambda J: J.jacfwd(lambda a: J.scipy.linalg.qr(
        a + 1j * a[::-1]))(normal("g_tall", (4, 2)))),
    _g("linalg.sqrtm", lambda J: J.grad(_sum(J, J.scipy.linalg.sqrtm))(SPD)),
    _g("linalg.toeplitz_block_diag", lambda J: J.grad(_sum(
        J, lambda c: J.scipy.linalg.block_diag(J.scipy.linalg.toeplitz(c), c)))(B3)),
    _g("linalg.eigh_tridiagonal", lambda J: J.grad(lambda d: J.numpy.sum(
        J.scipy.linalg.eigh_tridiagonal(d, B3[:2], eigvals_only=True)))(B3)),
    _g("sparse.cg", lambda J: J.grad(_sum(J, lambda a, b: J.scipy.sparse.linalg.cg(
        a, b, tol=1e-12)[0]), argnums=(0, 1))(SPD, B3)),
    _g("sparse.gmres", lambda J: J.grad(_sum(J, lambda b: J.scipy.sparse.linalg.gmres(
        SPD + A3, b, tol=1e-12)[0]))(B3), rtol={"x64": 1e-7}),
    _g("sparse.bicgstab_jvp", lambda J: J.jvp(lambda b: J.scipy.sparse.linalg.bicgstab(
        SPD + A3, b, tol=1e-12)[0], (B3,), (np.ones(3),))[1], rtol={"x64": 1e-7}),
    _g("fft.dct", lambda J: J.grad(_sum(J, lambda x: J.scipy.fft.dct(x, norm="ortho")))(
        SIGNAL)),
    _g("fft.idctn", lambda J: J.grad(_sum(J, J.scipy.fft.idctn))(IMAGE)),
    _g("signal.convolve", lambda J: J.grad(_sum(J, J.scipy.signal.convolve),
                                           argnums=(0, 1))(SIGNAL, KERNEL)),
    _g("signal.fftconvolve", lambda J: J.grad(_sum(
        J, lambda a, b: J.scipy.signal.fftconvolve(a, b, mode="same")), argnums=(0, 1))(
        SIGNAL, KERNEL)),
    _g("signal.correlate2d", lambda J: J.grad(_sum(J, lambda a: J.scipy.signal.correlate2d(
        a, IMAGE[:2, :2], mode="valid")))(IMAGE)),
    _g("signal.welch", lambda J: J.grad(lambda x: J.numpy.sum(J.scipy.signal.welch(
        x, nperseg=8)[1]))(SIGNAL)),
    _g("signal.stft_istft", lambda J: J.grad(_sum(J, lambda x: J.scipy.signal.istft(
        J.scipy.signal.stft(x, nperseg=8)[2], nperseg=8)[1]))(SIGNAL)),
    _g("ndimage.map_coordinates", lambda J: J.grad(_sum(
        J, lambda img, c: J.scipy.ndimage.map_coordinates(img, [c, COORDS[1]], order=1,
                                                          mode="reflect")),
        argnums=(0, 1))(IMAGE, COORDS[0])),
    _g("interpolate", lambda J: J.grad(_sum(
        J, lambda v, x: J.scipy.interpolate.RegularGridInterpolator(
            (np.arange(4.0), np.arange(5.0)), v)(x)), argnums=(0, 1))(
        IMAGE, np.array([[0.5, 1.5], [2.2, 3.1]]))),
    _g("cluster.vq", lambda J: J.grad(lambda o: J.numpy.sum(J.scipy.cluster.vq.vq(
        o, IMAGE[:2])[1]))(IMAGE)),
    _g("spatial.rotvec", lambda J: J.jacfwd(lambda v: J.scipy.spatial.transform.Rotation
                                            .from_rotvec(v).as_matrix())(ROTVEC)),
    _g("spatial.euler", lambda J: J.grad(lambda v: J.numpy.sum(
        J.scipy.spatial.transform.Rotation.from_rotvec(v).as_euler("zyx")))(ROTVEC)),
    _g("spatial.slerp", lambda J: J.grad(lambda q: J.numpy.sum(
        J.scipy.spatial.transform.Slerp.init(np.array([0.0, 1.0]),
                                             J.scipy.spatial.transform.Rotation.from_quat(q))(
            0.3).as_quat()))(normal("g_quats", (2, 4)))),
    _g("optimize.bfgs", lambda J: J.grad(lambda c: J.scipy.optimize.minimize(
        lambda x: J.numpy.sum((x - c) ** 2), J.numpy.zeros(3), method="BFGS").fun)(B3)),
]
