"""Test records of the linear-algebra primitives (jaxlite.lax.linalg).

References are scipy's and numpy's LAPACK calls. The functions build well-conditioned
inputs from raw normal draws inside the traced function (x x^H + n I for Cholesky, a
dominant diagonal for the solves), so that every batch member and every finite-difference
step stays in the domain. Decompositions whose factors are unique only up to phases
(eigenvectors, singular vectors) are checked through gauge-invariant values: |v|^2
elementwise.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
from records import Case, Record

from jaxlite import lax
from jaxlite.core.dtypes import canonicalize_dtype
from jaxlite.lax import linalg
from jaxlite.lax.linalg_reductions import geqp3_p

INEXACT = (np.float32, np.float64, np.complex64, np.complex128)


def _batch_shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(s) for s in rng.integers(1, 3, int(rng.integers(0, 2))))


def _draw(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _adjoint_np(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _adjoint(x: Any) -> Any:
    ndim = len(np.shape(x))
    t = lax.transpose(x, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))
    return lax.conj(t) if np.iscomplexobj(np.zeros((), x.dtype)) else t


def _add_constant(x: Any, constant: np.ndarray) -> Any:
    """x + constant, the constant (a matrix) broadcast over x's batch dimensions first
    (lax.add does not broadcast ranks, as in JAX)."""
    return lax.add(x, np.broadcast_to(np.asarray(constant, x.dtype), x.shape))


def _gram(x: Any) -> Any:
    """x x^H + n I: Hermitian positive definite, well-conditioned."""
    n = x.shape[-1]
    ndim = len(x.shape)
    batch = tuple(range(ndim - 2))
    product = lax.dot_general(x, _adjoint(x), (((ndim - 1,), (ndim - 2,)), (batch, batch)))
    shift = np.broadcast_to(np.asarray(n * np.eye(n), x.dtype), product.shape)
    return lax.add(product, shift)


def _gram_np(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    return (x @ _adjoint_np(x) + n * np.eye(n)).astype(x.dtype)


def _abs2(x: Any) -> Any:
    return lax.real(lax.mul(x, lax.conj(x))) if np.dtype(x.dtype).kind == "c" \
        else lax.mul(x, x)


def _abs2_np(x: np.ndarray) -> np.ndarray:
    return (x * np.conj(x)).real.astype(np.abs(x).dtype)


def _spread(m: int, n: int, dtype: Any) -> np.ndarray:
    """A diagonal 3, 6, 9, ...: added to normal draws it keeps eigenvalues and singular
    values apart, so that finite differences of their vectors stay accurate."""
    return np.asarray(np.eye(m, n) * 3 * np.arange(1, n + 1), dtype)


# ------------------------------------------------------------------------ cases

def _cholesky_case(rng: np.random.Generator, dtype: Any) -> Case:
    n = int(rng.integers(1, 5))
    x = _draw(rng, _batch_shape(rng) + (n, n), dtype)
    return Case(lambda x: linalg.cholesky(_gram(x)),
                lambda x: np.linalg.cholesky(_gram_np(x)), [x], values=_draw)


def _triangular_solve_case(rng: np.random.Generator, dtype: Any) -> Case:
    left_side, lower, transpose_a, conjugate_a, unit_diagonal = (
        bool(b) for b in rng.integers(0, 2, 5))
    k, other = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    batch = _batch_shape(rng)
    a = _draw(rng, batch + (k, k), dtype)
    b = _draw(rng, batch + ((k, other) if left_side else (other, k)), dtype)
    boost = np.asarray(3 * k * np.eye(k), dtype)
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)

    def fun(a, b):
        return linalg.triangular_solve(_add_constant(a, boost), b, **params)

    def reference(a, b):
        t = np.tril(a + boost) if lower else np.triu(a + boost)
        if unit_diagonal:
            t = t * (1 - np.eye(k)) + np.eye(k)
        op = np.conj(t) if conjugate_a else t
        op = np.swapaxes(op, -1, -2) if transpose_a else op
        if left_side:
            return np.linalg.solve(op, b).astype(dtype)
        return np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)),
                           -1, -2).astype(dtype)
    return Case(fun, reference, [a, b], values=_draw)


def _lu_reference(x: np.ndarray) -> list[np.ndarray]:
    m = x.shape[-2]
    packed, pivots, perms = [], [], []
    for matrix in x.reshape((-1,) + x.shape[-2:]):
        lu_, piv = scipy.linalg.lu_factor(matrix)
        perm = np.arange(m)
        for i, p in enumerate(piv):
            perm[[i, p]] = perm[[p, i]]
        packed.append(lu_)
        pivots.append(piv)
        perms.append(perm)
    batch = x.shape[:-2]
    return [np.reshape(packed, x.shape).astype(x.dtype),
            np.reshape(pivots, batch + (min(x.shape[-2:]),)).astype(np.int32),
            np.reshape(perms, batch + (m,)).astype(np.int32)]


def _lu_case(rng: np.random.Generator, dtype: Any) -> Case:
    """LU of a row-shuffled matrix with a dominant diagonal: well-conditioned, and the
    pivoting has to undo the shuffle. Pivots and permutations are compared as float32 (so
    that the derivative checks see float outputs, of zero derivative)."""
    m, n = (int(s) for s in rng.integers(1, 5, 2))
    batch = _batch_shape(rng)
    x = _draw(rng, batch + (m, n), dtype)
    shuffle = np.asarray(np.eye(m)[rng.permutation(m)], dtype)
    spread = _spread(m, n, dtype)

    def fun(x):
        lu_, pivots, perm = linalg.lu(_matmul(shuffle, _add_constant(x, spread)))
        return [lu_, lax.convert_element_type(pivots, np.float32),
                lax.convert_element_type(perm, np.float32)]

    def reference(x):
        lu_, pivots, perm = _lu_reference((shuffle @ (x + spread)).astype(dtype))
        return [lu_, pivots.astype(np.float32), perm.astype(np.float32)]
    return Case(fun, reference, [x], values=_draw)


def _matmul(a: np.ndarray, x: Any) -> Any:
    """a @ x for a constant matrix a and a batch of matrices x."""
    ndim = len(x.shape)
    product = lax.dot_general(a, x, (((1,), (ndim - 2,)), ((), ())))
    return lax.transpose(product, tuple(range(1, ndim - 1)) + (0, ndim - 1))


def _pivots(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    size = shape[-1] + 2
    low = np.arange(shape[-1])
    return rng.integers(low, size, shape).astype(np.int32)


def _permutation_reference(pivots: np.ndarray) -> np.ndarray:
    size = pivots.shape[-1] + 2
    out = np.empty(pivots.shape[:-1] + (size,), np.int32)
    for index in np.ndindex(pivots.shape[:-1]):
        perm = np.arange(size)
        for i, p in enumerate(pivots[index]):
            perm[[i, p]] = perm[[p, i]]
        out[index] = perm
    return out


def _lu_pivots_case(rng: np.random.Generator, dtype: Any) -> Case:
    pivots = _pivots(rng, _batch_shape(rng) + (int(rng.integers(1, 5)),), np.int32)
    size = pivots.shape[-1] + 2
    return Case(lambda p: linalg.lu_pivots_to_permutation(p, size), _permutation_reference,
                [pivots], values=_pivots)


def _qr_case(rng: np.random.Generator, dtype: Any) -> Case:
    m, n = (int(s) for s in rng.integers(1, 5, 2))
    full = bool(rng.integers(0, 2))
    x = _draw(rng, _batch_shape(rng) + (m, n), dtype)
    mode = "complete" if full else "reduced"
    return Case(lambda x: list(linalg.qr(x, full_matrices=full)),
                lambda x: [r.astype(x.dtype) for r in np.linalg.qr(x, mode=mode)],
                [x], values=_draw)


def _eigh_case(rng: np.random.Generator, dtype: Any) -> Case:
    n = int(rng.integers(1, 5))
    x = _draw(rng, _batch_shape(rng) + (n, n), dtype)
    spread = _spread(n, n, dtype)

    def fun(x):
        v, w = linalg.eigh(_add_constant(x, spread))
        return [w, _abs2(v)]

    def reference(x):
        w, v = np.linalg.eigh((x + spread + _adjoint_np(x + spread)) / 2)
        return [w, _abs2_np(v)]
    return Case(fun, reference, [x], values=_draw)


def _svd_case(rng: np.random.Generator, dtype: Any) -> Case:
    m, n = (int(s) for s in rng.integers(1, 5, 2))
    compute_uv = bool(rng.integers(0, 2))
    x = _draw(rng, _batch_shape(rng) + (m, n), dtype)
    spread = _spread(m, n, dtype)

    def fun(x):
        x = _add_constant(x, spread)
        if not compute_uv:
            return linalg.svd(x, compute_uv=False)
        u, s, vh = linalg.svd(x, full_matrices=False)
        return [s, _abs2(u), _abs2(vh)]

    def reference(x):
        x = x + spread
        if not compute_uv:
            return np.linalg.svd(x, compute_uv=False)
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        return [s, _abs2_np(u), _abs2_np(vh)]
    return Case(fun, reference, [x], values=_draw)


def _eig_reference(x: np.ndarray) -> list[np.ndarray]:
    complex_dtype = np.result_type(x.dtype, np.complex64)
    ws, lefts, rights = [], [], []
    for matrix in x.reshape((-1,) + x.shape[-2:]):
        w, vl, vr = scipy.linalg.eig(matrix, left=True, right=True)
        order = np.lexsort((w.imag, w.real))
        ws.append(w[order])
        lefts.append(_abs2_np(vl)[:, order])
        rights.append(_abs2_np(vr)[:, order])
    real = np.abs(np.zeros((), complex_dtype)).dtype
    return [np.reshape(ws, x.shape[:-1]).astype(complex_dtype),
            np.reshape(lefts, x.shape).astype(real), np.reshape(rights, x.shape).astype(real)]


def _eig_case(rng: np.random.Generator, dtype: Any) -> Case:
    n = int(rng.integers(1, 5))
    x = _draw(rng, _batch_shape(rng) + (n, n), dtype)

    def fun(x):
        # LAPACK's order of eigenvalues is not canonical: sort them (and the vectors' columns)
        w, vl, vr = linalg.eig(x)
        keys = lax.broadcast_in_dim(w, vl.shape, tuple(range(len(w.shape) - 1))
                                    + (len(w.shape),))
        keys, left, right = lax.sort((keys, _abs2(vl), _abs2(vr)), dimension=len(w.shape),
                                     num_keys=1)
        return [lax.index_in_dim(keys, 0, len(w.shape) - 1, keepdims=False), left, right]
    return Case(fun, _eig_reference, [x], values=_draw)


def _tridiagonal_case(rng: np.random.Generator, dtype: Any) -> Case:
    n, k = int(rng.integers(1, 5)), int(rng.integers(1, 3))
    batch = _batch_shape(rng)
    dl, d, du = (_draw(rng, batch + (n,), dtype) for _ in range(3))
    b = _draw(rng, batch + (n, k), dtype)
    boost = np.asarray(4.0, dtype)

    def reference(dl, d, du, b):
        return np.linalg.solve(_dense(dl, d + boost, du), b).astype(dtype)
    return Case(lambda dl, d, du, b: linalg.tridiagonal_solve(dl, lax.add(d, boost), du, b),
                reference, [dl, d, du, b], values=_draw)


def _dense(dl: np.ndarray, d: np.ndarray, du: np.ndarray) -> np.ndarray:
    n = d.shape[-1]
    t = np.zeros(d.shape + (n,), d.dtype)
    i = np.arange(n)
    t[..., i, i] = d
    t[..., i[1:], i[:-1]] = dl[..., 1:]
    t[..., i[:-1], i[1:]] = du[..., :-1]
    return t


BASE_RECORDS = [
    Record("cholesky", _cholesky_case, dtypes=INEXACT, notes="of x x^H + n I"),
    Record("triangular_solve", _triangular_solve_case, dtypes=INEXACT,
           notes="every flag combination drawn; a with a dominant diagonal"),
    Record("lu", _lu_case, dtypes=INEXACT, notes="square and rectangular, against getrf"),
    Record("lu_pivots_to_permutation", _lu_pivots_case, dtypes=(np.int32,), grad=False),
    Record("qr", _qr_case, dtypes=INEXACT, notes="tall, square and wide; full or reduced"),
    Record("eigh", _eigh_case, dtypes=INEXACT, notes="eigenvalues and |v|^2"),
    Record("svd", _svd_case, dtypes=INEXACT, notes="s, |u|^2, |vh|^2 or s alone"),
    Record("eig", _eig_case, dtypes=INEXACT, grad=False,
           notes="eigenvalues, |vl|^2, |vr|^2 against scipy (geev); eigenvector derivatives "
                 "are not implemented, so no second-order checks"),
    Record("tridiagonal_solve", _tridiagonal_case, dtypes=INEXACT,
           notes="with a dominant diagonal, against a dense solve"),
]


# ------------------------------------------------ orthogonal reductions and updates

def _lapack_each(name: str, x: np.ndarray, *args: Any, **kwargs: Any) -> list[list[Any]]:
    """scipy's LAPACK routine `name` (sy/or spellings; he/un for complex) on each matrix of
    x, its outputs per matrix."""
    if np.iscomplexobj(x):
        name = {"sy": "he", "or": "un"}.get(name[:2], name[:2]) + name[2:]
    routine = scipy.linalg.get_lapack_funcs(name, (x,))
    return [routine(matrix, *args, **kwargs) for matrix in x.reshape((-1,) + x.shape[-2:])]


def _stack_outputs(results: list[list[Any]], picks: list[int], shapes: list[tuple],
                   dtypes: list[Any]) -> list[np.ndarray]:
    """Output picks[j] of every matrix, stacked to shapes[j] as dtypes[j]."""
    return [np.reshape([r[i] for r in results], shape).astype(dtype)
            for i, shape, dtype in zip(picks, shapes, dtypes)]


def _real_of(dtype: Any) -> np.dtype:
    return np.abs(np.zeros((), dtype)).dtype


def _geqrf_case(rng: np.random.Generator, dtype: Any) -> Case:
    m, n = (int(s) for s in rng.integers(1, 5, 2))
    x = _draw(rng, _batch_shape(rng) + (m, n), dtype)

    def reference(x):
        batch = x.shape[:-2]
        return _stack_outputs(_lapack_each("geqrf", x), [0, 1],
                              [x.shape, batch + (min(m, n),)], [dtype, dtype])
    return Case(lambda x: list(linalg.geqrf(x)), reference, [x], values=_draw)


def _geqp3_case(rng: np.random.Generator, dtype: Any) -> Case:
    m, n = (int(s) for s in rng.integers(1, 5, 2))
    x = _draw(rng, _batch_shape(rng) + (m, n), dtype)

    def fun(x):
        packed, jpvt, taus = geqp3_p.bind(x)
        return [packed, lax.convert_element_type(jpvt, np.float32), taus]

    def reference(x):
        batch = x.shape[:-2]
        return _stack_outputs(_lapack_each("geqp3", x), [0, 1, 2],
                              [x.shape, batch + (n,), batch + (min(m, n),)],
                              [dtype, np.float32, dtype])
    return Case(fun, reference, [x], values=_draw)


def _hessenberg_case(rng: np.random.Generator, dtype: Any) -> Case:
    n = int(rng.integers(1, 5))
    x = _draw(rng, _batch_shape(rng) + (n, n), dtype)

    def reference(x):
        results = _lapack_each("gehrd", x)
        packed = np.reshape([r[0] for r in results], x.shape).astype(dtype)
        taus = np.reshape([r[1][:n - 1] for r in results], x.shape[:-2] + (n - 1,))
        return [packed, taus.astype(dtype)]
    return Case(lambda x: linalg.hessenberg(x), reference, [x], values=_draw)


def _tridiagonal_case(rng: np.random.Generator, dtype: Any) -> Case:
    n = int(rng.integers(1, 5))
    lower = bool(rng.integers(0, 2))
    x = _draw(rng, _batch_shape(rng) + (n, n), dtype)

    def reference(x):
        # LAPACK in the dtype jaxlite computes in (complex64 for a complex128 draw with x64
        # off): a float32 reduction is a few ulps of the matrix's norm from the float64 one.
        x = x.astype(canonicalize_dtype(x.dtype))
        batch = x.shape[:-2]
        results = _lapack_each("sytrd", x, lower=int(lower))
        real = _real_of(dtype)
        packed, d = _stack_outputs(results, [0, 1], [x.shape, batch + (n,)], [dtype, real])
        e = np.reshape([r[2][:n - 1] for r in results], batch + (n - 1,)).astype(real)
        taus = np.reshape([r[3][:n - 1] for r in results], batch + (n - 1,)).astype(dtype)
        return [packed, d, e, taus]
    return Case(lambda x: linalg.tridiagonal(x, lower=lower), reference, [x], values=_draw)


def _schur_case(rng: np.random.Generator, dtype: Any) -> Case:
    n = int(rng.integers(1, 5))
    vectors = bool(rng.integers(0, 2))
    x = _draw(rng, _batch_shape(rng) + (n, n), dtype)
    output = "complex" if np.dtype(dtype).kind == "c" else "real"

    def reference(x):
        # in the dtype jaxlite computes in: the signs of Schur vectors follow rounding
        x = x.astype(canonicalize_dtype(x.dtype))
        pairs = [scipy.linalg.schur(m, output=output) for m in x.reshape((-1, n, n))]
        outs = [np.reshape([p[i] for p in pairs], x.shape).astype(dtype) for i in (0, 1)]
        return outs if vectors else outs[:1]
    return Case(lambda x: linalg.schur(x, compute_schur_vectors=vectors), reference, [x],
                values=_draw)


def _reflectors_np(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """The m x m product H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i the unit-led column i
    of a's strict lower triangle."""
    m = a.shape[0]
    wide = np.result_type(a.dtype, np.float64)
    q = np.eye(m, dtype=wide)
    for i, tau in enumerate(taus):
        v = np.zeros(m, wide)
        v[i] = 1
        v[i + 1:] = a[i + 1:, i]
        q = q @ (np.eye(m) - tau * np.outer(v, np.conj(v)))
    return q


