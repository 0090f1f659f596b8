"""Elementwise arithmetic on `Val`s with XLA's CPU semantics (the CPU backend's counterpart of
XLA's ElementalIrEmitter for the non-transcendental opcodes).

Every operation works at any lane count: a scalar operand meeting a vector one is splatted.
The semantics follow `jaxlite.xla.evaluator_elementwise` (the judge), in particular: integer
division truncates (x / 0 is -1, INT_MIN / -1 is INT_MIN), remainders take the dividend's
sign (x % 0 is x), shifts by the bit width or more saturate, float to integer conversion
truncates and saturates with NaN giving 0, maximum/minimum propagate NaN and order -0 below
+0, and float16/bfloat16 values are computed in float32 and rounded after every operation.
"""
from __future__ import annotations

import numpy as np

from jaxlite.backends.cpu.codegen.llvm_text import (FunctionBuilder, Val, elem_bits, is_float,
                                                    is_low_float, is_signed, literal,
                                                    llvm_elem)
from jaxlite.core import dtypes
from jaxlite.xla.opcodes import Opcode

__all__ = ["Arith", "intrinsic_suffix"]

_O = Opcode
_BF16 = np.dtype(dtypes.bfloat16)
_PRED = np.dtype(np.bool_)
# Float operations LLVM may fuse into a multiply-add (a * b + c as one rounding), as XLA:CPU
# always allows: it is one instruction instead of two, and never less accurate.
_CONTRACTED = frozenset({_O.ADD, _O.SUBTRACT, _O.MULTIPLY})
_FCMP = {"EQ": "oeq", "NE": "une", "LT": "olt", "LE": "ole", "GT": "ogt", "GE": "oge"}
_ICMP_SIGNED = {"EQ": "eq", "NE": "ne", "LT": "slt", "LE": "sle", "GT": "sgt", "GE": "sge"}
_ICMP_UNSIGNED = {"EQ": "eq", "NE": "ne", "LT": "ult", "LE": "ule", "GT": "ugt", "GE": "uge"}


def intrinsic_suffix(elem: str, width: int) -> str:
    """The type suffix of an overloaded intrinsic: f32, v16f32, i64, ..."""
    base = {"float": "f32", "double": "f64", "half": "f16"}.get(elem, elem)
    return base if width == 1 else f"v{width}{base}"


