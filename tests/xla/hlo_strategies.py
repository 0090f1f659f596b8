"""Hypothesis strategies for random well-typed HLO programs, reusable by any test.

`hlo_programs()` draws an `HloProgram`: a module and arguments for its entry parameters.
`hlo_modules()` draws the module alone. A program is a random sequence of operations over
the values built so far: elementwise chains (unary, binary, compare, select, clamp, convert)
whose second operands are existing values, constants or broadcasts; reductions over random
axes with add/max/min/multiply combiners (shared or separate `to_apply` computations, some
with swapped parameters, identity or arbitrary initial values); dots with random dimension
numbers; slices, concatenations, pads (negative and interior padding included), transposes,
reshapes, reverses, broadcasts, iotas and constants (some splats of 0, -0.0, 1, inf, NaN);
plus patterns meant for the passes: algebraic identities (x*1, x+(-0.0), x+0.0, -(-x), max(x,
-inf), convert chains, transposes of transposes, ...), repeated instructions and values no
output uses. Several outputs leave through a tuple root. float32 mostly, some int32 and
bool. Every instruction's shape comes from `infer_shape`, so a program the verifier rejects
is a bug of this file. Arrays stay small (at most `MAX_ELEMENTS` elements). To compare
evaluations bit for bit, see `hlo_testing.assert_same_values`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jaxlite.xla.ir import (
    ComputationBuilder,
    HloComputation,
    HloInstruction,
    HloModule,
    NameUniquer,
)
from jaxlite.xla.opcodes import COMPARISON_DIRECTIONS, Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference import infer_shape

__all__ = [
    "MAX_ELEMENTS",
    "HloProgram",
    "arguments_for",
    "hlo_modules",
    "hlo_programs",
]

F32, F64, S32, PRED = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32),
                       np.dtype(np.bool_))
MAX_ELEMENTS = 256
MAX_PARAMETERS = 5
_O = Opcode

_FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -3.5, np.inf, -np.inf, np.nan]
_S32_SPECIALS = [0, 1, -1, 2, 7, -8, np.iinfo(np.int32).max, np.iinfo(np.int32).min]


@dataclass(frozen=True)
class HloProgram:
    """A generated module and one set of arguments for its entry computation."""

    module: HloModule
    args: tuple[np.ndarray, ...]


def _elements(dtype: np.dtype) -> st.SearchStrategy:
    if dtype == F32 or dtype == F64:
        width = 32 if dtype == F32 else 64
        plain = st.floats(-4, 4, width=width)
        return st.one_of(plain, plain, plain, st.sampled_from(_FLOAT_SPECIALS))
    if dtype == S32:
        return st.one_of(st.integers(-6, 6), st.integers(-6, 6), st.sampled_from(_S32_SPECIALS))
    return st.booleans()


def arguments_for(module: HloModule) -> st.SearchStrategy:
    """Arrays, one per entry parameter of `module`, with some IEEE specials among floats."""
    return st.tuples(*[hnp.arrays(p.shape.dtype, p.shape.dims, elements=_elements(p.shape.dtype))
                       for p in module.entry.parameters])


class _Program:
    """One computation under construction: the builder and the values made so far."""

    def __init__(self, draw: Callable[[st.SearchStrategy], Any]) -> None:
        self.draw = draw
        self.names = NameUniquer()
        self.builder = ComputationBuilder("main", self.names)
        self.values: list[HloInstruction] = []
        self.combiners: dict[tuple[Opcode, np.dtype, bool], HloComputation] = {}

    # ------------------------------------------------------------------ basic makers
    def add(self, opcode: Opcode, operands: list[HloInstruction], attrs: dict | None = None,
            called: tuple[HloComputation, ...] = (), shape: Shape | None = None
            ) -> HloInstruction:
        shape = infer_shape(opcode, [o.shape for o in operands], attrs or {}, called, shape)
        inst = self.builder.add(opcode, shape, operands, attrs or {}, called)
        self.values.append(inst)
        return inst

    def parameter(self, dtype: np.dtype, dims: tuple[int, ...]) -> HloInstruction:
        inst = self.builder.parameter(Shape(dtype, dims), "p")
        self.values.append(inst)
        return inst

    def constant(self, dtype: np.dtype, dims: tuple[int, ...], splat: bool) -> HloInstruction:
        if splat or not dims:
            value = self.draw(_elements(dtype))
            literal = np.full(dims, value, dtype=dtype)
        else:
            literal = self.draw(hnp.arrays(dtype, dims, elements=_elements(dtype)))
        return self.add(_O.CONSTANT, [], {"literal": literal}, shape=Shape(dtype, dims))

    def scalar_constant(self, dtype: np.dtype, value: Any) -> HloInstruction:
        return self.add(_O.CONSTANT, [], {"literal": np.asarray(value, dtype=dtype)},
                        shape=Shape(dtype, ()))

    def broadcast(self, x: HloInstruction, dims: tuple[int, ...],
                  mapping: tuple[int, ...]) -> HloInstruction:
        return self.add(_O.BROADCAST, [x], {"dimensions": mapping}, shape=Shape(x.shape.dtype,
                                                                                 dims))

    def pick(self, accept: Callable[[HloInstruction], bool] = lambda v: True
             ) -> HloInstruction | None:
        candidates = [v for v in self.values if accept(v)]
        if not candidates:
            return None
        # Prefer recent values, so that programs grow chains rather than fans.
        return self.draw(st.sampled_from(candidates[::-1]))

    def pick_array(self, dtypes: tuple[np.dtype, ...] = (F32, S32, PRED),
                   min_rank: int = 0) -> HloInstruction | None:
        return self.pick(lambda v: not v.shape.is_tuple and v.shape.dtype in dtypes
                         and v.shape.rank >= min_rank)

    def operand_like(self, dtype: np.dtype, dims: tuple[int, ...]) -> HloInstruction:
        """A value of this type: an existing one, a constant, a broadcast, or a parameter."""
        same = [v for v in self.values if not v.shape.is_tuple and v.shape.dtype == dtype
                and v.shape.dims == dims]
        smaller = [(v, _embedding(v.shape.dims, dims)) for v in self.values
                   if not v.shape.is_tuple and v.shape.dtype == dtype
                   and v.shape.rank < len(dims)]
        smaller = [(v, m) for v, m in smaller if m is not None]
        choices = ["constant", "splat", "splat_broadcast"]
        choices += ["existing", "existing"] if same else []
        choices += ["broadcast"] if smaller else []
        choices += ["parameter"] if len(self.builder_parameters()) < MAX_PARAMETERS else []
        choice = self.draw(st.sampled_from(choices))
        if choice == "existing":
            return self.draw(st.sampled_from(same[::-1]))
        if choice == "broadcast":
            v, mapping = self.draw(st.sampled_from(smaller[::-1]))
            return self.broadcast(v, dims, mapping)
        if choice == "parameter":
            return self.parameter(dtype, dims)
        if choice == "splat_broadcast" and dims:
            return self.broadcast(self.constant(dtype, (), True), dims, ())
        return self.constant(dtype, dims, splat=choice != "constant")

    def builder_parameters(self) -> list[HloInstruction]:
        return [v for v in self.values if v.opcode is _O.PARAMETER]

    def combiner(self, opcode: Opcode, dtype: np.dtype, swapped: bool) -> HloComputation:
        """A scalar `to_apply` computation; sometimes shared, sometimes a fresh copy."""
        key = (opcode, dtype, swapped)
        if key in self.combiners and self.draw(st.booleans()):
            return self.combiners[key]
        builder = ComputationBuilder(opcode.text + "_combiner", self.names)
        x, y = builder.parameter(Shape(dtype, ()), "x"), builder.parameter(Shape(dtype, ()), "y")
        root = builder.add(opcode, Shape(dtype, ()), [y, x] if swapped else [x, y])
        comp = builder.build(root)
        self.combiners[key] = comp
        return comp


def _embedding(small: tuple[int, ...], big: tuple[int, ...]) -> tuple[int, ...] | None:
    """Increasing positions of `big` whose sizes are `small`'s, matched greedily."""
    mapping, position = [], 0
    for size in small:
        while position < len(big) and big[position] != size:
            position += 1
        if position == len(big):
            return None
        mapping.append(position)
        position += 1
    return tuple(mapping)


