"""Tests of jaxlite.numpy.linalg: values against numpy.linalg, dtypes against JAX.

Values: hypothesis draws batch shapes (empty batches included), matrix sizes (0 where
numpy allows it) and dtypes; matrices are built with known, small condition numbers, and
tolerances are a multiple of the dtype's epsilon times the size and the condition number.
Outputs that are unique only up to a phase (eigenvectors, singular vectors, Q and R) are
compared through what is unique: reconstructions, orthonormality, magnitudes.
Dtypes: tests/data/linalg_dtypes.json, written by tools/gen_linalg_dtypes.py with JAX
0.10.2, holds the result dtypes (or the exception) of each case of linalg_cases.py.
Derivatives: check_grads in float64, at points where the functions are smooth.
"""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.test_util import check_grads
from linalg_cases import CASES, case_inputs

L = jnp.linalg
DTYPE_TABLE = json.loads((Path(__file__).parents[1] / "data" / "linalg_dtypes.json")
                         .read_text())
INEXACT = ["float32", "float64", "complex64", "complex128"]


# ----------------------------------------------------------------------------- helpers

def x64_for(dtype) -> contextlib.AbstractContextManager:
    """64-bit types on for 64-bit dtypes, off otherwise (the default)."""
    return jaxlite.enable_x64(np.dtype(dtype) in (np.float64, np.complex128))


def tolerance(dtype, size: int = 1, cond: float = 1.0) -> float:
    """Error bound of a backward-stable algorithm: a multiple of eps * size * condition."""
    return 30.0 * np.finfo(np.dtype(dtype)).eps * max(size, 1) * cond


def assert_close(actual, expected, tol: float) -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual.astype(np.complex128), expected.astype(np.complex128),
                               rtol=tol, atol=tol)


def assert_orthonormal_columns(q, tol: float) -> None:
    gram = np.conj(np.swapaxes(q, -1, -2)) @ q
    assert_close(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), tol)


def random_values(rng, shape, dtype) -> np.ndarray:
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def unitary(rng, batch, n, dtype) -> np.ndarray:
    """Random unitary (orthogonal) matrices from the QR of Gaussian ones."""
    q, _ = np.linalg.qr(random_values(rng, batch + (n, n), np.complex128 if
                                      np.dtype(dtype).kind == "c" else np.float64))
    return q


def with_singular_values(rng, batch, m, n, dtype, low=1.0, high=2.0) -> np.ndarray:
    """Matrices (batch, m, n) whose singular values lie in [low, high] (condition <= 2)."""
    k = min(m, n)
    s = rng.uniform(low, high, batch + (k,))
    u = unitary(rng, batch, m, dtype)[..., :, :k]
    v = unitary(rng, batch, n, dtype)[..., :, :k]
    return ((u * s[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))).astype(dtype)


def hermitian_pd(rng, batch, n, dtype) -> np.ndarray:
    """Hermitian positive-definite matrices with eigenvalues spread over [1, 2 + n]."""
    q = unitary(rng, batch, n, dtype)
    w = np.sort(rng.uniform(1.0, 2.0, batch + (n,)) + np.arange(n), axis=-1)
    a = (q * w[..., None, :]) @ np.conj(np.swapaxes(q, -1, -2))
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def rectangular(shape, m_extra, dtype, seed):
    """(batch, m, n, matrices of condition <= 2, tolerance) for m = n + m_extra >= 0."""
    (batch, n), rng = shape, np.random.default_rng(seed)
    m = max(n + m_extra, 0)
    return batch, m, n, with_singular_values(rng, batch, m, n, dtype), \
        tolerance(dtype, max(m, n), cond=2.0)


shapes = st.tuples(st.lists(st.integers(0, 2), max_size=2).map(tuple), st.integers(0, 4))
nonempty = st.tuples(st.lists(st.integers(1, 2), max_size=2).map(tuple), st.integers(1, 4))
dtypes_st = st.sampled_from(INEXACT)
seeds = st.integers(0, 2**16)


# ----------------------------------------------------------------------------- dtypes

