"""Arithmetic on bit patterns: clz, mulhi, reduce_precision and the total-order comparisons
eq_to, le_to, lt_to.

Mirrors `jax.lax.clz`, `mulhi`, `reduce_precision` and the primitives `eq_to_p`, `le_to_p`,
`lt_to_p` (XLA's Clz, the high half of a widening multiply, ReducePrecision, and Compare
with the TOTALORDER comparison type, which sorts use). Each primitive but
reduce_precision has a numpy reference and lowers through its expansion into shifts,
masks and integer arithmetic of the operand's width (`jaxlite.lax._composed`);
reduce_precision lowers to XLA's `reduce-precision` opcode, whose algorithm
(`jaxlite.xla.reduce_precision`) is also its reference:

- clz: smear the highest set bit into every lower bit; the count is the width minus the
  number of set bits.
- mulhi: the product of the half-width limbs, with the carries of the middle terms; for
  signed operands the unsigned result minus (a < 0 ? b : 0) and (b < 0 ? a : 0).
- reduce_precision: round the mantissa to nearest even, then (when the exponent narrows)
  flush what falls below the narrow format's smallest normal to a signed zero and what
  exceeds its largest to a signed infinity; NaNs stay NaN.
- total order: -NaN < -inf < ... < -0.0 < +0.0 < ... < inf < +NaN, by comparing the bit
  patterns as signed integers after flipping the magnitude bits of negative values.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._composed import lower_by_expansion
from jaxlite.lax._declare import BOOL, FLOATING, INTEGER, elementwise
from jaxlite.lax.arithmetic import add, elementwise_operands, mul, sub
from jaxlite.lax.bitwise import (bitwise_and, bitwise_or, bitwise_xor, population_count,
                                 shift_right_arithmetic, shift_right_logical)
from jaxlite.lax.comparisons import eq, le, lt
from jaxlite.lax.convert import bitcast_convert_type
from jaxlite.lax.selection import select_n
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.reduce_precision import check_format
from jaxlite.xla.reduce_precision import reduce_precision as xla_reduce_precision

__all__ = ["clz", "mulhi", "reduce_precision", "clz_p", "mulhi_p", "reduce_precision_p",
           "eq_to_p", "le_to_p", "lt_to_p"]


def _uint(dtype: Any) -> np.dtype:
    return np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")


def _int(dtype: Any) -> np.dtype:
    return np.dtype(f"int{np.dtype(dtype).itemsize * 8}")


def _const(value: int, dtype: Any) -> np.ndarray:
    """`value` as a 0-d array of `dtype`, wrapping around like the hardware does."""
    dtype = np.dtype(dtype)
    return np.array(value % (1 << (8 * dtype.itemsize)), _uint(dtype)).view(dtype)


def _bits(x: Any) -> Any:
    return bitcast_convert_type(x, _uint(get_aval(x).dtype))


# ----------------------------------------------------------------------------------- clz

def _clz_reference(x: np.ndarray) -> np.ndarray:
    u = np.asarray(x).view(_uint(x.dtype)).copy()
    width = 8 * u.dtype.itemsize
    shift = 1
    while shift < width:
        u |= u >> u.dtype.type(shift)
        shift *= 2
    return (width - np.bitwise_count(u)).astype(x.dtype)


def _clz_expansion(x: Any) -> Any:
    dtype = get_aval(x).dtype
    unsigned, width = _uint(dtype), 8 * np.dtype(dtype).itemsize
    u = _bits(x)
    shift = 1
    while shift < width:
        u = bitwise_or(u, shift_right_logical(u, _const(shift, unsigned)))
        shift *= 2
    count = sub(_const(width, unsigned), population_count(u))
    return bitcast_convert_type(count, dtype)


clz_p = elementwise("clz", _clz_reference, kinds=INTEGER)
clz_p.lower = lower_by_expansion(clz_p, _clz_expansion)
ad.defjvp_zero(clz_p)


def clz(x: Any) -> Any:
    """The number of leading zero bits of each integer, in its dtype (mirrors `jax.lax.clz`)."""
    return clz_p.bind(*elementwise_operands("clz", x))


# --------------------------------------------------------------------------------- mulhi

def _mulhi_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    width = 8 * x.dtype.itemsize
    # Python integers hold the whole product; object arrays keep them exact.
    product = x.astype(object) * y.astype(object)
    high = np.vectorize(lambda p: (int(p) >> width) % (1 << width), otypes=[object])(product)
    return np.asarray(high, dtype=np.uint64 if width == 64 else np.int64).astype(
        _uint(x.dtype)).view(x.dtype).reshape(x.shape)


def _unsigned_mulhi(a: Any, b: Any, half: int) -> Any:
    """High half of the product of unsigned `a` and `b`, from their half-width limbs."""
    dtype = get_aval(a).dtype
    mask, h = _const((1 << half) - 1, dtype), _const(half, dtype)
    a0, a1 = bitwise_and(a, mask), shift_right_logical(a, h)
    b0, b1 = bitwise_and(b, mask), shift_right_logical(b, h)
    low, mid1, mid2, high = mul(a0, b0), mul(a1, b0), mul(a0, b1), mul(a1, b1)
    carry = add(add(shift_right_logical(low, h), bitwise_and(mid1, mask)),
                bitwise_and(mid2, mask))
    return add(add(high, shift_right_logical(mid1, h)),
               add(shift_right_logical(mid2, h), shift_right_logical(carry, h)))


def _mulhi_expansion(x: Any, y: Any) -> Any:
    dtype = np.dtype(get_aval(x).dtype)
    half = 4 * dtype.itemsize
    a, b = _bits(x), _bits(y)
    high = _unsigned_mulhi(a, b, half)
    if dtypes.is_unsigned(dtype):
        return high
    # (a - 2^n [a < 0]) (b - 2^n [b < 0]) has the unsigned product's high half minus the
    # other operand wherever one is negative.
    zero = _const(0, _uint(dtype))
    high = sub(high, select_n(lt(x, _const(0, dtype)), zero, b))
    high = sub(high, select_n(lt(y, _const(0, dtype)), zero, a))
    return bitcast_convert_type(high, dtype)


mulhi_p = elementwise("mulhi", _mulhi_reference, kinds=INTEGER, num_args=2)
mulhi_p.lower = lower_by_expansion(mulhi_p, _mulhi_expansion)
ad.defjvp_zero(mulhi_p)


def mulhi(x: Any, y: Any, /) -> Any:
    """The high half of each product of two integers of one dtype, as if computed in twice
    the width (mirrors `jax.lax.mulhi`)."""
    return mulhi_p.bind(*elementwise_operands("mulhi", x, y))


# ---------------------------------------------------------------------- reduce_precision

def _reduce_precision_reference(x: np.ndarray, *, exponent_bits: int,
                                mantissa_bits: int) -> np.ndarray:
    return xla_reduce_precision(x, exponent_bits, mantissa_bits)


def _lower_reduce_precision(ctx: LoweringContext, x: HloInstruction, *, exponent_bits: int,
                            mantissa_bits: int) -> HloInstruction:
    return hlo.result(ctx, Opcode.REDUCE_PRECISION, (x,), exponent_bits=exponent_bits,
                      mantissa_bits=mantissa_bits)


reduce_precision_p = elementwise("reduce_precision", _reduce_precision_reference,
                                 kinds=(FLOATING,))
reduce_precision_p.reference = _reduce_precision_reference  # no float32 detour: bits matter
reduce_precision_p.lower = _lower_reduce_precision
ad.deflinear(reduce_precision_p)
reduce_precision_p.transpose = lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)]


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """`operand` rounded to a float format with `exponent_bits` and `mantissa_bits`, kept in
    its own dtype (mirrors `jax.lax.reduce_precision`): round to nearest even, overflow to
    infinity, values below the format's smallest normal to zero."""
    exponent_bits, mantissa_bits = check_format(
        operator.index(exponent_bits), operator.index(mantissa_bits), "reduce_precision")
    (x,) = elementwise_operands("reduce_precision", operand)
    return reduce_precision_p.bind(x, exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


# ------------------------------------------------------------------------- total order

def _total_order_key_reference(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if not dtypes.is_floating(x.dtype):
        return x
    i = x.view(_int(x.dtype))
    sign_fill = i >> i.dtype.type(8 * i.dtype.itemsize - 1)
    return i ^ (sign_fill & np.iinfo(i.dtype).max)


def _total_order_key(x: Any) -> Any:
    dtype = np.dtype(get_aval(x).dtype)
    if not dtypes.is_floating(dtype):
        return x
    signed = _int(dtype)
    i = bitcast_convert_type(x, signed)
    sign_fill = shift_right_arithmetic(i, _const(8 * signed.itemsize - 1, signed))
    return bitwise_xor(i, bitwise_and(sign_fill, _const(np.iinfo(signed).max, signed)))


def _total_order_primitive(name: str, compare_np: Any, compare: Any) -> Any:
    def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return compare_np(_total_order_key_reference(x), _total_order_key_reference(y))

    def expansion(x: Any, y: Any) -> Any:
        return compare(_total_order_key(x), _total_order_key(y))

    primitive = elementwise(name, reference, kinds=(BOOL, *INTEGER, FLOATING), num_args=2,
                            result_dtype=lambda dtype: np.dtype(np.bool_))
    primitive.reference = reference  # the bit patterns of float16 must not go through f32
    primitive.lower = lower_by_expansion(primitive, expansion)
    ad.defjvp_zero(primitive)
    return primitive


# Complex operands have no total order in XLA (JAX fails in XLA's verifier on them).
eq_to_p = _total_order_primitive("eq_to", np.equal, eq)
le_to_p = _total_order_primitive("le_to", np.less_equal, le)
lt_to_p = _total_order_primitive("lt_to", np.less, lt)
