"""The numerical kernels of `jaxlite.lax.linalg`, in numpy, over leading batch dimensions.

Each kernel is both the eager `reference` rule of its primitive and the implementation of the
custom-call target the primitive lowers to (registered in
`jaxlite.xla.evaluator.CUSTOM_CALL_TARGETS` under `jaxlite_lapack_<name>`), so eager, the
interpreter backend and the cpu backend (which calls back into Python for custom-calls)
compute the same numbers.

Why numpy's LAPACK: JAX's CPU backend calls LAPACK (potrf, geqrf + orgqr, syevd, gesdd,
geev); numpy links a LAPACK and calls the same drivers (`numpy.linalg.cholesky`, `qr`,
`eigh`, `svd`, `eig`), so the factors agree with JAX's to rounding, sign conventions
included. Why scipy too: numpy exposes neither LAPACK's getrf (LU with its pivots) nor
BLAS's trsm (triangular solve), which JAX calls, so those two come from `scipy.linalg`.
The tridiagonal solve is written here as LAPACK's gtsv (elimination with partial
pivoting, the pivot being the entry of larger |re| + |im|), vectorized over the batch.

Failures never raise, as in JAX: a matrix that is not positive definite gives a Cholesky
factor of NaNs, an eigen- or singular-value solver that does not converge gives NaNs, a
singular triangular matrix gives infinities (division by its zero diagonal).
"""
from __future__ import annotations

import json
from typing import Any, Callable

import numpy as np
import scipy.linalg

from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS
from jaxlite.xla.ir import HloInstruction

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr", "eigh",
           "svd", "eig", "tridiagonal_solve", "register_target", "target_name"]


def _each_matrix(fn: Callable[[np.ndarray], Any], a: np.ndarray,
                 outs: list[np.ndarray]) -> None:
    """Run `fn` on every matrix of the batch `a`, writing its results into `outs` (filled
    with NaN where numpy's solver fails)."""
    for index in np.ndindex(a.shape[:-2]):
        try:
            results = fn(a[index])
        except np.linalg.LinAlgError:
            for out in outs:
                # JAX's failure value is NaN in every part: nan+nanj for complex outputs.
                out[index] = complex(np.nan, np.nan) if out.dtype.kind == "c" else np.nan
            continue
        for out, r in zip(outs, results if isinstance(results, tuple) else (results,)):
            out[index] = r


def _batched(fn: Callable[[np.ndarray], Any], a: np.ndarray,
             out_like: list[tuple[tuple[int, ...], Any]]) -> list[np.ndarray]:
    """`fn` on the whole batch (numpy's gufuncs); when it fails for some matrix, matrix by
    matrix with NaN for the failures. `out_like`: the outputs' shapes and dtypes."""
    try:
        results = fn(a)
        return [np.asarray(r, dtype) for r, (_, dtype) in
                zip(results if isinstance(results, tuple) else (results,), out_like)]
    except np.linalg.LinAlgError:
        outs = [np.empty(shape, dtype) for shape, dtype in out_like]
        _each_matrix(fn, a, outs)
        return outs


def _magnitude(x: np.ndarray) -> np.ndarray:
    """LAPACK's pivot size: |x| for reals, |re| + |im| for complex numbers."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _real(dtype: Any) -> np.dtype:
    return np.empty((), dtype).real.dtype


# ------------------------------------------------------------------------ cholesky

def cholesky(a: np.ndarray) -> np.ndarray:
    """The lower Cholesky factor of each matrix (its lower triangle is read); NaN for a
    matrix that is not positive definite."""
    a = np.asarray(a)
    return _batched(np.linalg.cholesky, a, [(a.shape, a.dtype)])[0]


# ---------------------------------------------------------------- triangular solve

def triangular_solve(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                     transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> np.ndarray:
    """x with op(a) x = b (`left_side`) or x op(a) = b, a triangular (only its `lower` or
    upper triangle is read, and not its diagonal if `unit_diagonal`), by BLAS's trsm. A
    zero on the diagonal gives infinities or NaNs, as in JAX."""
    a, b = np.asarray(a), np.asarray(b)
    x = np.zeros(b.shape, b.dtype)
    if b.size == 0:  # BLAS rejects empty operands
        return x
    if conjugate_a and not transpose_a:  # trsm conjugates only with the transpose
        a = np.conj(a)
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    trsm = scipy.linalg.get_blas_funcs("trsm", (a, b))
    for index in np.ndindex(a.shape[:-2]):
        x[index] = trsm(1.0, a[index], b[index], side=0 if left_side else 1,
                        lower=int(lower), trans_a=trans, diag=int(unit_diagonal))
    return x


# ------------------------------------------------------------------------------ lu

def lu(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LU with partial pivoting of each m x n matrix, by LAPACK's getrf: the packed factors
    (L unit lower below the diagonal, U on and above it), the int32 pivots (row i was
    swapped with row pivots[i]) and the int32 permutation (row i of L U is row
    permutation[i] of a). A singular matrix gives a U with zeros on its diagonal."""
    a = np.asarray(a)
    m, n = a.shape[-2:]
    packed = np.array(a, copy=True)
    pivots = np.zeros(a.shape[:-2] + (min(m, n),), np.int32)
    if min(m, n) > 0:  # LAPACK rejects empty matrices
        getrf = scipy.linalg.get_lapack_funcs("getrf", (a,))
        for index in np.ndindex(a.shape[:-2]):
            # info > 0 (an exact zero pivot) is no error: the factors are still complete.
            packed[index], pivots[index], _ = getrf(a[index])
    return packed, pivots, lu_pivots_to_permutation(pivots, permutation_size=m)


