"""The small-matrix lowerings of lu, cholesky and triangular_solve (`lax/linalg_small.py`)
against the LAPACK kernels they replace under `jit` (the eager path and matrices above
`SMALL_MATRIX_LIMIT` still run the kernels, so eager results are the reference), in the
four dtypes, over hypothesis-drawn sizes and batches, with singular matrices, ties in
pivoting, non-finite entries, and under vmap and grad; the HLO interpreter runs the same
expansion as the cpu backend and must agree with it to the bit.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.lax import linalg
from jaxlite.lax import linalg_kernels as kernels
from jaxlite.lax import linalg_small_layout as layout_module
from jaxlite.lax.linalg_small import CACHE_BYTES, SMALL_MATRIX_LIMIT

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TRIANGULAR_FLAGS = [dict(left_side=s, lower=lo, transpose_a=t, conjugate_a=c,
                         unit_diagonal=u)
                    for s in (True, False) for lo in (True, False) for t in (True, False)
                    for c in (False, True) for u in (False, True)]


def _eps(dtype):
    return np.finfo(np.dtype(dtype)).eps


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _close(got, want, dtype, scale):
    """Agreement to rounding: `scale` eps of the dtype relative to max |want|."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    size = max(float(np.max(np.abs(want), initial=0.0)), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=scale * _eps(dtype) * size)


sizes = st.integers(1, 40)
batches = st.sampled_from([(), (1,), (3,), (2, 3), (17,)])
dtypes = st.sampled_from(DTYPES)


@given(m=sizes, extra=st.integers(-3, 3), batch=batches, dtype=dtypes, seed=st.integers(0, 99))
def test_lu_matches_getrf(m, extra, batch, dtype, seed):
    n = max(1, m + extra)
    with jax.enable_x64(True):
        a = _random(np.random.default_rng(seed), batch + (m, n), dtype)
        packed, pivots, perm = jax.jit(linalg.lu)(a)
        want = kernels.lu(a)
        np.testing.assert_array_equal(np.asarray(pivots), want[1])
        np.testing.assert_array_equal(np.asarray(perm), want[2])
        assert pivots.dtype == perm.dtype == np.int32
        # The factors are growth-bounded by partial pivoting: entries of L are <= 1.
        _close(packed, want[0], dtype, 8 * max(m, n))


@given(n=sizes, batch=batches, dtype=dtypes, seed=st.integers(0, 99))
def test_cholesky_matches_potrf(n, batch, dtype, seed):
    with jax.enable_x64(True):
        x = _random(np.random.default_rng(seed), batch + (n, n), dtype)
        spd = x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n, dtype=dtype)
        spd = spd + np.triu(_random(np.random.default_rng(seed + 1), spd.shape, dtype), 1)
        got = jax.jit(lambda v: linalg.cholesky(v, symmetrize_input=False))(spd)
        _close(got, kernels.cholesky(spd), dtype, 8 * n)


@given(n=sizes, k=st.integers(1, 5), batch=batches, dtype=dtypes,
       flags=st.sampled_from(TRIANGULAR_FLAGS), seed=st.integers(0, 99))
def test_triangular_solve_matches_trsm(n, k, batch, dtype, flags, seed):
    rng = np.random.default_rng(seed)
    with jax.enable_x64(True):
        # A dominant diagonal keeps the solve well conditioned; the other triangle is
        # garbage that must not be read.
        a = _random(rng, batch + (n, n), dtype) + 2 * n * np.eye(n, dtype=dtype)
        b = _random(rng, batch + ((n, k) if flags["left_side"] else (k, n)), dtype)
        got = jax.jit(lambda x, y: linalg.triangular_solve(x, y, **flags))(a, b)
        want = kernels.triangular_solve(a, b, **flags)
        _close(got, want, dtype, 8 * n)


