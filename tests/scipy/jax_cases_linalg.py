"""jax.scipy.linalg cases for the JAX agreement harness (see jax_cases.py)."""
from __future__ import annotations

import numpy as np

from jax_cases import JaxCase, normal


def _abs(leaves):
    return [np.abs(x) for x in leaves]


def _spd(name, n, dtype=np.float64):
    x = normal(name, (n, n), dtype)
    return (x @ np.conj(x.T) + n * np.eye(n)).astype(dtype)


A4 = normal("A4", (4, 4))
A3 = normal("A3", (3, 3)) * 0.5
B43 = normal("B43", (4, 3))
B4 = normal("B4", (4,))
C4 = normal("C4", (4, 4), np.complex128)
S4 = _spd("S4", 4)
S4C = _spd("S4C", 4, np.complex128)
BATCH = normal("BATCH", (2, 3, 3))
WIDE = normal("WIDE", (3, 5))
TALL = normal("TALL", (5, 3))
UPPER = np.triu(A4) + 4 * np.eye(4)
INT_MATRIX = np.array([[4, 1], [1, 3]], np.int32)


def _l(name, call, **kw):
    return JaxCase("linalg." + name, call, **kw)


def _lin(J):
    return J.scipy.linalg


CASES = [
    # factorizations and solves
    _l("cholesky/upper", lambda J: _lin(J).cholesky(S4), jit=True),
    _l("cholesky/lower_complex", lambda J: _lin(J).cholesky(S4C, lower=True)),
    _l("cholesky/int", lambda J: _lin(J).cholesky(INT_MATRIX)),
    _l("cho_factor", lambda J: _lin(J).cho_factor(S4, lower=True)[0]),
    _l("cho_solve/vector", lambda J: _lin(J).cho_solve(_lin(J).cho_factor(S4), B4)),
    _l("cho_solve/matrix_lower", lambda J: _lin(J).cho_solve(
        _lin(J).cho_factor(S4, lower=True), B43), jit=True),
    _l("lu_factor", lambda J: _lin(J).lu_factor(A4)),
    _l("lu_solve/trans0", lambda J: _lin(J).lu_solve(_lin(J).lu_factor(A4), B43)),
    _l("lu_solve/trans1", lambda J: _lin(J).lu_solve(_lin(J).lu_factor(A4), B4, trans=1)),
    _l("lu_solve/trans2", lambda J: _lin(J).lu_solve(_lin(J).lu_factor(C4), B43, trans=2)),
    _l("lu_solve/bad_trans", lambda J: _lin(J).lu_solve(_lin(J).lu_factor(A4), B4, trans=3)),
    _l("lu/square", lambda J: _lin(J).lu(A4), jit=True),
    _l("lu/wide_permute_l", lambda J: _lin(J).lu(WIDE, permute_l=True)),
    _l("lu/tall", lambda J: _lin(J).lu(TALL)),
    _l("solve/gen", lambda J: _lin(J).solve(A4, B43)),
    _l("solve/pos", lambda J: _lin(J).solve(S4, B4, assume_a="pos"), jit=True),
    _l("solve/pos_lower_batch", lambda J: _lin(J).solve(
        np.stack([S4, 2 * S4]), B43, assume_a="pos", lower=True)),
    _l("solve/bad_assume", lambda J: _lin(J).solve(A4, B4, assume_a="banded")),
    _l("solve/bad_shape", lambda J: _lin(J).solve(S4, B4[:3], assume_a="pos")),
    _l("solve_triangular/upper", lambda J: _lin(J).solve_triangular(UPPER, B43)),
    _l("solve_triangular/lower_T", lambda J: _lin(J).solve_triangular(
        UPPER.T, B4, trans="T", lower=True)),
    _l("solve_triangular/unit_C", lambda J: _lin(J).solve_triangular(
        C4, B43, trans=2, unit_diagonal=True)),
    _l("solve_triangular/bad_trans", lambda J: _lin(J).solve_triangular(UPPER, B4, trans=5)),
    _l("det", lambda J: _lin(J).det(BATCH)),
    _l("inv", lambda J: _lin(J).inv(A4)),
    # decompositions
    _l("svd/full", lambda J: _lin(J).svd(TALL), gauge=_abs),
    _l("svd/values", lambda J: _lin(J).svd(WIDE, compute_uv=False)),
    _l("eigh/vectors", lambda J: _lin(J).eigh(S4), gauge=_abs),
    _l("eigh/values_upper", lambda J: _lin(J).eigh(A4, lower=False, eigvals_only=True)),
    _l("eigh/b", lambda J: _lin(J).eigh(S4, S4)),
    _l("schur/real", lambda J: _lin(J).schur(A4), gauge=_abs),
    _l("schur/complex", lambda J: _lin(J).schur(A4, output="complex"), gauge=_abs),
    _l("schur/bad_output", lambda J: _lin(J).schur(A4, output="other")),
    _l("rsf2csf", lambda J: _lin(J).rsf2csf(*_lin(J).schur(A4)), gauge=_abs),
    _l("qr/full", lambda J: _lin(J).qr(TALL)),
    _l("qr/economic", lambda J: _lin(J).qr(TALL, mode="economic"), jit=True),
    _l("qr/r", lambda J: _lin(J).qr(WIDE, mode="r")),
    _l("qr/pivoting", lambda J: _lin(J).qr(TALL, pivoting=True, mode="economic")),
    _l("qr/bad_mode", lambda J: _lin(J).qr(TALL, mode="raw")),
    _l("qr_multiply/right", lambda J: _lin(J).qr_multiply(TALL, normal("c5", (2, 5)))),
    _l("qr_multiply/left_vector", lambda J: _lin(J).qr_multiply(
        TALL, normal("c3", (3,)), mode="left")),
    _l("qr_multiply/conjugate", lambda J: _lin(J).qr_multiply(
        C4, normal("c44", (2, 4), np.complex128), conjugate=True)),
    _l("qr_multiply/pivoting", lambda J: _lin(J).qr_multiply(
        WIDE, normal("c33", (3, 2)), mode="left", pivoting=True)),
    _l("qr_multiply/bad_shape", lambda J: _lin(J).qr_multiply(TALL, normal("c4", (2, 4)))),
    _l("hessenberg", lambda J: _lin(J).hessenberg(A4, calc_q=True)),
    _l("hessenberg/complex_batch", lambda J: _lin(J).hessenberg(
        np.stack([C4, C4.T]))),
    _l("polar/right", lambda J: _lin(J).polar(TALL)),
    _l("polar/left", lambda J: _lin(J).polar(WIDE, side="left")),
    _l("polar/svd", lambda J: _lin(J).polar(A4, method="svd", side="left")),
    _l("polar/unsupported", lambda J: _lin(J).polar(WIDE)),
    # matrix functions
    _l("expm/small", lambda J: _lin(J).expm(A3), jit=True),
    _l("expm/large", lambda J: _lin(J).expm(4 * A4)),
    _l("expm/upper", lambda J: _lin(J).expm(np.triu(A4), upper_triangular=True)),
    _l("expm/batch_complex", lambda J: _lin(J).expm(np.stack([C4, 0.1 * C4]))),
    _l("expm/too_many_squarings", lambda J: _lin(J).expm(1e8 * A3, max_squarings=4)),
    _l("expm/not_square", lambda J: _lin(J).expm(TALL)),
    _l("expm_frechet", lambda J: _lin(J).expm_frechet(A3, normal("E3", (3, 3)))),
    _l("expm_frechet/only", lambda J: _lin(J).expm_frechet(
        A3, normal("E3", (3, 3)), compute_expm=False)),
    _l("sqrtm", lambda J: _lin(J).sqrtm(S4)),
    _l("sqrtm/general", lambda J: _lin(J).sqrtm(A4)),
    _l("funm/exp", lambda J: _lin(J).funm(A3, J.numpy.exp)),
    _l("funm/err", lambda J: _lin(J).funm(S4, J.numpy.sqrt, disp=False)),
    _l("solve_sylvester", lambda J: _lin(J).solve_sylvester(S4, _spd("S3", 3), B43)),
    _l("solve_sylvester/eigen", lambda J: _lin(J).solve_sylvester(
        S4, _spd("S3", 3), B43, method="eigen")),
    _l("solve_sylvester/singular", lambda J: _lin(J).solve_sylvester(
        np.eye(2), -np.eye(2), np.ones((2, 2)))),
    _l("eigh_tridiagonal/values", lambda J: _lin(J).eigh_tridiagonal(
        normal("d6", (6,)), normal("e5", (5,)), eigvals_only=True)),
    _l("eigh_tridiagonal/vectors", lambda J: _lin(J).eigh_tridiagonal(
        normal("d6", (6,)), normal("e5", (5,))), gauge=_abs),
    _l("eigh_tridiagonal/select_i", lambda J: _lin(J).eigh_tridiagonal(
        normal("d6", (6,)), normal("e5", (5,)), eigvals_only=True, select="i",
        select_range=(1, 3))),
    _l("eigh_tridiagonal/diagonal", lambda J: _lin(J).eigh_tridiagonal(
        np.array([3.0, 1.0, 2.0]), np.zeros(2)), gauge=_abs),
    _l("eigh_tridiagonal/dtype_mismatch", lambda J: _lin(J).eigh_tridiagonal(
        np.ones(3, np.float32), np.ones(2, np.float64))),
    # special matrices
    _l("block_diag", lambda J: _lin(J).block_diag(A3, np.array([1, 2]), 7.0)),
    _l("block_diag/empty", lambda J: _lin(J).block_diag()),
    _l("block_diag/3d", lambda J: _lin(J).block_diag(BATCH)),
    _l("toeplitz", lambda J: _lin(J).toeplitz(np.arange(3), np.arange(10, 15))),
    _l("toeplitz/complex_default", lambda J: _lin(J).toeplitz(C4[0])),
    _l("toeplitz/batch", lambda J: _lin(J).toeplitz(BATCH[:, 0], BATCH[:, 1])),
    _l("hankel", lambda J: _lin(J).hankel(np.arange(4.0), np.arange(3))),
    _l("hankel/default", lambda J: _lin(J).hankel(np.arange(1, 4))),
    _l("circulant", lambda J: _lin(J).circulant(np.arange(4))),
    _l("leslie", lambda J: _lin(J).leslie(np.array([0.1, 2.0, 1.5]), np.array([0.2, 0.8]))),
    _l("leslie/bad", lambda J: _lin(J).leslie(np.ones(3), np.ones(3))),
    _l("companion", lambda J: _lin(J).companion(np.array([1, -10, 31, -30]))),
    _l("companion/short", lambda J: _lin(J).companion(np.array([1.0]))),
    _l("fiedler", lambda J: _lin(J).fiedler(np.array([1, 4, 12, 45]))),
    _l("fiedler_companion", lambda J: _lin(J).fiedler_companion(
        np.array([1.0, -2.0, 3.0, -4.0, 5.0, 6.0]))),
    _l("fiedler_companion/two", lambda J: _lin(J).fiedler_companion(np.array([2.0, 3.0]))),
    _l("convolution_matrix/full", lambda J: _lin(J).convolution_matrix(
        np.array([1.0, 2.0, 3.0]), 4)),
    _l("convolution_matrix/same", lambda J: _lin(J).convolution_matrix(
        np.array([1.0, 2.0, 3.0, 4.0]), 3, mode="same")),
    _l("convolution_matrix/valid", lambda J: _lin(J).convolution_matrix(
        np.array([1, 2, 3]), 5, mode="valid")),
    _l("hilbert", lambda J: _lin(J).hilbert(4)),
    _l("invhilbert", lambda J: _lin(J).invhilbert(4), rtol={"x32": 1e-4, "x64": 1e-10}),
    _l("pascal", lambda J: _lin(J).pascal(5)),
    _l("pascal/lower", lambda J: _lin(J).pascal(4, kind="lower")),
    _l("invpascal", lambda J: _lin(J).invpascal(4), rtol={"x32": 1e-4, "x64": 1e-10}),
    _l("invpascal/upper", lambda J: _lin(J).invpascal(4, kind="upper"),
       rtol={"x32": 1e-4, "x64": 1e-10}),
    _l("pascal/bad_kind", lambda J: _lin(J).pascal(3, kind="left")),
    _l("helmert", lambda J: _lin(J).helmert(4)),
    _l("helmert/full", lambda J: _lin(J).helmert(3, full=True)),
    _l("hadamard", lambda J: _lin(J).hadamard(4)),
    _l("hadamard/float", lambda J: _lin(J).hadamard(2, dtype=np.float32)),
    _l("hadamard/bad", lambda J: _lin(J).hadamard(6)),
    _l("dft", lambda J: _lin(J).dft(3)),
    _l("dft/sqrtn", lambda J: _lin(J).dft(4, scale="sqrtn")),
    _l("dft/bad_dtype", lambda J: _lin(J).dft(4, dtype=np.float32)),
]
