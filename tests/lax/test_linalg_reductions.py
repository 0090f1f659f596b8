"""The lax.linalg names added after the first factorizations (hessenberg, tridiagonal, schur,
householder_product, ormqr, cholesky_update, symmetric_product, qdwh, pivoted qr and the
implementation enums): JAX's signatures, return conventions and errors, and values
against scipy. Values, batching and jit of each primitive on random inputs are checked by
the shared records (records_linalg.py).

Numbers marked "JAX 0.10.2" were printed by /tmp/jaxvenv/bin/python with
`jax.config.update("jax_enable_x64", True)` and `from jax.lax import linalg as L`:
`L.qdwh(x, max_iterations=mi)[2:]` for the matrices `_qdwh_input` builds, and
`jax.grad(lambda a: L.qr(a, pivoting=True, full_matrices=False)[1].sum())(a)` with
`a = np.arange(12.0).reshape(4, 3) ** 1.5`.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.linalg

import jaxlite as jax
from jaxlite.lax import linalg

P, K = "POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY"
JAX_SIGNATURES = {
    "cholesky_update": [("r_matrix", P, None), ("w_vector", P, None)],
    "hessenberg": [("a", P, None)],
    "householder_product": [("a", P, None), ("taus", P, None)],
    "ormqr": [("a", P, None), ("taus", P, None), ("c", P, None), ("left", K, True),
              ("transpose", K, False)],
    "qdwh": [("x", P, None), ("is_hermitian", K, False), ("max_iterations", K, None),
             ("eps", K, None), ("dynamic_shape", K, None)],
    "schur": [("x", P, None), ("compute_schur_vectors", K, True), ("sort_eig_vals", K, False),
              ("select_callable", K, None)],
    "symmetric_product": [("a_matrix", P, None), ("c_matrix", P, None), ("alpha", K, 1.0),
                          ("beta", K, 0.0), ("symmetrize_output", K, False)],
    "tridiagonal": [("a", P, None), ("lower", K, True)],
}


@pytest.mark.parametrize("name", sorted(JAX_SIGNATURES))
def test_signatures_are_jax_signatures(name):
    params = inspect.signature(getattr(linalg, name)).parameters.values()
    ours = [(p.name, p.kind.name, None if p.default is inspect.Parameter.empty else p.default)
            for p in params]
    assert ours == JAX_SIGNATURES[name]


def test_enums_have_jax_members():
    assert [(e.name, e.value) for e in linalg.EigImplementation] == [
        ("CUSOLVER", "cusolver"), ("MAGMA", "magma"), ("LAPACK", "lapack")]
    assert [(e.name, e.value) for e in linalg.EighImplementation] == [
        ("QR", "qr"), ("JACOBI", "jacobi"), ("QDWH", "qdwh")]
    assert [e.value for e in linalg.SvdAlgorithm] == [
        "default", "QR", "Jacobi", "polar", "divide_and_conquer"]


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_hessenberg_and_householder_product_rebuild_the_matrix(dtype):
    with jax.enable_x64(True):
        a = _random((5, 5), dtype)
        packed, taus = linalg.hessenberg(a)
        assert isinstance(linalg.hessenberg(a), list) and taus.shape == (4,)
        h = np.triu(np.asarray(packed), -1)
        q = np.eye(5, dtype=dtype)
        q[1:, 1:] = np.asarray(linalg.householder_product(np.asarray(packed)[1:, :-1], taus))
        np.testing.assert_allclose(q @ h @ q.conj().T, a, atol=1e-13)
        h_scipy = scipy.linalg.hessenberg(a)
        np.testing.assert_allclose(h, h_scipy, atol=1e-13)


@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_diagonals_have_the_eigenvalues(lower):
    with jax.enable_x64(True):
        a = _random((5, 5), np.complex128)
        a = a + a.conj().T
        packed, d, e, taus = linalg.tridiagonal(a, lower=lower)
        assert d.dtype == np.float64 and e.dtype == np.float64 and taus.dtype == np.complex128
        t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), 1) + np.diag(np.asarray(e), -1)
        np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a), atol=1e-13)


def test_schur_returns_lists_and_refuses_sorting():
    with jax.enable_x64(True):
        a = _random((4, 4), np.float64)
        t, z = linalg.schur(a)
        np.testing.assert_allclose(np.asarray(z) @ np.asarray(t) @ np.asarray(z).T, a,
                                   atol=1e-13)
        only = linalg.schur(a, compute_schur_vectors=False)
        assert isinstance(only, list) and len(only) == 1
        np.testing.assert_array_equal(np.asarray(only[0]), np.asarray(t))
    with pytest.raises(NotImplementedError, match="sort feature of LAPACK's gees"):
        linalg.schur(np.eye(2, dtype=np.float32), sort_eig_vals=True)


def test_cholesky_update_and_symmetric_product_values():
    # JAX 0.10.2: cholesky_update(chol([[4, 1], [1, 3]]).T, [1, 2]) in float32
    r = np.linalg.cholesky(np.array([[4.0, 1], [1, 3]], np.float32)).T
    np.testing.assert_allclose(np.asarray(linalg.cholesky_update(r, np.array([1.0, 2.0],
                                                                            np.float32))),
                               [[2.236068, 1.3416407], [0.0, 2.280351]], rtol=2e-7)
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    c = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    out = linalg.symmetric_product(a, c, alpha=2.0, beta=3.0)
    np.testing.assert_array_equal(np.asarray(out), 2 * a @ a.T + 3 * c)
    sym = linalg.symmetric_product(a, c, symmetrize_output=True)
    np.testing.assert_array_equal(np.asarray(sym), [[5, 14], [14, 50]])  # JAX 0.10.2


def _qdwh_input(dtype, shape, rng):
    x = rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape).astype(np.float32)
    return x


def test_qdwh_iteration_counts_are_jax_counts_and_the_factors_scipy_polar():
    # JAX 0.10.2 (see the module docstring): (num_iters, is_converged) for
    # max_iterations None and 2, for each dtype and shape in this order.
    expected = {"float32": (4, 2), "float64": (6, 2), "complex64": (4, 2)}
    rng = np.random.default_rng(42)
    with jax.enable_x64(True):
        for dtype in (np.float32, np.float64, np.complex64):
            for shape in ((4, 4), (6, 3), (5, 5)):
                x = _qdwh_input(dtype, shape, rng)
                for max_iterations, count in zip((None, 2), expected[np.dtype(dtype).name]):
                    u, h, k, converged = linalg.qdwh(x, max_iterations=max_iterations)
                    assert (int(k), bool(converged)) == (count, max_iterations is None)
                    assert k.dtype == np.int64 and converged.dtype == np.bool_  # weak, x64
                u, h, _, _ = linalg.qdwh(x)
                u_ref, h_ref = scipy.linalg.polar(x.astype(np.complex128))
                tol = 1e-5 if np.dtype(dtype).itemsize <= 8 else 1e-12
                np.testing.assert_allclose(np.asarray(u), u_ref, atol=tol)
                np.testing.assert_allclose(np.asarray(h), h_ref, atol=tol * 10)
                assert u.dtype == dtype and h.dtype == dtype


def test_qdwh_under_jit_and_its_errors():
    x = _random((5, 3), np.float32)
    u, h, k, converged = jax.jit(linalg.qdwh)(x)
    eager = linalg.qdwh(x)
    np.testing.assert_allclose(np.asarray(u), np.asarray(eager[0]), atol=1e-6)
    assert int(k) == int(eager[2]) and bool(converged)
    with pytest.raises(ValueError, match="must have M >= N"):
        linalg.qdwh(np.ones((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="dynamic_shape"):
        linalg.qdwh(x, dynamic_shape=(4, 3))


def test_pivoted_qr_against_scipy_and_its_gradient_against_jax():
    with jax.enable_x64(True):
        a = np.arange(12.0).reshape(4, 3) ** 1.5
        for full in (True, False):
            q, r, p = linalg.qr(a, pivoting=True, full_matrices=full)
            q_ref, r_ref, p_ref = scipy.linalg.qr(a, pivoting=True,
                                                  mode="full" if full else "economic")
            assert p.dtype == np.int32 and np.asarray(p).tolist() == p_ref.tolist() == [2, 0, 1]
            np.testing.assert_allclose(np.asarray(q), q_ref, atol=1e-13)
            np.testing.assert_allclose(np.asarray(r), r_ref, atol=1e-12)
        grad = jax.grad(lambda a: linalg.qr(a, pivoting=True, full_matrices=False)[1].sum())(a)
        jax_grad = [[-1.143061643977721, 0.2615090158411349, 0.489318038809013],
                    [-0.6826797733204157, -1.322946978775367, 1.0416526330266083],
                    [-0.6009473057114525, -1.074000370622785, 0.0670732487988003],
                    [-0.5478921018699514, -0.16717514733072697, -1.6171957538079276]]
        np.testing.assert_allclose(np.asarray(grad), jax_grad, rtol=1e-12)


ERRORS = [
    (lambda: linalg.hessenberg(np.ones(3, np.float32)), TypeError,
     "Input 0 to hessenberg must have rank at least 2"),
    (lambda: linalg.hessenberg(np.ones((3, 4), np.float32)), ValueError,
     r"must have shape \[..., n, n\]"),
    (lambda: linalg.hessenberg(np.ones((3, 3), np.int32)), TypeError,
     "hessenberg does not accept dtype int32"),
    (lambda: linalg.schur(np.ones((2, 3), np.float32)), ValueError,
     "The input to schur must be a square matrix"),
    (lambda: linalg.tridiagonal(np.ones((0, 0), np.float32)), ValueError,
     "The input to tridiagonal must be a square matrix"),
    (lambda: linalg.cholesky_update(np.eye(3, dtype=np.float32), np.ones(2, np.float32)),
     ValueError, "Rank-1 update to Cholesky decomposition"),
    (lambda: linalg.cholesky_update(np.ones((2, 3, 3), np.float32), np.ones((2, 3),
                                                                           np.float32)),
     TypeError, "must have a rank of exactly 2"),
    (lambda: linalg.householder_product(np.ones((2, 3), np.float32), np.ones(2, np.float32)),
     ValueError, "at least as many rows as columns"),
    (lambda: linalg.ormqr(np.ones((3, 2), np.float32), np.ones(2, np.float32),
                          np.ones((2, 2), np.float32)), ValueError,
     "ormqr with left=True expects c to have the same number of rows"),
    (lambda: linalg.symmetric_product(np.ones((2, 3), np.float32),
                                      np.ones((3, 3), np.float32)), ValueError,
     "symmetric_update expects a rectangular matrix"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_jax_errors(index):
    call, error, message = ERRORS[index]
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("fun", [lambda a: linalg.hessenberg(a)[0],
                                 lambda a: linalg.schur(a)[0],
                                 lambda a: linalg.tridiagonal(a)[1]])
def test_no_derivatives_as_in_jax(fun):
    with pytest.raises(NotImplementedError, match="Differentiation rule for '.*' not "
                                                  "implemented"):
        jax.grad(lambda a: fun(a).sum())(np.eye(3, dtype=np.float32))
