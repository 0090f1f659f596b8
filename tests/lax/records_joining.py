"""Test records of joining.py: split, stack, unstack and tile, against numpy's functions
of the same names (with every dtype; a size of 0 now and then)."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from jaxlite import lax
from records import Case, Record, standard_values

ALL = (np.bool_, np.int8, np.int32, np.uint32, np.float16, np.dtype(ml_dtypes.bfloat16),
       np.float32, np.complex64)


def _shape(rng: np.random.Generator, min_ndim: int = 1) -> tuple[int, ...]:
    ndim = int(rng.integers(min_ndim, 4))
    sizes = [int(s) for s in rng.integers(1, 5, ndim)]
    if ndim and rng.random() < 0.1:
        sizes[int(rng.integers(ndim))] = 0
    return tuple(sizes)


def _split_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    axis = int(rng.integers(-len(shape), len(shape)))
    n = shape[axis]
    cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(0, 3))))
    sizes = [int(s) for s in np.diff(np.concatenate([[0], cuts, [n]]))]
    return Case(lambda x: list(lax.split(x, sizes, axis)),
                lambda x: np.split(x, np.cumsum(sizes)[:-1], axis=axis),
                [standard_values(rng, shape, dtype)])


def _stack_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng, 0)
    count = int(rng.integers(1, 4))
    axis = int(rng.integers(-len(shape) - 1, len(shape) + 1))
    args = [standard_values(rng, shape, dtype) for _ in range(count)]
    return Case(lambda *xs: lax.stack(xs, axis), lambda *xs: np.stack(xs, axis), args)


def _unstack_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    axis = int(rng.integers(-len(shape), len(shape)))

    def reference(x):
        return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
    return Case(lambda x: list(lax.unstack(x, axis)), reference,
                [standard_values(rng, shape, dtype)])


def _tile_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng, 0)
    reps = tuple(int(r) for r in rng.integers(0 if rng.random() < 0.1 else 1, 4, len(shape)))
    return Case(lambda x: lax.tile(x, reps), lambda x: np.tile(x, reps) if reps else x,
                [standard_values(rng, shape, dtype)])


RECORDS = [
    Record("split", _split_case, dtypes=ALL, notes="0 to 2 cuts, empty pieces included"),
    Record("stack", _stack_case, dtypes=ALL),
    Record("unstack", _unstack_case, dtypes=ALL),
    Record("tile", _tile_case, dtypes=ALL),
]