@pytest.mark.parametrize("key", sorted(DTYPE_TABLE))
def test_result_dtypes_match_jax(key):
    name, dtype, flag = key.split("|")
    expected = DTYPE_TABLE[key]
    with jaxlite.enable_x64(flag == "x64=True"):
        args = [jnp.asarray(a) for a in case_inputs(name, np.dtype(dtype))]
        call = CASES[name][0]
        if isinstance(expected, str):
            with pytest.raises(getattr(__builtins__, expected, None) or Exception) as info:
                call(L, *args)
            assert type(info.value).__name__ == expected
            return
        leaves = jaxlite.tree_util.tree_leaves(call(L, *args))
        assert [str(leaf.dtype) for leaf in leaves] == expected


def test_named_results_are_jax_namedtuples():
    a = np.eye(2, dtype=np.float32) + 0.5
    assert L.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert L.eig(a)._fields == ("eigenvalues", "eigenvectors")
    assert L.svd(a)._fields == ("U", "S", "Vh")
    assert L.qr(a)._fields == ("Q", "R")
    assert L.slogdet(a)._fields == ("sign", "logabsdet")
    assert type(L.lstsq(a, a)) is tuple


# ----------------------------------------------------------------------------- solvers

@given(shape=shapes, dtype=dtypes_st, seed=seeds, k=st.integers(0, 3))
def test_solve_inv_det_slogdet(shape, dtype, seed, k):
    (batch, n), rng = shape, np.random.default_rng(seed)
    a = with_singular_values(rng, batch, n, n, dtype)
    b = random_values(rng, batch + (n, k), dtype)
    tol = tolerance(dtype, n, cond=2.0)
    with x64_for(dtype):
        assert_close(L.solve(a, b), np.linalg.solve(a, b), tol)
        assert_close(L.inv(a), np.linalg.inv(a), tol)
        assert_close(L.det(a), np.linalg.det(a.astype(np.complex128)), tol * 2.0 ** n)
        sign, logdet = L.slogdet(a)
        expected_sign, expected_logdet = np.linalg.slogdet(a.astype(np.complex128))
        assert_close(sign, expected_sign, tol)
        assert_close(logdet, expected_logdet, tol)
        assert np.asarray(logdet).dtype == np.finfo(dtype).dtype
        if np.dtype(dtype).kind == "f":
            assert_close(L.slogdet(a, method="qr").logabsdet, expected_logdet, tol)
        if n:
            vector = random_values(rng, (n,), dtype)
            assert_close(L.solve(a, vector), np.linalg.solve(a, vector[..., None])[..., 0],
                         tol)


def test_solve_broadcasts_batches_and_checks_shapes():
    rng = np.random.default_rng(0)
    a = with_singular_values(rng, (2, 1), 3, 3, np.float32)
    b = random_values(rng, (4, 3, 2), np.float32)
    assert_close(L.solve(a, b), np.linalg.solve(a, b), tolerance(np.float32, 3, 2.0))
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        L.solve(a[0], b[:2, :, 0])
    with pytest.raises(ValueError, match=r"shape \[..., n, n\]"):
        L.inv(np.ones((2, 3)))
    with pytest.raises(ValueError, match="Unknown slogdet method"):
        L.slogdet(a, method="cholesky")


def test_singular_matrices():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    assert float(L.det(singular)) == 0.0
    sign, logdet = L.slogdet(singular)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    assert float(L.cond(np.diag(np.array([1.0, 0.0], np.float32)))) == np.inf
    assert np.isnan(float(L.cond(np.array([[1.0, np.nan], [0.0, 1.0]], np.float32))))


@given(shape=nonempty, dtype=dtypes_st, seed=seeds, ind=st.integers(1, 2))
def test_tensorinv_tensorsolve(shape, dtype, seed, ind):
    (_, n), rng = shape, np.random.default_rng(seed)
    a = with_singular_values(rng, (), n * 2, n * 2, dtype).reshape(
        (2, n, 2 * n) if ind == 1 else (2, n, 2, n))
    a = a.reshape((2 * n, 2, n)) if ind == 1 else a
    b = random_values(rng, a.shape[:ind], dtype)
    tol = tolerance(dtype, 2 * n, cond=2.0)
    with x64_for(dtype):
        assert_close(L.tensorinv(a, ind), np.linalg.tensorinv(a, ind), tol)
        assert_close(L.tensorsolve(a, b), np.linalg.tensorsolve(a, b), tol)
        if ind == 2:
            moved = np.moveaxis(a, 1, 3)  # axes=(1,) moves that axis back to the end
            assert_close(L.tensorsolve(moved, b, axes=(1,)),
                         np.linalg.tensorsolve(moved, b, axes=(1,)), tol)
    with pytest.raises(ValueError, match="tensorinv is only possible"):
        L.tensorinv(np.ones((2, 3, 6)), 1)