def _dims(draw: Callable, min_rank: int = 0, max_rank: int = 3) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(1, 4), min_size=min_rank, max_size=max_rank)))


def _float_or_int(v: HloInstruction) -> bool:
    return v.shape.dtype in (F32, S32)


# ----------------------------------------------------------------------------- operations

_UNARY = {F32: [_O.NEGATE, _O.ABS, _O.EXP, _O.TANH, _O.SIN, _O.COS, _O.FLOOR, _O.CEIL,
                _O.SQRT, _O.LOG, _O.LOGISTIC, _O.SIGN, _O.ROUND_EVEN],
          S32: [_O.NEGATE, _O.ABS, _O.NOT, _O.SIGN, _O.POPCNT], PRED: [_O.NOT]}
_BINARY = {F32: [_O.ADD, _O.SUBTRACT, _O.MULTIPLY, _O.DIVIDE, _O.MAXIMUM, _O.MINIMUM,
                 _O.ATAN2, _O.POWER, _O.REMAINDER],
           S32: [_O.ADD, _O.SUBTRACT, _O.MULTIPLY, _O.DIVIDE, _O.REMAINDER, _O.MAXIMUM,
                 _O.MINIMUM, _O.AND, _O.OR, _O.XOR, _O.SHIFT_LEFT,
                 _O.SHIFT_RIGHT_ARITHMETIC],
           PRED: [_O.AND, _O.OR, _O.XOR, _O.MAXIMUM]}


