"""Factorizations: cholesky, qr, eigh, eigvalsh, eig, eigvals, svd, svdvals.

Mirror the same names of `jax.numpy.linalg`: each promotes to an inexact dtype, checks the
shape, and calls the decomposition of `jaxlite.lax.linalg`, whose rules (derivatives,
batching) carry over. Results with several parts are the named tuples JAX returns.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jaxlite.lax as lax
from jaxlite.lax import linalg as lax_linalg
from jaxlite.numpy._promotion import check_arraylike
from jaxlite.numpy.linalg._util import adjoint, check_matrix, check_square, inexact_args

__all__ = ["EighResult", "EigResult", "QRResult", "SVDResult", "cholesky", "qr", "eigh",
           "eigvalsh", "eig", "eigvals", "svd", "svdvals"]


class EighResult(NamedTuple):
    """Eigenvalues (ascending) and eigenvectors (columns) of a Hermitian matrix."""
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    """Eigenvalues and right eigenvectors (columns) of a general matrix, both complex."""
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """The orthonormal factor Q and the upper-triangular factor R of A = Q R."""
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    """A = U diag(S) Vh with S descending."""
    U: Any
    S: Any
    Vh: Any


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """Cholesky factor of Hermitian positive-definite matrices (`jax.numpy.linalg.cholesky`).

    Lower-triangular L with A = L L^H, or with `upper` its conjugate transpose U,
    A = U^H U. Matrices that are not positive definite give NaNs, as in JAX.
    """
    (a,) = inexact_args("jnp.linalg.cholesky", a)
    check_square("cholesky", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return adjoint(factor) if upper else factor


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition of the matrices in the last two axes (`jax.numpy.linalg.qr`).

    mode "reduced" gives Q (..., m, k) and R (..., k, n) with k = min(m, n); "complete"
    gives a square Q (..., m, m) and R (..., m, n); "r" gives only the reduced R.
    """
    (a,) = inexact_args("jnp.linalg.qr", a)
    check_matrix("qr", a)
    if mode == "raw":
        raise NotImplementedError("jnp.linalg.qr: mode='raw' (Householder reflectors) is not "
                                  "implemented in jaxlite; use mode='reduced' or 'complete'.")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, full_matrices=(mode == "complete"))
    return r if mode == "r" else QRResult(q, r)


def _lower_flag(UPLO: Any) -> bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigen-decomposition of Hermitian matrices (mirrors `jax.numpy.linalg.eigh`).

    Eigenvalues are ascending and real; eigenvectors are the columns. UPLO names the
    triangle read when `symmetrize_input` is False ('L', the default, or 'U').
    """
    (a,) = inexact_args("jnp.linalg.eigh", a)
    check_square("eigh", a)
    vectors, values = lax_linalg.eigh(a, lower=_lower_flag(UPLO),
                                      symmetrize_input=symmetrize_input)
    return EighResult(values, vectors)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """Eigenvalues of Hermitian matrices, ascending (`jax.numpy.linalg.eigvalsh`)."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors of general matrices (`jax.numpy.linalg.eig`).

    Both are complex, unordered and unnormalized in phase (each vector has unit norm).
    """
    (a,) = inexact_args("jnp.linalg.eig", a)
    check_square("eig", a)
    values, vectors = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(values, vectors)


def eigvals(a: Any) -> Any:
    """Eigenvalues of general matrices, complex (mirrors `jax.numpy.linalg.eigvals`)."""
    (a,) = inexact_args("jnp.linalg.eigvals", a)
    check_square("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


def _descending_by(key: Any, x: Any) -> Any:
    """The columns of `x` (or entries, if 1-d like `key`) ordered by decreasing `key`."""
    if x.ndim == key.ndim:
        return lax.sort((lax.neg(key), x), dimension=x.ndim - 1, num_keys=1)[1]
    keys = lax.broadcast_in_dim(lax.neg(key), x.shape, tuple(range(x.ndim - 2)) + (x.ndim - 1,))
    return lax.sort((keys, x), dimension=x.ndim - 1, num_keys=1)[1]


def _hermitian_svd(a: Any, compute_uv: bool, subset_by_index: Any) -> Any:
    """SVD from the eigen-decomposition: singular values are |eigenvalues|, and the sign
    of each eigenvalue moves into the right singular vector."""
    vectors, values = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    magnitudes = lax.abs(values)
    s = _descending_by(magnitudes, magnitudes)
    if not compute_uv:
        return s
    u = _descending_by(magnitudes, vectors)
    signs = lax.convert_element_type(lax.sign(values), vectors.dtype)
    v_signed = lax.mul(vectors, lax.expand_dims(signs, (signs.ndim - 1,)))
    vh = adjoint(_descending_by(magnitudes, v_signed))
    return SVDResult(u, s, vh)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """Singular value decomposition A = U diag(S) Vh (mirrors `jax.numpy.linalg.svd`).

    Parameters
    ----------
    a : matrices in the last two axes (..., m, n).
    full_matrices : square U (m x m) and Vh (n x n) rather than the reduced (m x k), (k x n).
    compute_uv : False returns only S, descending, in the real dtype.
    hermitian : `a` is Hermitian; computed from its eigen-decomposition.
    subset_by_index : (start, end) keeps only singular values start..end-1 (descending).
    """
    (a,) = inexact_args("jnp.linalg.svd", a)
    check_matrix("svd", a)
    if hermitian:
        check_square("svd", a)
        return _hermitian_svd(a, compute_uv, subset_by_index)
    if not compute_uv:
        return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                              subset_by_index=subset_by_index)
    u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                              subset_by_index=subset_by_index)
    return SVDResult(u, s, vh)


def svdvals(x: Any, /) -> Any:
    """Singular values, descending (mirrors `jax.numpy.linalg.svdvals`)."""
    check_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


