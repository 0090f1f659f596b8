"""Test records of select_scatter.py: select_and_gather_add, select_and_scatter_add and
select_and_scatter, against loops over windows written from XLA's and JAX's rules (the
first maximum or minimum in row-major window order; the gather skips padding and holes,
the scatter-add lets identity padding be selected, the general scatter skips padding)."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite.lax.select_scatter import _select_and_scatter
from records import Case, Record


def _distinct(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    return rng.permutation(np.arange(int(np.prod(shape)))).reshape(shape).astype(dtype) \
        + rng.uniform(0.0, 0.5, shape).astype(dtype)


def _window(rng: np.random.Generator, ndim: int, dilations: bool) -> dict:
    window = dict(window_dimensions=tuple(int(w) for w in rng.integers(1, 3, ndim)),
                  window_strides=tuple(int(s) for s in rng.integers(1, 3, ndim)),
                  padding=tuple((int(lo), int(hi)) for lo, hi in rng.integers(0, 2, (ndim, 2))))
    if dilations:
        window["base_dilation"] = tuple(int(b) for b in rng.integers(1, 3, ndim))
        # Window dilation has no VJP (as in JAX): tested on its own in test_select_scatter.
        window["window_dilation"] = (1,) * ndim
    return window


def _positions(shape: tuple, window: dict):
    """For each output position, the operand index (or None for padding/holes) of each
    window element in row-major window order."""
    dims, strides, pads = window["window_dimensions"], window["window_strides"], window["padding"]
    base = window.get("base_dilation", (1,) * len(shape))
    dilation = window.get("window_dilation", (1,) * len(shape))
    padded = [((n - 1) * b + 1 if n else 0) + lo + hi for n, b, (lo, hi) in zip(shape, base, pads)]
    extent = [(w - 1) * d + 1 for w, d in zip(dims, dilation)]
    out_shape = tuple(max(0, (p - e) // s + 1) if p >= e else 0
                      for p, e, s in zip(padded, extent, strides))
    result = {}
    for position in itertools.product(*map(range, out_shape)):
        elements = []
        for offsets in itertools.product(*map(range, dims)):
            index = []
            for p, k, s, d, (lo, _), b in zip(position, offsets, strides, dilation, pads, base):
                q = p * s + k * d - lo
                index.append(q // b if q >= 0 and q % b == 0 else None)
            ok = all(i is not None and i < n for i, n in zip(index, shape))
            elements.append(tuple(index) if ok else None)
        result[position] = elements
    return out_shape, result


def _gather_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(1, 3))))
    window = _window(rng, len(shape), dilations=True)
    select = lax.ge_p if rng.random() < 0.5 else lax.le_p
    better = np.greater if select is lax.ge_p else np.less

    def reference(t, x):
        out_shape, windows = _positions(shape, window)
        out = np.zeros(out_shape, t.dtype)
        for position, elements in windows.items():
            best = None
            for index in elements:
                if index is not None and (best is None or better(x[index], x[best])):
                    best = index
            out[position] = t[best] if best is not None else 0
        return out

    def fun(t, x):
        return lax.select_and_gather_add_p.bind(t, x, select_prim=select, **window)
    return Case(fun, reference, [_distinct(rng, shape, dtype), _distinct(rng, shape, dtype)],
                values=_distinct, grad_argnums=[0])


def _scatter_add_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(1, 3))))
    window = _window(rng, len(shape), dilations=False)
    select = lax.ge_p if rng.random() < 0.5 else lax.le_p
    out_shape, windows = _positions(shape, window)
    better = np.greater if select is lax.ge_p else np.less

    def reference(source, x):
        out = np.zeros(shape, source.dtype)
        for position, elements in windows.items():
            # Padding is an identity element that is selected when it comes first (JAX on
            # the CPU); identities never beat the distinct finite values here.
            real = [i for i in elements if i is not None]
            if real:
                best = real[0]
                for index in real[1:]:
                    if better(x[index], x[best]):
                        best = index
                out[best] += source[position]
        return out

    def fun(source, x):
        return lax.select_and_scatter_add_p.bind(source, x, select_prim=select, **window)
    return Case(fun, reference, [_distinct(rng, out_shape, dtype), _distinct(rng, shape, dtype)],
                values=_distinct, grad_argnums=[0])


def _select_and_scatter_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(1, 3))))
    window = _window(rng, len(shape), dilations=False)
    out_shape, windows = _positions(shape, window)
    init = np.array(0.5, dtype)

    def reference(x, source):
        out = np.full(shape, init, source.dtype)
        for position, elements in windows.items():
            real = [i for i in elements if i is not None]
            if real:
                best = max(real, key=lambda i: (x[i], -real.index(i)))
                out[best] += source[position]
        return out

    def fun(x, source):
        return _select_and_scatter(x, lax.ge, window["window_dimensions"],
                                   window["window_strides"], window["padding"], source, init,
                                   lax.add)
    return Case(fun, reference, [_distinct(rng, shape, dtype), _distinct(rng, out_shape, dtype)],
                values=_distinct)


RECORDS = [
    Record("select_and_gather_add", _gather_case, dtypes=(np.float32,),
           notes="linear in the tangents; the operand only selects"),
    Record("select_and_scatter_add", _scatter_add_case, dtypes=(np.float32,)),
    Record("select_and_scatter", _select_and_scatter_case, dtypes=(np.float32,), grad=False,
           notes="jvp of the additive scatter in test_select_scatter.py"),
]