def _householder_product_case(rng: np.random.Generator, dtype: Any) -> Case:
    n = int(rng.integers(1, 4))
    m = n + int(rng.integers(0, 3))
    k = int(rng.integers(0, n + 1))
    batch = _batch_shape(rng)
    a = _draw(rng, batch + (m, n), dtype)
    taus = _draw(rng, batch + (k,), dtype)

    def reference(a, taus):
        out = [_reflectors_np(x, t)[:, :n] for x, t in
               zip(a.reshape((-1, m, n)), taus.reshape((a.size // (m * n), k)))]
        return np.reshape(out, a.shape).astype(dtype)
    return Case(linalg.householder_product, reference, [a, taus], values=_draw)


def _ormqr_case(rng: np.random.Generator, dtype: Any) -> Case:
    m, n = (int(s) for s in rng.integers(1, 5, 2))
    k = int(rng.integers(0, min(m, n) + 1))
    left, transpose = (bool(b) for b in rng.integers(0, 2, 2))
    other = int(rng.integers(1, 4))
    batch = _batch_shape(rng)
    a = _draw(rng, batch + (m, n), dtype)
    taus = _draw(rng, batch + (k,), dtype)
    c = _draw(rng, batch + ((m, other) if left else (other, m)), dtype)

    def reference(a, taus, c):
        out = []
        for x, t, y in zip(a.reshape((-1, m, n)), taus.reshape((a.size // (m * n), k)),
                           c.reshape((-1,) + c.shape[-2:])):
            q = _reflectors_np(x, t)
            q = np.conj(q.T) if transpose else q
            out.append(q @ y if left else y @ q)
        return np.reshape(out, c.shape).astype(dtype)
    return Case(lambda a, t, c: linalg.ormqr(a, t, c, left=left, transpose=transpose),
                reference, [a, taus, c], values=_draw)


def _cholesky_update_case(rng: np.random.Generator, dtype: Any) -> Case:
    """An upper triangular R with a dominant diagonal (either sign: the rotations keep
    R^T R + w w^T whatever R's signs) against the Cholesky factor of R^T R + w w^T."""
    n = int(rng.integers(1, 5))
    r = _draw(rng, (n, n), dtype)
    w = _draw(rng, (n,), dtype)
    boost = np.asarray(3 * n * np.eye(n), dtype)

    def reference(r, w):
        upper = np.triu(r + boost).astype(np.float64)
        product = upper.T @ upper + np.outer(w, w)
        return np.linalg.cholesky(product).T.astype(dtype)
    mask = np.triu(np.ones((n, n), dtype))

    def fun(r, w):
        return linalg.cholesky_update(lax.add(lax.mul(r, mask), boost), w)
    return Case(fun, reference, [r, w], values=_draw)


def _symmetric_product_case(rng: np.random.Generator, dtype: Any) -> Case:
    m, n = (int(s) for s in rng.integers(1, 5, 2))
    alpha, beta = (float(v) for v in rng.standard_normal(2))
    batch = _batch_shape(rng)
    a = _draw(rng, batch + (m, n), dtype)
    c = _draw(rng, batch + (m, m), dtype)

    def reference(a, c):
        return (alpha * a @ np.swapaxes(a, -1, -2) + beta * c).astype(dtype)
    return Case(lambda a, c: linalg.symmetric_product(a, c, alpha=alpha, beta=beta),
                reference, [a, c], values=_draw)


NO_DERIVATIVE = "JAX defines no derivative, so neither does jaxlite"
RECORDS = BASE_RECORDS + [
    Record("geqrf", _geqrf_case, dtypes=INEXACT, grad=False, notes=NO_DERIVATIVE),
    Record("geqp3", _geqp3_case, dtypes=INEXACT, grad=False, notes=NO_DERIVATIVE),
    Record("hessenberg", _hessenberg_case, dtypes=INEXACT, grad=False, notes=NO_DERIVATIVE),
    Record("tridiagonal", _tridiagonal_case, dtypes=INEXACT, grad=False,
           notes=NO_DERIVATIVE),
    Record("schur", _schur_case, dtypes=INEXACT, grad=False,
           notes="against scipy.linalg.schur (gees); " + NO_DERIVATIVE),
    Record("householder_product", _householder_product_case, dtypes=INEXACT, grad=False,
           notes="against the explicit product of the reflectors; " + NO_DERIVATIVE),
    Record("ormqr", _ormqr_case, dtypes=INEXACT, grad=False,
           notes="against the explicit Q times c; " + NO_DERIVATIVE),
    Record("cholesky_update", _cholesky_update_case, dtypes=(np.float32, np.float64),
           grad=False, notes="batched here (JAX's primitive is not); " + NO_DERIVATIVE),
    Record("symmetric_product", _symmetric_product_case, dtypes=(np.float32, np.float64),
           grad=False, notes=NO_DERIVATIVE),
]
