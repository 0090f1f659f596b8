"""The op families of the program generator that compute on values: elementwise functions,
reductions, scans along an axis, sorting, casts and movement (ops_indexing.py has the rest).

A family picks its operands among the builder's values, draws its parameters and calls
`Builder.emit` with the exactness of its result (see generate.py). Families return without
emitting when no operand fits.
"""
from __future__ import annotations

import numpy as np

from jaxlite.tools.fuzz.values import category

REAL = ("bool", "int", "uint", "float")
# Unary functions by operand category: (name, lib, kind) with kind "keep" (exact in, exact
# out), "round" (rounded once: exact in, exact out, a product where marked), "jump" (needs an
# exact float operand) or "approx" (never exact).
UNARY = [
    ("negative", "jnp", "keep", ("int", "float", "complex")),
    ("abs", "jnp", "keep", ("int", "float")),
    ("sin", "jnp", "approx", ("float", "complex", "int", "bool")),
    ("exp", "jnp", "approx", ("float", "complex", "int")),
    ("sqrt", "jnp", "round", ("float",)),
    ("square", "jnp", "product", ("int", "uint", "float", "complex")),
    ("log", "jnp", "approx", ("float", "complex")),
    ("tanh", "jnp", "approx", ("float", "complex")),
    ("floor", "jnp", "jump", ("float", "int")),
    ("ceil", "jnp", "jump", ("float",)),
    ("round", "jnp", "jump", ("float",)),
    ("sign", "jnp", "jump", ("float", "int")),
    ("sign", "jnp", "approx", ("complex",)),   # x / |x|: |x| is not correctly rounded
    ("reciprocal", "jnp", "round", ("float",)),
    ("expm1", "jnp", "approx", ("float",)),
    ("log1p", "jnp", "approx", ("float",)),
    ("cos", "jnp", "approx", ("float",)),
    ("arctan", "jnp", "approx", ("float",)),
    ("isnan", "jnp", "keep", ("float", "complex")),
    ("isfinite", "jnp", "keep", ("float", "complex")),
    ("invert", "jnp", "keep", ("int", "uint", "bool")),
    ("logical_not", "jnp", "keep", ("bool", "int", "float")),
    ("abs", "jnp", "approx", ("complex",)),
    ("rsqrt", "lax", "approx", ("float",)),
    ("logistic", "lax", "approx", ("float",)),
    ("erf", "lax", "approx", ("float",)),
    ("cbrt", "lax", "approx", ("float",)),
    ("population_count", "lax", "keep", ("int", "uint")),
    ("clz", "lax", "keep", ("int", "uint")),
]
SMOOTH_UNARY = [("sin", "jnp"), ("cos", "jnp"), ("tanh", "jnp"), ("negative", "jnp"),
                ("square", "jnp"), ("exp", "jnp"), ("logistic", "lax")]
BINARY = [
    ("add", "jnp", "round", ("int", "uint", "float", "complex", "bool")),
    ("multiply", "jnp", "product", ("int", "uint", "float", "bool")),
    ("subtract", "jnp", "round", ("int", "uint", "float", "complex")),
    ("maximum", "jnp", "keep", ("int", "uint", "float", "bool")),
    ("minimum", "jnp", "keep", ("int", "uint", "float")),
    ("divide", "jnp", "round", ("float", "int", "uint")),
    ("less", "jnp", "jump", REAL),
    ("equal", "jnp", "jump", REAL + ("complex",)),
    ("not_equal", "jnp", "jump", REAL),
    ("greater_equal", "jnp", "jump", REAL),
    ("floor_divide", "jnp", "jump", ("int", "uint", "float")),
    ("remainder", "jnp", "jump", ("int", "uint", "float")),
    ("power", "jnp", "approx", ("float", "int", "complex")),
    ("arctan2", "jnp", "approx", ("float",)),
    ("bitwise_and", "jnp", "keep", ("int", "uint", "bool")),
    ("bitwise_xor", "jnp", "keep", ("int", "uint", "bool")),
    ("bitwise_or", "jnp", "keep", ("int", "uint", "bool")),
    ("left_shift", "jnp", "keep", ("int", "uint")),
    ("right_shift", "jnp", "keep", ("int", "uint")),
    ("logical_and", "jnp", "jump", REAL),
    ("multiply", "jnp", "approx", ("complex",)),
    ("divide", "jnp", "approx", ("complex",)),
    ("rem", "lax", "jump", ("int", "uint", "float")),
    ("div", "lax", "jump", ("int", "uint")),
    ("shift_right_logical", "lax", "keep", ("int", "uint")),
    ("max", "lax", "keep", ("int", "uint", "float")),
    ("nextafter", "lax", "keep", ("float",)),
]
SMOOTH_BINARY = [("add", "jnp"), ("multiply", "jnp"), ("subtract", "jnp")]
REDUCTIONS = [("sum", "sum"), ("max", "keep"), ("prod", "sum"), ("min", "keep"),
              ("mean", "sum"), ("any", "keep"), ("all", "keep"), ("argmax", "jump"),
              ("argmin", "jump")]
