"""Conjugate gradients and BiCGSTAB (mirror `jax.scipy.sparse.linalg.cg` and `bicgstab`).

Both stop when |r|^2 <= max(tol^2 |b|^2, atol^2), r the residual b - A x (also with a
preconditioner M), or after maxiter steps (default 10 per unknown, as scipy). BiCGSTAB
also stops at a breakdown (rho = 0, or omega or alpha = 0), as JAX.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

import jaxlite
import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.scipy.sparse.linalg._trees import (add, as_operator, identity, scale, sub, vdot,
                                               vdot_real)
from jaxlite.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["cg", "bicgstab", "isolve"]


def _cg_solve(A: Callable, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float,
              M: Callable) -> Any:
    atol2 = jnp.maximum(jnp.square(tol) * vdot_real(b, b), jnp.square(atol))
    r0 = sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = jnp.result_type(*tree_leaves(p0))
    gamma0 = vdot_real(r0, z0).astype(dtype)

    def unfinished(value: tuple) -> Any:
        _, r, gamma, _, k = value
        rs = gamma.real if M is identity else vdot_real(r, r)
        return (rs > atol2) & (k < maxiter)

    def step(value: tuple) -> tuple:
        x, r, gamma, p, k = value
        ap = A(p)
        alpha = gamma / vdot_real(p, ap).astype(dtype)
        x = add(x, scale(alpha, p))
        r = sub(r, scale(alpha, ap))
        z = M(r)
        gamma_next = vdot_real(r, z).astype(dtype)
        p = add(z, scale(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1
    return lax.while_loop(unfinished, step, (x0, r0, gamma0, p0, 0))[0]


def _bicgstab_solve(A: Callable, b: Any, x0: Any, *, maxiter: int, tol: float, atol: float,
                    M: Callable) -> Any:
    atol2 = jnp.maximum(jnp.square(tol) * vdot_real(b, b), jnp.square(atol))

    def unfinished(value: tuple) -> Any:
        _, r, *_, k = value
        return (vdot_real(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def step(value: tuple) -> tuple:
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_next = vdot(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = add(r, scale(beta, sub(p, scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_next / vdot(rhat, q)
        s = sub(r, scale(alpha, q))
        exit_early = vdot_real(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega = vdot(t, s) / vdot(t, t)
        x = tree_map(partial(jnp.where, exit_early), add(x, scale(alpha, phat)),
                     add(x, add(scale(alpha, phat), scale(omega, shat))))
        r = tree_map(partial(jnp.where, exit_early), s, sub(s, scale(omega, t)))
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_next == 0, -10, k)  # breakdowns end the loop (k < 0)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    r0 = sub(b, A(x0))
    one = jnp.asarray(1, dtype=jnp.result_type(*tree_leaves(b)))
    start = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(unfinished, step, start)[0]


def _shapes(tree: Any) -> list[tuple[int, ...]]:
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def isolve(solve: Callable, A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5,
           atol: float = 0.0, maxiter: int | None = None, M: Any = None,
           check_symmetric: bool = False) -> tuple[Any, None]:
    """Run `solve` through custom_linear_solve (see the package docstring)."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b, x0 = jaxlite.device_put((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))
    A = as_operator(A)
    M = identity if M is None else as_operator(M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
                         f"{_shapes(b)}")
    solver = partial(solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    symmetric = check_symmetric and all(not jnp.iscomplexobj(leaf)
                                        for leaf in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solver, transpose_solve=solver,
                                symmetric=symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Solve A x = b for Hermitian positive-definite A by conjugate gradients (mirrors
    `jax.scipy.sparse.linalg.cg`). A and the preconditioner M (approximating A^{-1}) are
    functions or matrices; b and x0 pytrees of arrays. Returns (x, None)."""
    return isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                  check_symmetric=True)


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Solve A x = b for general A by BiCGSTAB (mirrors
    `jax.scipy.sparse.linalg.bicgstab`). Returns (x, None)."""
    return isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter,
                  M=M)
