"""The value of a fused HLO instruction at one index, as kernel IR (the GPU side of XLA's
elemental IR emitter).

`Elemental.value(inst, index)` appends `Let`s computing `inst` at the logical multi-index
`index` (a tuple of int32 expressions) to the current statement list and returns the
value: a `Var` or a literal in the *computing type* (float32 for 16-bit floats, rounded to
the 16-bit type after every operation so that numbers match HLO's). Values already
computed at the same index in an enclosing scope are reused; `scope()` opens a nested
statement list (a loop body, a branch) whose values are forgotten when it closes.
Reductions are not computed here: a kernel builder computes them and registers each
result with `known` (one value per row, whatever the index says).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.composed_ops import erf_inv, popcnt
from jaxlite.backends.gpu.hlo_indexing import (
    dynamic_slice_index, dynamic_update_value, gather_index, total_order_compare)
from jaxlite.backends.gpu.index_math import add, delinearize, div, linear_index, mul, rem
from jaxlite.backends.gpu.window_reductions import reduce_window_value
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["Elemental", "UnsupportedFusion", "compute_dtype", "round_to"]

_O = Opcode
_UNARY = {
    _O.ABS: "abs", _O.CEIL: "ceil", _O.COS: "cos", _O.ERF: "erf", _O.EXP: "exp",
    _O.EXPM1: "expm1", _O.FLOOR: "floor", _O.LOG: "log", _O.LOG1P: "log1p",
    _O.NEGATE: "neg", _O.NOT: "not", _O.ROUND_AFZ: "round", _O.ROUND_EVEN: "rint",
    _O.RSQRT: "rsqrt", _O.SIN: "sin", _O.SQRT: "sqrt", _O.TAN: "tan", _O.TANH: "tanh",
    _O.CBRT: "cbrt", _O.IS_FINITE: "isfinite", _O.ACOS: "acos", _O.ACOSH: "acosh",
    _O.ASIN: "asin", _O.ASINH: "asinh", _O.ATAN: "atan", _O.ATANH: "atanh",
    _O.COSH: "cosh", _O.SINH: "sinh", _O.EXP2: "exp2", _O.ERFC: "erfc",
    _O.LGAMMA: "lgamma",
}
_BINARY = {
    _O.ADD: "add", _O.SUBTRACT: "sub", _O.MULTIPLY: "mul", _O.MAXIMUM: "max",
    _O.MINIMUM: "min", _O.AND: "and", _O.OR: "or", _O.XOR: "xor", _O.POWER: "pow",
    _O.ATAN2: "atan2",
}
_DIRECTIONS = {"LT": "lt", "LE": "le", "GT": "gt", "GE": "ge", "EQ": "eq", "NE": "ne"}
_SIXTEEN_BIT = ("float16", "bfloat16")


class UnsupportedFusion(NotImplementedError):
    """The gpu kernel builders cannot yet build this fusion; the message says what."""


def compute_dtype(dtype: np.dtype | str) -> str:
    """The IR type a value of HLO type `dtype` is computed in."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    return "float32" if name in _SIXTEEN_BIT else name


