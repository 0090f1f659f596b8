"""Random programs: a builder that tracks each value's shape, dtype and exactness.

A value is *exact* when every correct implementation must compute it bit for bit: inputs,
integer and boolean work on exact values, movement, selection, comparisons, and float
operations rounded once (add, multiply, divide, sqrt, ...). Reassociated sums, dots and
transcendental functions are not exact: they differ by a few ulps between implementations.
Operations with jumps (floor, sign, comparisons of floats, float to int conversion, argmax,
remainder) are applied only to exact float values, so that a last-bit difference upstream
never turns into a different integer downstream and the comparison can stay strict.
A product feeding an add is not exact either: the cpu backend, like XLA, may fuse the two
into a multiply-add, which rounds once instead of twice.

The shapes and dtypes of results come from `jaxlite.eval_shape`; an op that jaxlite refuses
ends the program (the fuzzer then checks that JAX refuses it too).
"""
from __future__ import annotations

import dataclasses
import types

import numpy as np
from hypothesis import strategies as st

import jaxlite
import jaxlite.lax as jlax
import jaxlite.numpy as jnp
from jaxlite.tools.fuzz import interp, ops_gen
from jaxlite.tools.fuzz.values import (DTYPES, X64_DTYPES, Draw, HypothesisDraw, RandomDraw,
                                       draw_shape, input_spec)

NAMESPACE = types.SimpleNamespace(root=jaxlite, jnp=jnp, lax=jlax)
MAX_SIZE = 2048  # elements of any value; larger programs are slow and shrink badly


@dataclasses.dataclass
class Val:
    ref: tuple          # ("in", i) or ("op", j)
    shape: tuple
    dtype: np.dtype
    exact: bool = True
    product: bool = False   # the last operation was a multiplication (fusable into an add)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


@dataclasses.dataclass
class Options:
    """What programs may contain."""
    max_ops: int = 8
    max_inputs: int = 3
    x64: bool = False            # allow programs with 64-bit types
    smooth: bool = False         # differentiable float programs (for the grad check)
    control_flow: bool = True


class Builder:
    """Accumulates inputs and ops of one program."""

    def __init__(self, draw: Draw, options: Options, x64: bool):
        self.draw = draw
        self.options = options
        self.x64 = x64
        self.inputs: list[dict] = []
        self.ops: list[dict] = []
        self.vals: list[Val] = []
        self.failed = False   # jaxlite refused the last op; the program ends there
        self.tol_ops = 0      # the op-count factor of the float tolerance (see compare.py)

    def dtypes(self):
        if self.options.smooth:
            return ("float64",) if self.x64 else ("float32",)
        return DTYPES + (X64_DTYPES if self.x64 else ())

    def add_input(self, spec: dict) -> Val:
        val = Val(("in", len(self.inputs)), tuple(spec["shape"]),
                  np.dtype(interp.dtype_of(spec["dtype"])))
        self.inputs.append(spec)
        return val

    def new_input(self, dtype=None, shape=None) -> Val:
        draw = self.draw
        dtype = dtype or draw.choice(self.dtypes())
        shape = draw_shape(draw) if shape is None else shape
        val = self.add_input(input_spec(draw, dtype, shape, self.options.smooth))
        self.vals.append(val)
        return val

    def pick(self, pred=lambda v: True):
        """An existing value satisfying `pred`, the most recent ones first (None if none)."""
        fits = [v for v in self.vals if pred(v)]
        if not fits:
            return None
        return fits[len(fits) - 1 - self.draw.integer(0, len(fits) - 1)]

    def emit(self, name, args, params, exact, product=False):
        """Appends an op; its result's shape and dtype come from jaxlite.eval_shape."""
        op = {"op": name, "args": list(args), "params": params}
        structs = [jaxlite.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
        try:
            with jaxlite.enable_x64(self.x64):
                out = jaxlite.eval_shape(
                    lambda *xs: interp.apply_op(NAMESPACE, op, xs), *structs)
        except Exception:
            self.ops.append(op)
            self.failed = True
            return None
        if int(np.prod(out.shape, dtype=np.int64)) > MAX_SIZE:
            return None
        self.ops.append(op)
        val = Val(("op", len(self.ops) - 1), tuple(out.shape), np.dtype(out.dtype),
                  exact=exact, product=product)
        self.vals.append(val)
        if not exact:
            self.tol_ops += _tolerance_weight(name, args, params)
        return val

    def program(self) -> dict:
        """The JSON-able spec, with values renumbered: inputs first, then ops."""
        n_in = len(self.inputs)

        def number(v):
            return v.ref[1] if v.ref[0] == "in" else n_in + v.ref[1]
        ops = [{"op": op["op"], "args": [number(a) for a in op["args"]],
                "params": op["params"]} for op in self.ops]
        meta = {"exact": bool(self.vals[-1].exact) if self.vals else True,
                "tol_ops": self.tol_ops}
        return {"x64": self.x64, "inputs": list(self.inputs), "ops": ops, "meta": meta}


def _tolerance_weight(name, args, params) -> int:
    """How many roundings an inexact op may add: 4 ulps per op, one per summed element,
    times the trip count of a loop."""
    if name in ("fori_loop", "while_loop"):
        return 4 * (params["n"] + 1)
    if name in ("reduce", "cumulative", "dot", "scan"):
        return 4 + max(a.size for a in args)
    return 4


def build_program(draw: Draw, options: Options = Options()) -> dict:
    """One random program (see the module docstring)."""
    x64 = draw.boolean(2) if options.smooth else (options.x64 and draw.boolean(4))
    b = Builder(draw, options, x64)
    for _ in range(draw.integer(1, options.max_inputs)):
        b.new_input()
    n_ops = draw.integer(1, options.max_ops)
    tries = 0
    while len(b.ops) < n_ops and not b.failed and tries < 4 * n_ops + 8:
        tries += 1
        family = draw.choice(ops_gen.families(options))
        family(b)
    if not b.ops:   # nothing applied: a plain negation keeps the program non-empty
        b.emit("unary", [b.vals[0]], {"fn": "negative" if b.vals[0].dtype != np.bool_
                                      else "logical_not", "lib": "jnp"}, True)
    return b.program()


def random_program(seed, options: Options = Options()) -> dict:
    """A program from a seeded random source (no shrinking; for quick runs and tests)."""
    return build_program(RandomDraw(seed), options)


@st.composite
def programs(draw, options: Options = Options()):
    """The hypothesis strategy of programs; hypothesis shrinks them through their draws."""
    return build_program(HypothesisDraw(draw, st.integers), options)


def op_names(program: dict) -> frozenset:
    """A program's op kinds, with the function an op applies (`binary:add`)."""
    names = set()
    for op in program["ops"]:
        fn = op["params"].get("fn")
        names.add(f"{op['op']}:{fn}" if fn else op["op"])
    return frozenset(names)


def size_of(program: dict) -> tuple:
    """How big a program is, for keeping the smallest failing one."""
    elements = sum(len(s["values"]) for s in program["inputs"])
    return (len(program["ops"]), len(program["inputs"]), elements,
            len(str(program)))