# ----------------------------------------------------------------------------- SVD family

@given(shape=shapes, m_extra=st.integers(-2, 2), dtype=dtypes_st, seed=seeds)
def test_svd_pinv_rank_cond(shape, m_extra, dtype, seed):
    batch, m, n, a, tol = rectangular(shape, m_extra, dtype, seed)
    k = min(m, n)
    with x64_for(dtype):
        s_expected = np.linalg.svd(a, compute_uv=False)
        assert_close(L.svdvals(a), s_expected, tol)
        assert_close(L.svd(a, compute_uv=False), s_expected, tol)
        for full in (True, False):
            u, s, vh = (np.asarray(x) for x in L.svd(a, full_matrices=full))
            assert u.shape == batch + (m, m if full else k)
            assert vh.shape == batch + (n if full else k, n)
            rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
            assert_close(rebuilt, a, tol)
            assert_orthonormal_columns(u, tol)
            assert_orthonormal_columns(np.conj(np.swapaxes(vh, -1, -2)), tol)
        assert_close(L.pinv(a), np.linalg.pinv(a), tol)
        if not k:  # JAX takes the largest singular value of none (numpy says rank 0)
            with pytest.raises(ValueError, match="zero-size array to reduction operation"):
                L.matrix_rank(a)
        if k:
            assert_close(L.matrix_rank(a), np.linalg.matrix_rank(a), 0)
            assert_close(L.cond(a), np.linalg.cond(a), tol)
            assert_close(L.cond(a, -2), np.linalg.cond(a, -2), tol)
            assert_close(L.norm(a, "nuc", axis=(-2, -1)), np.linalg.norm(a, "nuc",
                                                                          axis=(-2, -1)), tol)
            assert_close(L.matrix_norm(a, ord=-2), np.linalg.matrix_norm(a, ord=-2), tol)


@given(shape=nonempty, dtype=dtypes_st, seed=seeds)
def test_svd_hermitian_and_rank_deficient(shape, dtype, seed):
    (batch, n), rng = shape, np.random.default_rng(seed)
    h = hermitian_pd(rng, batch, n, dtype)
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    q = unitary(rng, batch, n, dtype)
    indefinite = ((q * (signs * (np.arange(n) + 1.0))[..., None, :])
                  @ np.conj(np.swapaxes(q, -1, -2))).astype(dtype)
    tol = tolerance(dtype, n, cond=n + 2.0)
    with x64_for(dtype):
        for a in (h, indefinite):
            u, s, vh = (np.asarray(x) for x in L.svd(a, hermitian=True))
            assert_close(s, np.linalg.svd(a, compute_uv=False), tol)
            assert_close((u * s[..., None, :]) @ vh, a, tol)
            assert_close(L.pinv(a, hermitian=True), np.linalg.pinv(a), tol)
        # Rank n - 1: the smallest singular value is far below the default cutoff.
        deficient = with_singular_values(rng, batch, n + 1, n, dtype)
        deficient = (deficient @ np.diag(np.r_[np.ones(n - 1), 0.0])).astype(dtype)
        assert_close(L.matrix_rank(deficient), np.full(batch, n - 1), 0)
        assert_close(L.pinv(deficient), np.linalg.pinv(deficient.astype(np.complex128),
                                                       rcond=1e-3), tol)


@given(n=st.integers(0, 4), m_extra=st.integers(-2, 2), k=st.integers(0, 2),
       dtype=dtypes_st, seed=seeds)
