"""Cases for the index-based functions of jaxlite.numpy: take, take_along_axis, put,
put_along_axis, place, choose, select, compress, ravel_multi_index, unravel_index, packbits,
unpackbits.

Indices are drawn in range from the drawn shapes, or out of range with the modes whose
meaning numpy and JAX share ('clip', 'wrap'). numpy's writing functions work in place; the
numpy side of those cases copies first and returns the copy.
"""
import numpy as np
from hypothesis import strategies as st

from np_cases import ALL, BOOL, INTS, Case, axis_kwargs, small_shapes

EXACT = {"ulps": 1.0}  # moves only: 64-bit inputs rounded to 32 bits with x64 off
INDEXED = st.tuples(small_shapes(min_dims=1, min_side=1))


def _in_place(fun_name):
    """numpy's in-place writer as a function returning the result, or jnp's with
    inplace=False."""
    def fn(xp, a, *args, **kwargs):
        if xp is np:
            a = a.copy()
            getattr(np, fun_name)(a, *args, **kwargs)
            return a
        return getattr(xp, fun_name)(a, *args, inplace=False, **kwargs)
    return fn


def _index_array(draw, length, low=None, high=None, max_size=4, shape=None):
    low = -length if low is None else low
    high = length - 1 if high is None else high
    if shape is None:
        shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    size = int(np.prod(shape))
    values = draw(st.lists(st.integers(low, high), min_size=size, max_size=size))
    return np.array(values, np.int32).reshape(shape)


@st.composite
def _take_kwargs(draw, shapes, mode=None):
    kwargs = draw(axis_kwargs(shapes))
    axis = kwargs["axis"]
    length = int(np.prod(shapes[0])) if axis is None else shapes[0][axis]
    wide = mode in ("clip", "wrap")
    kwargs["indices"] = _index_array(draw, length, -3 * length if wide else None,
                                     3 * length if wide else None)
    if mode is not None:
        kwargs["mode"] = mode
    return kwargs


@st.composite
def _along_axis_kwargs(draw, shapes):
    shape = shapes[0]
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = tuple(draw(st.integers(0, 3)) if d == axis % len(shape)
                        else draw(st.sampled_from([n, 1])) for d, n in enumerate(shape))
    return {"indices": _index_array(draw, shape[axis], shape=index_shape), "axis": axis}


@st.composite
def _put_along_kwargs(draw, shapes):
    shape = shapes[0]
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    # One index per line keeps the write order irrelevant (numpy keeps the last one).
    index_shape = tuple(1 if d == axis % len(shape) else n for d, n in enumerate(shape))
    return {"indices": _index_array(draw, shape[axis], shape=index_shape), "axis": axis,
            "values": draw(st.integers(0, 5))}


@st.composite
def _put_kwargs(draw, shapes, mode):
    size = int(np.prod(shapes[0]))
    wide = mode in ("clip", "wrap")
    unique = draw(st.lists(st.integers(0, size - 1), unique=True, max_size=4))
    if wide:  # move each index by whole periods: same target under 'wrap'
        index = np.array(unique, np.int64) + size * np.array(
            [draw(st.integers(-2, 2)) for _ in unique], np.int64)
        if mode == "clip":
            index = np.clip(index, 0, size - 1)
            index = np.unique(index)
    else:
        index = np.array(unique, np.int64) - size * np.array(
            [draw(st.booleans()) for _ in unique], np.int64)
    values = np.arange(len(index) + draw(st.integers(-1, 2)) if len(index) else 0) + 3
    kwargs = {"ind": index.astype(np.int32), "v": values if values.size else 7}
    if mode is not None:
        kwargs["mode"] = mode
    return kwargs


@st.composite
def _mask_kwargs(draw, shapes):
    mask = np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(shapes[0])),
                                  max_size=int(np.prod(shapes[0])))), bool)
    return {"mask": mask.reshape(shapes[0]),
            "vals": np.arange(draw(st.integers(1, 4))) + 2}


@st.composite
def _choose_kwargs(draw, shapes, mode):
    count = len(shapes) - 1
    if mode == "raise":
        index = _index_array(draw, count, 0, count - 1, shape=shapes[0])
    else:
        index = _index_array(draw, count, -2 * count, 2 * count, shape=shapes[0])
    return {"index": index, "mode": mode}


def _choose(xp, *choices, index, mode):
    return xp.choose(index, list(choices), mode=mode)


@st.composite
def _select_kwargs(draw, shapes):
    thresholds = sorted(draw(st.lists(st.integers(0, 3), min_size=len(shapes),
                                      max_size=len(shapes))))
    return {"thresholds": tuple(thresholds), "default": draw(st.integers(-2, 2))}


def _select(xp, *choices, thresholds, default):
    conditions = [xp.asarray(c).real > t for c, t in zip(choices, thresholds)]
    return xp.select(conditions, list(choices), default)


@st.composite
def _compress_kwargs(draw, shapes):
    kwargs = draw(axis_kwargs(shapes))
    axis = kwargs["axis"]
    length = int(np.prod(shapes[0])) if axis is None else shapes[0][axis]
    count = draw(st.integers(0, length))
    kwargs["condition"] = np.array(draw(st.lists(st.booleans(), min_size=count,
                                                 max_size=count)), bool)
    return kwargs


@st.composite
def _multi_index_kwargs(draw, shapes, mode):
    dims = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    count = draw(st.integers(0, 4))
    wide = mode in ("clip", "wrap")
    coords = tuple(np.array(draw(st.lists(st.integers(-2 * n if wide else 0,
                                                      2 * n if wide else n - 1),
                                          min_size=count, max_size=count)), np.int32)
                   for n in dims)
    return {"multi_index": coords, "dims": dims, "mode": mode,
            "order": draw(st.sampled_from(["C", "F"]))}