class Arith:
    """Emits elementwise operations into `fb`."""

    def __init__(self, fb: FunctionBuilder) -> None:
        self.fb = fb

    # -------------------------------------------------------------------- basics
    def const(self, value: object, dtype: np.dtype, width: int = 1) -> Val:
        dtype = np.dtype(dtype)
        elem = llvm_elem(dtype)
        lit = literal(value, dtype)
        ref = lit if width == 1 else f"splat ({elem} {lit})"
        return Val(ref, elem, width, dtype)

    def splat(self, v: Val, width: int) -> Val:
        if v.width == width:
            return v
        assert v.width == 1, (v, width)
        if v.is_literal:
            return Val(f"splat ({v.elem} {v.ref})", v.elem, width, v.dtype)
        fb = self.fb
        one = fb.op(f"insertelement <{width} x {v.elem}> poison, {v.typed}, i64 0", "sp")
        ref = fb.op(f"shufflevector <{width} x {v.elem}> {one}, <{width} x {v.elem}> poison, "
                    f"<{width} x i32> zeroinitializer", "sp")
        return Val(ref, v.elem, width, v.dtype)

    def match(self, *vals: Val) -> list[Val]:
        width = max(v.width for v in vals)
        return [self.splat(v, width) for v in vals]

    def emit(self, text: str, like: Val, dtype: np.dtype | None = None,
             elem: str | None = None) -> Val:
        """`text` computed as a value shaped like `like` (its width)."""
        dtype = np.dtype(dtype if dtype is not None else like.dtype)
        elem = elem or llvm_elem(dtype)
        return Val(self.fb.op(text), elem, like.width, dtype)

    def call(self, name: str, args: list[Val], like: Val | None = None,
             ret_elem: str | None = None) -> Val:
        """Call an overloaded intrinsic `llvm.<name>.<suffix>` on `args`."""
        like = like or args[0]
        elem = ret_elem or like.elem
        suffix = intrinsic_suffix(args[0].elem, args[0].width)
        text = ", ".join(a.typed for a in args)
        ty = Val("", elem, like.width, like.dtype).ty
        return Val(self.fb.op(f"call {ty} @llvm.{name}.{suffix}({text})"), elem, like.width,
                   like.dtype)

    def round_low(self, v: Val) -> Val:
        """Round a float32 value to its float16/bfloat16 dtype and back (exact otherwise)."""
        if not is_low_float(v.dtype):
            return v
        fb, w = self.fb, v.width
        if v.dtype == np.float16:
            half = fb.op(f"fptrunc {v.typed} to {Val('', 'half', w, v.dtype).ty}")
            return Val(fb.op(f"fpext {Val('', 'half', w, v.dtype).ty} {half} to {v.ty}"),
                       "float", w, v.dtype)
        ity = Val("", "i32", w, v.dtype).ty
        bits = fb.op(f"bitcast {v.typed} to {ity}")
        lsb = fb.op(f"lshr {ity} {bits}, {self._s(16, 'i32', w)}")
        lsb = fb.op(f"and {ity} {lsb}, {self._s(1, 'i32', w)}")
        up = fb.op(f"add {ity} {bits}, {self._s(0x7FFF, 'i32', w)}")
        up = fb.op(f"add {ity} {up}, {lsb}")
        up = fb.op(f"and {ity} {up}, {self._s(-65536, 'i32', w)}")
        quiet = fb.op(f"or {ity} {bits}, {self._s(0x400000, 'i32', w)}")
        quiet = fb.op(f"and {ity} {quiet}, {self._s(-65536, 'i32', w)}")
        nan = fb.op(f"fcmp uno {v.typed}, {v.ref}")
        out = fb.op(f"select {Val('', 'i1', w, _PRED).ty} {nan}, {ity} {quiet}, {ity} {up}")
        return Val(fb.op(f"bitcast {ity} {out} to {v.ty}"), "float", w, v.dtype)

    @staticmethod
    def _s(value: int, elem: str, width: int) -> str:
        return str(value) if width == 1 else f"splat ({elem} {value})"

    def lit(self, value: object, like: Val) -> str:
        """A literal of `like`'s type (splatted when `like` is a vector)."""
        return self.const(value, like.dtype, like.width).ref

    # ----------------------------------------------------------------- operations
    def binary(self, opcode: Opcode, a: Val, b: Val) -> Val:
        a, b = self.match(a, b)
        if a.dtype == _PRED:
            return self._pred_binary(opcode, a, b)
        if is_float(a.dtype):
            return self.round_low(self._float_binary(opcode, a, b))
        return self._int_binary(opcode, a, b)

    def _float_binary(self, opcode: Opcode, a: Val, b: Val) -> Val:
        simple = {_O.ADD: "fadd", _O.SUBTRACT: "fsub", _O.MULTIPLY: "fmul",
                  _O.DIVIDE: "fdiv", _O.REMAINDER: "frem"}
        if opcode in simple:
            flags = " contract" if opcode in _CONTRACTED else ""
            return self.emit(f"{simple[opcode]}{flags} {a.typed}, {b.ref}", a)
        if opcode in (_O.MAXIMUM, _O.MINIMUM):
            return self.call("maximum" if opcode is _O.MAXIMUM else "minimum", [a, b])
        if opcode is _O.POWER:
            return self.call("pow", [a, b])
        if opcode is _O.NEXT_AFTER:
            return self._next_after(a, b)
        raise NotImplementedError(f"the cpu backend has no {opcode.text} for "
                                  f"{a.dtype.name} yet")

    def _int_binary(self, opcode: Opcode, a: Val, b: Val) -> Val:
        signed = is_signed(a.dtype)
        simple = {_O.ADD: "add", _O.SUBTRACT: "sub", _O.MULTIPLY: "mul", _O.AND: "and",
                  _O.OR: "or", _O.XOR: "xor"}
        if opcode in simple:
            return self.emit(f"{simple[opcode]} {a.typed}, {b.ref}", a)
        if opcode in (_O.MAXIMUM, _O.MINIMUM):
            name = ("s" if signed else "u") + ("max" if opcode is _O.MAXIMUM else "min")
            return self.call(name, [a, b])
        if opcode in (_O.DIVIDE, _O.REMAINDER):
            return self._int_divide(opcode, a, b, signed)
        if opcode in (_O.SHIFT_LEFT, _O.SHIFT_RIGHT_LOGICAL, _O.SHIFT_RIGHT_ARITHMETIC):
            return self._shift(opcode, a, b)
        if opcode is _O.POWER:
            return self._int_power(a, b, signed)
        raise NotImplementedError(f"the cpu backend has no {opcode.text} for "
                                  f"{a.dtype.name} yet")

    def _pred_binary(self, opcode: Opcode, a: Val, b: Val) -> Val:
        ops = {_O.AND: "and", _O.OR: "or", _O.XOR: "xor", _O.MAXIMUM: "or", _O.MINIMUM: "and",
               _O.MULTIPLY: "and", _O.ADD: "or", _O.SUBTRACT: "xor"}
        if opcode not in ops:
            raise NotImplementedError(f"the cpu backend has no {opcode.text} for pred")
        return self.emit(f"{ops[opcode]} {a.typed}, {b.ref}", a)

    def _cmp(self, pred: str, a: Val, b: Val, fp: bool = False) -> str:
        return self.fb.op(f"{'fcmp' if fp else 'icmp'} {pred} {a.typed}, {b}")

    def _sel(self, cond: str, a: Val, b: str) -> Val:
        cty = Val("", "i1", a.width, _PRED).ty
        return self.emit(f"select {cty} {cond}, {a.typed}, {a.ty} {b}", a)

    def _int_divide(self, opcode: Opcode, a: Val, b: Val, signed: bool) -> Val:
        zero = self._cmp("eq", b, self.lit(0, b))
        special = zero
        if signed:
            minimum = np.iinfo(a.dtype).min
            at_min = self._cmp("eq", a, self.lit(minimum, a))
            minus_one = self._cmp("eq", b, self.lit(-1, b))
            both = self.fb.op(f"and {Val('', 'i1', a.width, _PRED).ty} {at_min}, {minus_one}")
            special = self.fb.op(f"or {Val('', 'i1', a.width, _PRED).ty} {zero}, {both}")
        safe = self._sel(special, Val(self.lit(1, b), b.elem, b.width, b.dtype), b.ref)
        if opcode is _O.DIVIDE:
            q = self.emit(f"{'sdiv' if signed else 'udiv'} {a.typed}, {safe.ref}", a)
            return self._sel(zero, Val(self.lit(-1, a), a.elem, a.width, a.dtype), q.ref)
        r = self.emit(f"{'srem' if signed else 'urem'} {a.typed}, {safe.ref}", a)
        return self._sel(zero, a, r.ref)

    def _shift(self, opcode: Opcode, a: Val, b: Val) -> Val:
        bits = elem_bits(a.elem)
        too_far = self._cmp("uge", b, self.lit(bits, b))
        amount = self._sel(too_far, Val(self.lit(bits - 1, b), b.elem, b.width, b.dtype),
                           b.ref)
        op = {_O.SHIFT_LEFT: "shl", _O.SHIFT_RIGHT_LOGICAL: "lshr",
              _O.SHIFT_RIGHT_ARITHMETIC: "ashr"}[opcode]
        shifted = self.emit(f"{op} {a.typed}, {amount.ref}", a)
        if opcode is _O.SHIFT_RIGHT_ARITHMETIC:
            return shifted
        return self._sel(too_far, Val(self.lit(0, a), a.elem, a.width, a.dtype), shifted.ref)

    def _int_power(self, a: Val, b: Val, signed: bool) -> Val:
        # Square and multiply over every bit of the exponent, unrolled: no branches, so it
        # vectorizes; negative exponents give 0 but for the bases 1 and -1.
        bits = elem_bits(a.elem)
        negative = self._cmp("slt", b, self.lit(0, b)) if signed else None
        exponent = self._sel(negative, Val(self.lit(0, b), b.elem, b.width, b.dtype),
                             b.ref) if negative else b
        result = Val(self.lit(1, a), a.elem, a.width, a.dtype)
        base = a
        for i in range(bits - (1 if signed else 0)):
            bit = self.emit(f"and {exponent.typed}, {self.lit(1 << i, b)}", b)
            on = self._cmp("ne", bit, self.lit(0, b))
            product = self.emit(f"mul {result.typed}, {base.ref}", a)
            result = self._sel(on, product, result.ref)
            if i + 1 < bits:
                base = self.emit(f"mul {base.typed}, {base.ref}", a)
        if negative is None:
            return result
        one = self._cmp("eq", a, self.lit(1, a))
        minus_one = self._cmp("eq", a, self.lit(-1, a))
        odd_bit = self.emit(f"and {b.typed}, {self.lit(1, b)}", b)
        odd = self._cmp("ne", odd_bit, self.lit(0, b))
        sign = self._sel(odd, Val(self.lit(-1, a), a.elem, a.width, a.dtype), self.lit(1, a))
        small = self._sel(minus_one, sign, self.lit(0, a))
        small = self._sel(one, Val(self.lit(1, a), a.elem, a.width, a.dtype), small.ref)
        return self._sel(negative, small, result.ref)

    def _next_after(self, a: Val, b: Val) -> Val:
        # Decided on the bit patterns of the dtype (float16 and bfloat16 are held as float32
        # here, and a step of float32 would round away), not by float comparisons: where the
        # runtime flushes subnormals, a comparison would see a subnormal x as zero.
        fb, w = self.fb, a.width
        ia, ib = self._to_bits(a), self._to_bits(b)
        ibits, idt, ity = ia.elem, ia.dtype, ia.ty
        bty = Val("", "i1", w, _PRED).ty
        magnitude = self.lit(np.iinfo(idt).max, ia)
        abs_a = Val(fb.op(f"and {ia.typed}, {magnitude}"), ibits, w, idt)
        abs_b = fb.op(f"and {ib.typed}, {magnitude}")
        signs_differ = fb.op(f"icmp slt {ity} {fb.op(f'xor {ia.typed}, {ib.ref}')}, "
                             f"{self.lit(0, ia)}")
        shrinks = fb.op(f"or {bty} {self._cmp('ugt', abs_a, abs_b)}, {signs_differ}")
        down = self.emit(f"sub {ia.typed}, {self.lit(1, ia)}", ia)
        up = self.emit(f"add {ia.typed}, {self.lit(1, ia)}", ia)
        stepped = self._sel(shrinks, down, up.ref)
        sign = fb.op(f"and {ity} {ib.ref}, {self.lit(np.iinfo(idt).min, ia)}")
        smallest = fb.op(f"or {ity} {sign}, {self.lit(1, ia)}")
        a_zero = self._cmp("eq", abs_a, self.lit(0, ia))
        out = self._sel(a_zero, Val(smallest, ibits, w, idt), stepped.ref)
        result = self.bitcast(out, a.dtype)
        both_zero = fb.op(f"and {bty} {a_zero}, {self._cmp('eq', Val(abs_b, ibits, w, idt), self.lit(0, ia))}")
        equal = fb.op(f"or {bty} {self._cmp('eq', ia, ib.ref)}, {both_zero}")
        result = self._sel(equal, b, result.ref)
        nan = self._cmp("uno", a, b.ref, fp=True)
        return self._sel(nan, Val(self.lit(np.nan, a), a.elem, w, a.dtype), result.ref)

    # ------------------------------------------------------------------- unary
    def unary(self, opcode: Opcode, x: Val) -> Val:
        fb = self.fb
        if x.dtype == _PRED:
            if opcode is _O.NOT:
                return self.emit(f"xor {x.typed}, {self.lit(True, x)}", x)
            if opcode in (_O.ABS, _O.SIGN):
                return x
            raise NotImplementedError(f"the cpu backend has no {opcode.text} for pred")
        if not is_float(x.dtype):
            if opcode is _O.NEGATE:
                return self.emit(f"sub {x.ty} {self.lit(0, x)}, {x.ref}", x)
            if opcode is _O.NOT:
                return self.emit(f"xor {x.typed}, {self.lit(-1, x)}", x)
            if opcode is _O.ABS:
                return x if not is_signed(x.dtype) else self.call(
                    "abs", [x, Val("false", "i1", 1, _PRED)])
            if opcode is _O.POPCNT:
                return self.call("ctpop", [x])
            if opcode is _O.SIGN:
                if not is_signed(x.dtype):
                    nonzero = self._cmp("ne", x, self.lit(0, x))
                    return self.emit(f"zext {Val('', 'i1', x.width, _PRED).ty} {nonzero} "
                                     f"to {x.ty}", x)
                low = self.call("smax", [x, Val(self.lit(-1, x), x.elem, x.width, x.dtype)])
                return self.call("smin", [low, Val(self.lit(1, x), x.elem, x.width, x.dtype)])
            raise NotImplementedError(f"the cpu backend has no {opcode.text} for "
                                      f"{x.dtype.name} yet")
        simple = {_O.FLOOR: "floor", _O.CEIL: "ceil", _O.ROUND_EVEN: "roundeven",
                  _O.ROUND_AFZ: "round", _O.SQRT: "sqrt", _O.ABS: "fabs"}
        if opcode is _O.NEGATE:
            return self.emit(f"fneg {x.typed}", x)
        if opcode in simple:
            return self.round_low(self.call(simple[opcode], [x]))
        if opcode is _O.RSQRT:
            root = self.call("sqrt", [x])
            return self.round_low(self.emit(f"fdiv {x.ty} {self.lit(1.0, x)}, {root.ref}", x))
        if opcode is _O.SIGN:
            # +-0 for zeros (and for subnormals, which compare equal to zero where the
            # runtime flushes them, as XLA's sign gives); NaN stays NaN.
            zero = self._cmp("oeq", x, self.lit(0.0, x), fp=True)
            unit = self._sel(zero, Val(self.lit(0.0, x), x.elem, x.width, x.dtype),
                             self.lit(1.0, x))
            signed_unit = self.call("copysign", [unit, x])
            nan = self._cmp("uno", x, x.ref, fp=True)
            return self._sel(nan, x, signed_unit.ref)
        if opcode is _O.IS_FINITE:
            magnitude = self.call("fabs", [x])
            out = fb.op(f"fcmp olt {magnitude.typed}, {self.lit(np.inf, x)}")
            return Val(out, "i1", x.width, _PRED)
        raise NotImplementedError(opcode.text)

    # ------------------------------------------------------------ compare, select
    def compare(self, direction: str, a: Val, b: Val, total_order: bool = False) -> Val:
        a, b = self.match(a, b)
        if is_float(a.dtype):
            if total_order:
                a, b = self._total_order_key(a), self._total_order_key(b)
                return Val(self._cmp(_ICMP_SIGNED[direction], a, b.ref), "i1", a.width, _PRED)
            return Val(self._cmp(_FCMP[direction], a, b.ref, fp=True), "i1", a.width, _PRED)
        table = _ICMP_SIGNED if is_signed(a.dtype) else _ICMP_UNSIGNED
        return Val(self._cmp(table[direction], a, b.ref), "i1", a.width, _PRED)

    def _total_order_key(self, x: Val) -> Val:
        if is_low_float(x.dtype):
            x = Val(x.ref, x.elem, x.width, np.dtype(np.float32))
        bits = elem_bits(x.elem)
        idt = np.dtype(f"int{bits}")
        ity = Val("", f"i{bits}", x.width, idt)
        raw = Val(self.fb.op(f"bitcast {x.typed} to {ity.ty}"), f"i{bits}", x.width, idt)
        magnitude = self.emit(f"and {raw.typed}, {self.lit(np.iinfo(idt).max, raw)}", raw)
        flipped = self.emit(f"xor {magnitude.typed}, {self.lit(-1, raw)}", raw)
        negative = self._cmp("slt", raw, self.lit(0, raw))
        return self._sel(negative, flipped, raw.ref)

    def select(self, pred: Val, a: Val, b: Val) -> Val:
        a, b = self.match(a, b)
        if pred.width > a.width:
            a, b = self.splat(a, pred.width), self.splat(b, pred.width)
        cty = Val("", "i1", pred.width, _PRED).ty
        return self.emit(f"select {cty} {pred.ref}, {a.typed}, {b.typed}", a)

    def clamp(self, low: Val, x: Val, high: Val) -> Val:
        return self.binary(_O.MINIMUM, self.binary(_O.MAXIMUM, x, low), high)

    # ------------------------------------------------------------------- convert
    def convert(self, x: Val, to: np.dtype) -> Val:
        to = np.dtype(to)
        src = x.dtype
        out_elem = llvm_elem(to)
        out_ty = Val("", out_elem, x.width, to).ty
        if to == src:
            return x
        if to == _PRED:
            zero = self.lit(0.0 if is_float(src) else 0, x)
            return Val(self._cmp("une" if is_float(src) else "ne", x, zero, fp=is_float(src)),
                       "i1", x.width, _PRED)
        if src == _PRED:
            op = "uitofp" if is_float(to) else "zext"
            v = self.emit(f"{op} {x.typed} to {out_ty}", x, to)
            return v
        if is_float(src) and is_float(to):
            if x.elem == out_elem:
                return self.round_low(Val(x.ref, x.elem, x.width, to))
            op = "fpext" if elem_bits(out_elem) > elem_bits(x.elem) else "fptrunc"
            return self.round_low(self.emit(f"{op} {x.typed} to {out_ty}", x, to))
        if is_float(src):
            name = "fptosi.sat" if is_signed(to) else "fptoui.sat"
            suffix = intrinsic_suffix(out_elem, x.width) + "." + intrinsic_suffix(x.elem,
                                                                                   x.width)
            return Val(self.fb.op(f"call {out_ty} @llvm.{name}.{suffix}({x.typed})"),
                       out_elem, x.width, to)
        if is_float(to):
            op = "sitofp" if is_signed(src) else "uitofp"
            if to == _BF16 or to == np.float16:
                # One rounding, from the integer to the narrow type via double (exact for
                # every integer up to 2**53, and narrow types hold far fewer bits).
                wide = self.emit(f"{op} {x.typed} to {Val('', 'double', x.width, to).ty}", x,
                                 np.float64, "double")
                return self.convert(wide, to)
            return self.emit(f"{op} {x.typed} to {out_ty}", x, to)
        a_bits, b_bits = elem_bits(x.elem), elem_bits(out_elem)
        if a_bits == b_bits:
            return Val(x.ref, out_elem, x.width, to)
        if b_bits < a_bits:
            return self.emit(f"trunc {x.typed} to {out_ty}", x, to)
        return self.emit(f"{'sext' if is_signed(src) else 'zext'} {x.typed} to {out_ty}", x, to)

    def bitcast(self, x: Val, to: np.dtype) -> Val:
        """Reinterpret the bits of a value as another type of the same size."""
        to = np.dtype(to)
        src_bits = _storage_bits(x.dtype)
        if src_bits != to.itemsize * 8:
            raise NotImplementedError("bitcast-convert between element sizes")
        raw = self._to_bits(x)
        ibits = f"i{src_bits}"
        if to == _PRED:
            return Val(self.fb.op(f"icmp ne {raw.typed}, {self.lit(0, raw)}"), "i1", x.width,
                       to)
        if to.kind in "iu":
            return Val(raw.ref, ibits, x.width, to)
        if to == np.float16:
            half = self.fb.op(f"bitcast {raw.typed} to {Val('', 'half', x.width, to).ty}")
            return self.emit(f"fpext {Val('', 'half', x.width, to).ty} {half} to "
                             f"{Val('', 'float', x.width, to).ty}", x, to)
        if to == _BF16:
            wide = self.emit(f"zext {raw.typed} to {Val('', 'i32', x.width, to).ty}", x,
                             np.int32, "i32")
            shifted = self.emit(f"shl {wide.typed}, {self.lit(16, wide)}", wide)
            return self.emit(f"bitcast {shifted.typed} to {Val('', 'float', x.width, to).ty}",
                             x, to, "float")
        return self.emit(f"bitcast {raw.typed} to {Val('', llvm_elem(to), x.width, to).ty}",
                         x, to)

    def _to_bits(self, x: Val) -> Val:
        bits = _storage_bits(x.dtype)
        idt = np.dtype(f"int{bits}")
        ity = Val("", f"i{bits}", x.width, idt).ty
        if x.dtype == _PRED:
            return self.emit(f"zext {x.typed} to {ity}", x, idt)
        if x.dtype == np.float16:
            half = self.fb.op(f"fptrunc {x.typed} to {Val('', 'half', x.width, idt).ty}")
            return self.emit(f"bitcast {Val('', 'half', x.width, idt).ty} {half} to {ity}", x,
                             idt)
        if x.dtype == _BF16:
            wide = self.fb.op(f"bitcast {x.typed} to {Val('', 'i32', x.width, idt).ty}")
            top = self.fb.op(f"lshr {Val('', 'i32', x.width, idt).ty} {wide}, "
                             f"{self._s(16, 'i32', x.width)}")
            return self.emit(f"trunc {Val('', 'i32', x.width, idt).ty} {top} to {ity}", x, idt)
        if is_float(x.dtype):
            return self.emit(f"bitcast {x.typed} to {ity}", x, idt)
        return Val(x.ref, x.elem, x.width, idt)


def _storage_bits(dtype: np.dtype) -> int:
    return np.dtype(dtype).itemsize * 8
