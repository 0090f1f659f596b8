"""eigh_tridiagonal (mirrors `jax.scipy.linalg.eigh_tridiagonal`): eigenvalues of a
Hermitian tridiagonal matrix by bisection on Sturm counts, eigenvectors by inverse
iteration, as JAX computes them.

Bisection (Kahan's method as in LAPACK's stebz): the number of eigenvalues below x is the
number of non-positive pivots of the LDL^T factorization of T - x I, q_0 = d_0 - x,
q_i = d_i - e_{i-1}^2 / q_{i-1} - x, pivots kept away from zero by pivmin. Every target
eigenvalue k is bracketed in the Gershgorin interval, widened a little, and the brackets
are halved until they are narrower than eps |T| (or `tol`), at most mantissa-bits + 1
times. Inverse iteration (as LAPACK's stein) starts from random unit vectors (from
`key`, default random.key(42), so the signs of the vectors are JAX's), solves
(T - lambda_k I) v = v with perturbed pivots up to 5 times while the norms still grow by
10%, and orthonormalizes clusters of close eigenvalues (closer than sqrt(eps) |T|) by QR.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite import random
from jaxlite.core import dtypes
from jaxlite.lax import linalg as lax_linalg

__all__ = ["eigh_tridiagonal"]

SUPPORTED = tuple(np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128))
BISECTION_FUDGE = 2.1  # widening of the Gershgorin interval, as LAPACK's stebz
INVERSE_ITERATIONS = 5  # LAPACK's stein
MIN_NORM_GROWTH = 0.1


def _sturm_counts(alpha: Any, beta_sq: Any, pivmin: Any, perturbation: Any, x: Any) -> Any:
    """How many eigenvalues of T lie below each x (int32), from the signs of the pivots of
    T - x I."""
    n = alpha.shape[0]
    q = alpha[0] - x
    count = jnp.where(q < 0, 1, 0).astype(np.int32)
    q = jnp.where(alpha[0] == x, perturbation, q)

    def step(i: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
        q, count = state
        q = alpha[i] - beta_sq[i - 1] / q - x
        small = q <= pivmin
        return jnp.where(small, jnp.minimum(q, -pivmin), q), count + small.astype(np.int32)
    return lax.fori_loop(1, n, step, (q, count))[1]


def _target_counts(n: int, select: str, select_range: Any) -> Any:
    if select == "a":
        return jnp.arange(n, dtype=np.int32)
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        return jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")


def _bisect(alpha: Any, beta_abs: Any, beta_sq: Any, targets: Any, tol: Any) -> Any:
    """The eigenvalues whose indices (in ascending order) are `targets`."""
    n = alpha.shape[0]
    finfo = np.finfo(alpha.dtype)
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    highest = jnp.max(alpha + row_sums)
    lowest = jnp.min(alpha - row_sums)
    t_norm = jnp.maximum(jnp.abs(lowest), jnp.abs(highest))
    one = np.ones((), alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    slack = jnp.array(n, alpha.dtype) * BISECTION_FUDGE * finfo.eps * t_norm
    shape = targets.shape
    lower = jnp.broadcast_to(lowest - slack - 2 * BISECTION_FUDGE * pivmin, shape)
    upper = jnp.broadcast_to(highest + slack + BISECTION_FUDGE * pivmin, shape)
    pivmin = jnp.broadcast_to(pivmin, shape)
    perturbation = jnp.broadcast_to(perturbation, shape)

    def unfinished(state: tuple) -> Any:
        i, lower, _, upper = state
        return (i < finfo.nmant + 1) & (abs_tol < jnp.max(upper - lower))

    def halve(state: tuple) -> tuple:
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, perturbation, mid)
        lower = jnp.where(counts <= targets, mid, lower)
        upper = jnp.where(counts > targets, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper
    start = (0, lower, 0.5 * (upper + lower), upper)
    return lax.while_loop(unfinished, halve, start)[2]


def _orthonormalize_clusters(v: Any, starts: Any, ends: Any, count: Any) -> Any:
    """Replace the rows of v in each cluster [start, end) by an orthonormal basis of their
    span (QR of the cluster's rows)."""
    k, n = v.shape
    rows = jnp.arange(k)

    def one_cluster(i: Any, v: Any) -> Any:
        start, end = starts[i], ends[i]
        inside = (rows < end - start).astype(v.dtype)
        block = lax.dynamic_slice(jnp.pad(v, ((0, k), (0, 0))), (start, 0), (k, n))
        q, _ = jnp.linalg.qr((block * inside[:, None]).T)
        placed = lax.dynamic_update_slice(jnp.zeros((2 * k, n), v.dtype),
                                          q.T * inside[:, None], (start, 0))[:k]
        return jnp.where(((rows >= start) & (rows < end))[:, None], placed, v)
    return lax.fori_loop(0, count, one_cluster, v)


def _eigenvectors(alpha: Any, beta: Any, eigvals: Any, key: Any) -> Any:
    """Rows: the unit eigenvectors of T for `eigvals`, by inverse iteration."""
    n, k = alpha.shape[0], eigvals.shape[0]
    solve_dtype = np.result_type(alpha.dtype, beta.dtype)
    sub = jnp.broadcast_to(jnp.pad(jnp.conj(beta), (1, 0)), (k, n)).astype(solve_dtype)
    sup = jnp.broadcast_to(jnp.pad(beta, (0, 1)), (k, n)).astype(solve_dtype)
    shifted = (alpha[None, :] - eigvals[:, None]).astype(solve_dtype)

    t_norm = jnp.maximum(jnp.abs(eigvals[0]), jnp.abs(eigvals[-1]))
    close = (eigvals[1:] - eigvals[:-1]) < np.sqrt(np.finfo(eigvals.dtype).eps) * t_norm
    left_close = jnp.pad(close, (1, 0), constant_values=False)
    right_close = jnp.pad(close, (0, 1), constant_values=False)
    clusters = k // 2 + 1
    starts = jnp.nonzero(~left_close & right_close, size=clusters)[0]
    ends = jnp.nonzero(left_close & ~right_close, size=clusters)[0] + 1
    count = jnp.sum(~left_close & right_close)

    real = np.finfo(solve_dtype).dtype
    v = random.normal(key, (k, n), dtype=real).astype(solve_dtype)
    v = v / jnp.linalg.norm(v, axis=-1, keepdims=True).astype(solve_dtype)

    def iterate(state: tuple) -> tuple:
        i, v, norm, _ = state
        solved = lax_linalg.tridiagonal_solve(sub, shifted, sup, v[:, :, None],
                                              perturb_singular=True)[..., 0]
        new_norm = jnp.linalg.norm(solved, axis=-1, keepdims=True)
        solved = solved / new_norm.astype(solved.dtype)
        return (i + 1, _orthonormalize_clusters(solved, starts, ends, count),
                new_norm[:, 0], norm)

    def growing(state: tuple) -> Any:
        i, _, norm, old_norm = state
        return (i < INVERSE_ITERATIONS) & jnp.any(norm >= (1 + MIN_NORM_GROWTH) * old_norm)
    start = (0, v, jnp.ones(k, eigvals.dtype), jnp.zeros(k, eigvals.dtype))
    return lax.while_loop(growing, iterate, start)[1]


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None,
                     tol: float | None = None, key: Any = None) -> Any:
    """Eigenvalues (ascending), and eigenvectors as columns unless `eigvals_only`, of the
    Hermitian tridiagonal matrix with diagonal d and off-diagonal e (mirrors
    `jax.scipy.linalg.eigh_tridiagonal`). select='i' with select_range=(lo, hi) keeps the
    eigenvalues of indices lo..hi; select='v' is not implemented, as in JAX. `key` seeds
    the starting vectors of inverse iteration (default random.key(42))."""
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in SUPPORTED:
        raise TypeError(f"Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and "
                        f"{beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        values = jnp.real(alpha)
        return values if eigvals_only else (values, jnp.eye(n, dtype=alpha.dtype))
    if key is None and not eigvals_only:
        key = random.key(42)
    if dtypes.is_complex(alpha.dtype):
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = jnp.abs(beta), jnp.square(beta)
    targets = _target_counts(n, select, select_range)
    values = _bisect(alpha, beta_abs, beta_sq, targets, tol)
    if eigvals_only:
        return values
    return values, _eigenvectors(alpha, beta, values, key).T
