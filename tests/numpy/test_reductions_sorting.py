"""Tests for the reductions, sorting, set, histogram, polynomial and einsum functions of
jaxlite.numpy that do not fit the differential harness: Python results (einsum_path),
behaviour under jit (size=, length=, the errors without them), keyword variants, and
JAX's documented departures from numpy (values computed once with JAX 0.10.2)."""
import numpy as np
from opt_einsum.contract import PathInfo
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.errors import ConcretizationTypeError


# ------------------------------------------------------------------------ einsum

@pytest.mark.parametrize("optimize,expected", [
    ("auto", [(0, 1), (0, 1)]), ("greedy", [(1, 2), (0, 1)]), ("optimal", [(0, 1), (0, 1)]),
    (True, [(0, 1), (0, 1)]), (False, [(0, 1), (0, 1)]),
])
def test_einsum_path_matches_jax(optimize, expected):
    a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))
    path, info = jnp.einsum_path("ij,jk,kl->il", a, b, c, optimize=optimize)
    assert path == expected
    assert isinstance(info, PathInfo)


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cbd,da->ab", [(3, 4, 5), (5, 4, 2), (2, 3)]),
    ("aba->b", [(3, 3, 3)]),
    ("i,i,i->", [(4,), (4,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,ij->", [(0, 3), (0, 3)]),
])
def test_einsum_against_numpy_under_jit(spec, shapes):
    rng = np.random.default_rng(0)
    args = [rng.normal(size=s) for s in shapes]
    expected = np.einsum(spec, *args)
    with jaxlite.enable_x64(True):
        got = jaxlite.jit(lambda *a: jnp.einsum(spec, *a))(*args)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)


def test_einsum_explicit_path_and_preferred_element_type():
    a = np.array([1, 2, 3], np.int8)
    out = jnp.einsum("i,i->", a, a, preferred_element_type=np.int32)
    assert out.dtype == np.int32 and int(out) == 14
    m = np.arange(6.0).reshape(2, 3)
    got = jnp.einsum("ij,jk->ik", m, m.T, optimize=[(0, 1)])
    np.testing.assert_allclose(np.asarray(got), m @ m.T)


def test_einsum_rejects_out_and_bad_subscripts():
    with pytest.raises(NotImplementedError):
        jnp.einsum("i->i", np.ones(2), out=np.ones(2))
    with pytest.raises(ValueError, match="einsum"):
        jnp.einsum("ij->i", np.ones(3))


# ------------------------------------------------------------------------ data-dependent

def test_nonzero_needs_size_under_jit():
    x = np.array([[0, 3], [2, 0]])
    with pytest.raises(ConcretizationTypeError, match="size="):
        jaxlite.jit(jnp.nonzero)(x)
    rows, cols = jaxlite.jit(lambda v: jnp.nonzero(v, size=3, fill_value=(7, 8)))(x)
    np.testing.assert_array_equal(np.asarray(rows), [0, 1, 7])
    np.testing.assert_array_equal(np.asarray(cols), [1, 0, 8])


def test_nonzero_of_a_scalar_is_refused():
    with pytest.raises(ValueError, match="0d"):
        jnp.nonzero(np.int32(3))


def test_argwhere_flatnonzero_extract_with_size():
    x = np.array([[0, 3], [2, 0]])
    np.testing.assert_array_equal(np.asarray(jnp.argwhere(x, size=3, fill_value=9)),
                                  [[0, 1], [1, 0], [9, 9]])
    np.testing.assert_array_equal(np.asarray(jnp.flatnonzero(x, size=3, fill_value=-1)),
                                  [1, 2, -1])
    got = jaxlite.jit(lambda c, v: jnp.extract(c, v, size=3))(x > 0, x)
    np.testing.assert_array_equal(np.asarray(got), [3, 2, 0])


def test_unique_with_size_pads_like_jax():
    # Values computed with JAX 0.10.2: values pad with the smallest, indices with the
    # index of the smallest, counts with zero.
    x = np.array([3, 1, 3, 2])
    values, index, inverse, counts = jaxlite.jit(
        lambda v: jnp.unique(v, True, True, True, size=5))(x)
    np.testing.assert_array_equal(np.asarray(values), [1, 2, 3, 1, 1])
    np.testing.assert_array_equal(np.asarray(index), [1, 3, 0, 1, 1])
    np.testing.assert_array_equal(np.asarray(inverse), [2, 0, 2, 1])
    np.testing.assert_array_equal(np.asarray(counts), [1, 1, 2, 0, 0])
    values = jnp.unique(x, size=5, fill_value=9)
    np.testing.assert_array_equal(np.asarray(values), [1, 2, 3, 9, 9])
    values, counts = jnp.unique(x, size=2, return_counts=True)
    np.testing.assert_array_equal(np.asarray(counts), [1, 1])
    with pytest.raises(ValueError, match="fill_value"):
        jnp.unique(np.zeros(0), size=2)
    with pytest.raises(ConcretizationTypeError, match="size="):
        jaxlite.jit(jnp.unique)(x)


