"""numpy kernels of the elementwise opcodes, with XLA's semantics on the CPU.

`KERNELS[opcode](inst, *operands)` computes one elementwise instruction; `inst` supplies the
attributes (compare's direction and type) and convert's target type, and may be None for
the opcodes that need neither (the reduction fast paths call `binary_kernel(opcode)`).
Kernels broadcast numpy-style, which lets the evaluator run a scalar computation (a
reduction's `to_apply`, a sort comparator) over whole arrays at once.

XLA's choices that numpy does not share: integer division truncates (x / 0 is -1, all ones
unsigned; INT_MIN / -1 is INT_MIN), remainders take the dividend's sign (x % 0 is x), shifts
by at least the bit width give 0 (arithmetic: the sign fill), float to integer conversion
truncates and saturates (NaN gives 0), maximum/minimum propagate NaN, integer powers with
negative exponents give 0 except for bases ±1, and float16/bfloat16 arithmetic runs in
float32 and rounds.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.xla import evaluator_special as special
from jaxlite.xla.complex_division import complex_divide
from jaxlite.xla.complex_special_values import (complex_arccos, complex_arccosh, complex_arcsin,
                                                complex_arcsinh, complex_arctan,
                                                complex_arctanh,
                                                complex_exp, complex_expm1, complex_log,
                                                complex_power,
                                                complex_log1p, complex_sign, complex_sqrt,
                                                complex_tan, complex_tanh, for_complex)
from jaxlite.xla.cpu_f32_kernels import (erf_f32, erf_inv_f32, for_float32, log1p_f32,
                                         log_f32, tanh_f32)
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.reduce_precision import reduce_precision

__all__ = ["KERNELS", "binary_kernel", "bitcast_convert", "convert"]

Kernel = Callable[..., np.ndarray]
_O = Opcode
_LOW = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def _in_f32(fn: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """Compute float16/bfloat16 operands in float32 and round back, as XLA's CPU does."""
    @functools.wraps(fn)
    def wrapped(*args: np.ndarray) -> np.ndarray:
        low = next((a.dtype for a in args if a.dtype in _LOW), None)
        if low is None:
            return np.asarray(fn(*args))
        out = np.asarray(fn(*[a.astype(np.float32) if a.dtype == low else a for a in args]))
        return out.astype(low) if out.dtype == np.float32 else out
    return wrapped


