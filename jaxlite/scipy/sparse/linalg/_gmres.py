"""GMRES with restarts (mirrors `jax.scipy.sparse.linalg.gmres`), as JAX computes it.

Each cycle builds an orthonormal Krylov basis V of M A from the preconditioned residual
by Arnoldi steps (classical Gram-Schmidt, repeated once when it lost more than half the
norm), then takes the x0 + V y minimizing the residual:
- solve_method 'batched': `restart` Arnoldi steps (fewer at a breakdown), then y from the
  normal equations of the Hessenberg least-squares problem (a Cholesky solve);
- solve_method 'incremental': the Hessenberg matrix is triangularized by Givens rotations
  as it grows, which gives the residual norm at every step, so the cycle stops as soon as
  it is below the preconditioned tolerance; y by back substitution.
Cycles repeat while the preconditioned residual norm exceeds atol = max(tol |b|, atol),
at most maxiter times.
"""
from __future__ import annotations

from typing import Any, Callable

import jaxlite
import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.scipy.linalg import solve, solve_triangular
from jaxlite.scipy.sparse.linalg._trees import (add, as_operator, identity, norm,
                                               precise_dot, sub)
from jaxlite.tree_util import tree_leaves, tree_map, tree_reduce, tree_structure

__all__ = ["gmres"]


def _safe_normalize(x: Any, thresh: Any = None) -> tuple[Any, Any]:
    """x / |x| and |x|, or zeros and 0 where |x| <= thresh (default eps)."""
    size = norm(x)
    dtype = jnp.result_type(*tree_leaves(x))
    if thresh is None:
        thresh = jnp.finfo(size.dtype).eps
    thresh = jnp.asarray(thresh).astype(dtype).real
    use = size > thresh
    divisor = size.astype(dtype)
    return tree_map(lambda y: jnp.where(use, y / divisor, 0.0), x), jnp.where(use, size, 0.0)


def _project(basis: Any, v: Any) -> Any:
    """The coefficients of v along the columns of the basis (a pytree of (..., n + 1))."""
    parts = tree_map(lambda X, y: jnp.einsum("...n,...->n", X.conj(), y,
                                             precision=lax.Precision.HIGHEST), basis, v)
    return tree_reduce(lambda a, b: a + b, parts)


def _gram_schmidt(basis: Any, x: Any, xnorm: Any, max_iterations: int = 2) -> tuple[Any, Any]:
    """x orthogonalized against the basis, and the coefficients removed; the projection is
    repeated (up to max_iterations times) while it removed more than half of the norm."""
    first = tree_leaves(basis)[0]
    r = jnp.zeros(first.shape[-1], dtype=first.dtype)

    def project_once(carry: tuple) -> tuple:
        k, q, r, qnorm_scaled = carry
        h = _project(basis, q)
        q = sub(q, tree_map(lambda X: precise_dot(X, h), basis))
        r = add(r, h)

        def renormalize(carry: tuple) -> tuple:
            k, _, q, _ = carry
            return k, False, q, _safe_normalize(q)[1] / jnp.sqrt(2.0)
        _, _, q, qnorm_scaled = lax.while_loop(
            lambda c: jnp.logical_and(c[1], c[0] < (max_iterations - 1)), renormalize,
            (k, True, q, qnorm_scaled))
        return k + 1, q, r, qnorm_scaled

    def again(carry: tuple) -> Any:
        k, _, r, qnorm_scaled = carry
        return jnp.logical_and(k < (max_iterations - 1), _safe_normalize(r)[1] < qnorm_scaled)
    carry = project_once((0, x, r, xnorm / jnp.sqrt(2.0)))
    _, q, r, _ = lax.while_loop(again, project_once, carry)
    return q, r


