"""Test records of windows.py: reduce_window_sum, reduce_window_max, reduce_window_min.

The reference builds the padded, base-dilated operand and reduces every window with a
Python loop over the output positions. Sums draw any strides, paddings and dilations; max
and min draw windows that always hold an operand element (so no output is an identity)
and, for the float64 derivative checks, distinct values (no ties).
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from records import Case, Record, standard_values

from jaxlite import lax


def _distinct(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    if np.dtype(dtype) == np.float64:
        return rng.permutation(np.linspace(-2, 2, int(np.prod(shape)))).reshape(shape) \
            + rng.uniform(-0.05, 0.05, shape)
    return standard_values(rng, shape, dtype)


def _reference(x: np.ndarray, kind: str, dims, strides, pads, base, dilation) -> np.ndarray:
    x = np.asarray(x)
    if kind == "sum":
        init = 0
    elif x.dtype.kind == "f":
        init = -np.inf if kind == "max" else np.inf
    else:
        info = np.iinfo(x.dtype)
        init = info.min if kind == "max" else info.max
    sizes = [(n - 1) * b + 1 + lo + hi for n, b, (lo, hi) in zip(x.shape, base, pads)]
    padded = np.full(sizes, init, np.float64 if x.dtype.kind == "f" else np.int64)
    padded[tuple(slice(lo, lo + (n - 1) * b + 1, b)
                 for n, b, (lo, _) in zip(x.shape, base, pads))] = x
    extent = [(w - 1) * d + 1 for w, d in zip(dims, dilation)]
    out = [max(0, (p - e) // s + 1) if p >= e else 0
           for p, e, s in zip(sizes, extent, strides)]
    result = np.zeros(out, padded.dtype)
    combine = {"sum": np.sum, "max": np.max, "min": np.min}[kind]
    for index in itertools.product(*(range(o) for o in out)):
        window = padded[tuple(slice(i * s, i * s + e, d)
                              for i, s, e, d in zip(index, strides, extent, dilation))]
        result[index] = combine(window)
    return result.astype(x.dtype)


def _case_maker(kind: str):
    def make(rng: np.random.Generator, dtype: Any) -> Case:
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(s) for s in rng.integers(1, 5, ndim))
        if kind == "sum":
            dims = tuple(int(w) for w in rng.integers(1, 4, ndim))
            base = tuple(int(b) for b in rng.integers(1, 3, ndim))
            dilation = tuple(int(d) for d in rng.integers(1, 3, ndim))
            pads = tuple((int(lo), int(hi)) for lo, hi in rng.integers(0, 3, (ndim, 2)))
        else:
            base = tuple(int(b) for b in rng.integers(1, 3, ndim))
            dims = tuple(int(rng.integers(b, 4)) for b in base)
            dilation = (1,) * ndim
            pads = tuple((int(rng.integers(0, w)), int(rng.integers(0, w))) for w in dims)
        strides = tuple(int(s) for s in rng.integers(1, 3, ndim))
        computation = {"sum": lax.add, "max": lax.max, "min": lax.min}[kind]
        init = {"sum": 0, "max": -np.inf, "min": np.inf}[kind]
        if np.dtype(dtype).kind != "f" and kind != "sum":
            info = np.iinfo(dtype)
            init = np.array(info.min if kind == "max" else info.max, dtype)

        def fun(x):
            return lax.reduce_window(x, init, computation, dims, strides, pads, base,
                                     dilation)

        def reference(x):
            return _reference(x, kind, dims, strides, pads, base, dilation)
        values = _distinct if kind != "sum" else standard_values
        return Case(fun, reference, [values(rng, shape, dtype)], values=values)
    return make


RECORDS = [
    Record("reduce_window_sum", _case_maker("sum"), dtypes=(np.float32, np.int32),
           notes="strides, (low, high) padding, base and window dilation"),
    Record("reduce_window_max", _case_maker("max"), dtypes=(np.float32, np.int32),
           notes="windows always hold an operand element; distinct values for grads"),
    Record("reduce_window_min", _case_maker("min"), dtypes=(np.float32, np.int32)),
]
