"""Functions of the singular values: pinv, lstsq, matrix_rank, cond.

Mirror the same names of `jax.numpy.linalg`. Singular values below a cutoff relative to
the largest are treated as zero, with JAX's default cutoffs. `pinv` has a hand-written
derivative, as in JAX (the derivative of the SVD is undefined at repeated singular values,
that of the pseudo-inverse is not, as long as the rank stays the same):

    dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.core.trace import Tracer
from jaxlite.numpy import _math, _reductions
from jaxlite.numpy._promotion import ensure_array
from jaxlite.numpy.linalg._decompositions import svd
from jaxlite.numpy.linalg._norms import norm
from jaxlite.numpy.linalg._solve import inv
from jaxlite.numpy.linalg._util import (adjoint, batched_eye, check_matrix, custom_jvp, eps,
                                        inexact_args, matmul, real_dtype)

__all__ = ["pinv", "lstsq", "matrix_rank", "cond"]


def _keep_above(s: Any, cutoff: Any) -> Any:
    """Where s > cutoff (cutoff broadcast over the last axis of s)."""
    return lax.gt(s, lax.broadcast_in_dim(cutoff, s.shape, tuple(range(s.ndim - 1))))


def _pinv_rule(pinv_of: Any) -> Any:
    def rule(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
        (a,), (da,) = primals, tangents
        p = pinv_of(a)
        m, n = a.shape[-2:]
        da_h, p_h = adjoint(da), adjoint(p)
        first = lax.neg(matmul(matmul(p, da), p))
        left_null = lax.sub(batched_eye(a.shape[:-2] + (m, m), a.dtype), matmul(a, p))
        right_null = lax.sub(batched_eye(a.shape[:-2] + (n, n), a.dtype), matmul(p, a))
        second = matmul(matmul(matmul(p, p_h), da_h), left_null)
        third = matmul(matmul(matmul(right_null, da_h), p_h), p)
        return p, lax.add(first, lax.add(second, third))
    return rule


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """Moore-Penrose pseudo-inverse of each matrix (mirrors `jax.numpy.linalg.pinv`).

    Parameters
    ----------
    a : matrices (..., m, n); the result is (..., n, m).
    rtol : singular values at most rtol * (largest) are treated as zero; default
        10 * max(m, n) * eps of the dtype. May be an array broadcast over the batch.
    hermitian : `a` is Hermitian (computed from its eigen-decomposition).
    rcond : the older name of rtol; give one of the two.
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    (a,) = inexact_args("jnp.linalg.pinv", a)
    check_matrix("pinv", a, ValueError)
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return lax.full(a.shape[:-2] + (n, m), 0, a.dtype)
    real = real_dtype(a.dtype)
    if rtol is None:
        rtol = 10.0 * max(m, n) * eps(a.dtype)
    rtol = lax.convert_element_type(ensure_array(rtol), real)

    def pinv_raw(x: Any) -> Any:
        u, s, vh = svd(x, full_matrices=False, hermitian=hermitian)
        largest = _reductions.max(s, axis=-1, initial=-np.inf)
        kept = _keep_above(s, lax.mul(rtol, largest))
        inverse_s = lax.select(kept, lax.div(lax.full_like(s, 1), s), lax.full_like(s, 0))
        inverse_s = lax.convert_element_type(inverse_s, x.dtype)
        scaled_uh = lax.mul(adjoint(u), lax.expand_dims(inverse_s, (inverse_s.ndim,)))
        return matmul(adjoint(vh), scaled_uh)
    # The rule differentiates through this same function, so higher derivatives reuse it.
    pinv_with_rule = custom_jvp(pinv_raw, _pinv_rule(lambda x: pinv_with_rule(x)))
    return pinv_with_rule(a)


