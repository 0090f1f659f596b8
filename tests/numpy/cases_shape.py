"""Cases for the shape functions of jaxlite.numpy: reshaping, axes, broadcasting, joining,
splitting, reversal, repetition, rolling, tiling, padding, deleting and inserting.

Index-like keyword arguments (axes, split points, shifts) are drawn from the drawn shapes,
so that every call is valid for numpy and JAX alike.
"""
import numpy as np
from hypothesis import strategies as st

from np_cases import ALL, FLOATS, INTS, NUMERIC, Case, axis_kwargs, same_shapes, small_shapes

MOVES = {"ulps": 1.0}  # moves only: 64-bit inputs rounded to 32 bits with x64 off


def _one(shapes_strategy) -> st.SearchStrategy:
    return shapes_strategy.map(lambda s: (s,))


def shape_case(name: str, fn, shapes=None, kwargs=None, **options) -> Case:
    return Case(name, fn, shapes=shapes, kwargs=kwargs, **{**MOVES, **options})


@st.composite
def _reshape_kwargs(draw, shapes):
    size = int(np.prod(shapes[0]))
    divisors = [d for d in range(1, size + 1) if size % d == 0] or [1]
    first = draw(st.sampled_from(divisors)) if size else draw(st.integers(0, 3))
    second = size // first if first else 0
    order = draw(st.sampled_from(["C", "F"]))
    shape = (first, second) if draw(st.booleans()) else (first, -1) if first else (0, 5)
    return {"shape": shape, "order": order}


@st.composite
def _permutation(draw, shapes):
    ndim = len(shapes[0])
    return {"axes": tuple(draw(st.permutations(range(ndim))))}


@st.composite
def _two_axes(draw, shapes, names=("axis1", "axis2")):
    ndim = len(shapes[0])
    return {names[0]: draw(st.integers(-ndim, ndim - 1)),
            names[1]: draw(st.integers(-ndim, ndim - 1))}


@st.composite
def _moveaxis_kwargs(draw, shapes):
    ndim = len(shapes[0])
    count = draw(st.integers(1, ndim))
    source = draw(st.permutations(range(ndim)))[:count]
    destination = draw(st.permutations(range(-ndim, 0)))[:count]
    return {"source": tuple(source), "destination": tuple(destination)}


@st.composite
def _expand_kwargs(draw, shapes):
    out_ndim = len(shapes[0]) + draw(st.integers(1, 2))
    axes = draw(st.sets(st.integers(0, out_ndim - 1), min_size=out_ndim - len(shapes[0]),
                        max_size=out_ndim - len(shapes[0])))
    return {"axis": tuple(sorted(axes)) if len(axes) > 1 else axes.pop()}


@st.composite
def _squeeze_kwargs(draw, shapes):
    ones = [d for d, n in enumerate(shapes[0]) if n == 1]
    if not ones or draw(st.booleans()):
        return {"axis": None}
    return {"axis": tuple(draw(st.sets(st.sampled_from(ones), min_size=1)))}


@st.composite
def _broadcast_target(draw, shapes):
    shape = shapes[0]
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    return {"shape": lead + tuple(draw(st.integers(0, 3)) if n == 1 else n for n in shape)}


@st.composite
def _join_shapes(draw, count=3):
    """`count` shapes equal except along one axis, which the kwargs name."""
    base = draw(small_shapes(min_dims=1, max_dims=3))
    axis = draw(st.integers(0, len(base) - 1))
    n = count
    return tuple(base[:axis] + (draw(st.integers(0, 3)),) + base[axis + 1:] for _ in range(n))


def _join_axis(shapes):
    lengths = [{s[d] for s in shapes} for d in range(len(shapes[0]))]
    axes = [d for d, sizes in enumerate(lengths)
            if all(len(other) == 1 for e, other in enumerate(lengths) if e != d)]
    return st.sampled_from(axes + [d - len(shapes[0]) for d in axes]).map(
        lambda axis: {"axis": axis})


@st.composite
def _split_kwargs(draw, shapes, strict=True):
    shape = shapes[0]
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    length = shape[axis]
    if draw(st.booleans()):
        points = sorted(draw(st.lists(st.integers(0, length), max_size=3)))
        return {"indices_or_sections": points, "axis": axis}
    choices = [d for d in range(1, 5) if length % d == 0] if strict else list(range(1, 5))
    return {"indices_or_sections": draw(st.sampled_from(choices)), "axis": axis}


@st.composite
def _hsplit_kwargs(draw, shapes, axis):
    length = shapes[0][axis] if len(shapes[0]) > 1 or axis == 0 else shapes[0][0]
    return {"indices_or_sections": draw(st.sampled_from(
        [d for d in range(1, 4) if length % d == 0]))}