def _swap_rows(x: np.ndarray, j: int, p: np.ndarray) -> None:
    """Swap row j with row p[b] of each matrix b of `x`, in place."""
    index = np.indices(x.shape[:-2])
    row_j = x[..., j, :].copy()
    x[..., j, :] = x[(*index, p)]
    x[(*index, p)] = row_j


def lu_pivots_to_permutation(pivots: np.ndarray, *, permutation_size: int) -> np.ndarray:
    """The permutation that the row swaps `pivots` (applied in order) make of
    0..permutation_size-1."""
    pivots = np.asarray(pivots)
    batch = pivots.shape[:-1]
    perm = np.broadcast_to(np.arange(permutation_size, dtype=pivots.dtype),
                           batch + (permutation_size,)).copy()
    for j in range(pivots.shape[-1]):
        _swap_rows(perm[..., None], j, pivots[..., j])
    return perm


# ------------------------------------------------------------------------------ qr

def qr(a: np.ndarray, *, full_matrices: bool) -> tuple[np.ndarray, np.ndarray]:
    """Q and R of each matrix (Householder QR, LAPACK's geqrf and orgqr); Q is m x m and R
    m x n with `full_matrices`, else m x k and k x n (k = min(m, n))."""
    a = np.asarray(a)
    if a.size == 0:
        m, n = a.shape[-2:]
        k = m if full_matrices else min(m, n)
        eye = np.broadcast_to(np.eye(m, k, dtype=a.dtype), a.shape[:-2] + (m, k))
        return eye.copy(), np.zeros(a.shape[:-2] + (k, n), a.dtype)
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)


# ---------------------------------------------------------------------------- eigh

def eigh(a: np.ndarray, *, lower: bool, sort_eigenvalues: bool) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """Eigenvectors (columns) and ascending real eigenvalues of each Hermitian matrix, read
    from its lower (or upper) triangle; NaN where the solver does not converge."""
    a = np.asarray(a)
    shape = a.shape
    w, v = _batched(lambda x: np.linalg.eigh(x, UPLO="L" if lower else "U"), a,
                    [(shape[:-1], _real(a.dtype)), (shape, a.dtype)])
    return v, w


# ----------------------------------------------------------------------------- svd

def svd(a: np.ndarray, *, full_matrices: bool, compute_uv: bool) -> list[np.ndarray]:
    """Singular values (descending), then U and V^H when `compute_uv`; NaN where the solver
    does not converge."""
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    s_like = (batch + (k,), _real(a.dtype))
    if not compute_uv:
        return _batched(lambda x: np.linalg.svd(x, compute_uv=False), a, [s_like])
    cols = m if full_matrices else k
    rows = n if full_matrices else k
    if a.size == 0:
        return [np.zeros(*s_like), np.broadcast_to(np.eye(m, cols, dtype=a.dtype),
                                                   batch + (m, cols)).copy(),
                np.broadcast_to(np.eye(rows, n, dtype=a.dtype), batch + (rows, n)).copy()]
    u, s, vh = _batched(lambda x: np.linalg.svd(x, full_matrices=full_matrices), a,
                        [(batch + (m, cols), a.dtype), s_like, (batch + (rows, n), a.dtype)])
    return [s, u, vh]


# ----------------------------------------------------------------------------- eig