def _lstsq_residuals(a: Any, x: Any, b: Any) -> Any:
    r = lax.sub(b, matmul(a, x))
    return lax.reduce_sum(lax.real(lax.mul(r, lax.conj(r))) if dtypes.is_complex(r.dtype)
                          else lax.mul(r, r), (0,))


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False
          ) -> tuple[Any, Any, Any, Any]:
    """Least-squares solution of a @ x = b (mirrors `jax.numpy.linalg.lstsq`).

    Returns (x, residuals, rank, singular values). `a` is (m, n), `b` (m,) or (m, k).
    Singular values at most rcond * (largest) are treated as zero; rcond defaults to
    eps * max(m, n) (a negative rcond means eps). The residuals are the squared column
    norms of b - a x; with `numpy_resid` they are empty unless rank == n < m, as numpy
    returns them (this needs a concrete rank, so it does not work under jit).
    """
    a, b = inexact_args("jnp.linalg.lstsq", a, b)
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2):
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        "two-dimensional")
    m, n = a.shape
    if b.shape[0] != m:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.ndim == 1
    if vector:
        b = lax.expand_dims(b, (1,))
    real = real_dtype(a.dtype)
    if rcond is None:
        rcond = eps(a.dtype) * max(m, n)
    elif rcond < 0:
        rcond = eps(a.dtype)
    if a.size == 0:
        s = lax.full((0,), 0, real)
        kept = lax.full((0,), False, np.dtype(bool))
        x = lax.full((n, b.shape[1]), 0, a.dtype)
    else:
        u, s, vh = svd(a, full_matrices=False)
        first = lax.index_in_dim(s, 0, keepdims=True)
        kept = lax.ge(s, lax.mul(lax.full_like(first, rcond), first))
        inverse_s = lax.select(kept, lax.div(lax.full_like(s, 1), s), lax.full_like(s, 0))
        uh_b = lax.mul(matmul(adjoint(u), b),
                       lax.expand_dims(lax.convert_element_type(inverse_s, a.dtype), (1,)))
        x = matmul(adjoint(vh), uh_b)
    rank = _reductions.sum(kept)
    if numpy_resid and not _concrete_full_rank(rank, n, m):
        resid = lax.full((0,), 0, real)
    else:
        resid = _lstsq_residuals(a, x, b)
    if vector:
        x = lax.squeeze(x, (1,))
    return x, resid, rank, s


def _concrete_full_rank(rank: Any, n: int, m: int) -> bool:
    if isinstance(rank, Tracer) and rank.concrete_value() is None:
        raise TypeError("jnp.linalg.lstsq: numpy_resid=True needs the rank as a concrete "
                        "value, which it is not under jit or vmap; use numpy_resid=False.")
    return int(np.asarray(rank)) == n and m > n


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:
    """Number of singular values above a cutoff (`jax.numpy.linalg.matrix_rank`).

    The cutoff is max(m, n) * eps * (largest singular value), or, as in JAX, a given rtol
    itself (not scaled); `tol` is the older name of rtol. The count has the default
    integer dtype, except that a 1-d or 0-d input gives int32 (1 unless all zero), as in
    JAX.
    """
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of rtol and tol may be specified.")
        rtol = tol
    (M,) = inexact_args("jnp.linalg.matrix_rank", M)
    if M.ndim < 2:
        return lax.convert_element_type(_reductions.any(lax.ne(M, lax.full_like(M, 0))),
                                         np.dtype(np.int32))
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        largest = _reductions.max(s, axis=-1)  # an empty matrix raises, as in JAX
        cutoff = lax.mul(largest, lax.convert_element_type(max(M.shape[-2:]) * eps(s.dtype),
                                                           s.dtype))
    else:
        # JAX compares the singular values with a given rtol itself, not rtol * largest
        cutoff = lax.convert_element_type(ensure_array(rtol), s.dtype)
    above = lax.gt(s, lax.expand_dims(cutoff, (cutoff.ndim,)))
    return _reductions.sum(above, axis=-1)


def cond(x: Any, p: Any = None) -> Any:
    """Condition number of each matrix in the norm `p` (`jax.numpy.linalg.cond`).

    p None, 2 or -2: a ratio of extreme singular values (any shape); otherwise
    norm(x, p) * norm(inv(x), p) for square x. Singular matrices give inf, except where x
    itself holds a NaN.
    """
    (x,) = inexact_args("jnp.linalg.cond", x)
    check_matrix("jnp.linalg.cond", x, ValueError)
    if 0 in x.shape[-2:]:  # JAX accepts an empty batch of non-empty matrices
        raise ValueError("jnp.linalg.cond: input array must not be empty; got "
                         f"arr.shape={x.shape}")
    if p is None or p == 2 or p == -2:
        s = svd(x, compute_uv=False)
        first = lax.index_in_dim(s, 0, axis=s.ndim - 1, keepdims=False)
        last = lax.index_in_dim(s, s.shape[-1] - 1, axis=s.ndim - 1, keepdims=False)
        return lax.div(last, first) if p == -2 else lax.div(first, last)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got "
                         f"arr.shape={x.shape}")
    r = lax.mul(norm(x, ord=p, axis=(-2, -1)), norm(inv(x), ord=p, axis=(-2, -1)))
    x_has_nan = _reductions.any(_math.isnan(x), axis=(-2, -1))
    return lax.select(lax.bitwise_and(_math.isnan(r), lax.bitwise_not(x_has_nan)),
                      lax.full_like(r, np.inf), r)