def _unary(p: _Program) -> HloInstruction | None:
    x = p.pick_array()
    if x is None:
        return None
    return p.add(p.draw(st.sampled_from(_UNARY[x.shape.dtype])), [x])


def _binary(p: _Program) -> HloInstruction | None:
    x = p.pick_array()
    if x is None:
        return None
    y = p.operand_like(x.shape.dtype, x.shape.dims)
    operands = [x, y] if p.draw(st.booleans()) else [y, x]
    return p.add(p.draw(st.sampled_from(_BINARY[x.shape.dtype])), operands)


def _compare(p: _Program) -> HloInstruction | None:
    x = p.pick_array()
    if x is None:
        return None
    y = p.operand_like(x.shape.dtype, x.shape.dims)
    direction = p.draw(st.sampled_from(COMPARISON_DIRECTIONS))
    return p.add(_O.COMPARE, [x, y], {"direction": direction})


def _select(p: _Program) -> HloInstruction | None:
    x = p.pick_array()
    if x is None:
        return None
    pred = p.operand_like(PRED, x.shape.dims)
    other = p.operand_like(x.shape.dtype, x.shape.dims)
    return p.add(_O.SELECT, [pred] + ([x, other] if p.draw(st.booleans()) else [other, x]))


def _clamp(p: _Program) -> HloInstruction | None:
    x = p.pick(_float_or_int)
    if x is None:
        return None
    dtype = x.shape.dtype
    low = p.operand_like(dtype, p.draw(st.sampled_from([(), x.shape.dims])))
    high = p.operand_like(dtype, p.draw(st.sampled_from([(), x.shape.dims])))
    return p.add(_O.CLAMP, [low, x, high])


def _convert(p: _Program) -> HloInstruction | None:
    x = p.pick_array()
    if x is None:
        return None
    target = p.draw(st.sampled_from([F32, S32, PRED, F64]))
    return p.add(_O.CONVERT, [x], shape=Shape(target, x.shape.dims))


