"""`jaxlite.lax.linalg`: matrix decompositions and solves (mirrors `jax.lax.linalg`).

The primitives live in `linalg_factorizations` (cholesky, triangular_solve, lu,
lu_pivots_to_permutation), `linalg_spectral` (qr, eigh, svd, eig), `linalg_tridiagonal`
(tridiagonal_solve) and `linalg_reductions` (hessenberg, tridiagonal, schur,
householder_product, ormqr, cholesky_update, symmetric_product), each with all its rules;
their numbers come from the numpy kernels of `linalg_kernels` and
`linalg_kernels_reductions` (LAPACK through numpy and scipy, see there), eagerly and,
compiled, through custom-calls. `qdwh` (`linalg_qdwh`) is written with lax. This module holds the user functions, with JAX's signatures and
output conventions: they symmetrize inputs, order outputs and check options as JAX does.
Every function maps over leading batch dimensions and takes float32, float64, complex64 or
complex128 matrices.
"""
from __future__ import annotations

import enum
from typing import Any, Callable

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.lax.ad_util import stop_gradient
from jaxlite.lax.arithmetic import add, conj, mul, sub
from jaxlite.lax.bitwise import bitwise_or
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.linalg_factorizations import (cholesky_p, lu_p, lu_pivots_to_permutation_p,
                                               permute_rows, triangular_solve_p)
from jaxlite.lax.linalg_qdwh import qdwh
from jaxlite.lax.linalg_reductions import (cholesky_update_p, geqp3_p, geqrf_p, hessenberg_p,
                                           householder_product_p, ormqr_p, schur_p,
                                           symmetric_product_p, tridiagonal_p)
from jaxlite.lax.linalg_spectral import eig_p, eigh_p, qr_p, svd_p
from jaxlite.lax.linalg_tridiagonal import tridiagonal_solve_p
from jaxlite.lax.linalg_util import adjoint, check_matrix, is_complex, mT, tril
from jaxlite.lax.shape_ops import expand_dims, squeeze

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky",
           "cholesky_p", "cholesky_update", "cholesky_update_p", "eig", "eig_p", "eigh",
           "eigh_p", "hessenberg", "hessenberg_p", "householder_product",
           "householder_product_p", "lu", "lu_p", "lu_pivots_to_permutation",
           "lu_pivots_to_permutation_p", "ormqr", "ormqr_p", "qdwh", "qr", "qr_p", "schur",
           "schur_p", "svd", "svd_p", "symmetric_product", "symmetric_product_p",
           "triangular_solve", "triangular_solve_p", "tridiagonal", "tridiagonal_p",
           "tridiagonal_solve", "tridiagonal_solve_p"]


class EigImplementation(enum.Enum):
    """Which eig solver to use (mirrors `jax.lax.linalg.EigImplementation`); jaxlite always
    uses LAPACK."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Which eigh solver to use (mirrors `jax.lax.linalg.EighImplementation`); jaxlite
    always uses LAPACK's syevd."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which SVD algorithm to use (mirrors `jax.lax.linalg.SvdAlgorithm`); jaxlite always
    uses LAPACK's gesdd (divide and conquer)."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _symmetrize(name: str, x: Any) -> Any:
    """(x + x^H) / 2: the Hermitian part, which the decompositions of Hermitian matrices
    read (and so differentiate) whole. `name`: the function, for errors."""
    dtype = np.dtype(get_aval(x).dtype)
    if dtypes.is_bool(dtype) or dtypes.is_integer(dtype):
        # JAX halves with jnp's true division: booleans (added as a logical or, divided as
        # default ints) and integers become the floating type of jnp.true_divide.
        if dtypes.is_bool(dtype):
            x, dtype = bitwise_or(x, mT(x)), dtypes.default_int_dtype()
        else:
            x = add(x, mT(x))
        half = np.array(0.5, dtypes.to_inexact_dtype(dtype))
        return mul(convert_element_type(x, half.dtype), half)
    check_matrix(name, "x", get_aval(x), square=True)
    return mul(add(x, adjoint(x)), np.array(0.5, get_aval(x).dtype))


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor L of Hermitian positive-definite matrices, x = L L^H
    (mirrors `jax.lax.linalg.cholesky`).

    Parameters
    ----------
    x : a batch of square matrices (..., n, n).
    symmetrize_input : use (x + x^H) / 2; otherwise only the lower triangle of x is read.

    Returns
    -------
    L, lower triangular; all NaN (below the diagonal) for a matrix that is not positive
    definite, as in JAX.
    """
    if symmetrize_input:
        x = _symmetrize("cholesky", x)
    return tril(cholesky_p.bind(x))


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """Solve op(a) x = b (`left_side`) or x op(a) = b for triangular a (mirrors
    `jax.lax.linalg.triangular_solve`).

    Parameters
    ----------
    a : triangular matrices (..., k, k); only the triangle named by `lower` is read (and not
        its diagonal with `unit_diagonal`).
    b : right-hand sides (..., m, n), with k = m (left side) or k = n, and a's batch
        dimensions; a vector (one dimension fewer than a) is one right-hand side.
    transpose_a, conjugate_a : op(a) is a, a^T, conj(a) or a^H.
    unit_diagonal : take a's diagonal to be ones.
    """
    a_dtype, b_dtype = np.dtype(get_aval(a).dtype), np.dtype(get_aval(b).dtype)
    if a_dtype != b_dtype:
        raise TypeError(f"lax.triangular_solve requires arguments to have the same dtypes, "
                        f"got {a_dtype.name}, {b_dtype.name}.")
    if a_dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
        # JAX solves these on CPU too (XLA expands the solve into loops); no kernel takes
        # them here, so the solve runs in float32 and rounds once at the end.
        x = triangular_solve(convert_element_type(a, np.float32),
                             convert_element_type(b, np.float32), left_side=left_side,
                             lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
                             unit_diagonal=unit_diagonal)
        return convert_element_type(x, a_dtype)
    if conjugate_a and not transpose_a:
        a = conj(a) if is_complex(a) else a
        conjugate_a = False
    vector = len(np.shape(b)) == len(np.shape(a)) - 1
    axis = len(np.shape(b)) if left_side else len(np.shape(b)) - 1
    if vector:
        b = expand_dims(b, (axis,))
    x = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                unit_diagonal=bool(unit_diagonal))
    return squeeze(x, (axis,)) if vector else x