def test_unique_nan_handling():
    x = np.array([np.nan, 1.0, np.nan])
    np.testing.assert_array_equal(np.asarray(jnp.unique(x)), [1.0, np.nan])
    np.testing.assert_array_equal(np.asarray(jnp.unique(x, equal_nan=False)),
                                  [1.0, np.nan, np.nan])
    assert np.asarray(jnp.unique_values(x)).shape == (3,)


def test_set_functions_with_size_match_jax():
    a, b = np.array([5, 1, 3, 3, 7]), np.array([3, 4, 5, 5])
    cases = {
        "setdiff1d": (lambda: jnp.setdiff1d(a, b, size=4), [1, 7, 0, 0]),
        "union1d": (lambda: jnp.union1d(a, b, size=8), [1, 3, 4, 5, 7, 1, 1, 1]),
        "setxor1d": (lambda: jnp.setxor1d(a, b, size=6), [1, 4, 7, 1, 1, 1]),
        "intersect1d": (lambda: jnp.intersect1d(a, b, size=4), [3, 5, 3, 3]),
    }
    for name, (call, expected) in cases.items():
        np.testing.assert_array_equal(np.asarray(jaxlite.jit(call)()), expected, err_msg=name)
    values, ia, ib = jnp.intersect1d(a, b, size=4, return_indices=True)
    np.testing.assert_array_equal(np.asarray(ia), [2, 0, 5, 5])
    np.testing.assert_array_equal(np.asarray(ib), [0, 2, 4, 4])


@pytest.mark.parametrize("method", ["auto", "compare_all", "sort", "binary_search"])
def test_isin_methods(method):
    a, b = np.array([[5, 1], [3, 8]]), np.array([3, 4, 5, 5])
    np.testing.assert_array_equal(np.asarray(jnp.isin(a, b, method=method)), np.isin(a, b))


def test_bincount_length_under_jit_and_clipping():
    x = np.array([-1, 0, 2, 9])
    got = jaxlite.jit(lambda v: jnp.bincount(v, length=4))(x)
    np.testing.assert_array_equal(np.asarray(got), [2, 0, 1, 0])  # JAX: -1 counts as 0
    # JAX raises ConcretizationTypeError (a TypeError) here.
    with pytest.raises(jaxlite.errors.ConcretizationTypeError, match="length="):
        jaxlite.jit(jnp.bincount)(x)


# ------------------------------------------------------------------------ sorting

@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_methods_and_nans(method, side):
    a = np.array([1.0, 2.0, 2.0, np.nan])
    v = np.array([[np.nan, 2.0], [0.5, 9.0]])
    got = jnp.searchsorted(a, v, side=side, method=method)
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v, side=side))


def test_partition_layout_matches_jax():
    x = np.array([3, 1, 2, 1, np.nan, 0], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.partition(x, 2)),
                                  [0, 1, 1, np.nan, 3, 2])  # JAX 0.10.2's output
    with pytest.raises(TypeError):
        jnp.partition(np.array([True, False]), 1)


def test_sort_rejects_kind_and_order():
    with pytest.raises(TypeError):
        jnp.sort(np.ones(3), kind="quicksort")
    with pytest.raises(TypeError):
        jnp.argsort(np.ones(3), order="x")


# ------------------------------------------------------------------------ statistics

def test_quantile_nearest_ties_go_low_as_in_jax():
    # JAX 0.10.2: quantile([0, 1, 2, 3], 0.5, 'nearest') == 1.0 (numpy says 2.0).
    assert float(jnp.quantile(np.arange(4.0), 0.5, method="nearest")) == 1.0
    assert float(jnp.quantile(np.arange(6.0), 0.5, method="nearest")) == 2.0


def test_quantile_refuses_complex_and_unknown_methods():
    with pytest.raises(ValueError, match="complex"):
        jnp.quantile(np.array([1j]), 0.5)
    with pytest.raises(ValueError, match="method"):
        jnp.quantile(np.arange(3.0), 0.5, method="weibull")


