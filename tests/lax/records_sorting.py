"""Test records of sorting.py: the sort primitive, one or several operands, 1..2 keys.

The reference sorts with numpy's stable lexsort; float values contain ties, NaN and signed
zeros for the value checks (distinct values for the float64 derivative checks).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from records import Case, Record, standard_values

from jaxlite import lax


def _values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return rng.permutation(np.linspace(-2, 2, int(np.prod(shape)))).reshape(shape) \
            + rng.uniform(-0.05, 0.05, shape)
    if dtype.kind == "f":
        pool = np.array([-1.0, -0.0, 0.0, 1.0, 2.0, np.nan, -np.inf])
        return rng.choice(pool, shape).astype(dtype)
    return standard_values(rng, shape, dtype)


def _order_keys(x: np.ndarray) -> list[np.ndarray]:
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return [np.isnan(x), np.where(np.isnan(x), 0, x)]
    return [x]


def _reference(*operands: np.ndarray, dimension: int, num_keys: int) -> list[np.ndarray]:
    moved = [np.moveaxis(o, dimension, -1) for o in operands]
    keys = [k for o in moved[:num_keys] for k in _order_keys(o)]
    perm = np.lexsort(keys[::-1], axis=-1)
    return [np.moveaxis(np.take_along_axis(m, perm, -1), -1, dimension) for m in moved]


def _sort_case(rng: np.random.Generator, dtype: Any) -> Case:
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 5, ndim))
    dimension = int(rng.integers(0, ndim))
    count = int(rng.integers(1, 4))
    num_keys = int(rng.integers(1, count + 1))
    args = [_values(rng, shape, dtype) for _ in range(count)]
    # ties in the first key make the later keys matter
    if count > 1 and np.dtype(dtype) != np.float64:
        args[0] = np.round(args[0])

    def fun(*ops):
        return list(lax.sort(tuple(ops), dimension, True, num_keys))

    def reference(*ops):
        return _reference(*ops, dimension=dimension, num_keys=num_keys)
    return Case(fun, reference, args, values=_values)


RECORDS = [
    Record("sort", _sort_case, dtypes=(np.float32, np.int32, np.bool_, np.uint8),
           notes="several operands, num_keys 1..count, NaN last, stable"),
]
