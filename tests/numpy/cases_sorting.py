"""Cases for sorting, searching, sets, data-dependent shapes, histograms and differences.

Where JAX's output layout differs from numpy's on purpose (partition's order inside the
two parts), the case compares something both agree on. Data-dependent functions are
called with `size=` where jit and vmap must work.
"""
import numpy as np
from hypothesis import strategies as st

from np_cases import (ALL, BOOL, FLOATS, INEXACT, INTS, NUMERIC, REAL, SIGNED, Case,
                      axis_kwargs, same_shapes, small_shapes)

REAL_NUMERIC = INTS + FLOATS
VECTOR = small_shapes(1, 1).map(lambda s: (s,))
NONEMPTY_VECTOR = small_shapes(1, 1, min_side=1).map(lambda s: (s,))
AT_LEAST_1D = small_shapes(1).map(lambda s: (s,))
TWO_VECTORS = st.tuples(small_shapes(1, 1), small_shapes(1, 1))


def one_axis(shapes):
    return axis_kwargs(shapes, allow_none=True)


def _sorted_parts(xp, out, kth):
    """The two sides of a partition, each sorted: what numpy and JAX agree on."""
    return (xp.sort(out[..., :kth], axis=-1), out[..., kth], xp.sort(out[..., kth + 1:], axis=-1))


def _partition(xp, x, kth):
    return _sorted_parts(xp, xp.partition(x, kth), kth)


def _argpartition(xp, x, kth):
    return _sorted_parts(xp, xp.asarray(x)[xp.argpartition(x, kth)], kth)


def _sort_descending(xp, x, axis):
    if xp is np:  # numpy has no descending sort: flip a stable ascending one
        return np.flip(np.sort(x, axis=axis, stable=True), axis=axis)
    return xp.sort(x, axis=axis, descending=True)


def _argsort_descending(xp, x):
    if xp is np:  # stable descending = reversed stable sort of the reversed input
        last = x.shape[-1] - 1
        return last - np.flip(np.argsort(np.flip(x, -1), axis=-1, stable=True), -1)
    return xp.argsort(x, axis=-1, stable=True, descending=True)


def _unique_padded(xp, x):
    """unique with size= on numpy: the same padding rule as JAX (the smallest value)."""
    if xp is np:
        values = np.unique(x)
        pad = np.full(x.size - values.size, values[0] if values.size else 0, x.dtype)
        return np.concatenate([values, pad])
    return xp.unique(x, size=x.size)


def _nonzero_padded(xp, x):
    if xp is np:
        return tuple(np.concatenate([i, np.zeros(x.size - i.size, i.dtype)])
                     for i in np.nonzero(x))
    return xp.nonzero(x, size=x.size)


def _setdiff_padded(xp, a, b):
    if xp is np:
        values = np.setdiff1d(a, b)
        return np.concatenate([values, np.zeros(a.size - values.size, values.dtype)])
    return xp.setdiff1d(a, b, size=a.size)


def _sorted_complex(x):
    return np.sort_complex(np.asarray(x).astype(np.complex128))


