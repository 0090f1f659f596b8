"""jnp.linalg.eig / eigvals of matrices with NaN or inf: NaN in every part, as in JAX.

JAX 0.10.2 (recorded with /tmp/jaxvenv/bin/python, e.g.
`jax.jit(jnp.linalg.eig)(jnp.full((2, 2), jnp.nan))`) returns nan+nanj for every eigenvalue
and eigenvector component of a matrix LAPACK rejects (any NaN or inf), and leaves the other
matrices of a batch alone: eigvals of stack([eye(2), full(nan)]) is [[1+0j, 1+0j],
[nan+nanj, nan+nanj]]. jaxlite gave nan+0j (a real NaN written into a complex output).
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp

MODES = {"eager": lambda f: f, "jit": jaxlite.jit,
         "jit_interpreter": lambda f: jaxlite.jit(f, backend="interpreter")}
BAD = [np.full((2, 2), np.nan), np.array([[1.0, np.nan], [0.0, 2.0]]), np.full((3, 3), np.inf)]


def _all_nan_parts(a):
    a = np.asarray(a)
    return a.dtype.kind == "c" and np.isnan(a.real).all() and np.isnan(a.imag).all()


@pytest.mark.filterwarnings("error::RuntimeWarning")  # JAX warns of nothing here
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("matrix", BAD, ids=["nan", "one_nan", "inf"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eig_of_nonfinite_is_nan_in_both_parts(mode, matrix, dtype):
    w, v = MODES[mode](jnp.linalg.eig)(jnp.asarray(matrix.astype(dtype)))
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    assert _all_nan_parts(w) and _all_nan_parts(v)
    assert _all_nan_parts(MODES[mode](jnp.linalg.eigvals)(jnp.asarray(matrix.astype(dtype))))


@pytest.mark.filterwarnings("error::RuntimeWarning")  # JAX warns of nothing here
@pytest.mark.parametrize("mode", MODES)
def test_eigvals_batch_keeps_finite_matrices(mode):
    batch = jnp.asarray(np.stack([np.eye(2), np.full((2, 2), np.nan)]).astype(np.float32))
    w = np.asarray(MODES[mode](jnp.linalg.eigvals)(batch))
    np.testing.assert_array_equal(w[0], np.array([1, 1], np.complex64))
    assert _all_nan_parts(w[1])