def _in_f64(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """Special functions compute in float64 and round to the operand's type."""
    return lambda x: np.asarray(fn(x)).astype(x.dtype)


def _unsigned(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"uint{dtype.itemsize * 8}")


def _signed(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"int{dtype.itemsize * 8}")


# ------------------------------------------------------------------------------ arithmetic

def _safe_divisor(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`y` with the divisors XLA defines specially (0; -1 under INT_MIN) replaced by 1."""
    special_case = y == 0
    if dtypes.is_signed_integer(x.dtype):
        special_case = special_case | ((x == np.iinfo(x.dtype).min) & (y == -1))
    return np.where(special_case, np.ones((), y.dtype), y)


def _divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        return complex_divide(x, y)
    if not dtypes.is_integer(x.dtype):
        return np.divide(x, y)
    safe = _safe_divisor(x, y)
    quotient = np.floor_divide(x, safe)
    # floor division rounds down; truncation rounds toward zero: fix the inexact negatives.
    inexact_negative = (np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0))
    quotient = np.where(inexact_negative, quotient + 1, quotient).astype(x.dtype)
    return np.where(y == 0, np.array(-1).astype(x.dtype), quotient)


def _remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not dtypes.is_integer(x.dtype):
        return np.fmod(x, y)
    return np.where(y == 0, x, np.fmod(x, _safe_divisor(x, y)))


def _extremum(x: np.ndarray, y: np.ndarray, larger: bool) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        # Lexicographic on (real, imag), as XLA orders complex numbers.
        first, second = (x, y) if larger else (y, x)
        x_wins = (first.real > second.real) | ((first.real == second.real)
                                               & (first.imag > second.imag))
        return np.where(x_wins, x, y)
    out = np.maximum(x, y) if larger else np.minimum(x, y)  # both propagate NaN
    if dtypes.is_floating(x.dtype):
        # Of two zeros, max is -0 only if both are; min is -0 if either is.
        zeros = x + y if larger else -((-x) + (-y))
        out = np.where((x == 0) & (y == 0), zeros, out)
    return out


def _integer_power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Square-and-multiply in the operand's type (wrapping), as XLA's integer power does;
    # a negative exponent gives 0 except for the bases 1 and -1.
    x, y = np.broadcast_arrays(x, y)
    result = np.ones(x.shape, x.dtype)
    base = x.copy()
    exponent = np.where(y > 0, y, 0).astype(np.uint64)
    while np.any(exponent):
        result = np.where(exponent & 1, result * base, result)
        base = base * base
        exponent = exponent >> np.uint64(1)
    if dtypes.is_signed_integer(x.dtype):
        odd = (y & 1) == 1
        negative = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
        result = np.where(y < 0, negative.astype(x.dtype), result)
    return result


def _power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if dtypes.is_integer(x.dtype):
        return _integer_power(x, y)
    if dtypes.is_complex(x.dtype):
        return complex_power(x, y)
    return np.power(x, y)


def _atan2(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not dtypes.is_complex(x.dtype):
        return np.arctan2(x, y)
    # The complex continuation: -i log((y + i x) / sqrt(x**2 + y**2)).
    wide_x, wide_y = x.astype(np.complex128), y.astype(np.complex128)
    root = np.sqrt(wide_x * wide_x + wide_y * wide_y)
    return (-1j * np.log((wide_y + 1j * wide_x) / root)).astype(x.dtype)


def _complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, np.complex64 if x.dtype == np.float32 else np.complex128)
    out.real, out.imag = x, y  # unlike x + 1j * y, keeps inf parts from becoming nan
    return out


def _complex_abs(x: np.ndarray) -> np.ndarray:
    magnitude = np.hypot(x.real, x.imag)  # hypot(inf, nan) is inf; XLA gives nan
    return np.where(np.isnan(x.real) | np.isnan(x.imag), np.nan, magnitude).astype(
        magnitude.dtype)


def _abs(x: np.ndarray) -> np.ndarray:
    return _complex_abs(x) if dtypes.is_complex(x.dtype) else np.abs(x)


def _sign(x: np.ndarray) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        return complex_sign(x)
    if dtypes.is_floating(x.dtype):
        return np.where(x == 0, x, np.sign(x))  # keeps the sign of zero; nan stays nan
    return np.sign(x)


def _round_afz(x: np.ndarray) -> np.ndarray:
    whole = np.trunc(x)
    away = np.abs(x - whole) >= 0.5  # x - trunc(x) is exact: no rounding in the tie test
    return np.where(away, whole + np.sign(x), whole)


def _logistic(x: np.ndarray) -> np.ndarray:
    one = np.ones((), x.dtype)
    return one / (one + np.exp(-x))


def _exp2(x: np.ndarray) -> np.ndarray:
    return np.exp(x * np.log(2.0)).astype(x.dtype) if dtypes.is_complex(x.dtype) \
        else np.exp2(x)


def _real(x: np.ndarray) -> np.ndarray:
    return np.real(x).copy()


def _imag(x: np.ndarray) -> np.ndarray:
    return np.imag(x) if dtypes.is_complex(x.dtype) else np.zeros_like(x)


# ---------------------------------------------------------------------------------- bits

def _shift_amount(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The amount clipped below the bit width (as unsigned), and where it was not.

    numpy, like C, leaves shifts by the width or more undefined; XLA saturates them.
    """
    bits = x.dtype.itemsize * 8
    amount = np.asarray(y).astype(_unsigned(y.dtype))  # negative amounts become huge
    return np.minimum(amount, bits - 1), amount >= bits


def _shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    amount, too_far = _shift_amount(x, y)
    return np.where(too_far, np.zeros((), x.dtype), np.left_shift(x, amount.astype(x.dtype)))


def _shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    amount, too_far = _shift_amount(x, y)
    pattern = x.astype(_unsigned(x.dtype))
    shifted = np.right_shift(pattern, amount.astype(pattern.dtype))
    return np.where(too_far, np.zeros((), pattern.dtype), shifted).astype(x.dtype)


def _shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Shifting by width - 1 already gives the sign fill XLA gives for larger amounts.
    amount, _ = _shift_amount(x, y)
    signed = x.astype(_signed(x.dtype))
    return np.right_shift(signed, amount.astype(signed.dtype)).astype(x.dtype)


def _popcnt(x: np.ndarray) -> np.ndarray:
    # Count the bits of the pattern (np.bitwise_count counts |x| for signed types).
    return np.bitwise_count(x.astype(_unsigned(x.dtype))).astype(x.dtype)


def _next_after(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Stepping the bit pattern works in every binary float format, bfloat16 included.
    x, y = np.broadcast_arrays(x, y)
    bits_dtype = _unsigned(x.dtype)
    bits = np.asarray(x, order="C").view(bits_dtype)
    one = np.ones((), bits_dtype)
    toward_zero = (x > y) == (x > 0)
    stepped = np.where(toward_zero, bits - one, bits + one).view(x.dtype)
    sign_bit = np.array(1 << (8 * x.dtype.itemsize - 1), bits_dtype)
    smallest = np.where(np.signbit(y), sign_bit | one, one).astype(bits_dtype).view(x.dtype)
    out = np.where(x == 0, smallest, stepped)
    out = np.where(x == y, y, out)
    return np.where(np.isnan(x) | np.isnan(y), np.array(np.nan, x.dtype), out)


# ------------------------------------------------------------------------ compare, convert

_COMPARISONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
                "GT": np.greater, "GE": np.greater_equal}


def _total_order_key(x: np.ndarray) -> np.ndarray:
    """Integers ordered as XLA's TOTALORDER orders floats: -nan < -inf < -0 < +0 < nan."""
    bits = np.asarray(x, order="C").view(_signed(x.dtype))
    magnitude = bits & np.array(np.iinfo(bits.dtype).max, bits.dtype)
    return np.where(bits < 0, ~magnitude, bits)


def _compare(inst: HloInstruction, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if inst.attr("type") == "TOTALORDER" and dtypes.is_floating(x.dtype):
        x, y = _total_order_key(x), _total_order_key(y)
    return _COMPARISONS[inst.attr("direction")](x, y)


def convert(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """XLA's convert: complex to real keeps the real part; float to integer truncates
    toward zero and saturates, NaN becoming 0; anything to pred tests for nonzero."""
    dtype = np.dtype(dtype)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(dtype):
        x = x.real
    if dtype == np.bool_:
        return x != 0
    if dtypes.is_floating(x.dtype) and dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        wide = np.trunc(np.where(np.isnan(x), 0, x).astype(np.float64))
        if info.bits < 64:
            return np.clip(wide, info.min, info.max).astype(dtype)
        # float64 cannot hold the 64-bit maxima exactly: saturate through comparisons.
        too_big, too_small = wide >= float(info.max), wide <= float(info.min)
        inside = np.where(too_big | too_small, 0, wide).astype(dtype)
        return np.where(too_big, info.max, np.where(too_small, info.min, inside)).astype(dtype)
    return x.astype(dtype)


def bitcast_convert(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Reinterpret the bits (little-endian element order, as XLA on the CPU)."""
    x, dtype = np.asarray(x, order="C"), np.dtype(dtype)
    if dtype.itemsize < x.itemsize:
        return x.reshape(x.shape + (1,)).view(dtype)
    if dtype.itemsize > x.itemsize:
        return x.view(dtype).reshape(x.shape[:-1])
    return x.view(dtype)


# ----------------------------------------------------------------------------------- table

_UNARY: dict[Opcode, Callable[[np.ndarray], np.ndarray]] = {
    _O.NEGATE: np.negative, _O.NOT: np.invert, _O.POPCNT: _popcnt, _O.IS_FINITE: np.isfinite,
    _O.REAL: _real, _O.IMAG: _imag, _O.ROUND_EVEN: np.rint,
    **{op: _in_f32(fn) for op, fn in {
        _O.ABS: _abs, _O.SIGN: _sign, _O.CEIL: np.ceil, _O.FLOOR: np.floor,
        _O.ROUND_AFZ: _round_afz, _O.CBRT: np.cbrt, _O.COS: np.cos, _O.SIN: np.sin,
        _O.TAN: for_complex(complex_tan, np.tan),
        _O.TANH: for_complex(complex_tanh, for_float32(tanh_f32, np.tanh)),
        _O.EXP: for_complex(complex_exp, np.exp),
        _O.EXPM1: for_complex(complex_expm1, np.expm1),
        _O.LOG: for_complex(complex_log, for_float32(log_f32, np.log)),
        _O.LOG1P: for_complex(complex_log1p, for_float32(log1p_f32, np.log1p)),
        _O.LOGISTIC: _logistic, _O.SQRT: for_complex(complex_sqrt, np.sqrt),
        _O.RSQRT: lambda x: np.reciprocal(np.sqrt(x)), _O.ACOS: for_complex(complex_arccos, np.arccos),
        _O.ACOSH: for_complex(complex_arccosh, np.arccosh), _O.ASIN: for_complex(complex_arcsin, np.arcsin),
        _O.ASINH: for_complex(complex_arcsinh, np.arcsinh),
        _O.ATAN: for_complex(complex_arctan, np.arctan),
        _O.ATANH: for_complex(complex_arctanh, np.arctanh), _O.COSH: np.cosh, _O.SINH: np.sinh,
        _O.EXP2: _exp2}.items()},
    # float32 erf and erf_inv: XLA's CPU kernels bit for bit (JAX's values).
    _O.ERF: for_float32(erf_f32, _in_f64(special.erf)), _O.ERFC: _in_f64(special.erfc),
    _O.ERF_INV: for_float32(erf_inv_f32, _in_f64(special.erf_inv)),
    _O.LGAMMA: _in_f64(special.lgamma),
    _O.DIGAMMA: _in_f64(special.digamma),
}

_BINARY: dict[Opcode, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    _O.AND: np.bitwise_and, _O.OR: np.bitwise_or, _O.XOR: np.bitwise_xor,
    _O.SHIFT_LEFT: _shift_left, _O.SHIFT_RIGHT_LOGICAL: _shift_right_logical,
    _O.SHIFT_RIGHT_ARITHMETIC: _shift_right_arithmetic, _O.NEXT_AFTER: _next_after,
    _O.COMPLEX: _complex,
    **{op: _in_f32(fn) for op, fn in {
        _O.ADD: np.add, _O.SUBTRACT: np.subtract, _O.MULTIPLY: np.multiply,
        _O.DIVIDE: _divide, _O.REMAINDER: _remainder, _O.POWER: _power, _O.ATAN2: _atan2,
        _O.MAXIMUM: functools.partial(_extremum, larger=True),
        _O.MINIMUM: functools.partial(_extremum, larger=False)}.items()},
}


def binary_kernel(opcode: Opcode) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
    """The kernel of an attribute-free binary opcode (for reduction fast paths), or None."""
    return _BINARY.get(opcode)


def _clamp(low: np.ndarray, x: np.ndarray, high: np.ndarray) -> np.ndarray:
    return _BINARY[_O.MINIMUM](_BINARY[_O.MAXIMUM](x, low), high)


def _ignoring_inst(fn: Callable[..., np.ndarray]) -> Kernel:
    return lambda inst, *args: fn(*args)


KERNELS: dict[Opcode, Kernel] = {
    **{op: _ignoring_inst(fn) for op, fn in (*_UNARY.items(), *_BINARY.items())},
    _O.COMPARE: _compare,
    _O.SELECT: lambda inst, pred, on_true, on_false: np.where(pred, on_true, on_false),
    _O.CLAMP: lambda inst, low, x, high: _clamp(low, x, high),
    _O.CONVERT: lambda inst, x: convert(x, inst.shape.dtype),
    _O.REDUCE_PRECISION: lambda inst, x: reduce_precision(
        x, inst.attr("exponent_bits"), inst.attr("mantissa_bits")),
}