def round_to(value: ir.Expr, dtype: np.dtype | str) -> ir.Expr:
    """`value` rounded to the 16-bit float `dtype` (and back); other types unchanged."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name not in _SIXTEEN_BIT:
        return value
    return ir.Cast(ir.Cast(value, name), "float32")


class Elemental:
    """Computes fused instructions at indices, appending statements to `self.body`.

    buffers: the Buffer of each parameter of the fused computation (by parameter number).
    """

    def __init__(self, prefix: str, buffers: dict[int, ir.Buffer]) -> None:
        self.prefix = prefix
        self.buffers = buffers
        self.body: list[ir.Stmt] = []
        self.constants: list[ir.Buffer] = []
        self._known: dict[tuple, ir.Expr] = {}
        self._per_row: dict[int, ir.Expr] = {}
        self._count = 0

    # ----------------------------------------------------------------- bookkeeping
    def fresh(self, hint: str, dtype: str) -> ir.Var:
        self._count += 1
        return ir.Var(f"{hint}{self._count}", dtype)

    def let(self, value: ir.Expr, hint: str = "v") -> ir.Expr:
        if isinstance(value, (ir.Var, ir.Const)):
            return value
        var = self.fresh(hint, value.dtype)
        self.body.append(ir.Let(var, value))
        return var

    def emit(self, *statements: ir.Stmt) -> None:
        self.body.extend(statements)

    @contextlib.contextmanager
    def scope(self) -> Iterator[list[ir.Stmt]]:
        """A nested statement list; what is computed inside is forgotten afterwards."""
        outer_body, outer_known = self.body, self._known
        self.body, self._known = [], dict(outer_known)
        try:
            yield self.body
        finally:
            self.body, self._known = outer_body, outer_known

    def known(self, inst: HloInstruction, value: ir.Expr) -> None:
        """`inst` (a reduction) has `value` for the row being computed."""
        self._per_row[id(inst)] = value

    def seed(self, inst: HloInstruction, index: tuple, value: ir.Expr) -> None:
        """`inst` at `index` is `value` (a vector load did the work)."""
        self._known[(id(inst), index)] = value

    # ---------------------------------------------------------------------- values
    def value(self, inst: HloInstruction, index: tuple) -> ir.Expr:
        """`inst` at the logical multi-index `index`, in its computing type."""
        if id(inst) in self._per_row:
            return self._per_row[id(inst)]
        key = (id(inst), index)
        if key not in self._known:
            self._known[key] = self.let(self._compute(inst, index))
        return self._known[key]

    def _compute(self, inst: HloInstruction, index: tuple) -> ir.Expr:
        op, dtype = inst.opcode, inst.shape.dtype
        if op is _O.PARAMETER:
            buffer = self.buffers[inst.attr("number")]
            load = ir.Load(buffer, linear_index(index, inst.shape))
            return ir.Cast(load, compute_dtype(dtype)) if buffer.dtype in _SIXTEEN_BIT \
                else load
        if op is _O.CONSTANT:
            return self._constant(inst, index)
        if op.is_elementwise:
            return round_to(self._elementwise(inst, index), dtype)
        moved = _moved_index(inst, index)
        if moved is not None:
            return self.value(inst.operands[0], moved)
        if op is _O.BITCAST_CONVERT:
            return self._bitcast(inst, index)
        if op is _O.IOTA:
            return ir.Cast(index[inst.attr("iota_dimension")], compute_dtype(dtype))
        if op is _O.PAD:
            return self._pad(inst, index)
        if op is _O.CONCATENATE:
            return self._concatenate(inst, index)
        if op is _O.DYNAMIC_SLICE:
            return self.value(inst.operands[0], dynamic_slice_index(self, inst, index))
        if op is _O.GATHER:
            return self.value(inst.operands[0], gather_index(self, inst, index))
        if op is _O.DYNAMIC_UPDATE_SLICE:
            return dynamic_update_value(self, inst, index)
        if op is _O.REDUCE_WINDOW and not inst.shape.is_tuple:
            return reduce_window_value(self, inst, index)
        raise UnsupportedFusion(f"the gpu kernel builders do not compute {op.text} "
                                f"(%{inst.name}) inside a fusion yet")

    def _constant(self, inst: HloInstruction, index: tuple) -> ir.Expr:
        literal = np.asarray(inst.attr("literal"))
        dtype = compute_dtype(inst.shape.dtype)
        flat = literal.reshape(-1).astype(ir.dtype_of(dtype))
        if flat.size == 0:
            raise UnsupportedFusion(f"empty constant %{inst.name}")
        if np.all(flat == flat[0]) or flat.size == 1:
            return ir.Const(flat[0].item(), dtype)
        self._count += 1
        buffer = ir.Buffer(f"{self.prefix}_const{self._count}", dtype, "constant",
                           flat.size, tuple(v.item() for v in flat))
        self.constants.append(buffer)
        logical = Shape(inst.shape.dtype, inst.shape.dims)  # values are in logical order
        return ir.Load(buffer, linear_index(index, logical))

    def _elementwise(self, inst: HloInstruction, index: tuple) -> ir.Expr:
        op = inst.opcode
        args = [self.value(o, index) for o in inst.operands]
        dtype = compute_dtype(inst.shape.dtype)
        if op in _UNARY:
            return ir.Unary(_UNARY[op], args[0])
        if op in _BINARY:
            return ir.Binary(_BINARY[op], args[0], args[1])
        if op is _O.COMPARE:
            if inst.attr("type") == "TOTALORDER" and args[0].dtype.startswith("float"):
                return total_order_compare(self, _DIRECTIONS[inst.attr("direction")],
                                           args[0], args[1])
            return ir.Binary(_DIRECTIONS[inst.attr("direction")], args[0], args[1])
        if op is _O.SELECT:
            return ir.Select(args[0], args[1], args[2])
        if op is _O.CLAMP:
            return ir.Binary("max", args[0], ir.Binary("min", args[1], args[2]))
        if op is _O.CONVERT:
            return convert(args[0], inst.shape.dtype)
        if op in (_O.DIVIDE, _O.REMAINDER):
            return _divide(op, args[0], args[1])
        if op is _O.LOGISTIC:
            one = ir.Const(1.0, dtype)
            return ir.Binary("div", one, ir.Binary("add", one, ir.Unary(
                "exp", ir.Unary("neg", args[0]))))
        if op is _O.SIGN:
            return _sign(args[0])
        if op in _SHIFTS:
            return _shift(_SHIFTS[op], args[0], args[1])
        if op is _O.ERF_INV and dtype == "float32":
            return erf_inv(args[0], self.let)
        if op is _O.POPCNT:
            return popcnt(args[0], self.let)
        raise UnsupportedFusion(f"the gpu kernel builders do not compute {op.text} yet")

    def _bitcast(self, inst: HloInstruction, index: tuple) -> ir.Expr:
        """bitcast-convert of equal widths; 16-bit floats are rounded to their type
        first (they are computed as float32) and widened after."""
        source = inst.operands[0].shape.dtype.name
        target = inst.shape.dtype.name
        if np.dtype(ir.dtype_of(source)).itemsize != np.dtype(ir.dtype_of(target)).itemsize:
            raise UnsupportedFusion(f"bitcast-convert %{inst.name} of {source} to {target}"
                                    " changes the element width")
        x = self.value(inst.operands[0], index)
        if x.dtype != source:
            x = ir.Cast(x, source)
        bits = ir.Bitcast(x, target)
        typed = compute_dtype(target)
        return bits if typed == target else ir.Cast(bits, typed)

    def _pad(self, inst: HloInstruction, index: tuple) -> ir.Expr:
        operand, padding = inst.operands[0], inst.attr("padding")
        inside: ir.Expr = ir.Const(True, "bool")
        source = []
        for i, (low, _, interior), size in zip(index, padding, operand.shape.dims):
            shifted = add(i, ir.index_const(-low))
            step = interior + 1
            j = div(shifted, step)
            ok = ir.Binary("and", ir.Binary("ge", shifted, ir.index_const(0)),
                           ir.Binary("lt", j, ir.index_const(size)))
            if step > 1:
                ok = ir.Binary("and", ok, ir.Binary("eq", rem(shifted, step),
                                                    ir.index_const(0)))
            inside, source = ir.Binary("and", inside, ok), source + [j]
        return self.choose(inside, lambda: self.value(operand, tuple(source)),
                            lambda: self.value(inst.operands[1], ()))

    def _concatenate(self, inst: HloInstruction, index: tuple) -> ir.Expr:
        dim = inst.attr("dimensions")[0]
        pieces, offset = [], 0
        for operand in inst.operands:
            pieces.append((offset, operand))
            offset += operand.shape.dims[dim]

        def piece(k: int) -> ir.Expr:
            start, operand = pieces[k]
            moved = index[:dim] + (add(index[dim], ir.index_const(-start)),) + index[dim + 1:]
            if k == len(pieces) - 1:
                return self.value(operand, moved)
            below = ir.Binary("lt", index[dim], ir.index_const(pieces[k + 1][0]))
            return self.choose(below, lambda: self.value(operand, moved),
                                lambda: piece(k + 1))
        return piece(0)

    def choose(self, cond: ir.Expr, on_true, on_false) -> ir.Expr:
        """cond ? on_true() : on_false(), each side computed only when chosen (a side may
        read out of bounds when not chosen)."""
        with self.scope() as then:
            true_value = on_true()
        with self.scope() as orelse:
            false_value = on_false()
        result = self.fresh("choice", true_value.dtype)
        self.emit(ir.Let(result, ir.Const(0, result.dtype)),
                  ir.If(cond, tuple(then) + (ir.Assign(result, true_value),),
                        tuple(orelse) + (ir.Assign(result, false_value),)))
        return result


def _moved_index(inst: HloInstruction, index: tuple) -> tuple | None:
    """The operand index of a pure data-movement instruction, or None for other opcodes."""
    op, operand = inst.opcode, inst.operands[0] if inst.operands else None
    if op is _O.BROADCAST:
        return tuple(index[d] for d in inst.attr("dimensions"))
    if op is _O.COPY:
        return index
    if op is _O.TRANSPOSE:
        moved = [None] * len(index)
        for i, d in enumerate(inst.attr("dimensions")):
            moved[d] = index[i]
        return tuple(moved)
    if op is _O.RESHAPE:
        logical = Shape(inst.shape.dtype, inst.shape.dims)
        return delinearize(linear_index(index, logical),
                           Shape(operand.shape.dtype, operand.shape.dims))
    if op is _O.BITCAST and inst.shape.dtype == operand.shape.dtype:
        return delinearize(linear_index(index, inst.shape), operand.shape)
    if op is _O.SLICE:
        return tuple(add(mul(i, stride), ir.index_const(start)) for i, start, stride in
                     zip(index, inst.attr("starts"), inst.attr("strides")))
    if op is _O.REVERSE:
        flipped = set(inst.attr("dimensions"))
        return tuple(add(ir.index_const(size - 1), mul(i, -1)) if d in flipped else i
                     for d, (i, size) in enumerate(zip(index, inst.shape.dims)))
    return None


def convert(x: ir.Expr, target: np.dtype) -> ir.Expr:
    """HLO's convert: float to integer truncates and saturates, NaN giving 0."""
    name, source = np.dtype(target).name, x.dtype
    into = compute_dtype(name)
    if source.startswith("float") and np.dtype(name).kind in "iu":
        info = np.iinfo(name)
        low, high = ir.Const(float(info.min), source), ir.Const(float(info.max), source)
        return ir.Select(ir.Unary("isnan", x), ir.Const(0, name),
                         ir.Select(ir.Binary("le", x, low), ir.Const(int(info.min), name),
                                   ir.Select(ir.Binary("ge", x, high),
                                             ir.Const(int(info.max), name),
                                             ir.Cast(x, name))))
    return ir.Cast(x, into)