def test_pivoting_takes_the_first_largest_row_on_ties():
    with jax.enable_x64(True):
        cases = [[[1., 2.], [-1., 3.]], [[0., 1.], [0., 2.]], [[-2., 0., 1.], [2., 1., 0.],
                                                             [2., 5., 1.]],
                 [[1 + 1j, 0], [-2j, 1]], [[1j, 0], [-1, 1]], np.zeros((3, 3)),
                 [[0., 0., 1.], [0., 2., 0.], [3., 0., 0.]]]
        for case in cases:
            for dtype in (np.float32, np.complex128):
                a = np.array(case).astype(dtype) if np.iscomplexobj(case) is False or \
                    np.issubdtype(dtype, np.complexfloating) else None
                if a is None:
                    continue
                got = jax.jit(linalg.lu)(a)
                want = kernels.lu(a)
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(np.asarray(g), w)


def test_integer_matrices_pivot_as_lapack():
    """Exact arithmetic (small integers, n <= 4): every tie is a real tie, and the pivots
    are LAPACK's."""
    rng = np.random.default_rng(3)
    with jax.enable_x64(True):
        for n in (2, 3, 4):
            a = rng.integers(-2, 3, (300, n, n)).astype(np.float64)
            got = jax.jit(linalg.lu)(a)
            want = kernels.lu(a)
            np.testing.assert_array_equal(np.asarray(got[1]), want[1])
            np.testing.assert_array_equal(np.asarray(got[2]), want[2])
            _close(got[0], want[0], np.float64, 16)


def test_singular_and_non_finite_inputs_give_lapacks_values():
    with jax.enable_x64(True):
        singular = np.array([[[1., 2.], [2., 4.]], [[0., 0.], [0., 0.]],
                             [[0., 1.], [0., 2.]]])
        for got, want in zip(jax.jit(linalg.lu)(singular), kernels.lu(singular)):
            np.testing.assert_array_equal(np.asarray(got), want)
        # solve and inv of singular matrices: infinities and NaNs as JAX (recorded from
        # JAX 0.10.2: solve(zeros, ones) = [nan, inf], inv([[1, 2], [2, 4]]) = +-inf).
        x = jax.jit(jnp.linalg.solve)(np.zeros((2, 2)), np.ones(2))
        assert np.isnan(x[0]) and np.isposinf(x[1])
        np.testing.assert_array_equal(jax.jit(jnp.linalg.inv)(singular[0]),
                                      [[-np.inf, np.inf], [np.inf, -np.inf]])
        # Not positive definite, or NaN: a Cholesky factor of NaNs (its upper triangle
        # zeroed by the wrapper, as JAX's), the batch's others fine.
        spd = np.array([[[4., 2.], [2., 3.]], [[1., 2.], [2., 1.]], [[np.nan, 0], [0, 1.]],
                        [[-1., 0.], [0., 1.]]])
        got = np.asarray(jax.jit(lambda v: linalg.cholesky(v, symmetrize_input=False))(spd))
        np.testing.assert_array_equal(got, np.tril(kernels.cholesky(spd)))
        # An infinite entry of b stays where trsm puts it.
        a = np.array([[2., 0.], [1., 1.]])
        b = np.array([[np.inf], [1.]])
        flags = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False)
        np.testing.assert_array_equal(
            jax.jit(lambda x, y: linalg.triangular_solve(x, y, **flags))(a, b),
            kernels.triangular_solve(a, b, **flags))


def test_empty_matrices_and_batches():
    for shape in [(0, 0), (3, 0, 0), (0, 3, 3), (2, 0), (0, 2)]:
        a = np.ones(shape, np.float32)
        for got, want in zip(jax.jit(linalg.lu)(a), kernels.lu(a)):
            np.testing.assert_array_equal(np.asarray(got), want)
            assert np.asarray(got).dtype == want.dtype
    for shape in [(0, 0), (0, 3, 3)]:
        a = np.ones(shape, np.float32)
        np.testing.assert_array_equal(jax.jit(linalg.cholesky)(a), kernels.cholesky(a))


