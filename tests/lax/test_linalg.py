"""jaxlite.lax.linalg's conventions against JAX 0.10.2: signatures, output order and values
on small matrices (the expected values were printed once by JAX on CPU), failures as NaN,
and the errors for wrong arguments. Values and derivatives of every primitive on random
inputs are checked by the shared records (records_linalg.py).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import jaxlite as jax
from jaxlite.lax import linalg

# inspect.signature of jax.lax.linalg functions, JAX 0.10.2: (name, kind, default).
P, K = "POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY"
JAX_SIGNATURES = {
    "cholesky": [("x", P, None), ("symmetrize_input", K, True)],
    "triangular_solve": [("a", P, None), ("b", P, None), ("left_side", K, False),
                         ("lower", K, False), ("transpose_a", K, False),
                         ("conjugate_a", K, False), ("unit_diagonal", K, False)],
    "lu": [("x", P, None)],
    "lu_pivots_to_permutation": [("pivots", P, None), ("permutation_size", P, None)],
    "qr": [("x", P, None), ("pivoting", K, False), ("full_matrices", K, True),
           ("use_magma", K, None)],
    "eigh": [("x", P, None), ("lower", K, True), ("symmetrize_input", K, True),
             ("sort_eigenvalues", K, True), ("subset_by_index", K, None),
             ("implementation", K, None)],
    "svd": [("x", P, None), ("full_matrices", K, True), ("compute_uv", K, True),
            ("subset_by_index", K, None), ("algorithm", K, None)],
    "eig": [("x", P, None), ("compute_left_eigenvectors", K, True),
            ("compute_right_eigenvectors", K, True), ("enable_eigvec_derivs", K, False),
            ("implementation", K, None), ("use_magma", K, None)],
    "tridiagonal_solve": [("dl", P, None), ("d", P, None), ("du", P, None), ("b", P, None),
                          ("perturb_singular", K, False)],
}


@pytest.mark.parametrize("name", sorted(JAX_SIGNATURES))
def test_signatures_are_jax_signatures(name):
    params = inspect.signature(getattr(linalg, name)).parameters.values()
    ours = [(p.name, p.kind.name, None if p.default is inspect.Parameter.empty else p.default)
            for p in params]
    assert ours == JAX_SIGNATURES[name]


def test_small_decompositions_give_jax_values():
    with jax.enable_x64(True):
        x = np.arange(6.0).reshape(3, 2)
        lu, pivots, perm = linalg.lu(x)
        np.testing.assert_allclose(np.asarray(lu), [[4, 5], [0, 1], [0.5, 0.5]], rtol=1e-15)
        assert np.asarray(pivots).tolist() == [2, 2] and pivots.dtype == np.int32
        assert np.asarray(perm).tolist() == [2, 0, 1] and perm.dtype == np.int32
        lu, pivots, perm = linalg.lu(x.reshape(2, 3))
        np.testing.assert_allclose(np.asarray(lu), [[3, 4, 5], [0, 1, 2]], rtol=1e-15)
        assert np.asarray(pivots).tolist() == [1, 1] and np.asarray(perm).tolist() == [1, 0]

        q, r = linalg.qr(x, full_matrices=False)
        np.testing.assert_allclose(np.asarray(q), [[0, 0.91287093], [-0.4472136, 0.36514837],
                                                   [-0.89442719, -0.18257419]], atol=1e-8)
        np.testing.assert_allclose(np.asarray(r), [[-4.47213595, -5.81377674],
                                                   [0, 1.09544512]], atol=1e-8)
        v, w = linalg.eigh(np.array([[2.0, 1.0], [1.0, 3.0]]))
        np.testing.assert_allclose(np.asarray(w), [1.38196601, 3.61803399], rtol=1e-8)
        np.testing.assert_allclose(np.asarray(v), [[-0.85065081, 0.52573111],
                                                   [0.52573111, 0.85065081]], rtol=1e-8)
        u, s, vh = linalg.svd(x)
        assert (u.shape, s.shape, vh.shape) == ((3, 3), (2,), (2, 2))
        np.testing.assert_allclose(np.asarray(s), [7.38648213, 0.66323581], rtol=1e-8)
        np.testing.assert_allclose(np.asarray(vh), [[-0.6011819, -0.79911221],
                                                    [-0.79911221, 0.6011819]], rtol=1e-7)
        np.testing.assert_allclose(np.asarray(linalg.svd(x, compute_uv=False)),
                                   np.asarray(s), rtol=1e-15)
        perm = linalg.lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 5)
        assert np.asarray(perm).tolist() == [2, 0, 1, 3, 4]


def test_cholesky_reads_the_lower_triangle_and_fails_with_nan():
    with jax.enable_x64(True):
        lower_only = np.array([[4.0, 100.0], [2.0, 3.0]])
        np.testing.assert_allclose(np.asarray(linalg.cholesky(lower_only,
                                                              symmetrize_input=False)),
                                   [[2, 0], [1, np.sqrt(2)]], rtol=1e-15)
        failed = np.asarray(linalg.cholesky(np.array([[1.0, 2.0], [3.0, -4.0]])))
        assert np.isnan(failed[np.tril_indices(2)]).all() and failed[0, 1] == 0


def test_triangular_solve_takes_a_vector_right_hand_side():
    a = np.array([[2.0, 0.0], [1.0, 3.0]], np.float32)
    x = linalg.triangular_solve(a, np.array([1.0, 2.0], np.float32), left_side=True,
                                lower=True)
    np.testing.assert_allclose(np.asarray(x), [0.5, 0.5], rtol=1e-6)


def test_eig_left_and_right_eigenvectors():
    a = np.random.default_rng(0).standard_normal((4, 4))
    with jax.enable_x64(True):
        w, vl, vr = (np.asarray(o) for o in linalg.eig(a))
    np.testing.assert_allclose(a @ vr, vr * w, atol=1e-12)
    np.testing.assert_allclose(np.conj(vl).T @ a, w[:, None] * np.conj(vl).T, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1, rtol=1e-12)
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)),
                               rtol=1e-12)


def test_eigenvalue_derivatives_of_eig_match_eigh_on_symmetric_matrices():
    rng = np.random.default_rng(1)
    b = rng.standard_normal((3, 3))
    a, da = b + b.T, rng.standard_normal((3, 3))
    da = da + da.T
    with jax.enable_x64(True):
        _, dw = jax.jvp(lambda x: linalg.eig(x, compute_left_eigenvectors=False,
                                             compute_right_eigenvectors=False)[0], (a,), (da,))
        _, dw_h = jax.jvp(lambda x: linalg.eigh(x)[1], (a,), (da,))
    w = np.asarray(linalg.eig(a, compute_left_eigenvectors=False,
                              compute_right_eigenvectors=False)[0])
    order = np.argsort(w.real)
    np.testing.assert_allclose(np.asarray(dw)[order].real, np.asarray(dw_h), rtol=1e-9)


def test_errors_name_the_function_and_the_argument():
    # JAX's words first, then ours
    with pytest.raises(TypeError, match="cholesky does not accept dtype int32 at position 0.*"
                                        "cholesky: x must be float32"):
        linalg.cholesky(np.eye(2, dtype=np.int32), symmetrize_input=False)
    with pytest.raises(ValueError, match=r"The input to cholesky must be a square matrix. Got "
                                         r"shape \(2, 3\).*x must be a batch of square"):
        linalg.cholesky(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"Input 0 to lu must have rank at least 2, but got "
                                        r"shape=\(3,\)"):
        linalg.lu(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="same batch dimensions"):
        linalg.triangular_solve(np.eye(2, dtype=np.float32), np.ones((3, 2, 2), np.float32))
    with pytest.raises(ValueError, match="needs b with 2 rows"):
        linalg.triangular_solve(np.eye(2, dtype=np.float32), np.ones((3, 2), np.float32),
                                left_side=True)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        jax.grad(lambda x: linalg.eig(x)[0].real.sum())(np.eye(2, dtype=np.float32))