CASES = [
    Case("sort", lambda xp, x, **kw: xp.sort(x, **kw), kwargs=one_axis, shapes=AT_LEAST_1D,
         dtypes=ALL, ulps=1),
    Case("sort", lambda xp, x: _sort_descending(xp, x, 0), shapes=AT_LEAST_1D,
         dtypes=REAL, variant="descending", ulps=1),
    Case("argsort", lambda xp, x, **kw: xp.argsort(x, **kw), kwargs=one_axis,
         shapes=AT_LEAST_1D, dtypes=ALL, grad=False),
    Case("argsort", _argsort_descending,
         shapes=AT_LEAST_1D, dtypes=REAL_NUMERIC, variant="descending", grad=False,
         example_shapes=((2, 3),)),
    Case("sort_complex", lambda xp, x: xp.sort_complex(x), shapes=AT_LEAST_1D,
         dtypes=NUMERIC, ulps=1),
    Case("lexsort", lambda xp, a, b: xp.lexsort((a, b), axis=-1), nargs=2,
         shapes=same_shapes(2, min_dims=1), dtypes=INTS + BOOL, grad=False),
    Case("partition", lambda xp, x, **kw: _partition(xp, x, **kw),
         kwargs=lambda s: st.fixed_dictionaries({"kth": st.integers(0, s[0][-1] - 1)}),
         shapes=small_shapes(1, min_side=1).map(lambda s: (s,)), dtypes=REAL_NUMERIC,
         example_kwargs={"kth": 1}, ulps=1),
    Case("argpartition", lambda xp, x, **kw: _argpartition(xp, x, **kw),
         kwargs=lambda s: st.fixed_dictionaries({"kth": st.integers(0, s[0][-1] - 1)}),
         shapes=NONEMPTY_VECTOR, dtypes=REAL_NUMERIC, example_kwargs={"kth": 1},
         grad=False, vmap=False, ulps=1),
    Case("searchsorted", lambda xp, a, v, **kw: xp.searchsorted(xp.sort(a), v, **kw), nargs=2,
         shapes=TWO_VECTORS, dtypes=REAL,
         kwargs=lambda s: st.fixed_dictionaries({"side": st.sampled_from(["left", "right"])}),
         domain="int", grad=False),
    Case("searchsorted", lambda xp, a, v: xp.searchsorted(a, v, sorter=xp.argsort(a)),
         nargs=2, shapes=TWO_VECTORS, dtypes=FLOATS, domain="int", grad=False,
         variant="sorter"),
    Case("digitize", lambda xp, x, b, **kw: xp.digitize(x, xp.sort(b), **kw), nargs=2,
         shapes=TWO_VECTORS, dtypes=REAL_NUMERIC, domain="int", grad=False,
         kwargs=lambda s: st.fixed_dictionaries({"right": st.booleans()})),
    Case("digitize", lambda xp, x, b: xp.digitize(x, xp.sort(b)[::-1]), nargs=2,
         shapes=TWO_VECTORS, dtypes=FLOATS, domain="int", grad=False, variant="decreasing"),
    # Sets and data-dependent shapes (size= keeps jit and vmap possible).
    Case("unique", lambda xp, x: xp.unique(x), dtypes=REAL, domain="int", grad=False,
         jit=False, vmap=False, ulps=1),
    Case("unique", lambda xp, x: xp.unique(x, return_index=True, return_inverse=True,
                                           return_counts=True),
         dtypes=REAL, domain="int", grad=False, jit=False, vmap=False, variant="all",
         shapes=AT_LEAST_1D),
    Case("unique", _unique_padded, dtypes=REAL, domain="int", grad=False, variant="size",
         shapes=NONEMPTY_VECTOR, ulps=1),
    Case("unique", lambda xp, x: xp.unique(x, axis=0, return_counts=True), dtypes=INTS,
         domain="unit", grad=False, jit=False, vmap=False, variant="axis",
         shapes=small_shapes(2, 2, min_side=1).map(lambda s: (s,))),
    Case("unique_values", lambda xp, x: xp.unique_values(x), dtypes=REAL, domain="int",
         grad=False, jit=False, vmap=False),
    Case("unique_counts", lambda xp, x: tuple(xp.unique_counts(x)), dtypes=REAL, domain="int",
         grad=False, jit=False, vmap=False),
    Case("unique_inverse", lambda xp, x: tuple(xp.unique_inverse(x)), dtypes=REAL,
         domain="int", grad=False, jit=False, vmap=False),
    Case("unique_all", lambda xp, x: tuple(xp.unique_all(x)), dtypes=REAL, domain="int",
         grad=False, jit=False, vmap=False, shapes=VECTOR),
    Case("union1d", lambda xp, a, b: xp.union1d(a, b), nargs=2, shapes=TWO_VECTORS,
         dtypes=REAL, domain="int", grad=False, jit=False, vmap=False),
    Case("intersect1d", lambda xp, a, b: xp.intersect1d(a, b, return_indices=True), nargs=2,
         shapes=TWO_VECTORS, dtypes=REAL, domain="int", grad=False, jit=False, vmap=False),
    Case("setdiff1d", lambda xp, a, b: xp.setdiff1d(a, b), nargs=2, shapes=TWO_VECTORS,
         dtypes=REAL, domain="int", grad=False, jit=False, vmap=False),
    Case("setdiff1d", _setdiff_padded, nargs=2, shapes=TWO_VECTORS, dtypes=SIGNED,
         domain="int", grad=False, variant="size"),
    Case("setxor1d", lambda xp, a, b: xp.setxor1d(a, b), nargs=2, shapes=TWO_VECTORS,
         dtypes=REAL, domain="int", grad=False, jit=False, vmap=False),
    Case("isin", lambda xp, a, b: xp.isin(a, b), nargs=2,
         shapes=st.tuples(small_shapes(), small_shapes()), dtypes=ALL, domain="int",
         grad=False),
    Case("isin", lambda xp, a, b: xp.isin(a, b, invert=True), nargs=2, variant="invert",
         shapes=st.tuples(small_shapes(), small_shapes()), dtypes=REAL, domain="int",
         grad=False),
    Case("nonzero", lambda xp, x: xp.nonzero(x), shapes=AT_LEAST_1D, domain="unit",
         grad=False, jit=False, vmap=False),
    Case("nonzero", _nonzero_padded, shapes=AT_LEAST_1D, domain="unit", grad=False,
         variant="size", example_shapes=((2, 3),)),
    Case("flatnonzero", lambda xp, x: xp.flatnonzero(x), domain="unit", grad=False,
         jit=False, vmap=False),
    Case("argwhere", lambda xp, x: xp.argwhere(x), domain="unit", grad=False, jit=False,
         vmap=False, example_shapes=((2, 3),)),
    Case("extract", lambda xp, c, x: xp.extract(c, x), nargs=2, dtypes=ALL, domain="unit",
         shapes=same_shapes(2), grad=False, jit=False, vmap=False),
    Case("bincount", lambda xp, x: xp.bincount(x), dtypes=("u8", "i32", "i64"),
         shapes=VECTOR, domain="positive", grad=False, jit=False, vmap=False),
    Case("bincount", lambda xp, x, w: xp.bincount(x, weights=w, minlength=12) if xp is np
         else xp.bincount(x, weights=w, minlength=12, length=12), nargs=2,
         dtypes=("i32",), shapes=same_shapes(2, min_dims=1, max_dims=1),
         domain="positive", grad=False, variant="weights"),
    # Floats only: JAX's edges are linspace's roundings (1.0000001 for 1), so integer data
    # lying on an edge may count one bin off numpy's, as it does in JAX (matched exactly in
    # test_fuzz_regressions.py).
    Case("histogram", lambda xp, x, **kw: xp.histogram(x, **kw), dtypes=FLOATS,
         shapes=small_shapes(1, min_side=1).map(lambda s: (s,)), grad=False,
         kwargs=lambda s: st.fixed_dictionaries({"bins": st.integers(1, 6),
                                                 "density": st.booleans()}), ulps=64),
    Case("histogram", lambda xp, x, w: xp.histogram(x, bins=4, range=(-2.0, 2.5), weights=w),
         nargs=2, dtypes=FLOATS, shapes=same_shapes(2, min_dims=1), grad=False,
         variant="weights", ulps=64),
    Case("histogram_bin_edges", lambda xp, x: xp.histogram_bin_edges(x, bins=5),
         dtypes=REAL_NUMERIC, shapes=NONEMPTY_VECTOR, grad=False, ulps=64),
    # Counts cannot absorb a tolerance: half-precision edges would move samples across them.
    Case("histogram2d", lambda xp, x, y: xp.histogram2d(x, y, bins=(3, 4)), nargs=2,
         dtypes=("f32", "f64"), shapes=same_shapes(2, min_dims=1, max_dims=1, min_side=2),
         grad=False, ulps=64),
    Case("histogramdd", lambda xp, s: (lambda r: (r[0], *r[1]))(
        xp.histogramdd(s, bins=3, density=True)), dtypes=("f32", "f64"),
         shapes=st.tuples(st.integers(1, 6), st.integers(1, 3)).map(lambda s: (s,)),
         example_shapes=((4, 2),), grad=False, ulps=64),
    # Differences.
    Case("diff", lambda xp, x, **kw: xp.diff(x, **kw), shapes=AT_LEAST_1D, dtypes=ALL,
         kwargs=lambda s: st.tuples(axis_kwargs(s, allow_none=False),
                                    st.integers(0, 3)).map(lambda p: {**p[0], "n": p[1]})),
    Case("diff", lambda xp, x: xp.diff(x, prepend=1, append=x[..., :1]), shapes=AT_LEAST_1D,
         dtypes=NUMERIC, variant="edges"),
    Case("ediff1d", lambda xp, x: xp.ediff1d(x, to_begin=x[:1], to_end=2), dtypes=NUMERIC,
         shapes=AT_LEAST_1D),
    Case("gradient", lambda xp, x, **kw: xp.gradient(x, **kw),
         shapes=small_shapes(1, 1, min_side=2).map(lambda s: (s,)), dtypes=REAL_NUMERIC,
         kwargs=lambda s: st.fixed_dictionaries({})),
    Case("gradient", lambda xp, x: xp.gradient(x, 0.5, 2.0),
         shapes=small_shapes(2, 2, min_side=2).map(lambda s: (s,)), dtypes=FLOATS,
         variant="2d", example_shapes=((2, 3),)),
    Case("gradient", lambda xp, x: xp.gradient(x, xp.cumsum(xp.abs(x) + 0.5)),
         shapes=small_shapes(1, 1, min_side=3).map(lambda s: (s,)), dtypes=("f32", "f64"),
         variant="coordinates", ulps=256),
    Case("trapezoid", lambda xp, y, **kw: xp.trapezoid(y, **kw), shapes=AT_LEAST_1D,
         dtypes=REAL_NUMERIC + INEXACT[-2:],
         kwargs=lambda s: st.fixed_dictionaries({"dx": st.sampled_from([1.0, 0.5])}),
         example_shapes=((4,),)),
    Case("trapezoid", lambda xp, y, x: xp.trapezoid(y, x, axis=0), nargs=2,
         shapes=same_shapes(2, min_dims=1), dtypes=FLOATS, variant="x", ulps=32),
    Case("unwrap", lambda xp, p: xp.unwrap(p * 3), shapes=AT_LEAST_1D, dtypes=("f32", "f64"),
         ulps=64),
    Case("unwrap", lambda xp, p: xp.unwrap(p, period=4, discont=2.5, axis=0),
         shapes=AT_LEAST_1D, dtypes=SIGNED + ("f32", "f64"), variant="period", ulps=64),
    Case("interp", lambda xp, x, xp_, fp: xp.interp(x * 2, xp.sort(xp_ * 2), fp), nargs=3,
         shapes=st.tuples(small_shapes(0, 2), st.integers(1, 6).map(lambda n: (n,))).map(
             lambda p: (p[0], p[1], p[1])), dtypes=("f32", "f64"), ulps=64,
         example_shapes=((3,), (4,), (4,))),
    Case("interp", lambda xp, x, xp_, fp: xp.interp(x, xp.sort(xp_), fp, left=-7.0,
                                                    right=9.0), nargs=3,
         shapes=st.tuples(small_shapes(0, 2), st.integers(1, 6).map(lambda n: (n,))).map(
             lambda p: (p[0], p[1], p[1])), dtypes=("f64",), variant="edges", ulps=64,
         example_shapes=((3,), (4,), (4,))),
]