def _geev(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not np.isfinite(x).all():
        # (LAPACK rejects such input; JAX's result is NaN in every part)
        raise np.linalg.LinAlgError("non-finite matrix")
    return scipy.linalg.eig(x, left=True, right=True, check_finite=False)


def eig(a: np.ndarray, *, compute_left_eigenvectors: bool,
        compute_right_eigenvectors: bool) -> list[np.ndarray]:
    """Complex eigenvalues of each square matrix, then its left eigenvectors (vl^H a = w
    vl^H) and right eigenvectors (a vr = w vr) as asked: LAPACK's geev through scipy, as
    JAX's CPU kernel calls it, so the eigenvectors have geev's norms and phases (unit norm,
    largest component real; a real matrix's real eigenvectors keep geev's signs)."""
    a = np.asarray(a)
    complex_dtype = np.result_type(a.dtype, np.complex64)
    shape = a.shape
    outs = [np.empty(shape[:-1], complex_dtype), np.empty(shape, complex_dtype),
            np.empty(shape, complex_dtype)]
    if a.size:
        _each_matrix(_geev, a, outs)
    w, vl, vr = outs
    return [w] + ([vl] if compute_left_eigenvectors else []) + (
        [vr] if compute_right_eigenvectors else [])


# --------------------------------------------------------------- tridiagonal solve

def tridiagonal_solve(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray, *,
                      perturb_singular: bool = False) -> np.ndarray:
    """x with T x = b, T tridiagonal with sub-diagonal dl[1:], diagonal d and super-
    diagonal du[:-1] (dl[0] and du[-1] are ignored), by Gaussian elimination with partial
    pivoting (LAPACK's gtsv). With `perturb_singular`, a pivot smaller in magnitude than
    eps * max|T| is replaced by that size (keeping its sign), so that a singular T gives a
    finite, large solution (what inverse iteration needs; LAPACK's lagts does the same)."""
    n = d.shape[-1]
    dtype = b.dtype
    # Rows as band coefficients: row i holds T[i, i-1 .. i+2] after pivoting may add fill.
    sub = np.array(dl, dtype)
    diag = np.array(d, dtype)
    sup = np.array(du, dtype)
    fill = np.zeros_like(diag)
    rhs = np.array(b, dtype)
    floor = None
    if perturb_singular and n:
        largest = np.max(np.abs(np.stack([sub[..., 1:], diag[..., :-1], sup[..., :-1]], -1)
                                ).reshape(diag.shape[:-1] + (-1,)), axis=-1, initial=0)
        largest = np.maximum(largest, np.abs(diag[..., -1]))
        floor = np.finfo(dtype).eps * largest
    with np.errstate(all="ignore"):
        for i in range(n - 1):
            swap = _magnitude(sub[..., i + 1]) > _magnitude(diag[..., i])
            _swap_where(swap, diag[..., i], sub[..., i + 1])
            if floor is not None:
                _raise_pivot(diag[..., i], floor)
            _swap_where(swap, sup[..., i], diag[..., i + 1])
            if i + 1 < n - 1:
                fill[..., i] = np.where(swap, sup[..., i + 1], 0)
                sup[..., i + 1] = np.where(swap, 0, sup[..., i + 1])
            _swap_where(swap[..., None], rhs[..., i, :], rhs[..., i + 1, :])
            factor = sub[..., i + 1] / diag[..., i]
            diag[..., i + 1] -= factor * sup[..., i]
            if i + 1 < n - 1:
                sup[..., i + 1] -= factor * fill[..., i]
            rhs[..., i + 1, :] -= factor[..., None] * rhs[..., i, :]
        if floor is not None and n:
            _raise_pivot(diag[..., n - 1], floor)
        x = np.zeros_like(rhs)
        for i in range(n - 1, -1, -1):
            acc = rhs[..., i, :]
            if i + 1 < n:
                acc = acc - sup[..., i, None] * x[..., i + 1, :]
            if i + 2 < n:
                acc = acc - fill[..., i, None] * x[..., i + 2, :]
            x[..., i, :] = acc / diag[..., i, None]
    return x


def _raise_pivot(pivot: np.ndarray, floor: np.ndarray) -> None:
    """Pivots (a view) below `floor` in magnitude become `floor` times their sign, in
    place (a zero pivot becomes +floor)."""
    size = np.abs(pivot)
    small = size < floor
    sign = np.where(size == 0, 1, pivot / np.where(size == 0, 1, size))
    pivot[...] = np.where(small, sign * floor, pivot)


def _swap_where(swap: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """Exchange x and y (views) where `swap` holds, in place."""
    old_x = x.copy()
    x[...] = np.where(swap, y, x)
    y[...] = np.where(swap, old_x, y)


# -------------------------------------------------------------- custom-call targets

def target_name(kernel: str) -> str:
    """The custom-call target name the kernel `kernel` is registered under."""
    return f"jaxlite_lapack_{kernel}"


def register_target(kernel: str, fn: Callable[..., Any]) -> None:
    """Register `fn(*operands, **params)` as a custom-call target whose parameters travel
    as JSON in the instruction's backend_config."""
    def target(inst: HloInstruction, *operands: np.ndarray) -> Any:
        params = json.loads(inst.attr("backend_config") or "{}")
        out = fn(*operands, **params)
        if isinstance(out, (list, tuple)):  # one output is an array, several a tuple
            return out[0] if len(out) == 1 else tuple(out)
        return out
    target.__name__ = target_name(kernel)
    CUSTOM_CALL_TARGETS[target_name(kernel)] = target


for _name, _fn in (("cholesky", cholesky), ("triangular_solve", triangular_solve),
                   ("lu", lu), ("lu_pivots_to_permutation", lu_pivots_to_permutation),
                   ("qr", qr), ("eigh", eigh), ("svd", svd), ("eig", eig),
                   ("tridiagonal_solve", tridiagonal_solve)):
    register_target(_name, _fn)