def lu(x: Any) -> tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting (mirrors `jax.lax.linalg.lu`).

    Returns
    -------
    lu : (..., m, n): L (unit lower, diagonal not stored) below the diagonal, U on and above.
    pivots : int32 (..., min(m, n)): row i was exchanged with row pivots[i].
    permutation : int32 (..., m): row i of L U is row permutation[i] of x.
    """
    packed, pivots, permutation = lu_p.bind(x)
    return packed, pivots, permutation


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation of 0..permutation_size-1 made by the row exchanges `pivots` (int32,
    applied in order) (mirrors `jax.lax.linalg.lu_pivots_to_permutation`)."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Any, ...]:
    """QR decomposition x = Q R, Q with orthonormal columns and R upper triangular (mirrors
    `jax.lax.linalg.qr`).

    With `full_matrices`, Q is (..., m, m) and R (..., m, n); otherwise (..., m, k) and
    (..., k, n), k = min(m, n). Signs follow LAPACK (R's diagonal may be negative). With
    `pivoting`, returns (Q, R, P): the QR decomposition of x[..., P], P (int32, (..., n))
    the column order LAPACK's geqp3 chooses (|diag R| non-increasing); derivatives flow
    through Q and R as for x[..., P]. `use_magma` is ignored (a GPU option).
    """
    if not pivoting:
        q, r = qr_p.bind(x, full_matrices=bool(full_matrices))
        return q, r
    check_matrix("qr", "x", get_aval(x))
    _, jpvt, _ = geqp3_p.bind(stop_gradient(x))
    perm = sub(jpvt, np.int32(1))  # LAPACK's pivots are 1-based
    permuted = mT(permute_rows(mT(x), perm))
    q, r = qr_p.bind(permuted, full_matrices=bool(full_matrices))
    return q, r, perm


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: Any = None) -> tuple[Any, Any]:
    """Eigen-decomposition of Hermitian matrices (mirrors `jax.lax.linalg.eigh`).

    Parameters
    ----------
    x : a batch of square matrices.
    lower : without `symmetrize_input`, read the lower (else the upper) triangle.
    symmetrize_input : use (x + x^H) / 2.
    sort_eigenvalues : eigenvalues come in ascending order (always the case here).

    Returns
    -------
    (v, w): eigenvectors as the columns of v, and the real eigenvalues w, x v = v diag(w).

    Differences from JAX: `implementation` is ignored; `subset_by_index` must be None, as on
    JAX's CPU backend.
    """
    if subset_by_index is not None:
        raise NotImplementedError("lax.linalg.eigh: subset_by_index is not supported (nor is "
                                  "it by JAX on CPU); slice the full result instead.")
    if symmetrize_input:
        x = _symmetrize("eigh", x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))
    return v, w


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Any:
    """Singular value decomposition x = U diag(s) V^H (mirrors `jax.lax.linalg.svd`).

    Returns
    -------
    (u, s, vh) with `compute_uv`, else s: singular values in descending order; u is
    (..., m, m) and vh (..., n, n) with `full_matrices`, else (..., m, k) and (..., k, n).

    Differences from JAX: `algorithm` is ignored (LAPACK's divide and conquer, as JAX's
    default on CPU); `subset_by_index` must be None.
    """
    if subset_by_index is not None:
        raise NotImplementedError("lax.linalg.svd: subset_by_index is not supported by "
                                  "jaxlite; slice the full result instead.")
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs[0]
    s, u, vh = outs
    return u, s, vh


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: Any = None, use_magma: bool | None = None) -> list[Any]:
    """Eigen-decomposition of general square matrices (mirrors `jax.lax.linalg.eig`).

    Returns
    -------
    [w] + [vl] + [vr] as asked: complex eigenvalues, left eigenvectors (vl^H x = diag(w)
    vl^H) and right eigenvectors (x vr = vr diag(w)) as unit-norm columns.

    Differences from JAX: `enable_eigvec_derivs`, `implementation` and `use_magma` are
    ignored; only eigenvalues (both eigenvector flags False) can be differentiated.
    """
    return list(eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                           compute_right_eigenvectors=bool(compute_right_eigenvectors)))


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *,
                      perturb_singular: bool = False) -> Any:
    """Solve T x = b for tridiagonal T (mirrors `jax.lax.linalg.tridiagonal_solve`).

    Parameters
    ----------
    dl, d, du : (..., n): T's sub-diagonal (dl[..., 0] is ignored), diagonal and super-
        diagonal (du[..., n-1] is ignored).
    b : (..., n, k) right-hand sides.

    perturb_singular : replace pivots smaller than eps * max|T| by that size, so that a
        singular T gives a finite solution (for inverse iteration); otherwise a singular T
        gives infinities or NaN.
    """
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


def _exact_rank(name: str, x: Any, rank: int, position: int) -> None:
    shape = np.shape(x)
    if len(shape) != rank:
        raise TypeError(f"Input {position} to {name} must have a rank of exactly {rank}, but "
                        f"got shape={shape}")


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The upper Cholesky factor of R^T R + w w^T from the upper factor R of R^T R, in
    O(n^2) (mirrors `jax.lax.linalg.cholesky_update`). Real float matrices only."""
    _exact_rank("cholesky_update", r_matrix, 2, 0)
    _exact_rank("cholesky_update", w_vector, 1, 1)
    return cholesky_update_p.bind(r_matrix, w_vector)


def hessenberg(a: Any) -> list[Any]:
    """Reduction of square matrices to upper Hessenberg form (mirrors
    `jax.lax.linalg.hessenberg`).

    Returns
    -------
    [a, taus]: the Hessenberg matrix on and above the first subdiagonal of `a`, the
    Householder vectors below it, and taus (..., n - 1), their scalar factors (LAPACK's
    gehrd convention).
    """
    return list(hessenberg_p.bind(a))


def householder_product(a: Any, taus: Any) -> Any:
    """The product of the elementary Householder reflectors stored below the diagonal of
    `a` (..., m, n), m >= n, with scalar factors `taus` (..., k), k <= n: an (..., m, n)
    matrix with orthonormal columns (mirrors `jax.lax.linalg.householder_product`)."""
    return householder_product_p.bind(a, taus)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """Q c, Q^T c, c Q or c Q^T (`left`, `transpose`; Q^H for complex) without forming the
    Q of the Householder reflectors (a, taus), as geqrf stores them (mirrors
    `jax.lax.linalg.ormqr`)."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Callable[..., Any] | None = None) -> list[Any]:
    """Schur decomposition x = Q T Q^H (mirrors `jax.lax.linalg.schur`).

    Returns
    -------
    [T, Q], or [T] without `compute_schur_vectors`: T upper quasi-triangular (real x: 2 x 2
    blocks for complex eigenvalue pairs) or triangular (complex x), Q unitary.
    `select_callable` is unused, as in JAX; `sort_eig_vals=True` is not implemented, as in
    JAX.
    """
    del select_callable  # unused, as in JAX
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    return list(schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors)))


def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False) -> Any:
    """alpha A A^T + beta C for A (..., m, n) and symmetric C (..., m, m) (mirrors
    `jax.lax.linalg.symmetric_product`). The whole product is computed, so the result is
    symmetric whether or not `symmetrize_output` copies its lower triangle up."""
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=float(alpha),
                                      beta=float(beta))
    if symmetrize_output:
        result = add(tril(result), mT(tril(result, -1)))
    return result


def tridiagonal(a: Any, *, lower: bool = True) -> list[Any]:
    """Reduction of Hermitian matrices to real symmetric tridiagonal form (mirrors
    `jax.lax.linalg.tridiagonal`).

    Returns
    -------
    [a, d, e, taus]: the tridiagonal matrix and the Householder vectors packed in `a` (in
    its lower or upper triangle, as `lower` says), the real diagonal d (..., n), the real
    off-diagonal e (..., n - 1) and the reflectors' scalar factors taus (..., n - 1)
    (LAPACK's sytrd/hetrd convention).
    """
    return list(tridiagonal_p.bind(a, lower=bool(lower)))


def geqrf(a: Any) -> tuple[Any, Any]:
    """Householder QR in LAPACK's packed form (mirrors JAX's internal `lax.linalg.geqrf`,
    which `jax.scipy.linalg.qr_multiply` uses): (a, taus), R on and above the diagonal of
    `a`, the reflectors below it, taus (..., min(m, n)) their scalar factors."""
    packed, taus = geqrf_p.bind(a)
    return packed, taus


def geqp3(a: Any) -> tuple[Any, Any, Any]:
    """Column-pivoted Householder QR in LAPACK's packed form (JAX's internal
    `lax.linalg.geqp3` with all-zero initial pivots: every column is free): (a, jpvt,
    taus), jpvt the 1-based int32 column order, a[..., jpvt - 1] = Q R."""
    packed, jpvt, taus = geqp3_p.bind(a)
    return packed, jpvt, taus
