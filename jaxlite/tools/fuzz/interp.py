"""The fuzzer's program interpreter: runs a program spec on any JAX-like namespace.

This module imports neither jaxlite nor JAX: the fuzzer runs it with `jaxlite.numpy` and
`jaxlite.lax`, and the oracle worker loads it by file path in another interpreter and runs
it with the real `jax.numpy` and `jax.lax`. Both sides then run the very same code.

A program is JSON-able:

    {"x64": false,
     "inputs": [{"dtype": "float32", "shape": [2, 3], "values": [...]}, ...],
     "ops": [{"op": "binary", "args": [0, 1], "params": {"fn": "add", "lib": "jnp"}}, ...]}

Values are numbered: the inputs first, then one value per op; an op's `args` name earlier
values. The program's result is the last value. Input values are listed flat in C order;
floats that JSON cannot hold are the strings "nan", "inf", "-inf", and complex numbers are
[real, imag] pairs.
"""
from __future__ import annotations

import numpy as np

try:  # bfloat16 and friends; both jaxlite's and JAX's environments have ml_dtypes
    import ml_dtypes
except ImportError:  # pragma: no cover - numpy alone still runs the standard dtypes
    ml_dtypes = None

SPECIAL_FLOATS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def dtype_of(name: str) -> np.dtype:
    """The numpy dtype named `name` (bfloat16 comes from ml_dtypes)."""
    if ml_dtypes is not None and hasattr(ml_dtypes, name):
        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def _scalar_from_json(v):
    if isinstance(v, str):
        return SPECIAL_FLOATS[v]
    if isinstance(v, list):
        return complex(_scalar_from_json(v[0]), _scalar_from_json(v[1]))
    return v


def scalar_to_json(v):
    """One input element as JSON: specials as strings, complex as a pair."""
    if isinstance(v, (complex, np.complexfloating)):
        return [scalar_to_json(float(v.real)), scalar_to_json(float(v.imag))]
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if f != f:
            return "nan"
        if f in (float("inf"), float("-inf")):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    return int(v)


def decode_input(spec: dict) -> np.ndarray:
    """The numpy array an input spec describes."""
    dtype = dtype_of(spec["dtype"])
    values = [_scalar_from_json(v) for v in spec["values"]]
    if dtype.kind == "c":
        flat = np.array(values, dtype=np.complex128)
    elif dtype.kind in "biu":
        flat = np.array(values, dtype=object)
    else:
        flat = np.array(values, dtype=np.float64)
    return flat.astype(dtype).reshape(spec["shape"])


def encode_array(x) -> dict:
    """An array as dtype, shape and its bytes in hex (bit-exact, -0.0 and NaNs kept)."""
    a = np.array(np.asarray(x), order="C", copy=True)  # (ascontiguousarray makes 0-d 1-d)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "hex": a.tobytes().hex()}


def decode_array(d: dict) -> np.ndarray:
    """The inverse of `encode_array`."""
    dtype = dtype_of(d["dtype"])
    return np.frombuffer(bytes.fromhex(d["hex"]), dtype=dtype).reshape(d["shape"]).copy()


def encode_exception(e: BaseException) -> dict:
    """An exception as its type, the builtin exception class it derives from, its text."""
    base = next(c for c in type(e).__mro__
                if c.__module__ == "builtins" and issubclass(c, BaseException))
    return {"ok": False, "type": type(e).__name__, "base": base.__name__,
            "message": str(e)[:300]}


# ---- the ops ---------------------------------------------------------------------------

def _body(ns, name, c):
    """A dtype-preserving one-argument body for the control-flow ops."""
    jnp = ns.jnp
    if name == "neg":
        return jnp.logical_not(c) if c.dtype == np.bool_ else jnp.negative(c)
    if name == "double":
        return c + c
    if name == "square":
        return c * c
    if name == "inc":
        return c + jnp.ones_like(c)
    if name == "sin":
        return jnp.sin(c)
    if name == "half":
        return c * jnp.asarray(0.5, c.dtype)
    raise ValueError(f"unknown body {name!r}")


def _binary_body(ns, name, a, b):
    jnp = ns.jnp
    return {"add": jnp.add, "multiply": jnp.multiply, "maximum": jnp.maximum,
            "subtract": jnp.subtract}[name](a, b)


def _op_unary(ns, args, p):
    lib = ns.lax if p.get("lib") == "lax" else ns.jnp
    return getattr(lib, p["fn"])(args[0])


def _op_binary(ns, args, p):
    lib = ns.lax if p.get("lib") == "lax" else ns.jnp
    return getattr(lib, p["fn"])(args[0], args[1])


def _op_integer_pow(ns, args, p):
    return ns.lax.integer_pow(args[0], p["y"])


def _op_reduce(ns, args, p):
    axis = p["axis"]
    axis = tuple(axis) if isinstance(axis, list) else axis
    return getattr(ns.jnp, p["fn"])(args[0], axis=axis, keepdims=p["keepdims"])


def _op_cumulative(ns, args, p):
    return getattr(ns.jnp, p["fn"])(args[0], axis=p["axis"])


