"""Transcendental elementwise opcodes: the vector math library first, libm as the fallback.

A function the vector math library (`jaxlite.backends.cpu.vecmath`) provides is called on
whole vectors (its definition is added to the module once, and inlined). Until it provides
one, the opcode goes to the C library one lane at a time, as LLVM's own intrinsics would do
without a vector library: correct, and slow (erf, erfc and lgamma then in float64, rounded,
as the evaluator computes them). float16/bfloat16 values are computed in float32 and
rounded.
"""
from __future__ import annotations

import numpy as np

from jaxlite.backends.cpu import vecmath
from jaxlite.backends.cpu.codegen.arith import Arith
from jaxlite.backends.cpu.codegen.llvm_text import Val, vec_type
from jaxlite.xla.opcodes import Opcode

__all__ = ["MathLib", "MATH_OPCODES"]

_O = Opcode

# opcode -> (vector math library name, libm base name (float: + "f"))
_FUNCTIONS = {
    _O.EXP: ("exp", "exp"), _O.EXP2: ("exp2", "exp2"), _O.EXPM1: ("expm1", "expm1"),
    _O.LOG: ("log", "log"), _O.LOG1P: ("log1p", "log1p"), _O.TANH: ("tanh", "tanh"),
    _O.LOGISTIC: ("logistic", None), _O.SIN: ("sin", "sin"), _O.COS: ("cos", "cos"),
    _O.TAN: ("tan", "tan"), _O.ATAN: ("atan", "atan"), _O.ASIN: ("asin", "asin"),
    _O.ACOS: ("acos", "acos"), _O.SINH: ("sinh", "sinh"), _O.COSH: ("cosh", "cosh"),
    _O.ASINH: ("asinh", "asinh"), _O.ACOSH: ("acosh", "acosh"), _O.ATANH: ("atanh", "atanh"),
    _O.CBRT: ("cbrt", "cbrt"), _O.ATAN2: ("atan2", "atan2"), _O.POWER: ("pow", "pow"),
    _O.ERF_INV: ("erf_inv", None), _O.DIGAMMA: ("digamma", None),
}
# Without the vector math library's version: computed in float64 (the evaluator's reference
# precision) by the C library, and rounded.
_IN_DOUBLE = {_O.ERF: "erf", _O.ERFC: "erfc", _O.LGAMMA: "lgamma"}
MATH_OPCODES = frozenset(_FUNCTIONS) | frozenset(_IN_DOUBLE)


class MathLib:
    """What a module needs for its transcendental calls: vector math definitions and libm
    declarations, collected while kernels are emitted."""

    def __init__(self) -> None:
        self.vector_functions: dict[str, tuple[str, np.dtype, int]] = {}
        self.declarations: dict[str, str] = {}

    def apply(self, arith: Arith, opcode: Opcode, args: list[Val]) -> Val:
        """The value of transcendental `opcode` on `args` (same dtype, matched widths)."""
        args = arith.match(*args)
        x = args[0]
        if opcode in _IN_DOUBLE and _IN_DOUBLE[opcode] not in vecmath.FUNCTIONS:
            wide = [arith.convert(a, np.dtype(np.float64)) for a in args]
            out = self.libm_real(arith, _IN_DOUBLE[opcode], wide)
            return arith.convert(out, x.dtype)
        name, libm = _FUNCTIONS.get(opcode) or (_IN_DOUBLE[opcode], None)
        compute = np.dtype(np.float64) if x.elem == "double" else np.dtype(np.float32)
        inputs = [Val(a.ref, a.elem, a.width, compute) for a in args]
        if name in vecmath.FUNCTIONS:
            out = self._vector(arith, name, inputs)
        elif opcode is _O.LOGISTIC:
            out = self._logistic(arith, inputs[0])
        elif libm is not None:
            out = self.libm_real(arith, libm, inputs)
        else:
            raise NotImplementedError(f"the cpu backend has no {opcode.text} yet (the vector "
                                      "math library does not provide it)")
        return arith.round_low(Val(out.ref, out.elem, out.width, x.dtype))

    def _vector(self, arith: Arith, name: str, args: list[Val]) -> Val:
        x = args[0]
        fname = vecmath.function_name(name, x.dtype, x.width)
        self.vector_functions[fname] = (name, x.dtype, x.width)
        text = ", ".join(a.typed for a in args)
        return Val(arith.fb.op(f"call {x.ty} @{fname}({text})", "m"), x.elem, x.width, x.dtype)

    def _logistic(self, arith: Arith, x: Val) -> Val:
        negated = arith.unary(_O.NEGATE, x)
        exp = self.apply(arith, _O.EXP, [negated])
        one = arith.const(1.0, x.dtype, x.width)
        denominator = arith.binary(_O.ADD, one, exp)
        return arith.binary(_O.DIVIDE, one, denominator)

    def libm_real(self, arith: Arith, base: str, args: list[Val]) -> Val:
        """The C library's real function `base` ("f" added for float), one call per lane."""
        x = args[0]
        elem = x.elem
        fname = base + ("f" if elem == "float" else "")
        params = ", ".join([elem] * len(args))
        self.declarations[fname] = f"declare {elem} @{fname}({params}) nounwind readnone"
        fb = arith.fb
        if x.width == 1:
            text = ", ".join(a.typed for a in args)
            return Val(fb.op(f"call {elem} @{fname}({text})", "m"), elem, 1, x.dtype)
        ty = vec_type(elem, x.width)
        out = "poison"
        for lane in range(x.width):
            lanes = [fb.op(f"extractelement {a.typed}, i64 {lane}", "e") for a in args]
            text = ", ".join(f"{elem} {v}" for v in lanes)
            r = fb.op(f"call {elem} @{fname}({text})", "m")
            out = fb.op(f"insertelement {ty} {out}, {elem} {r}, i64 {lane}", "v")
        return Val(out, elem, x.width, x.dtype)

    def definitions(self) -> str:
        """The module text of the collected vector functions and declarations."""
        parts = [vecmath.definitions(self.vector_functions.values())]
        parts.extend(self.declarations.values())
        return "\n".join(p for p in parts if p) + "\n"