BODIES = {"bool": ("neg", "double"), "int": ("neg", "double", "square", "inc"),
          "uint": ("double", "square", "inc"),
          "float": ("neg", "double", "square", "inc", "sin", "half"),
          "complex": ("neg", "double", "square", "inc", "sin", "half")}
SMOOTH_BODIES = ("sin", "half", "double", "neg")


def cat_of(v):
    return category(v.dtype)


def exact_after(kind, args):
    """The exactness of a result of `kind` on `args` (see generate.py)."""
    if kind == "approx":
        return False
    if kind == "round" and any(a.product for a in args):
        return False
    return all(a.exact for a in args)


def operand_ok(kind, v):
    """Jump functions take float operands only where they are exact."""
    return kind != "jump" or cat_of(v) not in ("float", "complex") or v.exact


def unary(b):
    d = b.draw
    if b.options.smooth:
        x = b.pick()
        fn, lib = d.choice(SMOOTH_UNARY)
        return b.emit("unary", [x], {"fn": fn, "lib": lib}, False)
    x = b.pick()
    fits = [u for u in UNARY if cat_of(x) in u[3] and operand_ok(u[2], x)]
    if not fits:
        return None
    fn, lib, kind, _ = d.choice(fits)
    return b.emit("unary", [x], {"fn": fn, "lib": lib}, exact_after(kind, [x]),
                  product=kind == "product")


def broadcastable(shape):
    def pred(v):
        try:
            np.broadcast_shapes(shape, v.shape)
            return True
        except ValueError:
            return False
    return pred


def binary(b):
    d = b.draw
    x = b.pick()
    y = b.pick(broadcastable(x.shape))
    if b.options.smooth:
        fn, lib = d.choice(SMOOTH_BINARY)
        return b.emit("binary", [x, y], {"fn": fn, "lib": lib}, False)
    cats = {cat_of(x), cat_of(y)}
    top = max(cats, key=("bool", "uint", "int", "float", "complex").index)
    fits = [f for f in BINARY if top in f[3] and operand_ok(f[2], x) and operand_ok(f[2], y)
            and (f[1] == "jnp" or (x.dtype == y.dtype and x.shape == y.shape))]
    if not fits:
        return None
    fn, lib, kind, _ = d.choice(fits)
    return b.emit("binary", [x, y], {"fn": fn, "lib": lib}, exact_after(kind, [x, y]),
                  product=kind == "product")


def integer_pow(b):
    x = b.pick(lambda v: cat_of(v) != "bool")
    if x is None:
        return None
    y = b.draw.choice([2, 3, 0, -1, 1] if not b.options.smooth else [2, 3, 1])
    exact = x.exact and cat_of(x) in ("int", "uint")
    return b.emit("integer_pow", [x], {"y": y}, exact)


def _axis_param(d, ndim, allow_tuple=True):
    choice = d.integer(0, 2 if allow_tuple else 1)
    if choice == 0 or ndim == 0:
        return None
    if choice == 1:
        return d.integer(-ndim, ndim - 1)
    axes = sorted({d.integer(0, ndim - 1) for _ in range(d.integer(1, ndim))})
    return axes


def reduce(b):
    d = b.draw
    if b.options.smooth:
        fn, kind = d.choice([("sum", "sum"), ("mean", "sum")])  # max: ties make kinks
    else:
        fn, kind = d.choice(REDUCTIONS)
    x = b.pick(lambda v: (cat_of(v) != "complex" or kind == "sum") and operand_ok(kind, v))
    if x is None:
        return None
    axis = _axis_param(d, x.ndim, allow_tuple=not fn.startswith("arg"))
    exact = x.exact and (kind != "sum" or cat_of(x) in ("int", "uint", "bool"))
    if fn == "mean":
        exact = False
    return b.emit("reduce", [x], {"fn": fn, "axis": axis, "keepdims": d.boolean()}, exact)