def _divide(op: Opcode, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    name = "div" if op is _O.DIVIDE else "rem"
    if a.dtype.startswith("float"):
        return ir.Binary(name, a, b)
    # XLA defines x / 0 = -1, x % 0 = x, and INT_MIN / -1 = INT_MIN (C leaves them undefined)
    zero = ir.Binary("eq", b, ir.Const(0, b.dtype))
    special = zero
    if np.dtype(a.dtype).kind == "i":
        smallest = ir.Const(int(np.iinfo(a.dtype).min), a.dtype)
        overflow = ir.Binary("and", ir.Binary("eq", a, smallest),
                             ir.Binary("eq", b, ir.Const(-1, b.dtype)))
        special = ir.Binary("or", zero, overflow)
    safe = ir.Select(special, ir.Const(1, b.dtype), b)
    result = ir.Binary(name, a, safe)
    if name == "div":
        all_ones = -1 if a.dtype.startswith("int") else int(np.iinfo(a.dtype).max)
        return ir.Select(zero, ir.Const(all_ones, a.dtype), result)
    return ir.Select(zero, a, result)  # INT_MIN % -1 is INT_MIN % 1 = 0


_SHIFTS = {_O.SHIFT_LEFT: "left", _O.SHIFT_RIGHT_ARITHMETIC: "arithmetic",
           _O.SHIFT_RIGHT_LOGICAL: "logical"}


def _shift(kind: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """HLO's shifts: a count outside [0, bits) shifts every bit out (0, or the sign's
    fill for an arithmetic right shift), where C leaves it undefined."""
    bits = ir.dtype_of(a.dtype).itemsize * 8
    unsigned = "uint" + a.dtype.removeprefix("u").removeprefix("int")
    count = b if b.dtype == unsigned else ir.Cast(b, unsigned)
    inside = ir.Binary("lt", count, ir.Const(bits, unsigned))
    if kind == "left":
        shifted, out = ir.Binary("shl", a, b), ir.Const(0, a.dtype)
    elif kind == "arithmetic":
        shifted = ir.Binary("shr", a, b)
        out = ir.Const(0, a.dtype)
        if a.dtype.startswith("int"):
            out = ir.Select(ir.Binary("lt", a, out), ir.Const(-1, a.dtype), out)
    else:
        raw = a if a.dtype == unsigned else ir.Cast(a, unsigned)
        shifted = ir.Binary("shr", raw, count)
        shifted = shifted if a.dtype == unsigned else ir.Cast(shifted, a.dtype)
        out = ir.Const(0, a.dtype)
    return ir.Select(inside, shifted, out)


def _sign(x: ir.Expr) -> ir.Expr:
    zero, one = ir.Const(0, x.dtype), ir.Const(1, x.dtype)
    if x.dtype.startswith("uint"):
        return ir.Select(ir.Binary("gt", x, zero), one, zero)
    negative = ir.Const(-1, x.dtype)
    # 0, -0 and NaN are their own signs
    return ir.Select(ir.Binary("gt", x, zero), one,
                     ir.Select(ir.Binary("lt", x, zero), negative, x))