def test_interpreter_runs_the_same_expansion():
    rng = np.random.default_rng(5)
    a = _random(rng, (4, 5, 5), np.float32) + 5 * np.eye(5, dtype=np.float32)
    b = _random(rng, (4, 5), np.float32)
    for fn in (jnp.linalg.solve, jnp.linalg.inv, jnp.linalg.det):
        args = (a, b) if fn is jnp.linalg.solve else (a,)
        cpu = np.asarray(jax.jit(jax.vmap(fn))(*args))
        interp = np.asarray(jax.jit(jax.vmap(fn), backend="interpreter")(*args))
        _close(cpu, interp, np.float32, 4)
    spd = a @ np.swapaxes(a, -1, -2)
    _close(jax.jit(jnp.linalg.cholesky)(spd),
           jax.jit(jnp.linalg.cholesky, backend="interpreter")(spd), np.float32, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_inv_det_slogdet_under_jit_and_vmap(dtype):
    rng = np.random.default_rng(7)
    with jax.enable_x64(True):
        a = _random(rng, (6, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
        b = _random(rng, (6, 4), dtype)
        wide = np.asarray(a, np.result_type(dtype, np.float64))
        _close(jax.jit(jax.vmap(jnp.linalg.solve))(a, b),
               np.linalg.solve(wide, b[..., None])[..., 0].astype(dtype), dtype, 64)
        _close(jax.jit(jnp.linalg.inv)(a), np.linalg.inv(wide).astype(dtype), dtype, 64)
        _close(jax.jit(jax.vmap(jnp.linalg.det))(a), np.linalg.det(wide).astype(dtype),
               dtype, 64)
        sign, logdet = jax.jit(jnp.linalg.slogdet)(a)
        want_sign, want_logdet = np.linalg.slogdet(wide)
        _close(sign, want_sign.astype(dtype), dtype, 64)
        _close(logdet, want_logdet.astype(np.finfo(dtype).dtype), dtype, 64)
        assert logdet.dtype == np.finfo(dtype).dtype


def test_gradients_agree_with_the_eager_lapack_path():
    rng = np.random.default_rng(11)
    with jax.enable_x64(True):
        a = rng.standard_normal((3, 5, 5)) + 5 * np.eye(5)
        b = rng.standard_normal((3, 5))
        spd = a @ np.swapaxes(a, -1, -2)

        def loss(x, y, s):
            solved = jax.vmap(jnp.linalg.solve)(x, y)
            packed = linalg.lu(x)[0]
            return (jnp.sum(solved ** 3) + jnp.sum(jnp.sin(packed))
                    + jnp.sum(jnp.linalg.cholesky(s) ** 2)
                    + jnp.sum(jnp.linalg.slogdet(x)[1]))
        eager = jax.grad(loss, argnums=(0, 1, 2))(a, b, spd)
        compiled = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(a, b, spd)
        for e, c in zip(eager, compiled):
            _close(c, e, np.float64, 1e4)


def test_larger_matrices_keep_the_kernel():
    n = SMALL_MATRIX_LIMIT + 1
    text = jax.jit(linalg.lu).lower(np.eye(n, dtype=np.float32)).as_text()
    assert "jaxlite_lapack_lu" in text
    small = jax.jit(linalg.lu).lower(np.eye(n - 1, dtype=np.float32)).as_text()
    assert "jaxlite_lapack" not in small


@given(steps=st.integers(0, 12), extra=st.integers(0, 30), batch=batches,
       seed=st.integers(0, 99))
def test_pivots_to_permutation_matches_the_kernel(steps, extra, batch, seed):
    size = steps + extra
    rng = np.random.default_rng(seed)
    pivots = np.stack([rng.integers(j, max(size, 1), batch) for j in range(steps)], -1) \
        if steps else np.zeros(batch + (0,), np.int64)
    pivots = pivots.astype(np.int32)
    got = jax.jit(lambda p: linalg.lu_pivots_to_permutation(p, size))(pivots)
    want = kernels.lu_pivots_to_permutation(pivots, permutation_size=size)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.dtype == np.int32


def test_large_batches_are_factored_in_chunks():
    """Batches over 16 * CACHE_BYTES go through the chunked path (a ragged last chunk
    padded and dropped); the results are the kernels' as for whole batches."""
    rng = np.random.default_rng(13)
    count = 16 * CACHE_BYTES // (12 * 12 * 4) + 37
    a = _random(rng, (count, 12, 12), np.float32) + 12 * np.eye(12, dtype=np.float32)
    packed, pivots, perm = jax.jit(linalg.lu)(a)
    want = kernels.lu(a)
    np.testing.assert_array_equal(np.asarray(pivots), want[1])
    np.testing.assert_array_equal(np.asarray(perm), want[2])
    _close(packed, want[0], np.float32, 100)
    spd = a @ np.swapaxes(a, -1, -2)
    _close(jax.jit(lambda v: linalg.cholesky(v, symmetrize_input=False))(spd),
           kernels.cholesky(spd), np.float32, 100)
    flags = dict(left_side=False, lower=True, transpose_a=True, conjugate_a=False,
                 unit_diagonal=False)
    b = _random(rng, (count, 3, 12), np.float32)
    _close(jax.jit(lambda x, y: linalg.triangular_solve(x, y, **flags))(a, b),
           kernels.triangular_solve(a, b, **flags), np.float32, 100)


# ------------------------------------------------------------- both batch layouts
# `linalg_small_layout.batch_first` picks the layout by size; these force each one, so
# that every size, dtype and batch runs through both (fresh functions: jit caches traces).

LAYOUTS = {"batch_last": dict(BATCH_FIRST_FROM=10 ** 9, ONE_FIRST=False),
           "batch_first": dict(BATCH_FIRST_FROM=1, ONE_FIRST=True)}


@contextlib.contextmanager
def _in_layout(name):
    saved = {key: getattr(layout_module, key) for key in LAYOUTS[name]}
    try:
        for key, value in LAYOUTS[name].items():
            setattr(layout_module, key, value)
        yield
    finally:
        for key, value in saved.items():
            setattr(layout_module, key, value)


@pytest.fixture(params=sorted(LAYOUTS))
def layout(request):
    with _in_layout(request.param):
        yield request.param


layouts = st.sampled_from(sorted(LAYOUTS))


layout_sizes = st.integers(1, SMALL_MATRIX_LIMIT)
layout_batches = st.sampled_from([(), (1,), (2,), (5,), (17,)])


@given(m=layout_sizes, extra=st.integers(-2, 2), batch=layout_batches, dtype=dtypes,
       seed=st.integers(0, 99), layout=layouts)
def test_lu_in_each_layout(layout, m, extra, batch, dtype, seed):
    n = min(SMALL_MATRIX_LIMIT, max(1, m + extra))
    with _in_layout(layout), jax.enable_x64(True):
        a = _random(np.random.default_rng(seed), batch + (m, n), dtype)
        packed, pivots, perm = jax.jit(lambda x: linalg.lu(x))(a)
        want = kernels.lu(a)
        np.testing.assert_array_equal(np.asarray(pivots), want[1])
        np.testing.assert_array_equal(np.asarray(perm), want[2])
        _close(packed, want[0], dtype, 8 * max(m, n))


@given(n=layout_sizes, batch=layout_batches, dtype=dtypes, seed=st.integers(0, 99), layout=layouts)
def test_cholesky_in_each_layout(layout, n, batch, dtype, seed):
    with _in_layout(layout), jax.enable_x64(True):
        x = _random(np.random.default_rng(seed), batch + (n, n), dtype)
        spd = x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n, dtype=dtype)
        # garbage above the diagonal: only the lower triangle may be read
        spd = spd + np.triu(_random(np.random.default_rng(seed + 1), spd.shape, dtype), 1)
        got = jax.jit(lambda v: linalg.cholesky(v, symmetrize_input=False))(spd)
        _close(got, kernels.cholesky(spd), dtype, 8 * n)


@given(n=layout_sizes, k=st.sampled_from([1, 2, 7]), batch=layout_batches, dtype=dtypes,
       flags=st.sampled_from(TRIANGULAR_FLAGS), seed=st.integers(0, 99), layout=layouts)
def test_triangular_solve_in_each_layout(layout, n, k, batch, dtype, flags, seed):
    rng = np.random.default_rng(seed)
    with _in_layout(layout), jax.enable_x64(True):
        a = _random(rng, batch + (n, n), dtype) + 2 * n * np.eye(n, dtype=dtype)
        b = _random(rng, batch + ((n, k) if flags["left_side"] else (k, n)), dtype)
        got = jax.jit(lambda x, y: linalg.triangular_solve(x, y, **flags))(a, b)
        _close(got, kernels.triangular_solve(a, b, **flags), dtype, 8 * n)


def _close_where_finite(got, want, scale):
    """NaNs and infinities where `want` has them (signs included), the rest close."""
    got, want = np.asarray(got), np.asarray(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.where(np.isinf(want), want, 0),
                                  np.where(np.isinf(got), got, 0))
    finite = np.isfinite(want)
    _close(np.where(finite, got, 0), np.where(finite, want, 0), want.dtype, scale)


@pytest.mark.parametrize("n", [2, 20])
def test_non_finite_inputs_in_each_layout(layout, n):
    """Singular and non-finite matrices give LAPACK's values in both layouts, at a size
    with segments (20) and without."""
    with jax.enable_x64(True):
        rng = np.random.default_rng(n)
        a = rng.standard_normal((4, n, n)) + n * np.eye(n)
        a[0, :, 0] = 0.0  # a zero column: a zero pivot, left in place
        a[1, 1, 1:] = 2 * a[1, 0, 1:]  # dependent rows
        a[1, 1, 0] = 2 * a[1, 0, 0]
        a[2, n // 2, n - 1] = np.inf
        got = jax.jit(lambda x: linalg.lu(x))(a)
        want = kernels.lu(a)
        np.testing.assert_array_equal(np.asarray(got[1]), want[1])
        np.testing.assert_array_equal(np.asarray(got[2]), want[2])
        _close_where_finite(got[0], want[0], 16 * n)
        spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
        spd[0, n - 1, n - 1] = -1.0  # not positive definite at the last pivot
        spd[1, 0, 0] = np.nan
        spd[2, n - 1, 0] = np.inf  # a NaN pivot (inf - inf): not a failure for potrf
        got = np.asarray(jax.jit(lambda v: linalg.cholesky(v, symmetrize_input=False))(spd))
        want = np.tril(kernels.cholesky(spd))  # the wrapper zeroes the upper triangle
        _close_where_finite(got, want, 16 * n)
        flags = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False)
        t = np.tril(a[3]) + n * np.eye(n)
        rhs = rng.standard_normal((n, 3))
        rhs[0, 1] = np.inf
        got = np.asarray(jax.jit(lambda x, y: linalg.triangular_solve(x, y, **flags))(t, rhs))
        want = kernels.triangular_solve(t, rhs, **flags)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


@pytest.mark.parametrize("n", [4, 32])
def test_solve_and_inv_in_each_layout_match_numpy(layout, n):
    rng = np.random.default_rng(n)
    for dtype in (np.float32, np.float64):
        with jax.enable_x64(True):
            a = (rng.standard_normal((9, n, n)) + n * np.eye(n)).astype(dtype)
            b = rng.standard_normal((9, n)).astype(dtype)
            _close(jax.jit(jax.vmap(jnp.linalg.solve))(a, b),
                   np.linalg.solve(a.astype(np.float64), b[..., None])[..., 0].astype(dtype),
                   dtype, 16 * n)
            _close(jax.jit(jnp.linalg.inv)(a), np.linalg.inv(a.astype(np.float64)).astype(dtype),
                   dtype, 16 * n)
            _close(jax.jit(jnp.linalg.inv)(a[:1]),
                   np.linalg.inv(a[:1].astype(np.float64)).astype(dtype), dtype, 16 * n)
