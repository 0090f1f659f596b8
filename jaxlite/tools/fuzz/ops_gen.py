"""The op families of the program generator: each draws one op onto a `Builder`.

A family picks its operands among the builder's values, draws its parameters and calls
`Builder.emit` with the exactness of its result (see generate.py). Families return without
emitting when no operand fits.
"""
from __future__ import annotations

import numpy as np

from jaxlite.tools.fuzz.values import (INDEX_DTYPES, X64_INDEX_DTYPES, category,
                                       index_spec)

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
    ("sign", "jnp", "jump", ("float", "int", "complex")),
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


def _cat(v):
    return category(v.dtype)


def _exact_after(kind, args):
    """The exactness of a result of `kind` on `args` (see generate.py)."""
    if kind == "approx":
        return False
    if kind == "round" and any(a.product for a in args):
        return False
    return all(a.exact for a in args)


def _operand_ok(kind, v):
    """Jump functions take float operands only where they are exact."""
    return kind != "jump" or _cat(v) not in ("float", "complex") or v.exact


def unary(b):
    d = b.draw
    if b.options.smooth:
        x = b.pick()
        fn, lib = d.choice(SMOOTH_UNARY)
        return b.emit("unary", [x], {"fn": fn, "lib": lib}, False)
    x = b.pick()
    fits = [u for u in UNARY if _cat(x) in u[3] and _operand_ok(u[2], x)]
    if not fits:
        return None
    fn, lib, kind, _ = d.choice(fits)
    return b.emit("unary", [x], {"fn": fn, "lib": lib}, _exact_after(kind, [x]),
                  product=kind == "product")


def _broadcastable(shape):
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
    y = b.pick(_broadcastable(x.shape))
    if b.options.smooth:
        fn, lib = d.choice(SMOOTH_BINARY)
        return b.emit("binary", [x, y], {"fn": fn, "lib": lib}, False)
    cats = {_cat(x), _cat(y)}
    top = max(cats, key=("bool", "uint", "int", "float", "complex").index)
    fits = [f for f in BINARY if top in f[3] and _operand_ok(f[2], x) and _operand_ok(f[2], y)
            and (f[1] == "jnp" or (x.dtype == y.dtype and x.shape == y.shape))]
    if not fits:
        return None
    fn, lib, kind, _ = d.choice(fits)
    return b.emit("binary", [x, y], {"fn": fn, "lib": lib}, _exact_after(kind, [x, y]),
                  product=kind == "product")


def integer_pow(b):
    x = b.pick(lambda v: _cat(v) != "bool")
    if x is None:
        return None
    y = b.draw.choice([2, 3, 0, -1, 1] if not b.options.smooth else [2, 3, 1])
    exact = x.exact and _cat(x) in ("int", "uint")
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
    x = b.pick(lambda v: (_cat(v) != "complex" or kind == "sum") and _operand_ok(kind, v))
    if x is None:
        return None
    axis = _axis_param(d, x.ndim, allow_tuple=not fn.startswith("arg"))
    exact = x.exact and (kind != "sum" or _cat(x) in ("int", "uint", "bool"))
    if fn == "mean":
        exact = False
    return b.emit("reduce", [x], {"fn": fn, "axis": axis, "keepdims": d.boolean()}, exact)


def cumulative(b):
    x = b.pick(lambda v: v.ndim > 0)
    if x is None:
        return None
    fn = b.draw.choice(["cumsum", "cumprod"] if not b.options.smooth else ["cumsum"])
    exact = x.exact and _cat(x) in ("int", "uint", "bool")
    return b.emit("cumulative", [x], {"fn": fn, "axis": b.draw.integer(-x.ndim, x.ndim - 1)},
                  exact)


def sort(b):
    fn = b.draw.choice(["sort", "argsort"] if not b.options.smooth else ["sort"])
    x = b.pick(lambda v: v.ndim > 0 and _cat(v) != "complex"
               and (fn == "sort" or _operand_ok("jump", v)))
    if x is None:
        return None
    return b.emit("sort", [x], {"fn": fn, "axis": b.draw.integer(-x.ndim, x.ndim - 1)},
                  x.exact)


def clip(b):
    d = b.draw
    x = b.pick(lambda v: _cat(v) in ("int", "uint", "float"))
    if x is None:
        return None
    bounds = [-2, 0, 1, 3, None, 100, -1000]
    lo, hi = d.choice(bounds), d.choice(bounds)
    if _cat(x) == "float" and d.boolean():
        lo = None if lo is None else lo - 0.5
    return b.emit("clip", [x], {"lo": lo, "hi": hi}, x.exact)


def astype(b):
    x = b.pick()
    dtype = b.draw.choice(b.dtypes())
    if category(dtype) in ("int", "uint", "bool") and not _operand_ok("jump", x):
        return None
    return b.emit("astype", [x], {"dtype": dtype}, x.exact)


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


def _index_dtype(b):
    return b.draw.choice(INDEX_DTYPES + (X64_INDEX_DTYPES if b.x64 else ()))


def _component(b, n, args):
    """One index component for an axis of size n (ints may be negative or out of range)."""
    d = b.draw
    kind = d.integer(0, 4)
    if kind == 0:
        edge = [n, -n - 1] if d.boolean(10) and not b.options.smooth else []
        return {"k": "int", "v": d.choice([d.integer(-n, n - 1)] * 4 + edge)} if n else None
    if kind == 1:
        ends = [None, 0, 1, -1, 2, -2, n, n + 2, -n - 3]
        step = d.choice([None, 1, 2, -1, -2, 3])
        return {"k": "slice", "v": [d.choice(ends), d.choice(ends), step]}
    if kind == 2:
        shape = d.choice([[], [d.choice([1, 2, 3, 0])], [2, d.choice([1, 2])]])
        spec = index_spec(d, _index_dtype(b), shape, n, in_bounds=b.options.smooth)
        args.append(b.add_input(spec))
        return {"k": "array", "arg": len(args) - 1}
    if kind == 3:
        return {"k": "none"}
    return {"k": "slice", "v": [None, None, None]}


