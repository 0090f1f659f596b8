"""jaxlite.experimental.sparse against JAX 0.10.2's recorded answers (layouts, nse, padding,
values; tests/data/experimental/jax_sparse_expected.json, written by
record_jax_sparse.py from sparse_cases.py) and against numpy/scipy dense equivalents."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.experimental import sparse

import sparse_cases

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" / "experimental"
                       / "jax_sparse_expected.json").read_text())["cases"]
API = SimpleNamespace(jax=jax, jnp=jnp, lax=lax, sparse=sparse)
CASES = sparse_cases.cases(API)


def _close(ours, theirs, path="value"):
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _close(a, b, f"{path}[{i}]")
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-6), path
    else:
        assert ours == theirs, path


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_agrees_with_jax(name):
    expected = EXPECTED[name]
    if "error" in expected:
        with pytest.raises(Exception) as info:
            CASES[name]()
        assert type(info.value).__name__ == expected["error"]
        return
    _close(CASES[name](), expected["value"])


def test_every_case_recorded():
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize("seed", range(4))
def test_random_roundtrips_match_numpy(seed):
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(4, 5)).astype(np.float32) * (rng.random((4, 5)) < 0.4)
    other = rng.normal(size=(5, 3)).astype(np.float32)
    mat = sparse.BCOO.fromdense(dense)
    np.testing.assert_array_equal(np.asarray(mat.todense()), dense)
    np.testing.assert_allclose(np.asarray(mat @ other), dense @ other, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(mat.T.todense()), dense.T)
    np.testing.assert_allclose(np.asarray(mat.sum(1).todense()), dense.sum(1), rtol=1e-6,
                               atol=1e-6)
    csr = scipy.sparse.csr_matrix(dense)
    from_scipy = sparse.BCOO.from_scipy_sparse(csr)
    np.testing.assert_array_equal(np.asarray(from_scipy.todense()), dense)
    for cls in (sparse.BCSR, sparse.COO, sparse.CSR, sparse.CSC):
        np.testing.assert_array_equal(np.asarray(cls.fromdense(dense).todense()), dense)


def test_batched_dense_layouts_roundtrip():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 5
    for n_batch, n_dense in [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0)]:
        mat = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
        assert (mat.n_batch, mat.n_dense) == (n_batch, n_dense)
        np.testing.assert_array_equal(np.asarray(mat.todense()), x)
        rhs = np.ones((4, 2), np.float32)
        np.testing.assert_allclose(np.asarray(mat @ rhs) if mat.ndim <= 2 else
                                   np.asarray(sparse.bcoo_dot_general(
                                       mat, rhs, dimension_numbers=(((2,), (0,)), ((), ())))),
                                   x @ rhs)


def test_grad_wrt_data_under_jit():
    mat = sparse.BCOO.fromdense(sparse_cases.M)
    v = jnp.arange(4.0)

    def loss(data):
        return (sparse.BCOO((data, mat.indices), shape=mat.shape) @ v).sum()
    g = jax.jit(jax.grad(loss))(mat.data)
    rows_cols = np.asarray(mat.indices)
    np.testing.assert_allclose(np.asarray(g), np.asarray(v)[rows_cols[:, 1]])


def test_primitives_are_primitives():
    from jaxlite.core.primitive import Primitive
    names = [n for n in dir(sparse) if n.endswith("_p")]
    assert len(names) == 22
    assert all(isinstance(getattr(sparse, n), Primitive) for n in names)
    out = sparse.bcoo_todense_p.bind(jnp.array([1.0, 2.0]), jnp.array([[0], [2]]),
                                     spinfo=sparse.BCOO.fromdense(jnp.zeros(3))._info)
    np.testing.assert_array_equal(np.asarray(out), [1.0, 0.0, 2.0])


def test_traced_nse_and_unsupported_rules_raise():
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(sparse.BCOO.fromdense)(sparse_cases.M)
    with pytest.raises(NotImplementedError, match="sparse rule for exp"):
        sparse.sparsify(jnp.exp)(sparse.BCOO.fromdense(sparse_cases.M))
    with pytest.raises(NotImplementedError, match="Addition between a sparse array"):
        sparse.BCOO.fromdense(sparse_cases.M) + 1.0