def test_lstsq(n, m_extra, k, dtype, seed):
    rng = np.random.default_rng(seed)
    m = max(n + m_extra, 0)
    a = with_singular_values(rng, (), m, n, dtype)
    b = random_values(rng, (m, k) if k else (m,), dtype)
    tol = tolerance(dtype, max(m, n), cond=2.0)
    with x64_for(dtype):
        x, resid, rank, s = L.lstsq(a, b, numpy_resid=True)
        ex, eresid, erank, es = np.linalg.lstsq(a, b, rcond=None)
        assert_close(x, ex, tol)
        assert_close(resid, eresid, tol * max(1.0, float(np.max(np.abs(b), initial=0)) ** 2))
        assert int(rank) == erank
        assert_close(s, es, tol)
        x2, resid2, _, _ = L.lstsq(a, b)
        residual = b - a @ ex if b.ndim == 2 else (b - a @ ex)[:, None]
        assert_close(resid2, np.sum(np.abs(residual) ** 2, axis=0).astype(resid2.dtype),
                     tol * max(1.0, float(np.max(np.abs(b), initial=0)) ** 2))
    with pytest.raises(TypeError, match="two-dimensional"):
        L.lstsq(np.ones((2, 3, 3)), np.ones(3))


def test_keyword_conflicts_and_concreteness():
    a = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match="only one of rtol and rcond"):
        L.pinv(a, rtol=0.1, rcond=0.1)
    assert_close(L.pinv(a, rcond=0.1), np.eye(3), 0)
    with pytest.raises(TypeError, match="numpy_resid=True needs the rank"):
        jaxlite.jit(lambda x: L.lstsq(x, x[:, 0], numpy_resid=True))(a)


# ----------------------------------------------------------------------------- Hermitian

@given(shape=shapes, dtype=dtypes_st, seed=seeds)
def test_cholesky_eigh(shape, dtype, seed):
    (batch, n), rng = shape, np.random.default_rng(seed)
    a = hermitian_pd(rng, batch, n, dtype)
    tol = tolerance(dtype, n, cond=n + 2.0)
    with x64_for(dtype):
        assert_close(L.cholesky(a), np.linalg.cholesky(a), tol)
        assert_close(L.cholesky(a, upper=True), np.linalg.cholesky(a, upper=True), tol)
        values_expected = np.linalg.eigvalsh(a)
        assert_close(L.eigvalsh(a), values_expected, tol * (n + 2))
        for uplo in (None, "L", "U"):
            w, v = (np.asarray(x) for x in L.eigh(a, UPLO=uplo))
            assert_close(w, values_expected, tol * (n + 2))
            assert_close(a @ v, v * w[..., None, :], tol * (n + 2))
            assert_orthonormal_columns(v, tol)
        # With symmetrize_input=False only the named triangle is read.
        lower_only = np.tril(a)
        w, _ = L.eigh(lower_only, UPLO="L", symmetrize_input=False)
        assert_close(w, values_expected, tol * (n + 2))
        w, _ = L.eigh(np.triu(a), UPLO="U", symmetrize_input=False)
        assert_close(w, values_expected, tol * (n + 2))
    with pytest.raises(ValueError, match="UPLO"):
        L.eigh(np.eye(2), UPLO="X")


@given(shape=nonempty, dtype=dtypes_st, seed=seeds)
def test_eig(shape, dtype, seed):
    (batch, n), rng = shape, np.random.default_rng(seed)
    # A = S diag(lambda) S^-1 with separated eigenvalues and a well-conditioned S.
    lam = np.arange(1, n + 1) + rng.uniform(-0.2, 0.2, batch + (n,))
    s = np.eye(n) + 0.3 * with_singular_values(rng, batch, n, n, dtype)
    a = (s * lam[..., None, :]) @ np.linalg.inv(s)
    a = a.astype(dtype)
    tol = tolerance(dtype, n, cond=10.0)
    with x64_for(dtype):
        w, v = (np.asarray(x) for x in L.eig(a))
        assert w.dtype.kind == "c" and v.dtype.kind == "c"
        expected = np.sort_complex(np.linalg.eigvals(a.astype(np.complex128)))
        assert_close(np.sort_complex(w), expected, tol)
        assert_close(np.sort_complex(np.asarray(L.eigvals(a))), expected, tol)
        assert_close(a @ v, v * w[..., None, :], tol * 4)
        assert_close(np.linalg.norm(v, axis=-2), np.ones(batch + (n,)), tol)


