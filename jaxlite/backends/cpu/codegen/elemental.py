"""The value of any fused instruction at an index (mirrors XLA's ElementalIrEmitter).

`Elemental.value(inst, index)` emits the code computing instruction `inst` of a fused
computation at `index` (a `Multi` or `Flat` index into `inst`'s shape) and returns it as a
`Val`: elementwise opcodes compute their operands at the same index, movement opcodes at the
index they map it to, parameters and array constants load from memory. Values are memoized
per (instruction, index) in scopes that follow the loop structure (`push`/`pop`), so a value
used twice at the same place is computed once.

Kernels choose the loops and give the index; they may also `bind` a value to an instruction
(a reduction computed in an earlier pass over the row) so that expressions read it instead
of computing it. Reductions and dots that are not bound are computed in place, by an inner
loop over the reduced, contracted or window dimensions (`reduction.install_inner_loops`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from jaxlite.backends.cpu.codegen.arith import Arith
from jaxlite.backends.cpu.codegen.complex_values import ComplexOps, Cx, is_complex, part_dtype
from jaxlite.backends.cpu.codegen.indexing import Flat, IndexMath, Lin, Multi
from jaxlite.backends.cpu.codegen.llvm_text import (I64, FunctionBuilder, Val, llvm_elem,
                                                    storage_elem, vec_type)
from jaxlite.backends.cpu.codegen.mathfns import MATH_OPCODES, MathLib
from jaxlite.backends.cpu.codegen.movement import MOVEMENT
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.reduce_precision import nan_result_bits, reduce_precision_bits

__all__ = ["Elemental", "Index", "Value", "ConstantPool"]

Index = Multi | Flat
Value = Val | Cx
# Computed at an index by loops over the reduced, contracted or window dimensions.
_INNER_LOOPS = (Opcode.REDUCE, Opcode.DOT, Opcode.REDUCE_WINDOW, Opcode.CONVOLUTION)
_O = Opcode
_PRED = np.dtype(np.bool_)


@dataclass(frozen=True)
class RowCache:
    """A row kernel's stack buffer for one full-row value: where it is, the pass that
    fills it, and the stride in the buffer of each reduced dimension."""

    inst: HloInstruction
    buffer: str
    first_pass: int
    strides: dict[int, int]

    def offset(self, index: Multi) -> Lin:
        total = Lin()
        for d, stride in self.strides.items():
            total = total + index.parts[d] * stride
        return total


class ConstantPool:
    """Array constants of a module as private globals, one per distinct literal."""

    def __init__(self) -> None:
        self._globals: dict[tuple, str] = {}
        self.texts: list[str] = []

    def global_for(self, literal: np.ndarray, dtype: np.dtype,
                   layout: tuple[int, ...] | None) -> str:
        """The name of a global holding `literal` in memory order, stored as `dtype` is."""
        array = np.asarray(literal, dtype=dtype)
        if layout is not None and array.ndim:
            array = array.transpose(tuple(reversed(layout)))
        data = np.ascontiguousarray(array).tobytes()
        key = (np.dtype(dtype).str, data)
        if key not in self._globals:
            name = f"@const.{len(self._globals)}"
            self._globals[key] = name
            hexed = "".join(f"\\{b:02X}" for b in data)
            self.texts.append(f'{name} = private unnamed_addr constant [{len(data)} x i8] '
                              f'c"{hexed}", align 64')
        return self._globals[key]


class Elemental:
    """Emits values of one fused computation's instructions into `fb`, `width` lanes wide.

    params : the pointer (an LLVM ref) of each fused parameter, by parameter number.
    """

    def __init__(self, fb: FunctionBuilder, width: int, params: dict[int, str],
                 mathlib: MathLib, constants: ConstantPool) -> None:
        self.fb = fb
        self.width = width
        self.params = params
        self.mathlib = mathlib
        self.constants = constants
        self.arith = Arith(fb)
        self.complex = ComplexOps(self.arith, mathlib)
        self.ix = IndexMath(fb, width)
        self._memo: list[dict[object, Val]] = [{}]
        self.bound: dict[int, Val] = {}
        self.tuples: dict[int, list[Val]] = {}
        # Row kernels: full-row values kept in a row buffer ("store" in the pass that
        # computes them first, "load" in later passes).
        self.cached: dict[int, tuple[RowCache, str]] = {}
        # Set by `reduction.install_inner_loops`: computes a reduce or dot that has no
        # bound value, by loops over its reduced or contracted dimensions.
        self.inner_loops: Callable[["Elemental", HloInstruction, Multi], list[Val]] | None \
            = None

    def with_width(self, width: int) -> "Elemental":
        """An emitter into the same function at another lane count, sharing the bound
        values (a loop's vector body and its scalar tail read the same row results)."""
        other = Elemental(self.fb, width, self.params, self.mathlib, self.constants)
        other.bound = self.bound
        other.tuples = self.tuples
        other.cached = self.cached
        other.inner_loops = self.inner_loops
        return other

    # --------------------------------------------------------------------- scopes
    def push(self) -> None:
        self._memo.append({})
        self.ix.push()

    def pop(self) -> None:
        self._memo.pop()
        self.ix.pop()

    def bind(self, inst: HloInstruction, value: Val) -> None:
        """Make `inst` read as `value` at every index (a per-row reduction result)."""
        self.bound[id(inst)] = value

    # ------------------------------------------------------------------ memory
    def load(self, ptr: str, dtype: np.dtype, offset: Lin) -> Value:
        """The element(s) of type `dtype` at `offset` (elements) from `ptr`."""
        fb, ix, w = self.fb, self.ix, self.width
        if is_complex(dtype):
            return self._load_complex(ptr, np.dtype(dtype), offset)
        storage = storage_elem(dtype)
        size = np.dtype(dtype).itemsize
        kind = ix.lane_kind(offset)
        if kind == "uniform":
            p = fb.op(f"getelementptr inbounds {storage}, ptr {ptr}, i64 {ix.scalar(offset)}",
                      "p")
            raw = fb.op(f"load {storage}, ptr {p}, align {size}", "ld")
            lanes = 1
        elif kind == "contiguous":
            p = fb.op(f"getelementptr inbounds {storage}, ptr {ptr}, i64 {ix.scalar(offset)}",
                      "p")
            raw = fb.op(f"load <{w} x {storage}>, ptr {p}, align {size}", "ld")
            lanes = w
        else:
            ptrs = fb.op(f"getelementptr inbounds {storage}, ptr {ptr}, <{w} x i64> "
                         f"{ix.vector(offset)}", "ps")
            raw = fb.op(f"call <{w} x {storage}> @llvm.masked.gather.v{w}"
                        f"{_suffix(storage)}.v{w}p0(<{w} x ptr> align {size} {ptrs}, "
                        f"<{w} x i1> splat (i1 true), <{w} x {storage}> poison)", "ld")
            lanes = w
        return self.from_storage(raw, dtype, lanes)

    def from_storage(self, raw: str, dtype: np.dtype, lanes: int) -> Val:
        dtype = np.dtype(dtype)
        storage, elem = storage_elem(dtype), llvm_elem(dtype)
        sty, ety = vec_type(storage, lanes), vec_type(elem, lanes)
        fb = self.fb
        if dtype == _PRED:
            return Val(fb.op(f"icmp ne {sty} {raw}, zeroinitializer", "b"), "i1", lanes, dtype)
        if dtype == np.float16:
            return Val(fb.op(f"fpext {sty} {raw} to {ety}", "h"), "float", lanes, dtype)
        if storage == "i16" and elem == "float":  # bfloat16: the top half of a float32
            wide = fb.op(f"zext {sty} {raw} to {vec_type('i32', lanes)}", "bf")
            wide = fb.op(f"shl {vec_type('i32', lanes)} {wide}, "
                         f"{'16' if lanes == 1 else 'splat (i32 16)'}", "bf")
            return Val(fb.op(f"bitcast {vec_type('i32', lanes)} {wide} to {ety}", "bf"),
                       "float", lanes, dtype)
        return Val(raw, elem, lanes, dtype)

    def to_storage(self, v: Val) -> tuple[str, str]:
        """(storage type, ref) of a value to store."""
        dtype, fb, w = v.dtype, self.fb, v.width
        storage = storage_elem(dtype)
        sty = vec_type(storage, w)
        if dtype == _PRED:
            return sty, fb.op(f"zext {v.typed} to {sty}", "sb")
        if dtype == np.float16:
            return sty, fb.op(f"fptrunc {v.typed} to {sty}", "sh")
        if storage == "i16" and v.elem == "float":
            bits = fb.op(f"bitcast {v.typed} to {vec_type('i32', w)}", "sbf")
            bits = fb.op(f"lshr {vec_type('i32', w)} {bits}, "
                         f"{'16' if w == 1 else 'splat (i32 16)'}", "sbf")
            return sty, fb.op(f"trunc {vec_type('i32', w)} {bits} to {sty}", "sbf")
        return sty, v.ref

    def _load_complex(self, ptr: str, dtype: np.dtype, offset: Lin) -> Cx:
        # Stored interleaved: consecutive lanes are one wide load, split by shuffles.
        part = part_dtype(dtype)
        fb, w = self.fb, self.width
        if self.ix.lane_kind(offset) != "contiguous":
            return Cx(self.load(ptr, part, offset * 2),  # type: ignore[arg-type]
                      self.load(ptr, part, offset * 2 + 1), dtype)  # type: ignore[arg-type]
        elem = llvm_elem(part)
        p = fb.op(f"getelementptr inbounds {elem}, ptr {ptr}, i64 "
                  f"{self.ix.scalar(offset * 2)}", "p")
        raw = fb.op(f"load <{2 * w} x {elem}>, ptr {p}, align {part.itemsize}", "ld")
        parts = []
        for first in (0, 1):
            lanes = ", ".join(f"i32 {2 * k + first}" for k in range(w))
            parts.append(Val(fb.op(f"shufflevector <{2 * w} x {elem}> {raw}, <{2 * w} x "
                                   f"{elem}> poison, <{w} x i32> <{lanes}>", "cx"),
                             elem, w, part))
        return Cx(parts[0], parts[1], dtype)

    def _store_complex(self, ptr: str, offset: Lin, v: Cx) -> None:
        fb, w = self.fb, self.width
        if self.ix.lane_kind(offset) != "contiguous":
            self.store(ptr, offset * 2, v.re)
            self.store(ptr, offset * 2 + 1, v.im)
            return
        re, im = self.arith.splat(v.re, w), self.arith.splat(v.im, w)
        lanes = ", ".join(f"i32 {k}, i32 {k + w}" for k in range(w))
        both = fb.op(f"shufflevector {re.typed}, {im.typed}, <{2 * w} x i32> <{lanes}>", "cx")
        p = fb.op(f"getelementptr inbounds {re.elem}, ptr {ptr}, i64 "
                  f"{self.ix.scalar(offset * 2)}", "p")
        fb.do(f"store <{2 * w} x {re.elem}> {both}, ptr {p}, align {re.dtype.itemsize}")

    def store(self, ptr: str, offset: Lin, v: Value) -> None:
        """Store `v` at `offset`: a vector store for contiguous lanes (a scalar is splatted
        first), a scalar store at a uniform offset, a scatter otherwise."""
        fb, ix, w = self.fb, self.ix, self.width
        if isinstance(v, Cx):
            self._store_complex(ptr, offset, v)
            return
        kind = ix.lane_kind(offset)
        if kind != "uniform" and v.width == 1:
            v = self.arith.splat(v, w)
        sty, ref = self.to_storage(v)
        storage = storage_elem(v.dtype)
        size = np.dtype(v.dtype).itemsize
        if kind == "scattered":
            ptrs = fb.op(f"getelementptr inbounds {storage}, ptr {ptr}, <{w} x i64> "
                         f"{ix.vector(offset)}", "ps")
            fb.do(f"call void @llvm.masked.scatter.v{w}{_suffix(storage)}.v{w}p0({sty} {ref}, "
                  f"<{w} x ptr> align {size} {ptrs}, <{w} x i1> splat (i1 true))")
            return
        p = fb.op(f"getelementptr inbounds {storage}, ptr {ptr}, i64 {ix.scalar(offset)}", "p")
        fb.do(f"store {sty} {ref}, ptr {p}, align {size}")

    def index_value(self, lin: Lin) -> Val:
        """An index component as an i64 value (scalar when uniform)."""
        if self.ix.lane_kind(lin) == "uniform":
            return Val(self.ix.scalar(lin), "i64", 1, I64)
        return Val(self.ix.vector(lin), "i64", self.width, I64)

    # ------------------------------------------------------------------- values
    def value(self, inst: HloInstruction, index: Index) -> Val:
        known = self._known(inst, index)
        if known is not None:
            return known
        if inst.opcode.is_elementwise and id(inst) not in self.cached:
            self._operands_first(inst, index)
        return self._value(inst, index)

    def _known(self, inst: HloInstruction, index: Index) -> Val | None:
        """The value of `inst` at `index` if it is bound or already computed."""
        if id(inst) in self.bound:
            return self.bound[id(inst)]
        key = (id(inst), Multi(()) if inst.shape.rank == 0 else index)
        for scope in reversed(self._memo):
            if key in scope:
                return scope[key]
        return None

    def _operands_first(self, inst: HloInstruction, index: Index) -> None:
        """Compute the elementwise operands below `inst` at `index` bottom-up, in the order
        the recursion of `value` would (operands left to right, each before its user), so
        a fused chain thousands of operations deep needs no deep recursion."""
        stack: list[tuple[HloInstruction, bool]] = [(inst, False)]
        while stack:
            node, expanded = stack.pop()
            if self._known(node, index) is not None:
                continue
            if expanded:
                if node is not inst:
                    self._value(node, index)
            elif node.opcode.is_elementwise and id(node) not in self.cached:
                stack.append((node, True))
                stack.extend((o, False) for o in reversed(node.operands))
            else:
                self._value(node, index)

    def _value(self, inst: HloInstruction, index: Index) -> Val:
        if id(inst) in self.bound:
            return self.bound[id(inst)]
        if inst.shape.rank == 0:
            index = Multi(())
        key = (id(inst), index)
        for scope in reversed(self._memo):
            if key in scope:
                return scope[key]
        cached = self.cached.get(id(inst))
        if cached is not None:
            cache, mode = cached
            at = cache.offset(self.ix.to_multi(index))
            if mode == "load":
                result = self.load(cache.buffer, _compute_dtype(inst.shape.dtype), at)
                result = Val(result.ref, result.elem, result.width,  # type: ignore[union-attr]
                             inst.shape.dtype)
            else:
                result = self._compute(inst, index)
                self.store(cache.buffer, at, Val(result.ref, result.elem,  # type: ignore
                                                 result.width, _compute_dtype(result.dtype)))
        else:
            result = self._compute(inst, index)
        self._memo[-1][key] = result
        return result

    def _compute(self, inst: HloInstruction, index: Index) -> Val:
        op = inst.opcode
        shape = inst.shape
        if op is _O.PARAMETER:
            ptr = self.params[inst.attr("number")]
            return self.load(ptr, shape.dtype, self.ix.offset(index, shape.dims, shape.layout))
        if op is _O.CONSTANT:
            return self._constant(inst, index)
        if op.is_elementwise:
            return self._elementwise(inst, index)
        handler = MOVEMENT.get(op)
        if handler is not None:
            return handler(self, inst, index)
        if op is _O.GET_TUPLE_ELEMENT and inst.operands[0].opcode in _INNER_LOOPS:
            return self.tuple_value(inst.operands[0], index)[inst.attr("index")]
        if op in _INNER_LOOPS and self.inner_loops is not None:
            return self.inner_loops(self, inst, self.ix.to_multi(index))[0]
        raise NotImplementedError(f"the cpu backend cannot compute {op.text} "
                                  f"({inst.name}) inside a fused loop yet")

    def tuple_value(self, inst: HloInstruction, index: Index) -> list[Val]:
        """The elements of a tuple-shaped fused value (a variadic reduce) at `index`."""
        if id(inst) in self.tuples:
            return self.tuples[id(inst)]
        key = ("tuple", id(inst), index)
        for scope in reversed(self._memo):
            if key in scope:
                return scope[key]  # type: ignore[return-value]
        if self.inner_loops is None or inst.opcode not in _INNER_LOOPS:
            raise NotImplementedError(f"the cpu backend cannot compute the tuple "
                                      f"{inst.opcode.text} ({inst.name}) in a fused loop yet")
        result = self.inner_loops(self, inst, self.ix.to_multi(index))
        self._memo[-1][key] = result  # type: ignore[assignment]
        return result

    def _constant(self, inst: HloInstruction, index: Index) -> Val:
        literal = np.asarray(inst.attr("literal"))
        dtype = inst.shape.dtype
        const = self.complex.const if is_complex(dtype) else self.arith.const
        if literal.size == 0:
            return const(0, dtype)
        if _is_splat(literal):
            return const(literal.reshape(-1)[0], dtype)
        name = self.constants.global_for(literal, dtype, inst.shape.layout)
        return self.load(name, dtype, self.ix.offset(index, inst.shape.dims,
                                                     inst.shape.layout))

    def _elementwise(self, inst: HloInstruction, index: Index) -> Value:
        return self.apply_elementwise(inst, [self.value(o, index) for o in inst.operands])

    def select(self, pred: Val, a: Value, b: Value) -> Value:
        if isinstance(a, Cx) or isinstance(b, Cx):
            return self.complex.select(pred, a, b)  # type: ignore[arg-type]
        return self.arith.select(pred, a, b)

    def apply_elementwise(self, inst: HloInstruction, args: list[Value]) -> Value:
        """Elementwise `inst` applied to operand values `args`."""
        op, arith = inst.opcode, self.arith
        if is_complex(inst.shape.dtype) or any(isinstance(a, Cx) for a in args):
            return self._complex_elementwise(inst, args)
        if op is _O.REAL:
            return args[0]
        if op is _O.IMAG:
            return arith.const(0, inst.shape.dtype, args[0].width)
        if op is _O.CONVERT:
            return arith.convert(args[0], inst.shape.dtype)
        if op is _O.COMPARE:
            return arith.compare(inst.attr("direction"), args[0], args[1],
                                 inst.attr("type") == "TOTALORDER")
        if op is _O.SELECT:
            return arith.select(*args)
        if op is _O.CLAMP:
            return arith.clamp(*args)
        if op is _O.REDUCE_PRECISION:
            return _reduce_precision(arith, inst, args[0])
        if op in MATH_OPCODES and not (op is _O.POWER and inst.shape.dtype.kind in "iu"):
            return self.mathlib.apply(arith, op, args)
        if len(args) == 1:
            return arith.unary(op, args[0])
        if len(args) == 2:
            return arith.binary(op, args[0], args[1])
        raise NotImplementedError(f"the cpu backend has no {op.text} ({inst.name}) yet")


    def _complex_elementwise(self, inst: HloInstruction, args: list[Value]) -> Value:
        op, cx = inst.opcode, self.complex
        dtype = inst.shape.dtype
        if op is _O.COMPLEX:
            part = part_dtype(dtype)
            re, im = self.arith.match(self.arith.convert(args[0], part),  # type: ignore
                                      self.arith.convert(args[1], part))  # type: ignore
            return Cx(re, im, dtype)
        if op is _O.CONVERT:
            x = args[0]
            if is_complex(dtype):
                return cx.lift(x, dtype)
            return self.arith.convert(x.re if isinstance(x, Cx) else x, dtype)
        if op is _O.SELECT:
            return cx.select(*args)  # type: ignore[arg-type]
        if op is _O.COMPARE:
            return cx.compare(inst.attr("direction"), *args)  # type: ignore[arg-type]
        if op is _O.CLAMP:
            low, x, high = args
            return cx.binary(_O.MINIMUM, cx.binary(_O.MAXIMUM, x, low), high)  # type: ignore
        if len(args) == 1:
            return cx.unary(op, args[0])  # type: ignore[arg-type]
        return cx.binary(op, *args)  # type: ignore[arg-type]


class _LlvmBits:
    """`BitOps` of the reduce-precision algorithm on unsigned integer `Val`s."""

    def __init__(self, arith: Arith, unsigned: np.dtype, width: int) -> None:
        self.arith, self.unsigned, self.width = arith, unsigned, width

    def const(self, value: int) -> Val:
        return self.arith.const(value % (1 << (8 * self.unsigned.itemsize)), self.unsigned,
                                self.width)

    def add(self, a: Val, b: Val) -> Val:
        return self.arith.binary(_O.ADD, a, b)

    def bit_and(self, a: Val, b: Val) -> Val:
        return self.arith.binary(_O.AND, a, b)

    def bit_or(self, a: Val, b: Val) -> Val:
        return self.arith.binary(_O.OR, a, b)

    def shift_right(self, a: Val, b: Val) -> Val:
        return self.arith.binary(_O.SHIFT_RIGHT_LOGICAL, a, b)

    def greater(self, a: Val, b: Val) -> Val:
        return self.arith.compare("GT", a, b)

    def less_equal(self, a: Val, b: Val) -> Val:
        return self.arith.compare("LE", a, b)

    def where(self, pred: Val, a: Val, b: Val) -> Val:
        return self.arith.select(pred, a, b)


def _reduce_precision(arith: Arith, inst: HloInstruction, x: Val) -> Val:
    """XLA's reduce-precision on the bits of `x` (the algorithm the evaluator runs)."""
    dtype = inst.shape.dtype
    unsigned = np.dtype(f"uint{8 * dtype.itemsize}")
    ops = _LlvmBits(arith, unsigned, x.width)
    bits = arith.bitcast(x, unsigned)
    rounded = reduce_precision_bits(bits, dtype, inst.attr("exponent_bits"),
                                    inst.attr("mantissa_bits"), ops)
    nan = nan_result_bits(bits, dtype, ops)
    is_nan = arith.compare("NE", x, x)
    return arith.bitcast(arith.select(is_nan, nan, rounded), dtype)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype whose storage is the compute type (float16/bfloat16 live as float32)."""
    return np.dtype(np.float32) if llvm_elem(dtype) == "float" else np.dtype(dtype)


def _suffix(storage: str) -> str:
    return {"float": "f32", "double": "f64", "half": "f16"}.get(storage, storage)


def _is_splat(literal: np.ndarray) -> bool:
    """Every element has the same bits (so NaN and -0.0 splats count, 0.0 and -0.0 differ)."""
    flat = np.ascontiguousarray(literal).reshape(-1)
    raw = flat.view(np.uint8).reshape(flat.size, -1)
    return bool((raw == raw[0]).all())
