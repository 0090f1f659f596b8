"""Test records of the top_k and approx_top_k primitives (sorting.py, approx_top_k.py):
numpy's stable argsort on keys written here (a total order for top_k; distinct values for
approx_top_k, whose ties JAX leaves to an unstable sort). The float64 cases of the
derivative checks return the values only: integer indices have no tangents to compare."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from jaxlite import lax
from records import Case, Record, standard_values


def _total_order_key(x: np.ndarray) -> np.ndarray:
    """Descending total order (NaN > inf > ... > 0.0 > -0.0 > ... > -NaN) as a sort key."""
    if x.dtype.kind in "fV" or x.dtype == ml_dtypes.bfloat16:
        wide = x.astype(np.float64)
        nan = np.isnan(wide)
        sign = np.signbit(wide)
        rank = np.where(nan, np.where(sign, -3.0, 3.0), 0.0)
        return np.stack([-rank, -np.where(nan, 0.0, wide), sign.astype(float)])
    return np.stack([-x.astype(np.float64)])


def _top_k_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    if np.dtype(dtype).kind == "f" or np.dtype(dtype) == ml_dtypes.bfloat16:
        pool = np.array([np.nan, -np.nan, np.inf, -1.0, -0.0, 0.0, 1.5, 2.0])
        return rng.choice(pool, shape).astype(dtype)
    return standard_values(rng, shape, dtype)


def _top_k_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(1, 3))))
    axis = int(rng.integers(0, len(shape)))
    k = int(rng.integers(0, shape[axis] + 1))

    def reference(x):
        keys = np.moveaxis(_total_order_key(np.moveaxis(x, axis, -1)), 0, 0)
        order = np.lexsort(keys[::-1], axis=-1)[..., :k]
        moved = np.moveaxis(x, axis, -1)
        return [np.moveaxis(np.take_along_axis(moved, order, -1), -1, axis),
                np.moveaxis(order.astype(np.int32), -1, axis)]
    if np.dtype(dtype) == np.float64:  # the derivative checks: the values only
        return Case(lambda x: lax.top_k(x, k, axis=axis)[0], lambda x: reference(x)[0],
                    [_distinct(rng, shape, dtype)], values=_distinct)
    return Case(lambda x: list(lax.top_k(x, k, axis=axis)), reference,
                [_top_k_values(rng, shape, dtype)], values=_top_k_values)


def _distinct(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    size = int(np.prod(shape))
    return (rng.permutation(size) - size / 2 + rng.uniform(0, 0.5, size)).reshape(shape) \
        .astype(dtype)


def _approx_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(1, 6, int(rng.integers(1, 3))))
    axis = int(rng.integers(-len(shape), len(shape)))
    k = int(rng.integers(1, shape[axis] + 1))
    largest = bool(rng.random() < 0.5)
    fun = lax.approx_max_k if largest else lax.approx_min_k

    def reference(x):
        order = np.argsort(-x if largest else x, axis=axis, kind="stable")
        index = np.take(order, np.arange(k), axis=axis)
        return [np.take_along_axis(x, index, axis=axis), index.astype(np.int32)]
    if np.dtype(dtype) == np.float64:  # the derivative checks: the values only
        return Case(lambda x: fun(x, k, reduction_dimension=axis)[0],
                    lambda x: reference(x)[0], [_distinct(rng, shape, dtype)], values=_distinct)
    return Case(lambda x: list(fun(x, k, reduction_dimension=axis)), reference,
                [_distinct(rng, shape, dtype)], values=_distinct)


RECORDS = [
    Record("top_k", _top_k_case, dtypes=(np.float32, np.float16, np.int8, np.uint32, np.bool_),
           notes="NaN, -NaN, infinities and signed zeros in the float draws"),
    Record("approx_top_k", _approx_case, dtypes=(np.float32, np.float16)),
]
