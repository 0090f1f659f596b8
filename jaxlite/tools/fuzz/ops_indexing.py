"""The op families of the program generator that index, scatter, select, contract and loop
(ops_elementwise.py has the rest; see its docstring and generate.py for exactness)."""
from __future__ import annotations

import numpy as np

from jaxlite.tools.fuzz.ops_elementwise import BODIES, SMOOTH_BODIES, broadcastable, cat_of
from jaxlite.tools.fuzz.values import INDEX_DTYPES, X64_INDEX_DTYPES, index_spec, input_spec


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
    x = b.pick(lambda v: v.ndim > 0 and cat_of(v) != "complex")
    if x is None:
        return None
    fn = d.choice(["set", "add", "min", "max", "mul"])
    spec = index_spec(d, _index_dtype(b), [d.choice([1, 2, 3, 0])], x.shape[0])
    idx = b.add_input(spec)
    value = d.choice([1, 0, 2, -3]) if cat_of(x) != "bool" else d.choice([True, False])
    if cat_of(x) == "uint":
        value = abs(value)
    exact = x.exact and (fn not in ("add", "mul") or cat_of(x) != "float")
    return b.emit("at", [x, idx], {"fn": fn, "value": value,
                                   "index": [{"k": "array", "arg": 1}]}, exact)


def _starts(b, shape):
    """Start indices for a dynamic slice, as 0-d inputs of one index dtype (so traced under
    jit: JAX folds constant starts differently from traced ones, see the fuzz notes): in
    range, negative, past the end or extreme."""
    d = b.draw
    dtype = _index_dtype(b)
    info = np.iinfo(np.dtype(dtype))
    starts = []
    for n in shape:
        s = d.choice([d.integer(0, max(n - 1, 0)), -1, n, int(info.max), int(info.min), -n - 2])
        if b.options.smooth:
            s = d.integer(0, max(n - 1, 0))
        s = int(min(max(s, info.min), info.max))
        starts.append(b.add_input({"dtype": dtype, "shape": [], "values": [s]}))
    return starts


def dynamic_slice(b):
    d = b.draw
    x = b.pick(lambda v: v.ndim > 0)
    if x is None:
        return None
    sizes = [d.integer(0, n) for n in x.shape]
    return b.emit("dynamic_slice", [x] + _starts(b, x.shape), {"sizes": sizes}, x.exact)


def dynamic_update_slice(b):
    d = b.draw
    x = b.pick(lambda v: v.ndim > 0)
    if x is None:
        return None
    update = b.add_input(input_spec(d, x.dtype.name, [d.integer(0, n) for n in x.shape],
                                    b.options.smooth))
    return b.emit("dynamic_update_slice", [x, update] + _starts(b, x.shape), {}, x.exact)


def where(b):
    c = b.pick(lambda v: v.exact)
    if c is None or b.options.smooth:
        return None
    x = b.pick(broadcastable(c.shape))
    y = b.pick(lambda v: broadcastable(c.shape)(v) and broadcastable(x.shape)(v))
    return b.emit("where", [c, x, y], {}, x.exact and y.exact)


def dot(b):
    d = b.draw
    x = b.pick(lambda v: v.ndim in (1, 2))
    if x is None:
        return None
    exact = x.exact and cat_of(x) in ("int", "uint", "bool")
    k = x.shape[-1]
    y = b.pick(lambda v: v.ndim in (1, 2) and v.shape[0] == k)
    if y is not None and d.boolean():
        fn = d.choice(["matmul", "dot"])
        return b.emit("dot", [x, y], {"fn": fn}, exact and y.exact and cat_of(y) != "float")
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
    bodies = SMOOTH_BODIES if b.options.smooth else BODIES[cat_of(x)]
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
    body = d.choice(["add", "multiply", "maximum", "subtract"] if cat_of(x) != "bool"
                    else ["add", "maximum"])
    exact = x.exact and not (body == "add" and x.product)
    if b.options.smooth:
        body = d.choice(["add", "multiply"])
    return b.emit("scan", [x], {"body": body, "reverse": d.boolean(),
                                "output": d.choice(["ys", "carry"])}, exact)
