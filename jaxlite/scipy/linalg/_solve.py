"""Factorizations for solving and the solves themselves: cholesky, cho_factor, cho_solve,
lu, lu_factor, lu_solve, solve, solve_triangular, det and inv (mirror the same names of
`jax.scipy.linalg`).

They are thin layers over `jaxlite.lax.linalg` and `jaxlite.numpy.linalg` with scipy's
conventions: upper Cholesky factors by default, LAPACK's 0-based pivots, `trans` codes
0/1/2 (or 'N'/'T'/'C'). Right-hand sides broadcast against the matrices' batch
dimensions as in JAX: b of shape (n,) is one vector; b with one dimension fewer than a
and a's last dimension is a batch of vectors (deprecated in JAX, with its FutureWarning);
otherwise b is (..., n, k).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.errors import warn_at_user
from jaxlite.lax import linalg as lax_linalg
from jaxlite.numpy.linalg._util import custom_jvp
from jaxlite.scipy.linalg._util import as_inexact, mT

__all__ = ["cholesky", "cho_factor", "cho_solve", "lu", "lu_factor", "lu_solve", "solve",
           "solve_triangular", "det", "inv"]


def _vector_signature(fun_name: str, a: Any, b: Any, extra: str = "") -> str:
    """The gufunc signature of a solve with matrices `a` and right-hand sides `b`, and
    JAX's deprecation warning for batches of vectors."""
    if b.ndim == 1:
        return f"(n,n){extra},(n)->(n)"
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warn_at_user(
            f"jax.scipy.linalg.{fun_name}: batched 1D solves with b.ndim > 1 are deprecated, "
            f"and in the future will be treated as a batched 2D solve. Use "
            f"{fun_name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
            category=FutureWarning)
        return f"(n,n){extra},(n)->(n)"
    return f"(n,n){extra},(n,k)->(n,k)"


# ------------------------------------------------------------------------ Cholesky

def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor of Hermitian positive-definite matrices: upper U with
    a = U^H U, or lower L with a = L L^H (mirrors `jax.scipy.linalg.cholesky`). Only the
    triangle named by `lower` is read; a matrix that is not positive definite gives NaNs.
    `overwrite_a` and `check_finite` are unused, as in JAX."""
    del overwrite_a, check_finite
    (a,) = as_inexact(a)
    factor = lax_linalg.cholesky(a if lower else jnp.conj(mT(a)), symmetrize_input=False)
    return factor if lower else jnp.conj(mT(factor))


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """(c, lower): the Cholesky factor of `a` for `cho_solve` (mirrors
    `jax.scipy.linalg.cho_factor`; unlike scipy, the other triangle of c is zero)."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _cho_solve_matrix(c: Any, b: Any, *, lower: bool) -> Any:
    solve = dict(left_side=True, lower=lower)
    y = lax_linalg.triangular_solve(c, b, transpose_a=not lower, conjugate_a=not lower,
                                    **solve)
    return lax_linalg.triangular_solve(c, y, transpose_a=lower, conjugate_a=lower, **solve)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """x with a x = b from `cho_factor(a)` (mirrors `jax.scipy.linalg.cho_solve`)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = as_inexact(c, b)
    signature = _vector_signature("cho_solve", c, b)
    return jnp.vectorize(lambda c, b: _cho_solve_matrix(c, b, lower=lower),
                         signature=signature)(c, b)


# ------------------------------------------------------------------------------ LU

def lu_factor(a: Any, overwrite_a: bool = False,
              check_finite: bool = True) -> tuple[Any, Any]:
    """(lu, piv): LU with partial pivoting, L (unit diagonal, not stored) and U packed
    in lu, row i swapped with row piv[i] (mirrors `jax.scipy.linalg.lu_factor`)."""
    del overwrite_a, check_finite
    (a,) = as_inexact(a)
    packed, pivots, _ = lax_linalg.lu(a)
    return packed, pivots


def _inverse_permutation(perm: Any) -> Any:
    _, inverse = lax.sort_key_val(perm, lax.iota(np.int32, perm.shape[0]))
    return inverse


def _lu_solve_matrix(packed: Any, perm: Any, b: Any, *, trans: int) -> Any:
    """x with op(A) x = b for P A = L U packed in `packed`; b is (n, k)."""
    if trans == 0:
        x = jnp.take(b, perm, axis=0)
        x = lax_linalg.triangular_solve(packed, x, left_side=True, lower=True,
                                        unit_diagonal=True)
        return lax_linalg.triangular_solve(packed, x, left_side=True, lower=False)
    conjugate = trans == 2
    x = lax_linalg.triangular_solve(packed, b, left_side=True, lower=False, transpose_a=True,
                                    conjugate_a=conjugate)
    x = lax_linalg.triangular_solve(packed, x, left_side=True, lower=True, unit_diagonal=True,
                                    transpose_a=True, conjugate_a=conjugate)
    return jnp.take(x, _inverse_permutation(perm), axis=0)


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """x with a x = b (trans 0), a^T x = b (1) or a^H x = b (2) from `lu_factor(a)`
    (mirrors `jax.scipy.linalg.lu_solve`)."""
    del overwrite_b, check_finite
    packed, pivots = lu_and_piv
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    packed, b = as_inexact(packed, b)
    perm = lax_linalg.lu_pivots_to_permutation(pivots, packed.shape[-2])
    signature = _vector_signature("lu_solve", packed, b, extra=",(n)")
    matrix_rhs = signature.endswith("(n,k)")

    def solve_one(packed: Any, perm: Any, b: Any) -> Any:
        rhs = b if matrix_rhs else b[:, None]
        x = _lu_solve_matrix(packed, perm, rhs, trans=trans)
        return x if matrix_rhs else x[:, 0]
    return jnp.vectorize(solve_one, signature=signature)(packed, perm, b)


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple[Any, ...]:
    """(p, l, u) with a = p l u, or (p l, u) with `permute_l` (mirrors
    `jax.scipy.linalg.lu`); for a of shape (m, n), l is (m, k) unit lower triangular and u
    (k, n) upper triangular, k = min(m, n); p is a permutation matrix of a's dtype."""
    del overwrite_a, check_finite
    (a,) = as_inexact(a)
    if a.ndim != 2:
        raise ValueError(f"jax.scipy.linalg.lu: a must be a matrix, got shape {a.shape} "
                         f"(JAX unpacks exactly two dimensions too).")
    packed, _, permutation = lax_linalg.lu(a)
    m, n = a.shape
    k = min(m, n)
    p = jnp.real((permutation[None, :] == jnp.arange(m, dtype=permutation.dtype)[:, None])
                 .astype(a.dtype))
    lower_factor = jnp.tril(packed, -1)[:, :k] + jnp.eye(m, k, dtype=a.dtype)
    upper_factor = jnp.triu(packed)[:k, :]
    if permute_l:
        return jnp.matmul(p, lower_factor, precision=lax.Precision.HIGHEST), upper_factor
    return p, lower_factor, upper_factor