@st.composite
def _unravel_kwargs(draw, shapes):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    size = int(np.prod(shape))
    return {"indices": _index_array(draw, size, -size, size - 1), "shape": shape}


@st.composite
def _bits_kwargs(draw, shapes, unpack):
    kwargs = draw(axis_kwargs(shapes))
    kwargs["bitorder"] = draw(st.sampled_from(["big", "little"]))
    if unpack and draw(st.booleans()):
        kwargs["count"] = draw(st.integers(-9, 20))
    return kwargs


def _no_arrays(fn):
    """A case function whose arrays all come from its keyword arguments."""
    return lambda xp, _unused, **kw: fn(xp, **kw)


def _take_case(mode, **options):
    return Case("take", lambda xp, a, **kw: xp.take(a, **kw), shapes=INDEXED,
                kwargs=lambda s: _take_kwargs(s, mode), dtypes=ALL,
                example_kwargs={"indices": np.array([0, 2, -1], np.int32)},
                variant=mode or "", **EXACT, **options)


def _put_case(mode):
    return Case("put", _in_place("put"), shapes=INDEXED, kwargs=lambda s: _put_kwargs(s, mode),
                dtypes=ALL, example_kwargs={"ind": np.array([0, 2], np.int32), "v": 9},
                variant=mode or "", grad=False, **EXACT)


def _choose_case(mode):
    shapes = small_shapes(max_dims=2).map(lambda s: (s,) * 4)
    return Case("choose", lambda xp, *xs, **kw: _choose(xp, *xs[1:], **kw), nargs=4,
                shapes=shapes, kwargs=lambda s: _choose_kwargs(s, mode), dtypes=ALL,
                example_kwargs={"index": np.array([0, 1, 2], np.int32), "mode": mode},
                variant=mode, **EXACT)


CASES = [
    _take_case(None),
    _take_case("clip"),
    _take_case("wrap"),
    Case("take_along_axis", lambda xp, a, **kw: xp.take_along_axis(a, **kw), shapes=INDEXED,
         kwargs=_along_axis_kwargs, dtypes=ALL,
         example_kwargs={"indices": np.array([0, 2, -1], np.int32), "axis": 0}, **EXACT),
    _put_case(None),
    _put_case("clip"),
    _put_case("wrap"),
    Case("put_along_axis", _in_place("put_along_axis"), shapes=INDEXED,
         kwargs=_put_along_kwargs, dtypes=ALL, grad=False,
         example_kwargs={"indices": np.array([1], np.int32), "values": 3, "axis": 0},
         **EXACT),
    Case("place", _in_place("place"), shapes=INDEXED, kwargs=_mask_kwargs, dtypes=ALL,
         grad=False, vmap=False,
         example_kwargs={"mask": np.array([True, False, True]), "vals": np.arange(2)},
         **EXACT),
    _choose_case("raise"),
    _choose_case("clip"),
    _choose_case("wrap"),
    Case("select", _select, nargs=3, shapes=small_shapes().map(lambda s: (s,) * 3),
         kwargs=_select_kwargs, dtypes=ALL,
         example_kwargs={"thresholds": (0, 1, 2), "default": 0}, **EXACT),
    Case("compress", lambda xp, a, **kw: xp.compress(a=a, **kw), shapes=INDEXED,
         kwargs=_compress_kwargs, dtypes=ALL, vmap=True,
         example_kwargs={"condition": np.array([True, False, True])}, **EXACT),
    Case("ravel_multi_index", _no_arrays(lambda xp, **kw: xp.ravel_multi_index(**kw)),
         kwargs=lambda s: _multi_index_kwargs(s, "raise"), dtypes=("i32",), grad=False,
         jit=False, vmap=False, example_kwargs={
             "multi_index": (np.array([1, 2]), np.array([0, 3])), "dims": (3, 4),
             "mode": "raise"}, **EXACT),
    Case("ravel_multi_index", _no_arrays(lambda xp, **kw: xp.ravel_multi_index(**kw)),
         kwargs=lambda s: _multi_index_kwargs(s, "clip"), dtypes=("i32",), grad=False,
         variant="clip", vmap=False, example_kwargs={
             "multi_index": (np.array([1, 5]), np.array([0, -3])), "dims": (3, 4),
             "mode": "clip"}, **EXACT),
    Case("ravel_multi_index", _no_arrays(lambda xp, **kw: xp.ravel_multi_index(**kw)),
         kwargs=lambda s: _multi_index_kwargs(s, "wrap"), dtypes=("i32",), grad=False,
         variant="wrap", vmap=False, example_kwargs={
             "multi_index": (np.array([1, 5]), np.array([0, -3])), "dims": (3, 4),
             "mode": "wrap"}, **EXACT),
    Case("unravel_index", lambda xp, a, **kw: xp.unravel_index(**kw), kwargs=_unravel_kwargs,
         dtypes=("i32",), grad=False, vmap=False,
         example_kwargs={"indices": np.array([5, -1]), "shape": (3, 4)}, **EXACT),
    Case("packbits", lambda xp, a, **kw: xp.packbits(a, **kw), kwargs=lambda s: _bits_kwargs(
         s, False), shapes=st.tuples(small_shapes(max_dims=2, max_side=10)),
         dtypes=BOOL + INTS, grad=False, upcast=False, **EXACT),
    Case("unpackbits", lambda xp, a, **kw: xp.unpackbits(a, **kw), kwargs=lambda s: _bits_kwargs(
         s, True), shapes=st.tuples(small_shapes(max_dims=2)), dtypes=("u8",), grad=False,
         upcast=False, **EXACT),
]