def cumulative(b):
    x = b.pick(lambda v: v.ndim > 0)
    if x is None:
        return None
    fn = b.draw.choice(["cumsum", "cumprod"] if not b.options.smooth else ["cumsum"])
    exact = x.exact and cat_of(x) in ("int", "uint", "bool")
    return b.emit("cumulative", [x], {"fn": fn, "axis": b.draw.integer(-x.ndim, x.ndim - 1)},
                  exact)


def sort(b):
    fn = b.draw.choice(["sort", "argsort"] if not b.options.smooth else ["sort"])
    x = b.pick(lambda v: v.ndim > 0 and cat_of(v) != "complex"
               and (fn == "sort" or operand_ok("jump", v)))
    if x is None:
        return None
    return b.emit("sort", [x], {"fn": fn, "axis": b.draw.integer(-x.ndim, x.ndim - 1)},
                  x.exact)


def clip(b):
    d = b.draw
    x = b.pick(lambda v: cat_of(v) in ("int", "uint", "float"))
    if x is None:
        return None
    bounds = [-2, 0, 1, 3, None, 100, -1000]
    lo, hi = d.choice(bounds), d.choice(bounds)
    if cat_of(x) == "float" and d.boolean():
        lo = None if lo is None else lo - 0.5
    return b.emit("clip", [x], {"lo": lo, "hi": hi}, x.exact)


def astype(b):
    x = b.pick()
    dtype = b.draw.choice(b.dtypes())
    if category(dtype) in ("int", "uint", "bool") and not operand_ok("jump", x):
        return None
    return b.emit("astype", [x], {"dtype": dtype}, x.exact)


# Same-width dtypes a bitcast may reinterpret as (bool and complex are not bitcast).
BITCAST_PEERS = {1: ("int8", "uint8"), 2: ("int16", "float16", "bfloat16"),
                 4: ("float32", "int32", "uint32"), 8: ("float64", "int64", "uint64")}


def bitcast(b):
    """lax.bitcast_convert_type between same-width types, of inputs or integer values only:
    a NaN an operation makes has no fixed bit pattern (its sign and payload vary)."""
    x = b.pick(lambda v: cat_of(v) in ("int", "uint", "float") and v.exact
               and (cat_of(v) != "float" or v.ref[0] == "in"))
    if x is None:
        return None
    peers = [t for t in BITCAST_PEERS[x.dtype.itemsize] if t in b.dtypes()]
    if not peers:
        return None
    return b.emit("bitcast", [x], {"dtype": b.draw.choice(peers)}, True)


def movement(b):
    """reshape, transpose, expand_dims or broadcast_to: exactness passes through."""
    d = b.draw
    x = b.pick()
    kind = d.integer(0, 3)
    shape = list(x.shape)
    if kind == 0:
        options = [[-1], [x.size], [1] + shape, shape + [1]]
        if x.ndim >= 2:
            options.append([shape[0] * shape[1]] + shape[2:])
            options.append([-1, shape[-1]])
        return b.emit("reshape", [x], {"shape": d.choice(options)}, x.exact, x.product)
    if kind == 1 and x.ndim >= 2:
        axes = list(range(x.ndim))
        for i in range(x.ndim - 1, 0, -1):
            j = d.integer(0, i)
            axes[i], axes[j] = axes[j], axes[i]
        return b.emit("transpose", [x], {"axes": axes}, x.exact, x.product)
    if kind == 2:
        return b.emit("expand_dims", [x], {"axis": d.integer(-x.ndim - 1, x.ndim)},
                      x.exact, x.product)
    new = [3 if n == 1 and d.boolean() else n for n in shape]
    new = [d.choice([2, 1, 0, 3])] * d.integer(0, 1) + new
    return b.emit("broadcast_to", [x], {"shape": new}, x.exact, x.product)


def concatenate(b):
    d = b.draw
    x = b.pick(lambda v: v.ndim > 0)
    if x is None:
        return None
    axis = d.integer(-x.ndim, x.ndim - 1)
    ax = axis % x.ndim

    def matches(v):
        return v.ndim == x.ndim and all(v.shape[i] == x.shape[i]
                                        for i in range(x.ndim) if i != ax)
    y = b.pick(matches)
    return b.emit("concatenate", [x, y], {"axis": axis}, x.exact and y.exact)