def index(b):
    d = b.draw
    x = b.pick(lambda v: v.ndim > 0)
    if x is None:
        return None
    args = [x]
    comps = []
    for axis in range(d.integer(1, x.ndim)):
        c = _component(b, x.shape[axis], args)
        if c is None:
            return None
        comps.append(c)
    if d.boolean(6):
        comps.insert(0, {"k": "ellipsis"})
    return b.emit("index", args, {"index": comps}, x.exact)


def scatter(b):
    d = b.draw
    if b.options.smooth:
        return None
    x = b.pick(lambda v: v.ndim > 0 and _cat(v) != "complex")
    if x is None:
        return None
    fn = d.choice(["set", "add", "min", "max", "mul"])
    spec = index_spec(d, _index_dtype(b), [d.choice([1, 2, 3, 0])], x.shape[0])
    idx = b.add_input(spec)
    value = d.choice([1, 0, 2, -3]) if _cat(x) != "bool" else d.choice([True, False])
    if _cat(x) == "uint":
        value = abs(value)
    exact = x.exact and (fn not in ("add", "mul") or _cat(x) != "float")
    return b.emit("at", [x, idx], {"fn": fn, "value": value,
                                   "index": [{"k": "array", "arg": 1}]}, exact)


def dynamic_slice(b):
    d = b.draw
    x = b.pick(lambda v: v.ndim > 0)
    if x is None:
        return None
    dtype = _index_dtype(b)
    info = np.iinfo(np.dtype(dtype))
    starts, sizes = [], []
    for n in x.shape:
        s = d.choice([d.integer(0, max(n - 1, 0)), -1, n, int(info.max), int(info.min), -n - 2])
        if b.options.smooth:
            s = d.integer(0, max(n - 1, 0))
        starts.append(int(min(max(s, info.min), info.max)))
        sizes.append(d.integer(0, n))
    return b.emit("dynamic_slice", [x], {"starts": starts, "sizes": sizes,
                                         "index_dtype": dtype}, x.exact)


def where(b):
    c = b.pick(lambda v: v.exact)
    if c is None or b.options.smooth:
        return None
    x = b.pick(_broadcastable(c.shape))
    y = b.pick(lambda v: _broadcastable(c.shape)(v) and _broadcastable(x.shape)(v))
    return b.emit("where", [c, x, y], {}, x.exact and y.exact)


def dot(b):
    d = b.draw
    x = b.pick(lambda v: v.ndim in (1, 2))
    if x is None:
        return None
    exact = x.exact and _cat(x) in ("int", "uint", "bool")
    k = x.shape[-1]
    y = b.pick(lambda v: v.ndim in (1, 2) and v.shape[0] == k)
    if y is not None and d.boolean():
        fn = d.choice(["matmul", "dot"])
        return b.emit("dot", [x, y], {"fn": fn}, exact and y.exact and _cat(y) != "float")
    subscripts = {1: ["i,i->", "i,j->ij", "i,i->i"],
                  2: ["ij,ij->i", "ij,kj->ik", "ij,jk->ik", "ij,ij->"]}[x.ndim]
    s = d.choice(subscripts)
    if s == "ij,jk->ik" and x.shape[0] != x.shape[1]:
        s = "ij,ij->i"
    return b.emit("dot", [x, x], {"fn": "einsum", "subscripts": s}, exact)


def _body_exact(name, x):
    if name == "sin":
        return False
    if name in ("double", "inc") and x.product:
        return False
    return x.exact


def control_flow(b):
    d = b.draw
    x = b.pick()
    bodies = SMOOTH_BODIES if b.options.smooth else BODIES[_cat(x)]
    kind = d.integer(0, 3)
    if kind == 0:
        p = b.pick(lambda v: v.exact) if not b.options.smooth else b.pick()
        t, f = d.choice(bodies), d.choice(bodies)
        exact = _body_exact(t, x) and _body_exact(f, x)
        return b.emit("cond", [p, x], {"true": t, "false": f}, exact)
    body = d.choice(bodies)
    if kind == 2 and b.options.smooth:
        kind = 1   # reverse mode rejects while_loop (as JAX does); fori_loop with static bounds
    if kind in (1, 2):
        name = "fori_loop" if kind == 1 else "while_loop"
        return b.emit(name, [x], {"n": d.integer(0, 3), "body": body},
                      _body_exact(body, x))
    if x.ndim == 0 or x.shape[0] == 0:
        return None
    body = d.choice(["add", "multiply", "maximum", "subtract"] if _cat(x) != "bool"
                    else ["add", "maximum"])
    exact = x.exact and not (body == "add" and x.product)
    if b.options.smooth:
        body = d.choice(["add", "multiply"])
    return b.emit("scan", [x], {"body": body, "reverse": d.boolean(),
                                "output": d.choice(["ys", "carry"])}, exact)


ALL = [unary, binary, reduce, movement, index, astype, integer_pow, cumulative, sort, clip,
       concatenate, scatter, dynamic_slice, where, dot]
SMOOTH = [unary, binary, reduce, movement, index, integer_pow, cumulative, sort,
          concatenate, dynamic_slice, dot]


def families(options):
    """The families a program may draw from, simplest first."""
    fams = SMOOTH if options.smooth else ALL
    return fams + [control_flow] if options.control_flow else fams