def test_nan_reductions_of_all_nan_slices():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.nanargmax(x, axis=1)), [-1, 0])
    np.testing.assert_array_equal(np.asarray(jnp.nanmax(x, axis=1)), [np.nan, 1.0])
    assert float(jnp.nanmax(np.array([np.nan]), initial=3.0)) == 3.0
    assert np.isnan(float(jnp.nanquantile(np.array([np.nan, np.nan]), 0.5)))


def test_cumulative_sum_requires_axis_for_nd():
    with pytest.raises(ValueError, match="axis"):
        jnp.cumulative_sum(np.ones((2, 2)))
    with pytest.raises(ValueError):
        jnp.cumulative_prod(np.float32(2))


def test_grad_of_median_and_quantile():
    x = np.array([3.0, 1.0, 2.0, 5.0])
    g = jaxlite.grad(lambda v: jnp.median(v))(x)
    np.testing.assert_allclose(np.asarray(g), [0.5, 0.0, 0.5, 0.0])
    g = jaxlite.grad(lambda v: jnp.quantile(v, 0.25))(x)
    np.testing.assert_allclose(np.asarray(g), [0.0, 0.25, 0.75, 0.0], rtol=1e-6)


# ------------------------------------------------------------------------ polynomials

def test_roots_match_numpy_and_jax_leading_zero_rule():
    p = np.array([1.0, -6.0, 11.0, -6.0])
    got = np.sort_complex(np.asarray(jnp.roots(p)))
    np.testing.assert_allclose(got, [1, 2, 3], atol=1e-4)
    # JAX 0.10.2 rolls the leading zero to the end (which adds a root at 0) and then marks
    # the last root NaN: [0, 1, nan].
    got = np.asarray(jnp.roots(np.array([0.0, 1.0, -3.0, 2.0]), strip_zeros=False))
    assert np.isnan(got[-1]) and np.allclose(np.sort_complex(got[:2]), [0, 1], atol=1e-5)
    with pytest.raises(ValueError, match="strip_zeros"):
        jaxlite.jit(jnp.roots)(p)


def test_polyfit_full_and_cov_match_numpy():
    x = np.linspace(0, 1, 7)
    y = 3 * x ** 2 - x + 0.5 + 0.01 * np.sin(9 * x)
    with jaxlite.enable_x64(True):
        c, res, rank, sv, rcond = jnp.polyfit(x, y, 2, full=True)
        c2, cov = jnp.polyfit(x, y, 2, cov=True)
    c_np, res_np, rank_np, sv_np, _ = np.polyfit(x, y, 2, full=True)
    np.testing.assert_allclose(np.asarray(c), c_np, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(res), res_np, rtol=1e-6)
    assert int(rank) == rank_np
    np.testing.assert_allclose(np.asarray(sv), sv_np, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(cov), np.polyfit(x, y, 2, cov=True)[1], rtol=1e-8)


def test_poly_of_matrix_is_complex_as_in_jax():
    out = jnp.poly(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert out.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(out), np.poly(np.array([[1.0, 2.0], [3.0, 4.0]])),
                               rtol=1e-5)


def test_polydiv_and_polymul_trim():
    q, r = jnp.polydiv(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]))
    q_np, r_np = np.polydiv([1.0, 2.0, 3.0], [1.0, 1.0])
    np.testing.assert_allclose(np.asarray(q), q_np)
    np.testing.assert_allclose(np.asarray(r)[-1:], r_np)
    out = jnp.polymul(np.array([0.0, 0.0, 1.0]), np.array([1.0, 2.0]), trim_leading_zeros=True)
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0])


# ------------------------------------------------------------------------ histograms

def test_histogram_dtypes_and_edges_follow_jax():
    counts, edges = jnp.histogram(np.array([1, 2, 3, 4, 10], np.int8))
    assert counts.dtype == np.float32 and edges.dtype == np.float32  # JAX counts in floats
    np.testing.assert_array_equal(np.asarray(counts), [1, 1, 1, 1, 0, 0, 0, 0, 0, 1])
    counts, _, _ = jnp.histogram2d(np.array([1.0, 2, 3]), np.array([0.0, 1, 1]), bins=2)
    assert counts.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(counts), [[1, 0], [0, 2]])


def test_interp_extrapolate_and_gradient_edge_order():
    got = jnp.interp(np.array([-1, 0.5, 7]), np.array([0.0, 1, 2]), np.array([1.0, 2, 5]),
                     left="extrapolate", right="extrapolate")
    np.testing.assert_allclose(np.asarray(got), [0.0, 1.5, 20.0])
    with pytest.raises(NotImplementedError):
        jnp.gradient(np.ones(3), edge_order=2)
