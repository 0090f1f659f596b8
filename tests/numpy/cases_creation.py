"""Cases for the array-taking creation functions of jaxlite.numpy: conversions, the `*_like`
functions, spaced samples, grids, triangles and diagonals.

Creation functions that take no arrays (eye, tri, windows, indices, ...) are tested in
test_creation_indexing.py.
"""
import numpy as np
from hypothesis import strategies as st

from np_cases import (ALL, COMPLEX, FLOATS, INTS, SIGNED, Case, broadcastable_shapes,
                      small_shapes)

EXACT = {"ulps": 1.0}  # moves only: 64-bit inputs rounded to 32 bits with x64 off


def _one(strategy):
    return strategy.map(lambda s: (s,))


def _fill_diagonal(xp, a, v):
    if xp is np:
        a = a.copy()
        np.fill_diagonal(a, v)
        return a
    return xp.fill_diagonal(a, v, inplace=False)


def _k(low=-3, high=3):
    return lambda shapes: st.fixed_dictionaries({"k": st.integers(low, high)})


@st.composite
def _linspace_kwargs(draw, shapes):
    ndim = max(len(s) for s in shapes)
    return {"num": draw(st.integers(0, 6)), "endpoint": draw(st.booleans()),
            "axis": draw(st.integers(-ndim - 1, ndim))}


@st.composite
def _diagonal_kwargs(draw, shapes):
    ndim = len(shapes[0])
    axes = draw(st.permutations(range(ndim)))[:2]
    return {"offset": draw(st.integers(-3, 3)), "axis1": axes[0], "axis2": axes[1]}


@st.composite
def _meshgrid_kwargs(draw, shapes):
    return {"indexing": draw(st.sampled_from(["xy", "ij"])), "sparse": draw(st.booleans())}


@st.composite
def _vander_kwargs(draw, shapes):
    return {"N": draw(st.sampled_from([None, 0, 1, 3, 4])), "increasing": draw(st.booleans())}


VECTORS = st.integers(0, 4).map(lambda n: (n,))
MATRICES = small_shapes(min_dims=2, max_dims=2)

