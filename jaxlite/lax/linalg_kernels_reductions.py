"""The numpy kernels of the orthogonal reductions and updates of `jaxlite.lax.linalg`:
hessenberg, tridiagonal, schur, householder_product, ormqr, cholesky_update and
symmetric_product, over leading batch dimensions.

As in `linalg_kernels`, each kernel is its primitive's eager `reference` and the custom-call
target it lowers to (registered here as `jaxlite_lapack_<name>`). JAX's CPU backend calls
LAPACK's gehrd, sytrd/hetrd, gees, orgqr/ungqr and ormqr/unmqr for the first five; scipy
wraps the same routines, so the packed reflectors, scalar factors and Schur forms agree
with JAX's to rounding. A failed LAPACK call (info != 0) gives NaNs, as in JAX.
cholesky_update applies Givens rotations and symmetric_product is alpha A A^T + beta C, both
in numpy (JAX writes them with lax on CPU).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.linalg

from jaxlite.lax.linalg_kernels import register_target

__all__ = ["geqrf", "geqp3", "hessenberg", "tridiagonal", "schur", "householder_product",
           "ormqr", "cholesky_update", "symmetric_product"]


def _lapack(name: str, a: np.ndarray) -> Callable[..., Any]:
    """scipy's wrapper of LAPACK routine `name` for a's dtype; `name` may start with 'sy'
    or 'or' for real matrices, replaced by 'he' or 'un' for complex ones."""
    if np.iscomplexobj(a):
        name = {"sy": "he", "or": "un"}.get(name[:2], name[:2]) + name[2:]
    return scipy.linalg.get_lapack_funcs(name, (a,))


def _fail(outs: list[np.ndarray], index: tuple[int, ...]) -> None:
    for out in outs:
        out[index] = np.nan


# ------------------------------------------------------------------ geqrf, geqp3

def geqrf(a: np.ndarray) -> list[np.ndarray]:
    """Householder QR of each m x n matrix by LAPACK's geqrf: R on and above the diagonal,
    the Householder vectors below it, and their min(m, n) scalar factors."""
    a = np.asarray(a)
    packed = np.array(a, copy=True)
    taus = np.zeros(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)
    if a.size:
        routine = _lapack("geqrf", a)
        for index in np.ndindex(a.shape[:-2]):
            qr, tau, _, info = routine(a[index])
            if info != 0:
                _fail([packed, taus], index)
                continue
            packed[index], taus[index] = qr, tau
    return [packed, taus]


def geqp3(a: np.ndarray) -> list[np.ndarray]:
    """Column-pivoted Householder QR of each m x n matrix by LAPACK's geqp3 (every column
    free to move): the packed factors as in `geqrf`, the int32 column permutation
    (1-based, LAPACK's jpvt: column j of Q R is column jpvt[j] - 1 of a) and the scalar
    factors."""
    a = np.asarray(a)
    n = a.shape[-1]
    packed = np.array(a, copy=True)
    jpvt = np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), a.shape[:-2] + (n,)).copy()
    taus = np.zeros(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)
    if a.size:
        routine = _lapack("geqp3", a)
        for index in np.ndindex(a.shape[:-2]):
            qr, pivots, tau, _, info = routine(a[index])
            if info != 0:
                _fail([packed, taus], index)
                continue
            packed[index], jpvt[index], taus[index] = qr, pivots, tau
    return [packed, jpvt, taus]


# ------------------------------------------------------------------- hessenberg

def hessenberg(a: np.ndarray) -> list[np.ndarray]:
    """Upper Hessenberg form of each n x n matrix by LAPACK's gehrd: H on and above the
    first subdiagonal, the Householder vectors below it, and their n - 1 scalar factors."""
    a = np.asarray(a)
    n = a.shape[-1]
    packed = np.array(a, copy=True)
    taus = np.zeros(a.shape[:-2] + (n - 1,), a.dtype)
    gehrd = _lapack("gehrd", a)
    for index in np.ndindex(a.shape[:-2]):
        h, tau, info = gehrd(a[index])
        if info != 0:
            _fail([packed, taus], index)
            continue
        packed[index], taus[index] = h, tau[:n - 1]
    return [packed, taus]


# ------------------------------------------------------------------ tridiagonal

def tridiagonal(a: np.ndarray, *, lower: bool) -> list[np.ndarray]:
    """Tridiagonal form of each Hermitian n x n matrix (its `lower` or upper triangle is
    read) by LAPACK's sytrd/hetrd: the packed matrix (tridiagonal part and Householder
    vectors), the real diagonal d, the real off-diagonal e and the n - 1 scalar factors."""
    a = np.asarray(a)
    n = a.shape[-1]
    real = np.empty((), a.dtype).real.dtype
    batch = a.shape[:-2]
    outs = [np.array(a, copy=True), np.zeros(batch + (n,), real),
            np.zeros(batch + (n - 1,), real), np.zeros(batch + (n - 1,), a.dtype)]
    sytrd = _lapack("sytrd", a)
    for index in np.ndindex(batch):
        packed, d, e, tau, info = sytrd(a[index], lower=int(lower))
        if info != 0:
            _fail(outs, index)
            continue
        for out, value in zip(outs, (packed, d, e[:n - 1], tau[:n - 1])):
            out[index] = value
    return outs


# ------------------------------------------------------------------------ schur

def schur(a: np.ndarray, *, compute_schur_vectors: bool) -> list[np.ndarray]:
    """Schur form T (quasi-triangular for real matrices, triangular for complex ones) and,
    with `compute_schur_vectors`, the unitary Z with a = Z T Z^H, by LAPACK's gees without
    sorting."""
    a = np.asarray(a)
    forms, vectors = np.array(a, copy=True), np.zeros_like(a)
    if a.size:
        gees = _lapack("gees", a)
        for index in np.ndindex(a.shape[:-2]):
            result = gees(lambda *_: None, a[index], compute_v=int(compute_schur_vectors))
            if result[-1] != 0:
                _fail([forms, vectors], index)
                continue
            forms[index] = result[0]
            vectors[index] = result[-3]
    return [forms, vectors] if compute_schur_vectors else [forms]


# ---------------------------------------------------------- householder product

def householder_product(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """The first n columns of the product of the k = len(taus) Householder reflectors
    stored below the diagonal of each m x n matrix (LAPACK's orgqr/ungqr)."""
    a, taus = np.asarray(a), np.asarray(taus)
    m, n = a.shape[-2:]
    k = taus.shape[-1]
    q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    if k == 0 or n == 0:
        return q
    orgqr = _lapack("orgqr", a)
    for index in np.ndindex(a.shape[:-2]):
        product, _, info = orgqr(a[index], taus[index])
        if info != 0:
            _fail([q], index)
            continue
        q[index] = product
    return q


# ------------------------------------------------------------------------ ormqr

def ormqr(a: np.ndarray, taus: np.ndarray, c: np.ndarray, *, left: bool,
          transpose: bool) -> np.ndarray:
    """Q c, Q^H c (`transpose`), c Q or c Q^H (not `left`), Q the product of the
    reflectors of (a, taus) as in `householder_product`, by LAPACK's ormqr/unmqr."""
    a, taus, c = np.asarray(a), np.asarray(taus), np.asarray(c)
    out = np.array(c, copy=True)
    if taus.shape[-1] == 0 or c.size == 0:
        return out
    ormqr_fn = _lapack("ormqr", a)
    side = "L" if left else "R"
    trans = ("C" if np.iscomplexobj(a) else "T") if transpose else "N"
    k = taus.shape[-1]
    for index in np.ndindex(c.shape[:-2]):
        reflectors = a[index][:, :k]  # scipy's wrapper wants exactly k columns
        work = ormqr_fn(side, trans, reflectors, taus[index], c[index], -1)[1]
        lwork = max(1, int(np.real(work[0])))
        product, _, info = ormqr_fn(side, trans, reflectors, taus[index], c[index], lwork)
        if info != 0:
            _fail([out], index)
            continue
        out[index] = product
    return out


# -------------------------------------------------------------- cholesky update

def cholesky_update(r: np.ndarray, w: np.ndarray) -> np.ndarray:
    """R' upper triangular with R'^T R' = R^T R + w w^T, by one Givens rotation per row:
    row k of R and the vector w turn so that w[k] becomes 0 (the diagonal of R' is
    positive)."""
    r = np.array(r, copy=True)
    w = np.array(w, copy=True)
    n = r.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        for k in range(n):
            x, y = r[..., k, k], w[..., k]
            radius = np.hypot(x, y)
            zero = y == 0
            c = np.where(zero, 1, x / np.where(zero, 1, radius))[..., None]
            s = np.where(zero, 0, y / np.where(zero, 1, radius))[..., None]
            row = r[..., k, :]
            r[..., k, :], w = c * row + s * w, c * w - s * row
    return r


# ------------------------------------------------------------ symmetric product

def symmetric_product(a: np.ndarray, c: np.ndarray, *, alpha: float,
                      beta: float) -> np.ndarray:
    """alpha a a^T + beta c for each (m x n, m x m) pair."""
    a, c = np.asarray(a), np.asarray(c)
    product = np.matmul(a, np.swapaxes(a, -1, -2))
    return (a.dtype.type(alpha) * product + c.dtype.type(beta) * c).astype(c.dtype)


for _name, _fn in (("geqrf", geqrf), ("geqp3", geqp3), ("hessenberg", hessenberg), ("tridiagonal", tridiagonal),
                   ("schur", schur), ("householder_product", householder_product),
                   ("ormqr", ormqr), ("cholesky_update", cholesky_update),
                   ("symmetric_product", symmetric_product)):
    register_target(_name, _fn)