@given(shape=shapes, m_extra=st.integers(-2, 2), dtype=dtypes_st, seed=seeds)
def test_qr(shape, m_extra, dtype, seed):
    _, m, n, a, tol = rectangular(shape, m_extra, dtype, seed)
    with x64_for(dtype):
        for mode in ("reduced", "complete"):
            q, r = (np.asarray(x) for x in L.qr(a, mode=mode))
            eq, er = np.linalg.qr(a, mode=mode)
            assert q.shape == eq.shape and r.shape == er.shape
            assert_close(q @ r, a, tol)
            assert_orthonormal_columns(q, tol)
            assert_close(np.tril(r, -1), np.zeros_like(r), 0)
            # Rows of R are unique up to a unit factor, so their magnitudes are.
            assert_close(np.abs(r)[..., :min(m, n), :], np.abs(er)[..., :min(m, n), :], tol)
        assert_close(np.abs(np.asarray(L.qr(a, mode="r"))), np.abs(np.linalg.qr(a, mode="r")),
                     tol)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        L.qr(np.eye(2), mode="full")


# ----------------------------------------------------------------------------- norms

VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 0, -1, 3.5, 0.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@given(shape=nonempty, dtype=dtypes_st, seed=seeds, keepdims=st.booleans())
def test_norms(shape, dtype, seed, keepdims):
    (batch, n), rng = shape, np.random.default_rng(seed)
    x = random_values(rng, batch + (n, n + 1), dtype)
    tol = tolerance(dtype, x.size)
    with x64_for(dtype):
        assert_close(L.norm(x, keepdims=keepdims), np.linalg.norm(x, keepdims=keepdims), tol)
        for ord in VECTOR_ORDS:
            for axis in (-1, 0):
                assert_close(L.norm(x, ord, axis, keepdims),
                             np.linalg.norm(x, ord, axis, keepdims), tol)
            assert_close(L.vector_norm(x, ord=2 if ord is None else ord, keepdims=keepdims,
                                       axis=(0, -1) if x.ndim > 2 else None),
                         np.linalg.vector_norm(x, ord=2 if ord is None else ord,
                                               keepdims=keepdims,
                                               axis=(0, -1) if x.ndim > 2 else None), tol)
        for ord in MATRIX_ORDS:
            assert_close(L.norm(x, ord, (-1, -2), keepdims),
                         np.linalg.norm(x, ord, (-1, -2), keepdims), tol)
            if ord is not None:
                assert_close(L.matrix_norm(x, ord=ord, keepdims=keepdims),
                             np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims), tol)
    assert np.asarray(L.norm(x)).dtype == np.finfo(L.norm(x).dtype).dtype


def test_norm_errors_and_empty():
    with pytest.raises(ValueError, match="Improper number of axes"):
        L.norm(np.ones((2, 2, 2)), ord=2)
    with pytest.raises(ValueError, match="Invalid order 'fro' for vector norm"):
        L.vector_norm(np.ones(3), ord="fro")
    with pytest.raises(ValueError, match="Invalid order '3' for matrix norm"):
        L.matrix_norm(np.ones((3, 3)), ord=3)
    assert_close(L.norm(np.ones((0, 3), np.float32), ord=np.inf, axis=0), np.zeros(3), 0)
    assert_close(L.vector_norm(np.arange(4), ord=1), np.array(6, np.int32), 0)


# ----------------------------------------------------------------------------- products

@given(shape=shapes, dtype=st.sampled_from(INEXACT + ["int32"]), seed=seeds)
def test_products(shape, dtype, seed):
    (batch, n), rng = shape, np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        draw = lambda s: rng.integers(-3, 4, s).astype(dtype)  # noqa: E731
    else:
        draw = lambda s: random_values(rng, s, dtype)  # noqa: E731
    a, b = draw(batch + (n, n)), draw(batch + (n, 2))
    u, v = draw(batch + (3,)), draw((3,))
    tol = tolerance(np.float64 if np.dtype(dtype).kind == "i" else dtype, n + 3, 8.0)
    with x64_for(dtype):
        assert_close(L.matmul(a, b), np.matmul(a, b), tol)
        axes = ((a.ndim - 1,), (b.ndim - 2,))
        assert_close(L.tensordot(a, b, axes=axes), np.tensordot(a, b, axes=axes), tol)
        assert_close(L.vecdot(a, a[..., ::-1, :]), np.linalg.vecdot(a, a[..., ::-1, :]), tol)
        assert_close(L.cross(u, v), np.cross(u, v), tol)
        assert_close(L.cross(np.moveaxis(u, -1, 0), v[:, None] if u.ndim > 1 else v, axis=0),
                     np.cross(np.moveaxis(u, -1, 0), v[:, None] if u.ndim > 1 else v, axis=0),
                     tol)
        assert_close(L.outer(v, u.reshape(-1)), np.outer(v, u.reshape(-1)), tol)
        assert_close(L.trace(a, offset=1), np.linalg.trace(a, offset=1), tol)
        assert_close(L.diagonal(b, offset=-1), np.linalg.diagonal(b, offset=-1), tol)
        assert_close(L.matrix_transpose(b), np.linalg.matrix_transpose(b), 0)
        for power in (0, 1, 2, 5):
            assert_close(L.matrix_power(a, power), np.linalg.matrix_power(a, power),
                         tol * 10.0 ** power)


