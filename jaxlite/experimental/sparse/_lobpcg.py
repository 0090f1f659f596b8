"""LOBPCG for the largest eigenpairs of a symmetric operator (mirrors
`jax.experimental.sparse.linalg.lobpcg_standard`).

LOBPCG (Knyazev, 2001) keeps a block `X` of `k` approximate eigenvectors, the previous
search directions `P` and the residuals `R = A X - X diag(theta)`; each step solves the
small Rayleigh-Ritz problem on the span of `[X, P, R]` and keeps its top `k` Ritz vectors.
As in JAX, the basis is kept orthonormal throughout, with the SVQB orthonormalization of
Duersch, Shao, Yang and Gu (2018): columns that turn out numerically dependent are zeroed
rather than amplified. A pair has converged when its residual norm is below
`tol * 10 * n * (theta + |A x|)`; the loop stops when all `k` have, or after `m` steps.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.runtime.array import Array
from jaxlite.transforms.jit import jit

_HIGHEST = (lax.Precision.HIGHEST, lax.Precision.HIGHEST)


def _dot(a: Any, b: Any) -> Any:
    return lax.dot(a, b, precision=_HIGHEST)


def _column_norms(x: Any) -> Any:
    return jnp.linalg.norm(x, ord=2, axis=0, keepdims=True)


def _eigh_descending(matrix: Any) -> tuple[Any, Any]:
    values, vectors = jnp.linalg.eigh(matrix)
    return values[::-1], vectors[:, ::-1]


def _svqb(x: Any) -> Any:
    """An orthonormal basis of `x`'s columns through the eigenvectors of its Gram matrix;
    directions whose Gram eigenvalue is below eps times the largest become zero columns."""
    norms = _column_norms(x)
    x = x / jnp.where(norms == 0, 1.0, norms)
    gram = _dot(x.T, x)
    values, vectors = _eigh_descending(gram)
    floor = jnp.finfo(x.dtype).eps * values[0]
    inv_sqrt = jnp.where(floor > 0, jnp.maximum(values, floor), 1.0) ** -0.5
    basis = _dot(x, vectors * inv_sqrt[None, :])
    keep = ((values > floor) * (jnp.diag(gram) > 0.0))[None, :]
    basis = basis * keep.astype(basis.dtype)
    norms = _column_norms(basis)
    keep = keep * (norms > 0.0)
    return basis / jnp.where(keep, norms, 1.0)


def _orthonormalize(x: Any) -> Any:
    return _svqb(_svqb(x))


def _remove_span(basis: Any, u: Any) -> Any:
    """`u`'s part orthogonal to the orthonormal `basis` (zero columns allowed), made
    orthonormal; columns that were (almost) inside the span become zero."""
    for _ in range(2):
        u = _orthonormalize(u - _dot(basis, _dot(basis.T, u)))
    for _ in range(2):
        u = u - _dot(basis, _dot(basis.T, u))
    return u * (_column_norms(u) >= 0.99).astype(u.dtype)


def _complement_directions(x: Any, count: int) -> Any:
    """`count` orthonormal columns orthogonal to the orthonormal `x` (n, k), chosen
    deterministically: the block Householder reflector that maps `x` onto the first `k`
    unit vectors, applied to the next `count` unit vectors."""
    n, k = x.shape
    top, rest = x[:k], x[k:]
    u, s, vt = jnp.linalg.svd(top)
    y = jnp.concatenate([top + _dot(u, vt), rest], axis=0)
    w = _dot(y, vt.T * ((2 * (1 + s)) ** -0.5)[None, :])
    units = jnp.concatenate([jnp.eye(count, dtype=x.dtype),
                             jnp.zeros((n - k - count, count), dtype=x.dtype)], axis=0)
    reflected = -2 * _dot(w, _dot(w[k:].T, units))
    return reflected.at[k:].add(units)


def _check(operator: Callable[[Any], Any], x: Any) -> None:
    n, k = x.shape
    if k == 0:
        raise ValueError(f"must have search dim > 0, got {k}")
    if k * 5 >= n:
        raise ValueError(f"expected search dim * 5 < matrix dim (got {k * 5}, {n})")
    probe = operator(jnp.zeros((n, 1), dtype=x.dtype))
    if probe.dtype != x.dtype:
        raise ValueError(f"A, X must have same dtypes (were {probe.dtype}, {x.dtype})")
    if probe.shape != (n, 1):
        raise ValueError(f"A must be ({n}, {n}) matrix A, got output {probe.shape}")


def _lobpcg_loop(operator: Callable[[Any], Any], x: Any, m: int, tol: Any) -> Any:
    n, k = x.shape
    _check(operator, x)
    if tol is None:
        tol = float(jnp.finfo(x.dtype).eps)
    x = _orthonormalize(x)
    p = _complement_directions(x, k)
    ax = operator(x)
    theta = jnp.sum(x * ax, axis=0, keepdims=True)
    residual = ax - theta * x

    def not_done(state: Any) -> Any:
        step, _, _, _, converged, _ = state
        return jnp.logical_and(step < m, converged < k)

    def iterate(state: Any) -> Any:
        step, x, p, residual, _, _ = state
        residual = _remove_span(jnp.concatenate((x, p), axis=1), residual)
        span = jnp.concatenate((x, p, residual), axis=1)
        ritz_values, ritz_vectors = _eigh_descending(_dot(span.T, operator(span)))
        kept = ritz_vectors[:, :k]
        x = _dot(span, kept / _column_norms(kept))
        x = x / _column_norms(x)
        # The new directions: the part of the other Ritz vectors that moves the kept ones.
        q, _ = jnp.linalg.qr(ritz_vectors[:k, k:].T)
        p = _dot(span, _dot(ritz_vectors[:, k:], q))
        p_norms = _column_norms(p)
        p = p / jnp.where(p_norms == 0, 1.0, p_norms)
        ax = operator(x)
        residual = ax - ritz_values[None, :k] * x
        bound = tol * 10 * n * (jnp.linalg.norm(ax, ord=2, axis=0) + ritz_values[:k])
        converged = jnp.sum(jnp.linalg.norm(residual, ord=2, axis=0) < bound)
        return step + 1, x, p, residual, converged, ritz_values[None, :k]

    state = lax.while_loop(not_done, iterate, (0, x, p, residual, 0, theta))
    steps, x, _, _, _, theta = state
    return theta[0, :], x, steps


_lobpcg = jit(_lobpcg_loop, static_argnames=("operator", "m"))


def lobpcg_standard(A: Any, X: Any, m: int = 100, tol: Any = None) -> tuple[Any, Any, Any]:
    """The `k` largest eigenvalues and their eigenvectors of the symmetric `A` (an
    `(n, n)` array, or a function applying it to an `(n, j)` block), starting from the
    `(n, k)` block `X`, `5 k < n` (mirrors
    `jax.experimental.sparse.linalg.lobpcg_standard`).

    Returns `(theta, U, i)`: eigenvalues in descending order, the eigenvectors as
    columns, and the number of iterations run (at most `m`). `tol` defaults to the
    dtype's epsilon. No derivatives, as in JAX."""
    if isinstance(A, (Array, np.ndarray)):
        return _lobpcg_with_matrix(A, X, m, tol)
    return _lobpcg(A, X, m, tol)


@functools.partial(jit, static_argnames=("m",))
def _lobpcg_with_matrix(a: Any, x: Any, m: int, tol: Any) -> Any:
    return _lobpcg_loop(functools.partial(_dot, a), x, m, tol)
