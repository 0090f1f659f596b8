"""Cases for the products of jaxlite.numpy: dot ... kron, matmul variants, einsum."""
import numpy as np
from hypothesis import strategies as st

from np_cases import ALL, BOOL, FLOATS, INEXACT, INTS, NUMERIC, Case, small_shapes

SIDE = st.integers(0, 4)
NONZERO_SIDE = st.integers(1, 4)


@st.composite
def matmul_shapes(draw):
    """Shapes numpy's matmul accepts: 1-d or batched matrices with broadcast batches."""
    n, k, m = draw(SIDE), draw(SIDE), draw(SIDE)
    batch = draw(small_shapes(0, 2, min_side=1, max_side=3))
    a_batch = tuple(1 if draw(st.booleans()) else b for b in batch)
    a = (k,) if draw(st.booleans()) else a_batch + (n, k)
    b = (k,) if draw(st.booleans()) else batch[draw(st.integers(0, len(batch))):] + (k, m)
    return a, b


@st.composite
def dot_shapes(draw):
    k = draw(SIDE)
    a = draw(small_shapes(0, 2)) + (k,)
    b = (k,) if draw(st.booleans()) else draw(small_shapes(0, 1)) + (k, draw(SIDE))
    return (a, b) if draw(st.booleans()) else ((), b)


@st.composite
def tensordot_shapes(draw):
    shared = draw(small_shapes(0, 2))
    a = draw(small_shapes(0, 2)) + shared
    b = shared + draw(small_shapes(0, 2))
    return a, b


@st.composite
def einsum_operands(draw):
    """Three operands for 'ab,bc,cd->ad' style chains (sizes drawn per letter)."""
    a, b, c, d = (draw(SIDE) for _ in range(4))
    return (a, b), (b, c), (c, d)


@st.composite
def cross_shapes(draw, components=(3, 3)):
    """Two stacks of vectors whose batch axes broadcast."""
    batch = draw(small_shapes(0, 2))
    other = tuple(1 if draw(st.booleans()) else side for side in batch)
    return batch + (components[0],), other + (components[1],)


def _cross_2d(xp, a, b):
    """`xp.cross` with 2-vectors; numpy's reference pads them with a zero third component
    and keeps only the z component of two 2-vectors, as numpy before 2.5 (which removed
    2-vector cross products) and JAX do."""
    if xp is not np:
        return xp.cross(a, b)
    def pad(v):
        zero = np.zeros(v.shape[:-1] + (1,), v.dtype)
        return np.concatenate([v, zero], axis=-1) if v.shape[-1] == 2 else v
    out = np.cross(pad(a), pad(b))
    return out[..., 2] if a.shape[-1] == b.shape[-1] == 2 else out