def _op_sort(ns, args, p):
    return getattr(ns.jnp, p["fn"])(args[0], axis=p["axis"])


def _op_clip(ns, args, p):
    return ns.jnp.clip(args[0], p["lo"], p["hi"])


def _op_astype(ns, args, p):
    return args[0].astype(dtype_of(p["dtype"]))


def _op_reshape(ns, args, p):
    return ns.jnp.reshape(args[0], tuple(p["shape"]))


def _op_transpose(ns, args, p):
    return ns.jnp.transpose(args[0], tuple(p["axes"]))


def _op_expand_dims(ns, args, p):
    return ns.jnp.expand_dims(args[0], p["axis"])


def _op_broadcast_to(ns, args, p):
    return ns.jnp.broadcast_to(args[0], tuple(p["shape"]))


def _op_concatenate(ns, args, p):
    return ns.jnp.concatenate(list(args), axis=p["axis"])


def _index_of(components, args):
    index = []
    for c in components:
        kind = c["k"]
        if kind == "int":
            index.append(c["v"])
        elif kind == "slice":
            index.append(slice(*c["v"]))
        elif kind == "array":
            index.append(args[c["arg"]])
        elif kind == "none":
            index.append(None)
        else:
            index.append(Ellipsis)
    return tuple(index)


def _op_index(ns, args, p):
    return args[0][_index_of(p["index"], args)]


def _op_at(ns, args, p):
    x = args[0]
    value = ns.jnp.asarray(p["value"], dtype=x.dtype)
    ref = x.at[_index_of(p["index"], args)]
    return getattr(ref, p["fn"])(value)


def _starts(ns, args, p):
    """Start indices: the op's 0-d integer arguments after the operands (traced under jit),
    or, in older specs, constants listed in the params."""
    if "starts" not in p:
        return list(args)
    index_dtype = dtype_of(p["index_dtype"])
    return [ns.jnp.asarray(np.asarray(s).astype(index_dtype)) for s in p["starts"]]


def _op_dynamic_slice(ns, args, p):
    return ns.lax.dynamic_slice(args[0], _starts(ns, args[1:], p), tuple(p["sizes"]))


def _op_dynamic_update_slice(ns, args, p):
    return ns.lax.dynamic_update_slice(args[0], args[1], _starts(ns, args[2:], p))


def _op_bitcast(ns, args, p):
    return ns.lax.bitcast_convert_type(args[0], dtype_of(p["dtype"]))


def _op_where(ns, args, p):
    return ns.jnp.where(args[0], args[1], args[2])


def _op_dot(ns, args, p):
    if p["fn"] == "einsum":
        return ns.jnp.einsum(p["subscripts"], args[0], args[1])
    return getattr(ns.jnp, p["fn"])(args[0], args[1])


def _op_cond(ns, args, p):
    pred = ns.jnp.any(args[0])
    return ns.lax.cond(pred, lambda c: _body(ns, p["true"], c),
                       lambda c: _body(ns, p["false"], c), args[1])


def _op_fori_loop(ns, args, p):
    return ns.lax.fori_loop(0, p["n"], lambda i, c: _body(ns, p["body"], c), args[0])


def _op_while_loop(ns, args, p):
    n = p["n"]

    def body(state):
        i, c = state
        return i + 1, _body(ns, p["body"], c)
    return ns.lax.while_loop(lambda s: s[0] < n, body, (0, args[0]))[1]


def _op_scan(ns, args, p):
    xs = args[0]

    def step(carry, x):
        new = _binary_body(ns, p["body"], carry, x)
        return new, new
    carry, ys = ns.lax.scan(step, ns.jnp.zeros_like(xs[0]), xs, reverse=p["reverse"])
    return carry if p["output"] == "carry" else ys


OPS = {
    "unary": _op_unary, "binary": _op_binary, "integer_pow": _op_integer_pow,
    "reduce": _op_reduce, "cumulative": _op_cumulative, "sort": _op_sort, "clip": _op_clip,
    "astype": _op_astype, "reshape": _op_reshape, "transpose": _op_transpose,
    "expand_dims": _op_expand_dims, "broadcast_to": _op_broadcast_to,
    "concatenate": _op_concatenate, "index": _op_index, "at": _op_at,
    "dynamic_slice": _op_dynamic_slice, "dynamic_update_slice": _op_dynamic_update_slice,
    "bitcast": _op_bitcast, "where": _op_where, "dot": _op_dot,
    "cond": _op_cond, "fori_loop": _op_fori_loop, "while_loop": _op_while_loop,
    "scan": _op_scan,
}


def apply_op(ns, op: dict, args):
    """The value of one op on already computed arguments."""
    return OPS[op["op"]](ns, list(args), op.get("params", {}))


def run_all(program: dict, ns, inputs):
    """Every value of the program (inputs first), computed with namespace `ns`."""
    env = list(inputs)
    for op in program["ops"]:
        env.append(apply_op(ns, op, [env[i] for i in op["args"]]))
    return env


def as_function(program: dict, ns):
    """The program as a function of its inputs, returning its last value."""
    def f(*inputs):
        return run_all(program, ns, inputs)[-1]
    return f