def _identity(p: _Program) -> HloInstruction | None:
    """A pattern the algebraic simplifier knows (or must know to leave alone)."""
    x = p.pick_array((F32, S32, PRED))
    if x is None:
        return None
    dtype, dims = x.shape.dtype, x.shape.dims
    kind = p.draw(st.sampled_from(["mul1", "add0", "sub0", "div1", "negneg", "extremum",
                                   "convert_chain", "select_const", "select_same"]))

    def splat(value: Any, of: np.dtype = dtype) -> HloInstruction:
        scalar = p.scalar_constant(of, value)
        return p.broadcast(scalar, dims, ()) if dims else scalar
    if kind == "select_same":
        return p.add(_O.SELECT, [p.operand_like(PRED, dims), x, x])
    if dtype == PRED or kind == "select_const":
        pred = splat(p.draw(st.booleans()), PRED)
        return p.add(_O.SELECT, [pred, x, p.operand_like(dtype, dims)])
    if kind == "mul1":
        return p.add(_O.MULTIPLY, [x, splat(1)] if p.draw(st.booleans()) else [splat(1), x])
    if kind == "add0":
        zero = splat(p.draw(st.sampled_from([0.0, -0.0])))
        return p.add(_O.ADD, [x, zero] if p.draw(st.booleans()) else [zero, x])
    if kind == "sub0":
        return p.add(_O.SUBTRACT, [x, splat(p.draw(st.sampled_from([0.0, -0.0])))])
    if kind == "div1":
        return p.add(_O.DIVIDE, [x, splat(1)])
    if kind == "negneg":
        return p.add(_O.NEGATE, [p.add(_O.NEGATE, [x])])
    if kind == "extremum":
        big = np.inf if dtype == F32 else np.iinfo(np.int32).max
        op, value = p.draw(st.sampled_from([(_O.MAXIMUM, -big), (_O.MINIMUM, big),
                                            (_O.MAXIMUM, big), (_O.MINIMUM, -big)]))
        if dtype == S32 and value < 0:
            value = np.iinfo(np.int32).min
        return p.add(op, [x, splat(value)])
    middle = p.draw(st.sampled_from([F64, F32, S32, PRED]))
    inner = p.add(_O.CONVERT, [x], shape=Shape(middle, dims))
    return p.add(_O.CONVERT, [inner], shape=Shape(dtype, dims))


def _broadcast(p: _Program) -> HloInstruction | None:
    x = p.pick_array()
    if x is None:
        return None
    new = list(_dims(p.draw, 0, 2))
    out, mapping = list(x.shape.dims), list(range(x.shape.rank))
    for size in new:
        at = p.draw(st.integers(0, len(out)))
        out.insert(at, size)
        mapping = [m + 1 if m >= at else m for m in mapping]
    if math.prod(out) > MAX_ELEMENTS or len(out) > 4:
        return None
    return p.broadcast(x, tuple(out), tuple(mapping))


def _reshape(p: _Program) -> HloInstruction | None:
    x = p.pick_array()
    if x is None:
        return None
    size, dims = x.shape.size, []
    while size > 1 and len(dims) < 3:
        divisors = [d for d in range(2, size + 1) if size % d == 0]
        d = p.draw(st.sampled_from(divisors))
        dims.append(d)
        size //= d
    if size > 1:
        dims.append(size)
    ones = p.draw(st.integers(0, 1))
    dims = dims + [1] * ones
    order = p.draw(st.permutations(dims)) if dims else []
    return p.add(_O.RESHAPE, [x], shape=Shape(x.shape.dtype, tuple(order)))


def _transpose(p: _Program) -> HloInstruction | None:
    x = p.pick_array(min_rank=1)
    if x is None:
        return None
    perm = tuple(p.draw(st.permutations(range(x.shape.rank))))
    t = p.add(_O.TRANSPOSE, [x], {"dimensions": perm})
    if p.draw(st.booleans()):  # transpose of transpose
        again = tuple(p.draw(st.permutations(range(x.shape.rank))))
        t = p.add(_O.TRANSPOSE, [t], {"dimensions": again})
    return t