CASES = [
    Case("array", lambda xp, x: xp.array(x), dtypes=ALL, **EXACT),
    Case("array", lambda xp, x: xp.array(x, ndmin=3), dtypes=ALL, variant="ndmin", **EXACT),
    Case("asarray", lambda xp, x: xp.asarray(x), dtypes=ALL, **EXACT),
    Case("asarray", lambda xp, x: xp.asarray(x, dtype=np.float32), dtypes=INTS + FLOATS,
         variant="dtype", ulps=1.0, grad=False),
    Case("copy", lambda xp, x: xp.copy(x), dtypes=ALL, **EXACT),
    Case("zeros_like", lambda xp, x: xp.zeros_like(x), dtypes=ALL, grad=False, **EXACT),
    Case("ones_like", lambda xp, x: xp.ones_like(x), dtypes=ALL, grad=False, **EXACT),
    Case("ones_like", lambda xp, x: xp.ones_like(x, dtype=np.int8, shape=(2, 1)),
         dtypes=ALL, grad=False, variant="dtype_shape", **EXACT),
    Case("full_like", lambda xp, x: xp.full_like(x, 3), dtypes=ALL, grad=False, **EXACT),
    Case("full_like", lambda xp, x, y: xp.full_like(x, y), nargs=2,
         shapes=broadcastable_shapes(2).map(lambda s: (s[0] + s[1], s[1])),
         dtypes=ALL, grad=False, variant="array_fill", **EXACT),
    Case("linspace", lambda xp, a, b, **kw: xp.linspace(a, b, **kw), nargs=2,
         dtypes=SIGNED + FLOATS + COMPLEX, kwargs=_linspace_kwargs,
         example_kwargs={"num": 5}),
    Case("linspace", lambda xp, a, b: xp.linspace(a, b, 4, retstep=True), nargs=2,
         dtypes=("f32", "f64"), variant="retstep"),
    Case("logspace", lambda xp, a, b, **kw: xp.logspace(a, b, **kw), nargs=2,
         dtypes=("i32",) + FLOATS, domain="unit", kwargs=_linspace_kwargs,
         example_kwargs={"num": 5}, ulps=16),
    Case("logspace", lambda xp, a, b: xp.logspace(a, b, 4, base=2.0, endpoint=False),
         nargs=2, dtypes=("f32", "f64"), domain="unit", variant="base", ulps=16),
    Case("geomspace", lambda xp, a, b, **kw: xp.geomspace(a, b, **kw), nargs=2,
         dtypes=("i32", "f32", "f64"), domain="positive", kwargs=_linspace_kwargs,
         example_kwargs={"num": 5}, ulps=64),
    Case("geomspace", lambda xp, a, b: xp.geomspace(-a, -b, 5), nargs=2,
         dtypes=("f32", "f64"), domain="positive", variant="negative", ulps=64),
    Case("meshgrid", lambda xp, a, b, **kw: xp.meshgrid(a, b, **kw), nargs=2,
         shapes=st.tuples(VECTORS, VECTORS), kwargs=_meshgrid_kwargs, dtypes=ALL, **EXACT),
    Case("meshgrid", lambda xp, a, b, c: xp.meshgrid(a, b, c), nargs=3,
         shapes=st.tuples(VECTORS, VECTORS, VECTORS), dtypes=("i32", "f32"), variant="three",
         **EXACT),
    Case("ix_", lambda xp, a, b: xp.ix_(a, b), nargs=2, shapes=st.tuples(VECTORS, VECTORS),
         dtypes=INTS, grad=False, **EXACT),
    Case("tril", lambda xp, x, **kw: xp.tril(x, **kw), shapes=_one(small_shapes(min_dims=2)),
         kwargs=_k(), dtypes=ALL, example_shapes=((3, 3),), **EXACT),
    Case("triu", lambda xp, x, **kw: xp.triu(x, **kw), shapes=_one(small_shapes(min_dims=2)),
         kwargs=_k(), dtypes=ALL, example_shapes=((3, 3),), **EXACT),
    Case("diag", lambda xp, x, **kw: xp.diag(x, **kw), shapes=_one(VECTORS), kwargs=_k(),
         dtypes=ALL, **EXACT),
    Case("diag", lambda xp, x, **kw: xp.diag(x, **kw), shapes=_one(MATRICES), kwargs=_k(),
         dtypes=ALL, variant="matrix", example_shapes=((3, 4),), **EXACT),
    Case("diagflat", lambda xp, x, **kw: xp.diagflat(x, **kw), shapes=_one(small_shapes()),
         kwargs=_k(), dtypes=ALL, **EXACT),
    Case("diagonal", lambda xp, x, **kw: xp.diagonal(x, **kw),
         shapes=_one(small_shapes(min_dims=2)), kwargs=_diagonal_kwargs, dtypes=ALL,
         example_shapes=((3, 4),), **EXACT),
    Case("fill_diagonal", _fill_diagonal, nargs=2,
         shapes=st.tuples(small_shapes(2, 2, min_side=1), small_shapes(0, 1, min_side=1)),
         dtypes=ALL, example_shapes=((3, 3), ()), **EXACT),
    Case("fill_diagonal", _fill_diagonal, nargs=2, variant="cube",
         shapes=st.integers(1, 3).map(lambda n: ((n, n, n), (2,))),
         dtypes=("i32", "f32", "f64"), example_shapes=((2, 2, 2), (2,)), **EXACT),
    Case("vander", lambda xp, x, **kw: xp.vander(x, **kw), shapes=_one(VECTORS),
         kwargs=_vander_kwargs, dtypes=INTS + FLOATS + COMPLEX, domain="small", ulps=4.0),
    Case("tril_indices_from", lambda xp, x, **kw: xp.tril_indices_from(x, **kw),
         shapes=_one(MATRICES), kwargs=_k(), dtypes=("f32", "i32"), grad=False, vmap=False,
         example_shapes=((3, 4),), **EXACT),
    Case("triu_indices_from", lambda xp, x, **kw: xp.triu_indices_from(x, **kw),
         shapes=_one(MATRICES), kwargs=_k(), dtypes=("f32", "i32"), grad=False, vmap=False,
         example_shapes=((3, 4),), **EXACT),
    Case("diag_indices_from", lambda xp, x: xp.diag_indices_from(x),
         shapes=st.tuples(st.integers(0, 3), st.integers(2, 3)).map(
             lambda s: ((s[0],) * s[1],)), dtypes=("f32", "b1"), grad=False, vmap=False,
         example_shapes=((3, 3),), **EXACT),
]