def _arnoldi_step(k: Any, A: Callable, M: Callable, V: Any, H: Any) -> tuple[Any, Any, Any]:
    """Column k + 1 of the basis V and row k of the Hessenberg matrix H (stored
    transposed); breakdown when the new vector vanishes."""
    dtype = jnp.result_type(*tree_leaves(V))
    v = M(A(tree_map(lambda X: X[..., k], V)))
    _, norm_0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v, norm_0)
    unit, norm_1 = _safe_normalize(v, thresh=jnp.finfo(dtype).eps * norm_0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    H = H.at[k, :].set(h.at[k + 1].set(norm_1.astype(dtype)))
    return V, H, norm_1 == 0.0


def _rotate(H: Any, i: Any, cs: Any, sn: Any) -> Any:
    x, y = H[i], H[i + 1]
    return H.at[i].set(cs.conj() * x - sn.conj() * y).at[i + 1].set(sn * x + cs * y)


def _givens(a: Any, b: Any) -> tuple[Any, Any]:
    """(cs, sn) of the rotation that zeroes b against a."""
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _basis(unit_residual: Any, restart: int) -> Any:
    return tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                    unit_residual)


def _restart(A: Callable, b: Any, x: Any, M: Callable) -> tuple[Any, Any, Any]:
    """x, and the unit preconditioned residual and its norm there."""
    unit, size = _safe_normalize(M(sub(b, A(x))))
    return x, unit, size


def _cycle_incremental(A: Callable, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                       ptol: Any, restart: int, M: Callable) -> tuple[Any, Any, Any]:
    V = _basis(unit_residual, restart)
    dtype = jnp.result_type(*tree_leaves(b))
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def step(carry: tuple) -> tuple:
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]), H[k, :])
        factors = _givens(row[k], row[k + 1])
        givens = givens.at[k, :].set(jnp.array(factors))
        R = R.at[k, :].set(_rotate(row, k, *factors))
        beta = _rotate(beta, k, *factors)
        return k + 1, abs(beta[k + 1]), V, R, beta, givens
    carry = lax.while_loop(lambda c: jnp.logical_and(c[0] < restart, c[1] > ptol), step,
                           (0, residual_norm, V, R, beta, givens))
    _, _, V, R, beta, _ = carry
    y = solve_triangular(R[:, :-1].T, beta[:-1])
    return _restart(A, b, add(x0, tree_map(lambda X: precise_dot(X[..., :-1], y), V)), M)


def _cycle_batched(A: Callable, b: Any, x0: Any, unit_residual: Any, residual_norm: Any,
                   ptol: Any, restart: int, M: Callable) -> tuple[Any, Any, Any]:
    del ptol  # the whole cycle runs
    V = _basis(unit_residual, restart)
    dtype = jnp.result_type(*tree_leaves(b))
    H = jnp.eye(restart, restart + 1, dtype=dtype)

    def step(carry: tuple) -> tuple:
        V, H, _, k = carry
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1
    V, H, _, _ = lax.while_loop(lambda c: jnp.logical_and(c[3] < restart, jnp.logical_not(c[2])),
                                step, (V, H, False, 0))
    beta = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
    hessenberg = H.T  # least squares through the normal equations, as JAX
    y = solve(precise_dot(hessenberg.T.conj(), hessenberg),
              precise_dot(hessenberg.T.conj(), beta), assume_a="pos")
    return _restart(A, b, add(x0, tree_map(lambda X: precise_dot(X[..., :-1], y), V)), M)


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched") -> tuple[Any, Any]:
    """Solve A x = b by restarted GMRES (mirrors `jax.scipy.sparse.linalg.gmres`); see the
    module docstring. Returns (x, info), info -1 where x has NaNs, else 0."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    A = as_operator(A)
    M = identity if M is None else as_operator(M)
    b, x0 = jaxlite.device_put((b, x0))
    size = sum(leaf.size for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    b_norm = norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
    cycles = {"incremental": _cycle_incremental, "batched": _cycle_batched}
    if solve_method not in cycles:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' "
                         f"or 'batched'")
    cycle = cycles[solve_method]

    def run(A: Callable, b: Any) -> Any:
        def body(value: tuple) -> tuple:
            x, k, unit, residual = value
            x, unit, residual = cycle(A, b, x, unit, residual, ptol, restart, M)
            return x, k + 1, unit, residual
        _, unit, residual = _restart(A, b, x0, M)
        return lax.while_loop(lambda v: jnp.logical_and(v[1] < maxiter, v[3] > atol), body,
                              (x0, 0, unit, residual))[0]
    x = lax.custom_linear_solve(A, b, solve=run, transpose_solve=run)
    info = jnp.where(jnp.isnan(norm(x)), -1, 0)
    return x, info