CASES = [
    Case("cross", lambda xp, a, b: xp.cross(a, b), nargs=2, dtypes=NUMERIC,
         shapes=cross_shapes(), example_shapes=((3,), (3,))),
    Case("cross", lambda xp, a, b: xp.cross(a, b, axisa=0, axisb=0, axisc=0), nargs=2,
         dtypes=FLOATS, shapes=cross_shapes().map(lambda s: tuple(t[::-1] for t in s)),
         example_shapes=((3, 2), (3, 2)), variant="axes"),
    Case("cross", _cross_2d, nargs=2, dtypes=FLOATS,
         shapes=cross_shapes((2, 3)), example_shapes=((2,), (3,)), variant="mixed"),
    Case("cross", _cross_2d, nargs=2, dtypes=FLOATS,
         shapes=cross_shapes((2, 2)), example_shapes=((2,), (2,)), variant="planar"),
    Case("dot", lambda xp, a, b: xp.dot(a, b), nargs=2, shapes=dot_shapes(), dtypes=ALL,
         example_shapes=((2, 3), (3, 4)), ulps=16),
    Case("vdot", lambda xp, a, b: xp.vdot(a, b), nargs=2,
         shapes=small_shapes().map(lambda s: (s, s)), dtypes=NUMERIC, ulps=16),
    Case("inner", lambda xp, a, b: xp.inner(a, b), nargs=2,
         shapes=st.tuples(small_shapes(0, 2), small_shapes(0, 1), SIDE).map(
             lambda p: (p[0] + (p[2],), p[1] + (p[2],))), dtypes=NUMERIC, ulps=16),
    Case("outer", lambda xp, a, b: xp.outer(a, b), nargs=2,
         shapes=st.tuples(small_shapes(), small_shapes()), dtypes=ALL),
    Case("kron", lambda xp, a, b: xp.kron(a, b), nargs=2,
         shapes=st.tuples(small_shapes(0, 3, max_side=3), small_shapes(0, 3, max_side=3)),
         dtypes=ALL, example_shapes=((2, 3), (2,))),
    Case("matmul", lambda xp, a, b: xp.matmul(a, b), nargs=2, shapes=matmul_shapes(),
         dtypes=ALL, example_shapes=((2, 3), (3, 4)), ulps=16),
    Case("matvec", lambda xp, a, b: xp.matvec(a, b), nargs=2,
         shapes=st.tuples(small_shapes(0, 2, min_side=1), SIDE, SIDE).map(
             lambda p: (p[0] + (p[1], p[2]), (p[2],))), dtypes=NUMERIC,
         example_shapes=((2, 3), (3,)), ulps=16),
    Case("vecmat", lambda xp, a, b: xp.vecmat(a, b), nargs=2,
         shapes=st.tuples(small_shapes(0, 2, min_side=1), SIDE, SIDE).map(
             lambda p: ((p[1],), p[0] + (p[1], p[2]))), dtypes=NUMERIC,
         example_shapes=((3,), (3, 2)), ulps=16),
    Case("vecdot", lambda xp, a, b: xp.vecdot(a, b), nargs=2,
         shapes=small_shapes(1).map(lambda s: (s, s[-1:])), dtypes=NUMERIC, ulps=16),
    Case("tensordot", lambda xp, a, b: xp.tensordot(a, b, axes=len(a.shape) - 1 if a.ndim
                                                      else 0), nargs=2,
         shapes=small_shapes(1, 3).map(lambda s: (s, s[1:] + (2,))), dtypes=NUMERIC,
         example_shapes=((2, 3), (3, 2)), ulps=16),
    Case("tensordot", lambda xp, a, b: xp.tensordot(a, b, axes=([0], [0])), nargs=2,
         shapes=small_shapes(1, 2).map(lambda s: (s, s[:1] + (3,))), dtypes=FLOATS,
         variant="pairs", ulps=16),
    Case("trace", lambda xp, a, **kw: xp.trace(a, **kw), shapes=small_shapes(2, 3).map(
        lambda s: (s,)), dtypes=ALL,
         kwargs=lambda s: st.fixed_dictionaries({"offset": st.integers(-2, 2)}),
         example_shapes=((3, 3),)),
    Case("einsum", lambda xp, a, b, c: xp.einsum("ab,bc,cd->ad", a, b, c), nargs=3,
         shapes=einsum_operands(), dtypes=NUMERIC + BOOL,
         example_shapes=((2, 3), (3, 4), (4, 2)), ulps=32),
    Case("einsum", lambda xp, a, b: xp.einsum("iij,jk->ki", a, b, optimize="greedy"), nargs=2,
         shapes=st.tuples(SIDE, SIDE, SIDE).map(lambda p: ((p[0], p[0], p[1]), (p[1], p[2]))),
         dtypes=FLOATS + INTS, variant="diagonal", example_shapes=((2, 2, 3), (3, 2)), ulps=16),
    Case("einsum", lambda xp, a, b: xp.einsum("...i,...i", a, b), nargs=2,
         shapes=st.tuples(small_shapes(0, 2, min_side=1), NONZERO_SIDE).map(
             lambda p: (p[0] + (p[1],), (p[1],))), dtypes=INEXACT, variant="ellipsis",
         ulps=16),
    Case("einsum", lambda xp, a: xp.einsum("ijk->kj", a), variant="reduce",
         shapes=small_shapes(3, 3).map(lambda s: (s,)), dtypes=NUMERIC,
         example_shapes=((2, 3, 4),), ulps=16),
    Case("einsum", lambda xp, a, b: xp.einsum(a, [0, 1], b, [1, 2], [2, 0], optimize=False),
         nargs=2, shapes=st.tuples(SIDE, SIDE, SIDE).map(lambda p: ((p[0], p[1]), (p[1], p[2]))),
         dtypes=FLOATS, variant="sublists", example_shapes=((2, 3), (3, 4)), ulps=16),
]