@st.composite
def _repeat_kwargs(draw, shapes):
    kwargs = draw(axis_kwargs(shapes))
    axis = kwargs["axis"]
    length = int(np.prod(shapes[0])) if axis is None else shapes[0][axis]
    if draw(st.booleans()):
        kwargs["repeats"] = draw(st.integers(0, 3))
    else:
        kwargs["repeats"] = np.array(draw(st.lists(st.integers(0, 3), min_size=length,
                                                   max_size=length)), np.int32)
    return kwargs


@st.composite
def _roll_kwargs(draw, shapes):
    ndim = len(shapes[0])
    if ndim and draw(st.booleans()):
        axes = tuple(draw(st.sets(st.integers(0, ndim - 1), min_size=1)))
        return {"shift": tuple(draw(st.integers(-7, 7)) for _ in axes), "axis": axes}
    kwargs = draw(axis_kwargs(shapes))
    return {"shift": draw(st.integers(-7, 7)), **kwargs}


@st.composite
def _rot90_kwargs(draw, shapes):
    ndim = len(shapes[0])
    axes = draw(st.permutations(range(ndim)))[:2]
    return {"k": draw(st.integers(-5, 5)), "axes": tuple(axes)}


@st.composite
def _tile_kwargs(draw, shapes):
    reps = draw(st.lists(st.integers(0, 3), min_size=0, max_size=4))
    return {"reps": tuple(reps) if len(reps) != 1 or draw(st.booleans()) else reps[0]}


def _resize_kwargs(shapes):
    return small_shapes(max_dims=3).map(lambda shape: {"new_shape": shape})


@st.composite
def _delete_kwargs(draw, shapes):
    kwargs = draw(axis_kwargs(shapes))
    axis = kwargs["axis"]
    length = int(np.prod(shapes[0])) if axis is None else shapes[0][axis]
    if length == 0 or draw(st.booleans()):
        kwargs["obj"] = slice(draw(st.integers(-3, 3)), draw(st.integers(-3, 3)))
    elif draw(st.booleans()):
        kwargs["obj"] = draw(st.integers(-length, length - 1))
    else:
        kwargs["obj"] = np.array(draw(st.lists(st.integers(-length, length - 1),
                                               max_size=4)), np.int32)
    return kwargs


@st.composite
def _insert_kwargs(draw, shapes):
    kwargs = draw(axis_kwargs(shapes))
    axis = kwargs["axis"]
    length = int(np.prod(shapes[0])) if axis is None else shapes[0][axis]
    if draw(st.booleans()):
        kwargs["obj"] = draw(st.integers(-length, length))
        kwargs["values"] = draw(st.integers(0, 5))
    else:
        count = draw(st.integers(1, 3))
        kwargs["obj"] = np.array(draw(st.lists(st.integers(-length, length), min_size=count,
                                               max_size=count)), np.int32)
        kwargs["values"] = draw(st.integers(0, 5))
    return kwargs


@st.composite
def _pad_kwargs(draw, shapes, mode):
    ndim = len(shapes[0])
    widths = tuple((draw(st.integers(0, 4)), draw(st.integers(0, 4))) for _ in range(ndim))
    pad_width = widths if draw(st.booleans()) else draw(st.integers(0, 3))
    kwargs = {"pad_width": pad_width, "mode": mode}
    if mode == "constant" and draw(st.booleans()):
        kwargs["constant_values"] = draw(st.integers(-3, 3))
    if mode in ("reflect", "symmetric"):
        kwargs["reflect_type"] = draw(st.sampled_from(["even", "odd"]))
    if mode in ("maximum", "minimum", "mean", "median") and draw(st.booleans()):
        kwargs["stat_length"] = draw(st.integers(1, 3))
    if mode == "linear_ramp":
        kwargs["end_values"] = (draw(st.integers(-4, 4)), draw(st.integers(-4, 4)))
    return kwargs


def _pad_case(mode, dtypes=ALL, min_side=0, **options):
    return shape_case("pad", lambda xp, x, **kw: xp.pad(x, **kw),
                      shapes=_one(small_shapes(max_dims=2, min_side=min_side)),
                      kwargs=lambda s: _pad_kwargs(s, mode), variant=mode, dtypes=dtypes,
                      example_kwargs={"pad_width": 2, "mode": mode}, **options)


def _stack_fn(name):
    return lambda xp, *xs, **kw: getattr(xp, name)(list(xs), **kw)


SHAPES = _one(small_shapes())
NONEMPTY = _one(small_shapes(min_dims=1, min_side=1))