def _slice(p: _Program) -> HloInstruction | None:
    x = p.pick_array(min_rank=1)
    if x is None:
        return None
    starts, limits, strides = [], [], []
    for size in x.shape.dims:
        start = p.draw(st.integers(0, size - 1))
        starts.append(start)
        limits.append(p.draw(st.integers(start + 1, size)))
        strides.append(p.draw(st.sampled_from([1, 1, 2, 3])))
    return p.add(_O.SLICE, [x], {"starts": tuple(starts), "limits": tuple(limits),
                                 "strides": tuple(strides)})


def _concatenate(p: _Program) -> HloInstruction | None:
    x = p.pick_array(min_rank=1)
    if x is None:
        return None
    dim = p.draw(st.integers(0, x.shape.rank - 1))
    operands = [x]
    for _ in range(p.draw(st.integers(0, 2))):
        dims = list(x.shape.dims)
        dims[dim] = p.draw(st.integers(1, 3))
        operands.append(p.operand_like(x.shape.dtype, tuple(dims)))
    order = p.draw(st.permutations(operands))
    out = sum(o.shape.dims[dim] for o in order) * (x.shape.size // x.shape.dims[dim])
    if out > MAX_ELEMENTS:
        return None
    return p.add(_O.CONCATENATE, list(order), {"dimensions": (dim,)})


def _pad(p: _Program) -> HloInstruction | None:
    x = p.pick_array()
    if x is None:
        return None
    value = p.operand_like(x.shape.dtype, ())
    config = []
    for size in x.shape.dims:
        low, high = p.draw(st.integers(-1, 2)), p.draw(st.integers(-1, 2))
        interior = p.draw(st.integers(0, 1))
        total = low + high + size + (size - 1) * interior
        if total < 1:
            low, high = 0, 0
        config.append((low, high, interior))
    if p.draw(st.integers(0, 4)) == 0:
        config = [(0, 0, 0)] * x.shape.rank
    result = infer_shape(_O.PAD, [x.shape, value.shape], {"padding": tuple(config)})
    if result.size > MAX_ELEMENTS:
        return None
    return p.add(_O.PAD, [x, value], {"padding": tuple(map(tuple, config))})


def _reverse(p: _Program) -> HloInstruction | None:
    x = p.pick_array(min_rank=1)
    if x is None:
        return None
    dims = p.draw(st.lists(st.integers(0, x.shape.rank - 1), unique=True, max_size=x.shape.rank))
    return p.add(_O.REVERSE, [x], {"dimensions": tuple(sorted(dims))})


def _reduce(p: _Program) -> HloInstruction | None:
    x = p.pick(_float_or_int)
    if x is None:
        return None
    dtype = x.shape.dtype
    dims = p.draw(st.lists(st.integers(0, max(x.shape.rank - 1, 0)), unique=True,
                           max_size=x.shape.rank)) if x.shape.rank else []
    opcode = p.draw(st.sampled_from([_O.ADD, _O.ADD, _O.MAXIMUM, _O.MINIMUM, _O.MULTIPLY]))
    identity = {_O.ADD: 0, _O.MULTIPLY: 1,
                _O.MAXIMUM: -np.inf if dtype == F32 else np.iinfo(np.int32).min,
                _O.MINIMUM: np.inf if dtype == F32 else np.iinfo(np.int32).max}[opcode]
    init = (p.scalar_constant(dtype, identity) if p.draw(st.booleans())
            else p.operand_like(dtype, ()))
    combiner = p.combiner(opcode, dtype, swapped=p.draw(st.integers(0, 3)) == 0)
    return p.add(_O.REDUCE, [x, init], {"dimensions": tuple(sorted(dims))}, (combiner,))


def _dot(p: _Program) -> HloInstruction | None:
    lhs = p.pick(lambda v: v.shape.dtype == F32 and 1 <= v.shape.rank <= 3)
    if lhs is None:
        return None
    roles = [p.draw(st.sampled_from(["batch", "contract", "contract", "free"]))
             for _ in lhs.shape.dims]
    lhs_batch = tuple(d for d, r in enumerate(roles) if r == "batch")
    lhs_contract = tuple(d for d, r in enumerate(roles) if r == "contract")
    rhs_free = list(_dims(p.draw, 0, 2))
    rhs_dims = [lhs.shape.dims[d] for d in lhs_batch + lhs_contract] + rhs_free
    order = list(p.draw(st.permutations(range(len(rhs_dims)))))
    # Original rhs dimension k sits at position order.index(k).
    rhs = p.operand_like(F32, tuple(rhs_dims[k] for k in order))
    nb = len(lhs_batch)
    attrs = {"lhs_batch": lhs_batch, "lhs_contracting": lhs_contract,
             "rhs_batch": tuple(order.index(k) for k in range(nb)),
             "rhs_contracting": tuple(order.index(k) for k in range(nb, nb + len(lhs_contract)))}
    result = infer_shape(_O.DOT, [lhs.shape, rhs.shape], attrs)
    if result.size > MAX_ELEMENTS:
        return None
    return p.add(_O.DOT, [lhs, rhs], attrs)


def _iota(p: _Program) -> HloInstruction | None:
    dims = _dims(p.draw, 1, 3)
    dtype = p.draw(st.sampled_from([F32, S32]))
    return p.add(_O.IOTA, [], {"iota_dimension": p.draw(st.integers(0, len(dims) - 1))},
                 shape=Shape(dtype, dims))


def _new_constant(p: _Program) -> HloInstruction | None:
    dtype = p.draw(st.sampled_from([F32, F32, S32, PRED]))
    return p.constant(dtype, _dims(p.draw), splat=p.draw(st.booleans()))


def _repeat(p: _Program) -> HloInstruction | None:
    """The same instruction again: work for CSE."""
    x = p.pick(lambda v: v.opcode is not _O.PARAMETER)
    if x is None:
        return None
    return p.add(x.opcode, list(x.operands), dict(x.attrs), x.called, shape=x.shape)


_OPERATIONS: list[Callable[[_Program], HloInstruction | None]] = [
    _unary, _binary, _binary, _binary, _compare, _select, _clamp, _convert, _identity,
    _identity, _broadcast, _reshape, _transpose, _slice, _concatenate, _pad, _reverse,
    _reduce, _reduce, _dot, _iota, _new_constant, _repeat]


@st.composite
def hlo_programs(draw: Callable, min_operations: int = 2, max_operations: int = 14
                 ) -> HloProgram:
    """A random well-typed module and arguments for it (see the module doc)."""
    p = _Program(draw)
    for _ in range(draw(st.integers(1, 3))):
        p.parameter(draw(st.sampled_from([F32, F32, F32, S32, PRED])), _dims(draw))
    for _ in range(draw(st.integers(min_operations, max_operations))):
        draw(st.sampled_from(_OPERATIONS))(p)
    arrays = [v for v in p.values if not v.shape.is_tuple]
    last = arrays[-1]
    extra = draw(st.lists(st.sampled_from(arrays), max_size=2))
    outputs = [last] + extra
    if len(outputs) == 1 and draw(st.booleans()):
        root = last
    else:
        root = p.builder.add(_O.TUPLE, Shape.tuple([o.shape for o in outputs]), outputs)
    module = HloModule("random_program", p.builder.build(root))
    args = draw(arguments_for(module))
    return HloProgram(module, tuple(args))


def hlo_modules(**kwargs: Any) -> st.SearchStrategy:
    """Random well-typed modules (the module part of `hlo_programs`)."""
    return hlo_programs(**kwargs).map(lambda program: program.module)