@given(dims=st.lists(st.integers(1, 5), min_size=3, max_size=6), first_vec=st.booleans(),
       last_vec=st.booleans(), dtype=dtypes_st, seed=seeds)
def test_multi_dot(dims, first_vec, last_vec, dtype, seed):
    rng = np.random.default_rng(seed)
    mats = [random_values(rng, (dims[i], dims[i + 1]), dtype) for i in range(len(dims) - 1)]
    if first_vec:
        mats[0] = mats[0][0]
    if last_vec and len(mats) > 1:
        mats[-1] = mats[-1][:, 0]
    with x64_for(dtype):
        assert_close(L.multi_dot(mats), np.linalg.multi_dot(mats),
                     tolerance(dtype, max(dims) * len(dims), 4.0))
    with pytest.raises(ValueError, match="multi_dot"):
        L.multi_dot([np.ones((2, 2, 2)), np.ones((2, 2))])


def test_matrix_power_negative_and_cross_errors():
    rng = np.random.default_rng(1)
    a = with_singular_values(rng, (2,), 3, 3, np.float32)
    assert_close(L.matrix_power(a, -2), np.linalg.matrix_power(a, -2),
                 tolerance(np.float32, 3, 8.0))
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        L.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="one-dimensional"):
        L.outer(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        L.matrix_transpose(np.ones(3))


# ----------------------------------------------------------------------------- transformations

def _matrices(seed: int = 0, dtype=np.float64):
    """Inputs for the derivative, jit and vmap tables: well-conditioned, separated spectra."""
    rng = np.random.default_rng(seed)
    return {
        "a": with_singular_values(rng, (), 3, 3, dtype, 1.0, 3.0),
        "b": random_values(rng, (3, 2), dtype),
        "v": random_values(rng, (3,), dtype),
        "w": random_values(rng, (3,), dtype),
        "tall": with_singular_values(rng, (), 4, 3, dtype, 1.0, 3.0),
        "wide": with_singular_values(rng, (), 2, 3, dtype, 1.0, 3.0),
        "spd": hermitian_pd(rng, (), 3, dtype),
        "t4": with_singular_values(rng, (), 4, 4, dtype, 1.0, 3.0).reshape(2, 2, 2, 2),
        "b22": random_values(rng, (2, 2), dtype),
        "b4": random_values(rng, (4, 2), dtype),
    }


def _gauge_free_eigh(a):
    w, v = L.eigh(a)
    return w, (v * w ** 2) @ jnp.conj(v).T


def _gauge_free_svd(a):
    u, s, vh = L.svd(a, full_matrices=False)
    return s, (u * s ** 2) @ vh


# name -> (function, names of the inputs of _matrices)
TRANSFORM_CASES = {
    "cholesky": (lambda a: L.cholesky(a), ["spd"]),
    "cond": (lambda a: L.cond(a), ["a"]),
    "cond_1": (lambda a: L.cond(a, 1), ["a"]),
    "cross": (lambda u, v: L.cross(u, v), ["v", "w"]),
    "det": (L.det, ["a"]),
    "diagonal": (lambda a: L.diagonal(a, offset=1), ["tall"]),
    "eig": (lambda a: L.eigvals(a), ["spd"]),
    "eigh": (_gauge_free_eigh, ["spd"]),
    "eigvalsh": (lambda a: L.eigvalsh(a), ["spd"]),
    "inv": (L.inv, ["a"]),
    "lstsq": (lambda a, b: L.lstsq(a, b)[0], ["tall", "b4"]),
    "matmul": (lambda a, b: L.matmul(a, b), ["a", "b"]),
    "matrix_norm": (lambda a: L.matrix_norm(a, ord="nuc"), ["tall"]),
    "matrix_power": (lambda a: L.matrix_power(a, 3), ["a"]),
    "matrix_power_neg": (lambda a: L.matrix_power(a, -2), ["a"]),
    "matrix_transpose": (lambda a: L.matrix_transpose(a), ["tall"]),
    "multi_dot": (lambda v, a, b: L.multi_dot([v, a, b]), ["v", "a", "b"]),
    "norm": (lambda a: (L.norm(a), L.norm(a, 2), L.norm(a, 3, axis=0), L.norm(a, np.inf)),
             ["tall"]),
    "outer": (lambda u, v: L.outer(u, v), ["v", "w"]),
    "pinv": (lambda a: L.pinv(a), ["wide"]),
    "qr": (lambda a: L.qr(a), ["tall"]),
    "slogdet": (lambda a: L.slogdet(a), ["a"]),
    "solve": (lambda a, b: L.solve(a, b), ["a", "b"]),
    "solve_vector": (lambda a, v: L.solve(a, v), ["a", "v"]),
    "svd": (_gauge_free_svd, ["tall"]),
    "svdvals": (lambda a: L.svdvals(a), ["wide"]),
    "svd_hermitian": (lambda a: L.svd(a, hermitian=True, compute_uv=False), ["spd"]),
    "tensordot": (lambda a, b: L.tensordot(a, b, axes=1), ["a", "b"]),
    "tensorinv": (lambda t: L.tensorinv(t), ["t4"]),
    "tensorsolve": (lambda t, b: L.tensorsolve(t, b), ["t4", "b22"]),
    "trace": (lambda a: L.trace(a), ["a"]),
    "vecdot": (lambda u, v: L.vecdot(u, v), ["v", "w"]),
    "vector_norm": (lambda u: (L.vector_norm(u), L.vector_norm(u, ord=1)), ["v"]),
}
NOT_DIFFERENTIATED = {"eig"}  # complex output: test_eigvals_gradient takes its real part


@pytest.mark.parametrize("name", sorted(set(TRANSFORM_CASES) - NOT_DIFFERENTIATED))
def test_gradients_by_finite_differences(name):
    fn, inputs = TRANSFORM_CASES[name]
    with jaxlite.enable_x64(True):
        args = [_matrices()[k] for k in inputs]
        check_grads(fn, args, order=2, modes=("fwd", "rev"))


def test_complex_gradients():
    with jaxlite.enable_x64(True):
        m = _matrices(1, np.complex128)
        check_grads(lambda a: L.slogdet(a), [m["a"]], order=1)
        check_grads(L.det, [m["a"]], order=1)
        check_grads(L.solve, [m["a"], m["b"]], order=1)
        check_grads(L.pinv, [m["wide"]], order=1)


def test_eigvals_gradient():
    with jaxlite.enable_x64(True):
        a = _matrices()["spd"] + np.triu(np.full((3, 3), 0.1), 1)
        check_grads(lambda x: jnp.real(L.eigvals(x)), [a], order=1, modes=("fwd",))


@pytest.mark.parametrize("name", sorted(TRANSFORM_CASES))
def test_jit_and_vmap_agree_with_eager(name):
    fn, inputs = TRANSFORM_CASES[name]
    batches = [_matrices(seed, np.float32) for seed in range(3)]
    args = [batches[0][k] for k in inputs]
    eager = fn(*args)
    compiled = jaxlite.jit(fn)(*args)
    for x, y in zip(jaxlite.tree_util.tree_leaves(compiled),
                    jaxlite.tree_util.tree_leaves(eager)):
        assert_close(x, y, tolerance(np.float32, 3, 10.0))
    stacked = [np.stack([batch[k] for batch in batches]) for k in inputs]
    mapped = jaxlite.vmap(fn)(*stacked)
    for i, batch in enumerate(batches):
        one = fn(*[batch[k] for k in inputs])
        for x, y in zip(jaxlite.tree_util.tree_leaves(mapped),
                        jaxlite.tree_util.tree_leaves(one)):
            assert_close(np.asarray(x)[i], y, tolerance(np.float32, 3, 10.0))
