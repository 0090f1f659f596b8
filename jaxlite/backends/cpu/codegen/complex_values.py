"""Complex numbers in kernels: a value is a pair of float vectors (mirrors how XLA's
ElementalIrEmitter splits complex values into real and imaginary parts).

complex64 and complex128 are stored interleaved (real, imaginary) as numpy stores them and
computed as two `Val`s of float32/float64. Arithmetic follows the evaluator, which uses
numpy: products without fused multiply-add, Smith's division (with XLA's special values
where it gives NaN), numpy's reciprocal, maximum
and minimum ordered lexicographically, magnitude through `hypot` (NaN if a part is NaN),
powers through the polar form in double precision. Transcendental functions call the C
library's complex functions one lane at a time (as numpy does); expm1 and log1p use
numpy's formulas; exp, expm1, log, log1p, sqrt, sign, tanh and tan then take XLA's values at special
inputs (the rules of jaxlite/xla/complex_special_values.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxlite.backends.cpu.codegen.arith import Arith
from jaxlite.backends.cpu.codegen.llvm_text import Val, vec_type
from jaxlite.backends.cpu.codegen.mathfns import MathLib
from jaxlite.xla.complex_special_values import arctanh_far_limit
from jaxlite.xla.opcodes import Opcode

__all__ = ["Cx", "ComplexOps", "is_complex", "part_dtype"]

_O = Opcode
_PRED = np.dtype(np.bool_)


def is_complex(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def part_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else np.float64)


@dataclass(frozen=True)
class Cx:
    """A complex value: real and imaginary parts of the same width."""

    re: Val
    im: Val
    dtype: np.dtype

    @property
    def width(self) -> int:
        return self.re.width


# Opcodes computed by the C library's complex function of this name (float: + "f").
_LIBM = {_O.EXP: "cexp", _O.LOG: "clog", _O.SQRT: "csqrt", _O.SIN: "csin", _O.COS: "ccos",
         _O.TAN: "ctan", _O.TANH: "ctanh", _O.SINH: "csinh", _O.COSH: "ccosh",
         _O.ASIN: "casin", _O.ACOS: "cacos", _O.ATAN: "catan", _O.ASINH: "casinh",
         _O.ACOSH: "cacosh", _O.ATANH: "catanh"}

# Opcodes whose special values follow XLA rather than the C library (see below).
_SPECIAL_VALUES = {_O.EXP: lambda ops, x: ops._exp(x), _O.EXPM1: lambda ops, x: ops._expm1(x),
                   _O.LOG: lambda ops, x: ops._log(x), _O.LOG1P: lambda ops, x: ops._log1p(x),
                   _O.SQRT: lambda ops, x: ops._sqrt(x), _O.TANH: lambda ops, x: ops._tanh(x),
                   _O.TAN: lambda ops, x: ops._tan(x), _O.ASIN: lambda ops, x: ops._asin(x),
                   _O.ASINH: lambda ops, x: ops._asinh(x),
                   _O.ACOS: lambda ops, x: ops._inverse_cosine_or_sine("cacos", x, np.nan, -1),
                   _O.ACOSH: lambda ops, x: ops._inverse_cosine_or_sine("cacosh", x, 1, np.nan),
                   _O.ATAN: lambda ops, x: ops._atan(x),
                   _O.ATANH: lambda ops, x: ops._atanh(x)}


class ComplexOps:
    """Complex operations emitted with `arith` (real ones) and `mathlib` (declarations)."""

    def __init__(self, arith: Arith, mathlib: MathLib) -> None:
        self.a = arith
        self.mathlib = mathlib

    # --------------------------------------------------------------------- basics
    def const(self, value: complex, dtype: np.dtype, width: int = 1) -> Cx:
        part = part_dtype(dtype)
        return Cx(self.a.const(complex(value).real, part, width),
                  self.a.const(complex(value).imag, part, width), np.dtype(dtype))

    def lift(self, x: "Val | Cx", dtype: np.dtype) -> Cx:
        """`x` as a complex value of `dtype` (a real value gets a zero imaginary part)."""
        part = part_dtype(dtype)
        if isinstance(x, Cx):
            return Cx(self.a.convert(x.re, part), self.a.convert(x.im, part), np.dtype(dtype))
        re = self.a.convert(x, part)
        return Cx(re, self.a.const(0.0, part, re.width), np.dtype(dtype))

    def match(self, *values: Cx) -> list[Cx]:
        width = max(v.width for v in values)
        return [Cx(self.a.splat(v.re, width), self.a.splat(v.im, width), v.dtype)
                for v in values]

    def _f(self, opcode: Opcode, x: Val, y: Val) -> Val:
        return self.a.binary(opcode, x, y)

    def mul(self, x: Cx, y: Cx) -> Cx:
        x, y = self.match(x, y)
        re = self._f(_O.SUBTRACT, self._f(_O.MULTIPLY, x.re, y.re),
                     self._f(_O.MULTIPLY, x.im, y.im))
        im = self._f(_O.ADD, self._f(_O.MULTIPLY, x.re, y.im), self._f(_O.MULTIPLY, x.im, y.re))
        return Cx(re, im, x.dtype)

    def div(self, x: Cx, y: Cx) -> Cx:
        """Smith's algorithm, branch-free (numpy's complex division)."""
        x, y = self.match(x, y)
        a, f = self.a, self._f
        abs_r, abs_i = a.unary(_O.ABS, y.re), a.unary(_O.ABS, y.im)
        real_larger = a.compare("GE", abs_r, abs_i)
        both_zero = a.binary(_O.AND, a.compare("EQ", abs_r, a.const(0.0, abs_r.dtype)),
                             a.compare("EQ", abs_i, a.const(0.0, abs_i.dtype)))
        one = a.const(1.0, y.re.dtype)
        # |re| >= |im|: rat = im / re, scale = 1 / (re + im * rat)
        rat1 = f(_O.DIVIDE, y.im, y.re)
        scl1 = f(_O.DIVIDE, one, f(_O.ADD, y.re, f(_O.MULTIPLY, y.im, rat1)))
        re1 = f(_O.MULTIPLY, f(_O.ADD, x.re, f(_O.MULTIPLY, x.im, rat1)), scl1)
        im1 = f(_O.MULTIPLY, f(_O.SUBTRACT, x.im, f(_O.MULTIPLY, x.re, rat1)), scl1)
        # otherwise: rat = re / im, scale = 1 / (im + re * rat)
        rat2 = f(_O.DIVIDE, y.re, y.im)
        scl2 = f(_O.DIVIDE, one, f(_O.ADD, y.im, f(_O.MULTIPLY, y.re, rat2)))
        re2 = f(_O.MULTIPLY, f(_O.ADD, f(_O.MULTIPLY, x.re, rat2), x.im), scl2)
        im2 = f(_O.MULTIPLY, f(_O.SUBTRACT, f(_O.MULTIPLY, x.im, rat2), x.re), scl2)
        # A zero denominator gives x / y.re part by part, copysign(inf, y.re) * x (as XLA).
        re0, im0 = f(_O.DIVIDE, x.re, y.re), f(_O.DIVIDE, x.im, y.re)
        re = a.select(real_larger, a.select(both_zero, re0, re1), re2)
        im = a.select(real_larger, a.select(both_zero, im0, im1), im2)
        return self._restore_special_quotients(x, y, Cx(re, im, x.dtype))

    def _restore_special_quotients(self, x: Cx, y: Cx, q: Cx) -> Cx:
        """XLA's values where Smith's algorithm gives NaN in both parts: the three cases of
        jaxlite/xla/complex_division.py (which the evaluator and eager mode run), in its
        order."""
        a, f = self.a, self._f
        dt, width = q.re.dtype, q.re.width
        zero, one = a.const(0.0, dt, width), a.const(1.0, dt, width)
        inf = a.const(np.inf, dt, width)
        int_dt = np.dtype(np.int32 if dt == np.float32 else np.int64)

        def both(p: Val, r: Val) -> Val:
            return a.binary(_O.AND, p, r)

        def either(p: Val, r: Val) -> Val:
            return a.binary(_O.OR, p, r)

        def nan(v: Val) -> Val:
            return a.compare("NE", v, v)

        def infinite(v: Val) -> Val:
            return a.compare("EQ", a.unary(_O.ABS, v), inf)

        def unit(v: Val) -> Val:  # +-1 where v is infinite, +-0 elsewhere, v's sign
            magnitude = a.select(infinite(v), one, zero)
            negative = a.compare("LT", a.bitcast(v, int_dt), a.const(0, int_dt, width))
            return a.select(negative, a.unary(_O.NEGATE, magnitude), magnitude)

        def finite(v: Val) -> Val:
            return a.unary(_O.IS_FINITE, v)

        zero_den = both(both(a.compare("EQ", y.re, zero), a.compare("EQ", y.im, zero)),
                        a.unary(_O.NOT, both(nan(x.re), nan(x.im))))
        signed_inf = a.select(a.compare("LT", a.bitcast(y.re, int_dt),
                                        a.const(0, int_dt, width)), a.unary(_O.NEGATE, inf), inf)
        inf_num = both(either(infinite(x.re), infinite(x.im)), both(finite(y.re), finite(y.im)))
        inf_den = both(either(infinite(y.re), infinite(y.im)), both(finite(x.re), finite(x.im)))
        xr, xi, yr, yi = unit(x.re), unit(x.im), unit(y.re), unit(y.im)
        cases = [
            (zero_den, f(_O.MULTIPLY, signed_inf, x.re), f(_O.MULTIPLY, signed_inf, x.im)),
            (inf_num,
             f(_O.MULTIPLY, inf, f(_O.ADD, f(_O.MULTIPLY, xr, y.re), f(_O.MULTIPLY, xi, y.im))),
             f(_O.MULTIPLY, inf, f(_O.SUBTRACT, f(_O.MULTIPLY, xi, y.re),
                                   f(_O.MULTIPLY, xr, y.im)))),
            (inf_den,
             f(_O.MULTIPLY, zero, f(_O.ADD, f(_O.MULTIPLY, x.re, yr), f(_O.MULTIPLY, x.im, yi))),
             f(_O.MULTIPLY, zero, f(_O.SUBTRACT, f(_O.MULTIPLY, x.im, yr),
                                    f(_O.MULTIPLY, x.re, yi)))),
        ]
        re, im = q.re, q.im
        for pred, case_re, case_im in reversed(cases):
            re, im = a.select(pred, case_re, re), a.select(pred, case_im, im)
        restore = both(nan(q.re), nan(q.im))
        return Cx(a.select(restore, re, q.re), a.select(restore, im, q.im), q.dtype)

    def reciprocal(self, x: Cx) -> Cx:
        a, f = self.a, self._f
        one = a.const(1.0, x.re.dtype)
        small_im = a.compare("LE", a.unary(_O.ABS, x.im), a.unary(_O.ABS, x.re))
        r1 = f(_O.DIVIDE, x.im, x.re)
        d1 = f(_O.ADD, x.re, f(_O.MULTIPLY, x.im, r1))
        r2 = f(_O.DIVIDE, x.re, x.im)
        d2 = f(_O.ADD, f(_O.MULTIPLY, x.re, r2), x.im)
        re = a.select(small_im, f(_O.DIVIDE, one, d1), f(_O.DIVIDE, r2, d2))
        im = a.select(small_im, a.unary(_O.NEGATE, f(_O.DIVIDE, r1, d1)),
                      a.unary(_O.NEGATE, f(_O.DIVIDE, one, d2)))
        return Cx(re, im, x.dtype)

    def select(self, pred: Val, x: Cx, y: Cx) -> Cx:
        x, y = self.match(x, y)
        return Cx(self.a.select(pred, x.re, y.re), self.a.select(pred, x.im, y.im), x.dtype)

    def magnitude(self, x: Cx) -> Val:
        hyp = self.mathlib.libm_real(self.a, "hypot", [x.re, x.im])
        nan = self.a.binary(_O.OR, self.a.compare("NE", x.re, x.re),
                            self.a.compare("NE", x.im, x.im))
        return self.a.select(nan, self.a.const(np.nan, x.re.dtype, x.width), hyp)

    # ------------------------------------------------------------------- opcodes
    def binary(self, opcode: Opcode, x: Cx, y: Cx) -> "Cx | Val":
        x, y = self.match(x, y)
        a = self.a
        if opcode in (_O.ADD, _O.SUBTRACT):
            return Cx(self._f(opcode, x.re, y.re), self._f(opcode, x.im, y.im), x.dtype)
        if opcode is _O.MULTIPLY:
            return self.mul(x, y)
        if opcode is _O.DIVIDE:
            return self.div(x, y)
        if opcode in (_O.MAXIMUM, _O.MINIMUM):
            first, second = (x, y) if opcode is _O.MAXIMUM else (y, x)
            wins = a.binary(_O.OR, a.compare("GT", first.re, second.re), a.binary(
                _O.AND, a.compare("EQ", first.re, second.re), a.compare("GT", first.im,
                                                                        second.im)))
            return self.select(wins, x, y)
        if opcode is _O.POWER:
            return self._power(x, y)
        if opcode is _O.ATAN2:
            return self._atan2(x, y)
        raise NotImplementedError(f"the cpu backend has no complex {opcode.text} yet")

    def compare(self, direction: str, x: Cx, y: Cx) -> Val:
        x, y = self.match(x, y)
        a = self.a
        if direction == "EQ":
            return a.binary(_O.AND, a.compare("EQ", x.re, y.re), a.compare("EQ", x.im, y.im))
        if direction == "NE":
            return a.binary(_O.OR, a.compare("NE", x.re, y.re), a.compare("NE", x.im, y.im))
        raise NotImplementedError(f"the cpu backend cannot compare complex values with "
                                  f"{direction}")

    def unary(self, opcode: Opcode, x: Cx) -> "Cx | Val":
        a, f = self.a, self._f
        if opcode is _O.NEGATE:
            return Cx(a.unary(_O.NEGATE, x.re), a.unary(_O.NEGATE, x.im), x.dtype)
        if opcode is _O.REAL:
            return x.re
        if opcode is _O.IMAG:
            return x.im
        if opcode is _O.ABS:
            return self.magnitude(x)
        if opcode is _O.SIGN:  # x / |x| part by part, x itself where |x| is 0 (as XLA)
            magnitude = self.magnitude(x)
            zero = a.compare("EQ", magnitude, a.const(0.0, magnitude.dtype))
            unit = Cx(f(_O.DIVIDE, x.re, magnitude), f(_O.DIVIDE, x.im, magnitude), x.dtype)
            return self.select(zero, x, unit)
        if opcode is _O.RSQRT:
            return self.reciprocal(self._libm("csqrt", x))
        if opcode in _SPECIAL_VALUES:
            return _SPECIAL_VALUES[opcode](self, x)
        if opcode in _LIBM:
            return self._libm(_LIBM[opcode], x)
        if opcode is _O.LOGISTIC:
            one = self.const(1.0, x.dtype, x.width)
            e = self._libm("cexp", Cx(a.unary(_O.NEGATE, x.re), a.unary(_O.NEGATE, x.im),
                                      x.dtype))
            return self.div(one, Cx(f(_O.ADD, one.re, e.re), f(_O.ADD, one.im, e.im),
                                    x.dtype))
        if opcode is _O.EXP2:
            ln2 = self.const(np.log(2.0), x.dtype, x.width)
            return self._libm("cexp", self.mul(x, ln2))
        raise NotImplementedError(f"the cpu backend has no complex {opcode.text} yet")

    # ------------------------------------------- XLA's values at special inputs
    # The rules of jaxlite/xla/complex_special_values.py (eager mode and the evaluator).
    def _nan_where(self, pred: Val, x: Cx) -> Cx:
        return self.select(pred, self.const(complex(np.nan, np.nan), x.dtype, x.width), x)

    def _any_nan(self, x: Cx) -> Val:
        return self.a.binary(_O.OR, self.a.compare("NE", x.re, x.re),
                             self.a.compare("NE", x.im, x.im))

    def _real_on_zero_imag(self, x: Cx, real_value: Val, value: Cx) -> Cx:
        """`value`, (real_value, +0) where x's imaginary part is zero, NaN + NaNj where its
        real part is infinite and its imaginary part is not finite."""
        a = self.a
        zero = a.const(0.0, x.im.dtype, x.width)
        value = self.select(a.compare("EQ", x.im, zero), Cx(real_value, zero, x.dtype), value)
        infinite_re = a.compare("EQ", a.unary(_O.ABS, x.re), a.const(np.inf, x.re.dtype))
        return self._nan_where(a.binary(_O.AND, infinite_re, a.unary(
            _O.NOT, a.unary(_O.IS_FINITE, x.im))), value)

    def _exp(self, x: Cx) -> Cx:
        real_exp = self.mathlib.libm_real(self.a, "exp", [x.re])
        return self._real_on_zero_imag(x, real_exp, self._libm("cexp", x))

    def _expm1(self, x: Cx) -> Cx:
        """numpy's formula: expm1(a) cos(b) - 2 sin(b/2)**2 + i exp(a) sin(b)."""
        a, f, lib = self.a, self._f, self.mathlib
        s = lib.libm_real(a, "sin", [f(_O.MULTIPLY, x.im, a.const(0.5, x.im.dtype))])
        real_expm1 = lib.libm_real(a, "expm1", [x.re])
        re = f(_O.SUBTRACT, f(_O.MULTIPLY, real_expm1, lib.libm_real(a, "cos", [x.im])),
               f(_O.MULTIPLY, f(_O.MULTIPLY, a.const(2.0, s.dtype), s), s))
        im = f(_O.MULTIPLY, lib.libm_real(a, "exp", [x.re]), lib.libm_real(a, "sin", [x.im]))
        plus_zero = f(_O.ADD, real_expm1, a.const(0.0, x.re.dtype))  # expm1(-0 + 0j) is +0
        return self._real_on_zero_imag(x, plus_zero, Cx(re, im, x.dtype))

    def _log(self, x: Cx) -> Cx:
        return self._nan_where(self._any_nan(x), self._libm("clog", x))

    def _log1p(self, x: Cx) -> Cx:
        """numpy's formula: log|1 + x| + i arg(1 + x)."""
        a, f, lib = self.a, self._f, self.mathlib
        shifted = f(_O.ADD, x.re, a.const(1.0, x.re.dtype))
        im = lib.libm_real(a, "atan2", [x.im, shifted])
        re = lib.libm_real(a, "log", [lib.libm_real(a, "hypot", [shifted, x.im])])
        return self._nan_where(self._any_nan(x), Cx(re, im, x.dtype))

    def _sqrt(self, x: Cx) -> Cx:
        """The C library's csqrt of x with a zero imaginary part made +0 (XLA ignores its
        sign)."""
        zero = self.a.const(0.0, x.im.dtype, x.width)
        unsigned = Cx(x.re, self.a.select(self.a.compare("EQ", x.im, zero), zero, x.im),
                      x.dtype)
        return self._nan_where(self._any_nan(x), self._libm("csqrt", unsigned))

    def _tanh(self, x: Cx) -> Cx:
        a = self.a
        value = self._libm("ctanh", x)
        zero = a.const(0.0, x.im.dtype, x.width)
        not_finite_im = a.unary(_O.NOT, a.unary(_O.IS_FINITE, x.im))
        infinite_re = a.compare("EQ", a.unary(_O.ABS, x.re), a.const(np.inf, x.re.dtype))
        plus_zero_imag = a.binary(_O.OR, a.compare("EQ", x.im, zero),
                                  a.binary(_O.AND, infinite_re, not_finite_im))
        value = Cx(value.re, a.select(plus_zero_imag, zero, value.im), x.dtype)
        return self._nan_where(a.binary(_O.AND, a.compare("EQ", x.re, zero), not_finite_im),
                               value)

    def _tan(self, x: Cx) -> Cx:
        """-i tanh(i x)."""
        rotated = self._tanh(Cx(self.a.unary(_O.NEGATE, x.im), x.re, x.dtype))
        return Cx(rotated.im, self.a.unary(_O.NEGATE, rotated.re), x.dtype)

    def _inverse_cosine_or_sine(self, name: str, x: Cx, far_re: float, far_im: float) -> Cx:
        """The C library's `name` (casin, cacos, cacosh) of x with a zero imaginary part made
        +0; a NaN imaginary part gives NaN + NaNj, or (far_re, far_im) * log 2|re| where
        |re| >= sqrt(max float) / 8 (complex_special_values._inverse_cosine_or_sine)."""
        a, f, dtype = self.a, self._f, x.re.dtype
        zero = a.const(0.0, dtype, x.width)
        unsigned = Cx(x.re, a.select(a.compare("EQ", x.im, zero), zero, x.im), x.dtype)
        nan_im = a.compare("NE", x.im, x.im)
        value = self._nan_where(nan_im, self._libm(name, unsigned))
        abs_re = a.unary(_O.ABS, x.re)
        large = a.compare("GE", abs_re, a.const(np.sqrt(np.finfo(dtype).max) / 8, dtype))
        log_twice = f(_O.ADD, self.mathlib.libm_real(a, "log", [abs_re]),
                      a.const(np.log(2.0), dtype))
        beyond = a.binary(_O.AND, nan_im, large)
        return Cx(a.select(beyond, f(_O.MULTIPLY, a.const(far_re, dtype), log_twice), value.re),
                  a.select(beyond, f(_O.MULTIPLY, a.const(far_im, dtype), log_twice), value.im),
                  x.dtype)

    def _asin(self, x: Cx) -> Cx:
        return self._inverse_cosine_or_sine("casin", x, np.nan, 1.0)

    def _asinh(self, x: Cx) -> Cx:
        """-i asin(i x)."""
        rotated = self._asin(Cx(self.a.unary(_O.NEGATE, x.im), x.re, x.dtype))
        return Cx(rotated.im, self.a.unary(_O.NEGATE, rotated.re), x.dtype)

    def _atanh(self, x: Cx) -> Cx:
        """The C library's catanh of x, with an imaginary part of pi/2 if im >= 0 else -pi/2
        where |re| is past `arctanh_far_limit` or a part is NaN; a +0 real part where re is
        a zero, -0 where re is NaN and im infinite, NaN (+-0 where re is infinite) where im
        is NaN."""
        a, dtype, width = self.a, x.re.dtype, x.width
        value = self._libm("catanh", x)
        half_pi = a.const(np.pi / 2, dtype, width)
        abs_re = a.unary(_O.ABS, x.re)
        nan_im = a.compare("NE", x.im, x.im)
        near = a.compare("LE", abs_re, a.const(arctanh_far_limit(dtype), dtype))
        far = a.binary(_O.OR, a.unary(_O.NOT, near), nan_im)
        signed_half_pi = a.select(a.compare("GE", x.im, a.const(0.0, dtype)), half_pi,
                                  a.unary(_O.NEGATE, half_pi))
        zero = a.const(0.0, dtype, width)
        signed_zero = a.select(a.compare("LT", x.re, zero), a.unary(_O.NEGATE, zero), zero)
        nan_im_re = a.select(a.compare("EQ", abs_re, a.const(np.inf, dtype)), signed_zero,
                             a.const(np.nan, dtype, width))
        nan_re = a.compare("NE", x.re, x.re)
        infinite_im = a.compare("EQ", a.unary(_O.ABS, x.im), a.const(np.inf, dtype))
        re = a.select(a.compare("EQ", x.re, zero), zero, a.select(
            a.binary(_O.AND, nan_re, infinite_im), a.unary(_O.NEGATE, zero), value.re))
        # XLA's (1 - |re|)**2 + im**2 is 0 where re is +-1 and im*im <= the smallest normal
        unit_re = a.compare("EQ", abs_re, a.const(1.0, dtype))
        tiny_im = a.compare("LE", self._f(_O.MULTIPLY, x.im, x.im),
                            a.const(np.finfo(dtype).tiny, dtype))
        inf = a.const(np.inf, dtype, width)
        signed_inf = a.select(a.compare("LT", x.re, zero), a.unary(_O.NEGATE, inf), inf)
        re = a.select(a.binary(_O.AND, unit_re, tiny_im), signed_inf, re)
        return Cx(a.select(nan_im, nan_im_re, re), a.select(far, signed_half_pi, value.im),
                  x.dtype)

    def _atan(self, x: Cx) -> Cx:
        """-i atanh(i x)."""
        rotated = self._atanh(Cx(self.a.unary(_O.NEGATE, x.im), x.re, x.dtype))
        return Cx(rotated.im, self.a.unary(_O.NEGATE, rotated.re), x.dtype)

    def _atan2(self, x: Cx, y: Cx) -> Cx:
        """The evaluator's continuation in double precision: -i log((y + i x) / sqrt(x**2 +
        y**2))."""
        wide, dtype = np.dtype(np.complex128), x.dtype
        x, y = self.lift(x, wide), self.lift(y, wide)
        f = self._f
        numerator = Cx(f(_O.SUBTRACT, y.re, x.im), f(_O.ADD, y.im, x.re), wide)
        squares = self.binary(_O.ADD, self.mul(x, x), self.mul(y, y))
        root = self._libm("csqrt", squares)  # type: ignore[arg-type]
        logged = self._libm("clog", self.div(numerator, root))
        result = Cx(logged.im, self.a.unary(_O.NEGATE, logged.re), wide)
        return self.lift(result, dtype)

    def _power(self, x: Cx, y: Cx) -> Cx:
        """The evaluator's polar form in the parts' precision (as XLA: complex64 in
        float32), with its rules at zero, one and a real infinite base."""
        a, f, lib = self.a, self._f, self.mathlib
        part = part_dtype(x.dtype)
        xr, xi, yr, yi = x.re, x.im, y.re, y.im
        log_mag = lib.libm_real(a, "log", [lib.libm_real(a, "hypot", [xr, xi])])
        angle = lib.libm_real(a, "atan2", [xi, xr])
        radius = lib.libm_real(a, "exp", [f(_O.SUBTRACT, f(_O.MULTIPLY, yr, log_mag),
                                             f(_O.MULTIPLY, yi, angle))])
        phase = f(_O.ADD, f(_O.MULTIPLY, yr, angle), f(_O.MULTIPLY, yi, log_mag))
        re = f(_O.MULTIPLY, radius, lib.libm_real(a, "cos", [phase]))
        im = f(_O.MULTIPLY, radius, lib.libm_real(a, "sin", [phase]))
        zero = a.const(0.0, part)
        y_zero_im = a.compare("EQ", yi, zero)
        unit = a.binary(_O.AND, a.compare("EQ", yr, zero), y_zero_im)
        vanish = a.binary(_O.AND, a.compare("GT", yr, zero), y_zero_im)
        nan = a.const(np.nan, part)
        at_re = a.select(unit, a.const(1.0, part), a.select(vanish, zero, nan))
        at_im = a.select(a.binary(_O.OR, unit, vanish), zero, nan)
        base_zero = a.binary(_O.AND, a.compare("EQ", xr, zero), a.compare("EQ", xi, zero))
        re, im = a.select(base_zero, at_re, re), a.select(base_zero, at_im, im)
        # +inf to a real power is inf or 0 (the polar form would multiply inf by sin 0).
        inf = a.const(np.inf, part)
        real_inf = a.binary(_O.AND, a.binary(_O.AND, a.compare("EQ", xr, inf),
                                             a.compare("EQ", xi, zero)),
                            a.binary(_O.AND, y_zero_im, a.compare("EQ", yr, yr)))
        re = a.select(real_inf, a.select(a.compare("GT", yr, zero), inf, zero), re)
        im = a.select(real_inf, zero, im)
        # A zero exponent, or a base of exactly 1, gives 1 (NaN and infinities too), as XLA.
        base_one = a.binary(_O.AND, a.compare("EQ", xr, a.const(1.0, part)),
                            a.compare("EQ", xi, zero))
        one = a.binary(_O.OR, unit, base_one)
        re, im = a.select(one, a.const(1.0, part), re), a.select(one, zero, im)
        return Cx(re, im, x.dtype)

    def _libm(self, name: str, x: Cx) -> Cx:
        """A C99 complex function, one lane at a time (x86-64 calling convention: float
        complex travels as <2 x float>, double complex as two doubles / {double, double})."""
        fb = self.a.fb
        elem = x.re.elem
        single = elem == "float"
        fname = name + ("f" if single else "")
        if single:
            decl = f"declare <2 x float> @{fname}(<2 x float>) nounwind readnone"
        else:
            decl = f"declare {{ double, double }} @{fname}(double, double) nounwind readnone"
        self.mathlib.declarations[fname] = decl
        re_out, im_out = "poison", "poison"
        ty = vec_type(elem, x.width)
        for lane in range(x.width):
            if x.width == 1:
                r, i = x.re.ref, x.im.ref
            else:
                r = fb.op(f"extractelement {x.re.typed}, i64 {lane}", "e")
                i = fb.op(f"extractelement {x.im.typed}, i64 {lane}", "e")
            if single:
                pair = fb.op(f"insertelement <2 x float> poison, float {r}, i64 0", "z")
                pair = fb.op(f"insertelement <2 x float> {pair}, float {i}, i64 1", "z")
                out = fb.op(f"call <2 x float> @{fname}(<2 x float> {pair})", "m")
                rr = fb.op(f"extractelement <2 x float> {out}, i64 0", "e")
                ri = fb.op(f"extractelement <2 x float> {out}, i64 1", "e")
            else:
                out = fb.op(f"call {{ double, double }} @{fname}(double {r}, double {i})", "m")
                rr = fb.op(f"extractvalue {{ double, double }} {out}, 0", "e")
                ri = fb.op(f"extractvalue {{ double, double }} {out}, 1", "e")
            if x.width == 1:
                re_out, im_out = rr, ri
            else:
                re_out = fb.op(f"insertelement {ty} {re_out}, {elem} {rr}, i64 {lane}", "v")
                im_out = fb.op(f"insertelement {ty} {im_out}, {elem} {ri}, i64 {lane}", "v")
        return Cx(Val(re_out, elem, x.width, x.re.dtype), Val(im_out, elem, x.width,
                                                                 x.im.dtype), x.dtype)