CASES = [
    # asarray first: JAX's reshape hands a numpy argument back as a numpy array (64-bit
    # dtypes kept); jaxlite always returns its own array.
    shape_case("reshape", lambda xp, x, **kw: xp.reshape(xp.asarray(x), **kw), SHAPES,
               _reshape_kwargs,
               example_kwargs={"shape": (3, 1)}),
    shape_case("ravel", lambda xp, x, **kw: xp.ravel(x, **kw), SHAPES,
               lambda s: st.fixed_dictionaries({"order": st.sampled_from(["C", "F"])})),
    shape_case("transpose", lambda xp, x, **kw: xp.transpose(x, **kw), SHAPES, _permutation),
    shape_case("permute_dims", lambda xp, x, **kw: xp.permute_dims(x, **kw), SHAPES,
               _permutation, example_kwargs={"axes": (0,)}),
    shape_case("matrix_transpose", lambda xp, x: xp.matrix_transpose(x),
               _one(small_shapes(min_dims=2)), example_shapes=((2, 3),)),
    shape_case("swapaxes", lambda xp, x, **kw: xp.swapaxes(x, **kw),
               _one(small_shapes(min_dims=1)), _two_axes,
               example_kwargs={"axis1": 0, "axis2": -1}),
    shape_case("moveaxis", lambda xp, x, **kw: xp.moveaxis(x, **kw),
               _one(small_shapes(min_dims=1)), _moveaxis_kwargs,
               example_kwargs={"source": 0, "destination": -1}),
    shape_case("expand_dims", lambda xp, x, **kw: xp.expand_dims(x, **kw), SHAPES,
               _expand_kwargs, example_kwargs={"axis": 0}),
    shape_case("squeeze", lambda xp, x, **kw: xp.squeeze(x, **kw),
               _one(small_shapes(min_side=1, max_side=2)), _squeeze_kwargs),
    shape_case("broadcast_to", lambda xp, x, **kw: xp.broadcast_to(x, **kw), SHAPES,
               _broadcast_target, example_kwargs={"shape": (2, 3)}),
    shape_case("broadcast_arrays", lambda xp, *xs: xp.broadcast_arrays(*xs), nargs=2),
    shape_case("concatenate", _stack_fn("concatenate"), _join_shapes(), _join_axis,
               nargs=3, example_kwargs={"axis": 0}),
    shape_case("concatenate", lambda xp, x, y: xp.concatenate([x, y], axis=None),
               variant="flat", nargs=2),
    shape_case("concat", _stack_fn("concat"), _join_shapes(), _join_axis, nargs=3),
    shape_case("append", lambda xp, x, y, **kw: xp.append(x, y, **kw), _join_shapes(2),
               _join_axis, nargs=2, example_kwargs={"axis": 0}),
    shape_case("append", lambda xp, x, y: xp.append(x, y), variant="flat", nargs=2),
    shape_case("stack", _stack_fn("stack"), same_shapes(3),
               lambda s: st.integers(-len(s[0]) - 1, len(s[0])).map(lambda a: {"axis": a}),
               nargs=3),
    shape_case("hstack", _stack_fn("hstack"), same_shapes(2, min_dims=1), nargs=2),
    shape_case("vstack", _stack_fn("vstack"), same_shapes(2), nargs=2),
    shape_case("dstack", _stack_fn("dstack"), same_shapes(2), nargs=2),
    shape_case("column_stack", _stack_fn("column_stack"), same_shapes(2, max_dims=2),
               nargs=2),
    shape_case("column_stack", lambda xp, x, y: xp.column_stack([x, y]),
               st.tuples(st.integers(0, 3), st.integers(0, 3)).map(
                   lambda s: ((s[0],), (s[0], s[1]))), nargs=2, variant="mixed",
               example_shapes=((3,), (3, 2))),
    shape_case("block", lambda xp, a, b, c: xp.block([[a, b], [c]]),
               st.tuples(st.integers(1, 3), st.integers(0, 3), st.integers(0, 3)).map(
                   lambda s: ((s[0], s[1]), (s[0], s[2]), (2, s[1] + s[2]))), nargs=3,
               example_shapes=((2, 1), (2, 2), (2, 3))),
    shape_case("block", lambda xp, a, b: xp.block([a, b]), nargs=2, variant="flat",
               shapes=same_shapes(2, min_dims=1, max_dims=1)),
    shape_case("unstack", lambda xp, x, **kw: tuple(np.moveaxis(x, kw["axis"], 0))
               if xp is np else xp.unstack(x, **kw), _one(small_shapes(min_dims=1)),
               lambda s: axis_kwargs(s, allow_none=False), example_kwargs={"axis": 0}),
    shape_case("split", lambda xp, x, **kw: xp.split(x, **kw), _one(small_shapes(min_dims=1)),
               _split_kwargs, example_kwargs={"indices_or_sections": 3}),
    shape_case("array_split", lambda xp, x, **kw: xp.array_split(x, **kw),
               _one(small_shapes(min_dims=1)), lambda s: _split_kwargs(s, strict=False),
               example_kwargs={"indices_or_sections": 2}),
    shape_case("hsplit", lambda xp, x, **kw: xp.hsplit(x, **kw),
               _one(small_shapes(min_dims=2, min_side=1)), lambda s: _hsplit_kwargs(s, 1),
               example_shapes=((2, 4),), example_kwargs={"indices_or_sections": 2}),
    shape_case("vsplit", lambda xp, x, **kw: xp.vsplit(x, **kw),
               _one(small_shapes(min_dims=2, min_side=1)), lambda s: _hsplit_kwargs(s, 0),
               example_shapes=((2, 4),), example_kwargs={"indices_or_sections": 2}),
    shape_case("dsplit", lambda xp, x, **kw: xp.dsplit(x, **kw),
               _one(small_shapes(min_dims=3, min_side=1)), lambda s: _hsplit_kwargs(s, 2),
               example_shapes=((1, 2, 4),), example_kwargs={"indices_or_sections": 2}),
    shape_case("atleast_1d", lambda xp, x, y: xp.atleast_1d(x, y), nargs=2),
    shape_case("atleast_2d", lambda xp, x: xp.atleast_2d(x), SHAPES),
    shape_case("atleast_3d", lambda xp, x: xp.atleast_3d(x), SHAPES),
    shape_case("flip", lambda xp, x, **kw: xp.flip(x, **kw), SHAPES,
               lambda s: axis_kwargs(s, allow_tuple=True)),
    shape_case("fliplr", lambda xp, x: xp.fliplr(x), _one(small_shapes(min_dims=2)),
               example_shapes=((2, 3),)),
    shape_case("flipud", lambda xp, x: xp.flipud(x), _one(small_shapes(min_dims=1))),
    shape_case("repeat", lambda xp, x, **kw: xp.repeat(x, **kw), SHAPES, _repeat_kwargs,
               example_kwargs={"repeats": 2}),
    shape_case("roll", lambda xp, x, **kw: xp.roll(x, **kw), SHAPES, _roll_kwargs,
               example_kwargs={"shift": 1}),
    shape_case("rollaxis", lambda xp, x, **kw: xp.rollaxis(x, **kw),
               _one(small_shapes(min_dims=1)),
               lambda s: st.fixed_dictionaries({
                   "axis": st.integers(-len(s[0]), len(s[0]) - 1),
                   "start": st.integers(-len(s[0]), len(s[0]))}),
               example_kwargs={"axis": 0, "start": 1}),
    shape_case("rot90", lambda xp, x, **kw: xp.rot90(x, **kw), _one(small_shapes(min_dims=2)),
               _rot90_kwargs, example_shapes=((2, 3),)),
    shape_case("tile", lambda xp, x, **kw: xp.tile(x, **kw), SHAPES, _tile_kwargs,
               example_kwargs={"reps": (2, 1)}),
    shape_case("resize", lambda xp, x, **kw: xp.resize(x, **kw), SHAPES, _resize_kwargs,
               example_kwargs={"new_shape": (2, 4)}),
    shape_case("trim_zeros", lambda xp, x, **kw: xp.trim_zeros(x, **kw),
               _one(small_shapes(min_dims=1, max_dims=1)),
               lambda s: st.fixed_dictionaries({"trim": st.sampled_from(["f", "b", "fb"])}),
               dtypes=INTS + FLOATS, domain="unit", jit=False, vmap=False, grad=False),
    shape_case("delete", lambda xp, x, **kw: xp.delete(x, **kw), SHAPES, _delete_kwargs,
               example_kwargs={"obj": 1}),
    shape_case("insert", lambda xp, x, **kw: xp.insert(x, **kw), SHAPES, _insert_kwargs,
               example_kwargs={"obj": 1, "values": 5}, dtypes=NUMERIC, grad=False),
    _pad_case("constant"),
    _pad_case("edge", min_side=1),
    _pad_case("wrap", min_side=1),
    _pad_case("reflect", min_side=1, dtypes=INTS + FLOATS + ("c64", "c128")),
    _pad_case("symmetric", min_side=1, dtypes=INTS + FLOATS + ("c64", "c128")),
    _pad_case("linear_ramp", min_side=1, dtypes=("i8", "i32", "f32", "f64", "c64"),
              ulps=4.0),
    _pad_case("maximum", min_side=1, dtypes=INTS + FLOATS, grad=False),
    _pad_case("minimum", min_side=1, dtypes=INTS + FLOATS, grad=False),
    _pad_case("mean", min_side=1, dtypes=("i32", "u8", "f16", "f32", "f64", "c64"),
              ulps=4.0),
    _pad_case("median", min_side=1, dtypes=("i32", "u8", "f32", "f64"), ulps=4.0,
              grad=False),
]
