"""lax.sort, sort_key_val and top_k against values computed with JAX 0.10.2 (written here)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax

SPECIAL = np.array([1.0, np.nan, -0.0, 0.0, -np.nan, -np.inf, -0.0], np.float32)


@pytest.mark.parametrize("compiled", [False, True])
def test_sort_puts_nans_last_and_keeps_signed_zeros_stable(compiled):
    sort = jax.jit(lax.sort) if compiled else lax.sort
    out = np.asarray(sort(SPECIAL))
    np.testing.assert_array_equal(out, [-np.inf, -0.0, 0.0, -0.0, 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(np.signbit(out),
                                  [True, True, False, True, False, False, True])


@pytest.mark.parametrize("compiled", [False, True])
def test_top_k_orders_totally_like_jax(compiled):
    top_k = (jax.jit(lambda x: lax.top_k(x, 4)) if compiled else lambda x: lax.top_k(x, 4))
    values, indices = top_k(SPECIAL)
    np.testing.assert_array_equal(np.asarray(values), [np.nan, 1.0, 0.0, -0.0])
    np.testing.assert_array_equal(np.asarray(indices), [1, 0, 3, 2])
    assert np.asarray(indices).dtype == np.int32
    values, indices = lax.top_k(np.array([3, 1, 3, 2], np.int32), 3)
    np.testing.assert_array_equal(np.asarray(values), [3, 3, 2])
    np.testing.assert_array_equal(np.asarray(indices), [0, 2, 3])
    values, indices = lax.top_k(np.array([[1.0, 5, 3], [2, 2, 9]], np.float32), 2)
    np.testing.assert_array_equal(np.asarray(values), [[5, 3], [9, 2]])
    np.testing.assert_array_equal(np.asarray(indices), [[1, 2], [2, 0]])


def test_sort_key_val_and_two_keys():
    keys = np.array([[3, 1, 2, 1], [0, 2, 0, 1]], np.int32)
    vals = np.array([[10, 11, 12, 13], [20, 21, 22, 23]], np.int32)
    k, v = lax.sort_key_val(keys, vals, 0)
    np.testing.assert_array_equal(np.asarray(k), [[0, 1, 0, 1], [3, 2, 2, 1]])
    np.testing.assert_array_equal(np.asarray(v), [[20, 11, 22, 13], [10, 21, 12, 23]])
    k, v = lax.sort((keys, vals), 1, num_keys=2)
    np.testing.assert_array_equal(np.asarray(k), [[1, 1, 2, 3], [0, 0, 1, 2]])
    np.testing.assert_array_equal(np.asarray(v), [[11, 13, 12, 10], [20, 22, 23, 21]])


def test_sort_with_iota_is_argsort():
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    iota = lax.broadcasted_iota(np.int32, x.shape, 1)
    _, perm = lax.sort((x, iota), 1)
    np.testing.assert_array_equal(np.asarray(perm), np.argsort(x, axis=1, kind="stable"))


def test_top_k_gradient_goes_to_the_chosen_entries():
    x = np.array([0.5, 3.0, -1.0, 2.0])
    grad = jax.grad(lambda x: (lax.top_k(x, 2)[0] * np.array([10.0, 1.0])).sum())(x)
    np.testing.assert_array_equal(np.asarray(grad), [0, 10, 0, 1])


def test_sort_rejects_bad_num_keys():
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((np.ones(3), np.ones(3)), num_keys=3)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0)])
def test_sorting_empty_arrays_under_jit_and_jvp(backend, shape):
    x = np.zeros(shape, np.float32)
    out = jax.jit(lambda v: lax.sort(v), backend=backend)(x)
    assert np.asarray(out).shape == shape
    primal, tangent = jax.jvp(lambda v: lax.sort(v), (x,), (x,))
    assert np.asarray(primal).shape == shape and np.asarray(tangent).shape == shape
