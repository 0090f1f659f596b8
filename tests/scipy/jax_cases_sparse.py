"""jax.scipy.sparse.linalg cases for the JAX agreement harness (see jax_cases.py)."""
from __future__ import annotations

import numpy as np

from jax_cases import JaxCase, normal


def _spd(n):
    x = normal("spd", (n, n))
    return x @ x.T + n * np.eye(n)


SPD = _spd(6)
GENERAL = normal("general", (6, 6)) + 6 * np.eye(6)
COMPLEX = normal("complex", (5, 5), np.complex128) + 5 * np.eye(5)
B6 = normal("b6", (6,))
B5C = normal("b5c", (5,), np.complex128)
JACOBI = np.diag(1 / np.diag(SPD))


def _s(J):
    return J.scipy.sparse.linalg


def _x(result):
    return result[0]


def _c(name, call, **kw):
    return JaxCase("sparse.linalg." + name, call, rtol={"x32": 1e-4, "x64": 1e-10}, **kw)


CASES = [
    _c("cg/matrix", lambda J: _x(_s(J).cg(SPD, B6)), jit=True),
    _c("cg/function_x0", lambda J: _x(_s(J).cg(lambda v: J.numpy.dot(SPD, v), B6,
                                               x0=np.ones(6), tol=1e-8))),
    _c("cg/preconditioned", lambda J: _x(_s(J).cg(SPD, B6, M=JACOBI, maxiter=3))),
    _c("cg/pytree", lambda J: _x(_s(J).cg(
        lambda t: {"a": 2 * t["a"], "b": 3 * t["b"]},
        {"a": np.array([1.0, 2.0]), "b": np.array([3.0])}))),
    _c("cg/shape_mismatch", lambda J: _s(J).cg(SPD, B6, x0=np.ones(5))),
    _c("cg/not_square", lambda J: _s(J).cg(np.ones((6, 5)), B6)),
    _c("bicgstab/matrix", lambda J: _x(_s(J).bicgstab(GENERAL, B6)), jit=True),
    _c("bicgstab/complex", lambda J: _x(_s(J).bicgstab(COMPLEX, B5C, atol=1e-10))),
    _c("bicgstab/maxiter", lambda J: _x(_s(J).bicgstab(GENERAL, B6, maxiter=2))),
    _c("gmres/batched", lambda J: _s(J).gmres(GENERAL, B6), jit=True),
    _c("gmres/incremental", lambda J: _s(J).gmres(GENERAL, B6, solve_method="incremental")),
    _c("gmres/restart", lambda J: _s(J).gmres(GENERAL, B6, restart=2, maxiter=3)),
    _c("gmres/restart_incremental", lambda J: _s(J).gmres(
        GENERAL, B6, restart=3, solve_method="incremental", tol=1e-3)),
    _c("gmres/preconditioned", lambda J: _s(J).gmres(SPD, B6, M=JACOBI)),
    _c("gmres/complex", lambda J: _s(J).gmres(COMPLEX, B5C, solve_method="incremental")),
    _c("gmres/bad_method", lambda J: _s(J).gmres(GENERAL, B6, solve_method="qr")),
]
