"""Test records of general_reduce.py and general_windows.py: `reduce` and `reduce_window`
with reducers that are not recognized as monoids (a product written as a lambda, and a
(sum, max) pair of operands), against numpy reductions of the same meaning."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from jaxlite import lax
from records import Case, Record, standard_values


def _product(a, b):
    return lax.mul(a, b)


def _sum_and_max(a, b):
    return (lax.add(a[0], b[0]), lax.max(a[1], b[1]))


def _small_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    # Products of up to a few dozen factors stay well inside float32 near 1.
    if np.dtype(dtype).kind == "f":
        return rng.uniform(0.5, 1.5, shape).astype(dtype) * rng.choice([-1, 1], shape)
    return standard_values(rng, shape, dtype)


def _reduce_case(rng: np.random.Generator, dtype: Any) -> Case:
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 4, ndim))
    dims = tuple(d for d in range(ndim) if rng.random() < 0.6)
    if rng.random() < 0.5:
        def fun(x):
            return lax.reduce(x, np.array(1, dtype), _product, dims)
        return Case(fun, lambda x: np.prod(x, axis=dims).astype(dtype),
                    [_small_values(rng, shape, dtype)], values=_small_values)
    low = np.array(-np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min, dtype)

    def pair(x, y):
        return list(lax.reduce((x, y), (np.array(0, dtype), low), _sum_and_max, dims))

    def reference(x, y):
        return [np.sum(x, axis=dims).astype(dtype), np.max(y, axis=dims, initial=low)]
    return Case(pair, reference, [_small_values(rng, shape, dtype) for _ in range(2)],
                values=_small_values)


def _window_reference(x: np.ndarray, init: Any, combine: Any, window: dict) -> np.ndarray:
    """A loop over output positions and window elements, skipping padding and holes."""
    dims, strides, pads = window["window_dimensions"], window["window_strides"], window["padding"]
    base, dilation = window["base_dilation"], window["window_dilation"]
    dilated = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, base)]
    padded = [d + lo + hi for d, (lo, hi) in zip(dilated, pads)]
    extent = [(w - 1) * d + 1 for w, d in zip(dims, dilation)]
    out_shape = [max(0, (p - e) // s + 1) if p >= e else 0
                 for p, e, s in zip(padded, extent, strides)]
    out = np.full(out_shape, init, x.dtype)
    for position in itertools.product(*map(range, out_shape)):
        acc = np.asarray(init, x.dtype)
        for offsets in itertools.product(*map(range, dims)):
            index = []
            for p, k, s, d, (lo, _), b in zip(position, offsets, strides, dilation, pads, base):
                q = p * s + k * d - lo
                index.append(q // b if q >= 0 and q % b == 0 else None)
            if all(i is not None and i < n for i, n in zip(index, x.shape)):
                acc = combine(acc, x[tuple(index)])
        out[position] = acc
    return out


def _reduce_window_case(rng: np.random.Generator, dtype: Any) -> Case:
    ndim = int(rng.integers(1, 3))
    shape = tuple(int(s) for s in rng.integers(1, 5, ndim))
    window = dict(window_dimensions=tuple(int(w) for w in rng.integers(1, 3, ndim)),
                  window_strides=tuple(int(s) for s in rng.integers(1, 3, ndim)),
                  padding=tuple((int(lo), int(hi)) for lo, hi in rng.integers(0, 2, (ndim, 2))),
                  base_dilation=tuple(int(b) for b in rng.integers(1, 3, ndim)),
                  window_dilation=tuple(int(d) for d in rng.integers(1, 3, ndim)))
    init = np.array(1, dtype)

    def fun(x):
        return lax.reduce_window(x, init, _product, **window)
    return Case(fun, lambda x: _window_reference(x, init, np.multiply, window),
                [_small_values(rng, shape, dtype)], values=_small_values)


RECORDS = [
    Record("reduce", _reduce_case, dtypes=(np.float32, np.int32),
           notes="a product lambda, and a (sum, max) pair of operands"),
    Record("reduce_window", _reduce_window_case, dtypes=(np.float32, np.int32), grad=False,
           notes="reverse mode is not defined (as in JAX); jvp in test_general_reduce.py"),
]
