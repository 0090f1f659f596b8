"""Cases for the methods of jaxlite.numpy's ufunc objects: reduce, accumulate, outer, at,
reduceat, on the fourteen functions that JAX makes ufuncs.

numpy's ufuncs have the same methods, so numpy is the reference; `at` works in place in
numpy and returns a new array in JAX (`inplace=False`), which `_at` bridges.
"""
import numpy as np
from hypothesis import strategies as st

from np_cases import ALL, BOOL, INTS, NUMERIC, REAL, Case, small_shapes

BITWISE = BOOL + INTS
# ufunc name -> the input dtypes it accepts
UFUNCS = {
    "add": ALL, "subtract": NUMERIC, "multiply": ALL, "maximum": ALL, "minimum": ALL,
    "bitwise_and": BITWISE, "bitwise_or": BITWISE, "bitwise_xor": BITWISE,
    "logical_and": ALL, "logical_or": ALL, "logical_xor": ALL,
    "logaddexp": INTS + ("f16", "bf16", "f32", "f64"), "logaddexp2": INTS + ("f32", "f64"),
}
# logaddexp.reduceat of integers fails in JAX 0.10.2 (its scan carry changes dtype), where
# jaxlite gives the float result; so reduceat and at of logaddexp test float inputs only.
FLOATS = ("f16", "bf16", "f32", "f64")
# Functions whose reduce and accumulate have a fast path take tuples of axes too.
TUPLE_AXES = ("add", "multiply", "maximum", "minimum", "logical_and", "logical_or")
NONEMPTY = small_shapes(min_dims=1, min_side=1).map(lambda shape: (shape,))
AT_INDICES = np.array([0, 0, -1])


def _reduce_kwargs(name: str):
    @st.composite
    def kwargs(draw, shapes):
        ndim = len(shapes[0])
        axes = [None, *range(-ndim, ndim)]
        if name in TUPLE_AXES and ndim >= 2:
            axes.append((0, ndim - 1))
        return {"axis": draw(st.sampled_from(axes)), "keepdims": draw(st.booleans())}
    return kwargs


def _accumulate_kwargs(shapes) -> st.SearchStrategy:
    ndim = len(shapes[0])
    return st.fixed_dictionaries({"axis": st.sampled_from(range(-ndim, ndim))})


def _at(xp, name: str, a, b=None):
    """`name.at(a, AT_INDICES, b)` as a new array, in numpy and in jnp alike."""
    method = getattr(xp, name).at
    operands = () if b is None else (b,)
    if xp is np:
        out = a.copy()
        method(out, AT_INDICES, *operands)
        return out
    return method(a, AT_INDICES, *operands, inplace=False)


def _reduceat_dtypes(name: str, dtypes) -> tuple:
    """JAX's reduceat passes a one-element segment through unchanged, so logical_and of
    the int 3 stays 3 where numpy says True: only bools are compared for the logical ufuncs.
    """
    if name.startswith("logical"):
        return BOOL
    return FLOATS if name.startswith("logaddexp") else dtypes


def _ufunc_cases(name: str, dtypes) -> list[Case]:
    smooth = name in ("add", "subtract", "multiply", "logaddexp", "logaddexp2")
    ufunc = lambda xp: getattr(xp, name)  # noqa: E731
    return [
        Case(name, lambda xp, x, **kw: ufunc(xp).reduce(x, **kw), dtypes=dtypes,
             shapes=NONEMPTY, kwargs=_reduce_kwargs(name), example_kwargs={"axis": 0},
             grad=smooth, variant="reduce"),
        Case(name, lambda xp, x, **kw: ufunc(xp).accumulate(x, **kw), dtypes=dtypes,
             shapes=NONEMPTY, kwargs=_accumulate_kwargs, grad=smooth, variant="accumulate"),
        Case(name, lambda xp, x, y: ufunc(xp).outer(x, y), nargs=2, dtypes=dtypes,
             shapes=st.tuples(small_shapes(max_dims=2), small_shapes(max_dims=2)),
             grad=smooth, variant="outer"),
        # numpy's at casts results back to the array's dtype; JAX's keeps the function's.
        Case(name, lambda xp, x, y: _at(xp, name, x, y[0]), nargs=2,
             dtypes=FLOATS if name.startswith("logaddexp") else dtypes,
             shapes=NONEMPTY.map(lambda s: s * 2), variant="at",
             grad=smooth and name != "multiply"),  # JAX cannot either: repeated indices
        Case(name, lambda xp, x: ufunc(xp).reduceat(x, np.array([0, 2, 1, 2])),
             dtypes=_reduceat_dtypes(name, dtypes), grad=smooth, variant="reduceat",
             shapes=small_shapes(1, 3, min_side=3).map(lambda s: (s,))),
    ]


CASES = [case for name, dtypes in UFUNCS.items() for case in _ufunc_cases(name, dtypes)] + [
    Case("negative", lambda xp, x: xp.negative(x), dtypes=REAL, variant="call"),
    Case("negative", lambda xp, x: _at(xp, "negative", x), dtypes=NUMERIC, shapes=NONEMPTY,
         variant="at"),
    Case("add", lambda xp, x: xp.add.reduce(x, axis=0, where=x > 0, initial=1),
         dtypes=REAL, shapes=NONEMPTY, variant="reduce_where", grad=False),
    Case("subtract", lambda xp, x: xp.subtract.reduce(x, axis=0, where=x > 0, initial=1),
         dtypes=REAL, shapes=NONEMPTY, variant="reduce_where", grad=False),
]