# --------------------------------------------------------------------------- solves

def _check_solve_shapes(a: Any, b: Any) -> None:
    if not (a.ndim >= 2 and b.ndim in (a.ndim, a.ndim - 1)
            and a.shape[-1] == a.shape[-2] == b.shape[a.ndim - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={a.shape} and b={b.shape}")


def _solve_positive_impl(a: Any, b: Any, lower: bool) -> Any:
    factor = cholesky(a, lower=lower)
    return jnp.vectorize(lambda c, b: _cho_solve_matrix(c, b, lower=lower),
                         signature="(n,n),(n,k)->(n,k)")(factor, b)


def _positive_solver(lower: bool) -> Any:
    """The Cholesky solve of a x = b for b (..., n, k), with JAX's derivative (that of
    a x = b for the whole matrix a: dx = a^{-1}(db - da x), as lax.custom_linear_solve
    gives in JAX, not the derivative through the triangle the factorization reads)."""
    def impl(a: Any, b: Any) -> Any:
        return _solve_positive_impl(a, b, lower)

    def rule(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
        (a, b), (da, db) = primals, tangents
        x = solver(a, b)
        return x, solver(a, db - jnp.matmul(da, x, precision=lax.Precision.HIGHEST))
    solver = custom_jvp(impl, rule)
    return solver


_POSITIVE_SOLVERS = {lower: _positive_solver(lower) for lower in (False, True)}


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """x with a x = b (mirrors `jax.scipy.linalg.solve`). assume_a 'gen', 'sym' and 'her'
    solve by LU (as JAX does); 'pos' by Cholesky, reading the triangle named by `lower`.
    b is (..., n) or (..., n, k), broadcasting against a's batch dimensions."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a, b = as_inexact(a, b)
    _check_solve_shapes(a, b)
    vector = a.ndim == b.ndim + 1
    rhs = b[..., None] if vector else b
    batch = jnp.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    rhs = jnp.broadcast_to(rhs, batch + rhs.shape[-2:])
    x = _POSITIVE_SOLVERS[bool(lower)](a, rhs)
    return x[..., 0] if vector else x


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     debug: Any = None, check_finite: bool = True) -> Any:
    """x with op(a) x = b for triangular a (mirrors `jax.scipy.linalg.solve_triangular`);
    op is the identity, the transpose or the conjugate transpose for trans 0/'N', 1/'T',
    2/'C'. Only the triangle named by `lower` is read."""
    del overwrite_b, debug, check_finite
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = _TRANS[trans]
    a, b = as_inexact(a, b)
    signature = _vector_signature("solve_triangular", a, b)

    def solve_one(a: Any, b: Any) -> Any:
        return lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                           transpose_a=transpose_a, conjugate_a=conjugate_a,
                                           unit_diagonal=unit_diagonal)
    return jnp.vectorize(solve_one, signature=signature)(a, b)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Determinants of square matrices (mirrors `jax.scipy.linalg.det`)."""
    del overwrite_a, check_finite
    return jnp.linalg.det(a)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Inverses of square matrices (mirrors `jax.scipy.linalg.inv`)."""
    del overwrite_a, check_finite
    return jnp.linalg.inv(a)

