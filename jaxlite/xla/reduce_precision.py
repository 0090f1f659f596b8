"""XLA's `reduce-precision`: a float rounded to a narrower format (`exponent_bits`,
`mantissa_bits`) and kept in its own type; the algorithm every user of the opcode shares.

The algorithm works on the unsigned bit pattern of the value, written once over a small
set of operations (`BitOps`) so that the evaluator (numpy) and the cpu backend (LLVM IR)
compute the same bits:

- mantissa: round to nearest, ties to even, by adding just under half of the last kept
  bit's weight plus that bit, then clearing the dropped bits (a carry may bump the
  exponent, which is right: the value rounded up to the next binade or to infinity);
- exponent (when the format narrows it): a biased exponent above the narrow format's
  largest becomes a signed infinity, one at or below its smallest normal's a signed zero
  (the narrow format has no subnormals);
- NaN stays NaN: the caller keeps the operand where it is NaN (`nan_result`).

XLA's CPU runtime computes bfloat16 in float32 and converts back with a conversion that
makes every NaN the quiet NaN 0x7fc0 (sign kept), so bfloat16 NaNs come out that way.
"""
from __future__ import annotations

from typing import Any, Protocol

import ml_dtypes
import numpy as np

__all__ = ["BitOps", "reduce_precision", "reduce_precision_bits", "nan_result_bits",
           "float_format", "check_format"]

_BF16 = np.dtype(ml_dtypes.bfloat16)


class BitOps(Protocol):
    """Operations on unsigned bit patterns (of one width) that the algorithm uses."""

    def const(self, value: int) -> Any: ...
    def add(self, a: Any, b: Any) -> Any: ...
    def bit_and(self, a: Any, b: Any) -> Any: ...
    def bit_or(self, a: Any, b: Any) -> Any: ...
    def shift_right(self, a: Any, b: Any) -> Any: ...
    def greater(self, a: Any, b: Any) -> Any: ...
    def less_equal(self, a: Any, b: Any) -> Any: ...
    def where(self, pred: Any, a: Any, b: Any) -> Any: ...


def float_format(dtype: Any) -> tuple[int, int]:
    """(exponent bits, explicit mantissa bits) of a float dtype."""
    info = ml_dtypes.finfo(np.dtype(dtype))
    return int(info.nexp), int(info.nmant)


def check_format(exponent_bits: Any, mantissa_bits: Any, name: str = "reduce-precision"
                 ) -> tuple[int, int]:
    """The two attributes as ints; ValueError (naming `name`) unless exponent_bits >= 1
    and mantissa_bits >= 0."""
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"{name}: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"{name}: mantissa_bits must be non-negative; got {mantissa_bits}")
    return exponent_bits, mantissa_bits


def reduce_precision_bits(bits: Any, dtype: Any, exponent_bits: int, mantissa_bits: int,
                          ops: BitOps) -> Any:
    """The bits of the finite or infinite float whose bit pattern is `bits` (of `dtype`),
    rounded to the format; NaNs are the caller's (see `nan_result_bits`)."""
    src_exponent, src_mantissa = float_format(dtype)
    c = ops.const
    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept = ops.shift_right(ops.bit_and(bits, c(1 << dropped)), c(dropped))
        bias = ops.add(last_kept, c((1 << (dropped - 1)) - 1))
        bits = ops.bit_and(ops.add(bits, bias), c(~((1 << dropped) - 1)))
    if exponent_bits < src_exponent:
        exponent_mask = c(((1 << src_exponent) - 1) << src_mantissa)
        src_bias = (1 << (src_exponent - 1)) - 1
        narrow_bias = (1 << (exponent_bits - 1)) - 1
        exponent = ops.bit_and(bits, exponent_mask)
        overflows = ops.greater(exponent, c((src_bias + narrow_bias) << src_mantissa))
        underflows = ops.less_equal(exponent, c((src_bias - narrow_bias) << src_mantissa))
        signed_zero = ops.bit_and(bits, c(1 << (src_exponent + src_mantissa)))
        signed_inf = ops.bit_or(signed_zero, exponent_mask)
        bits = ops.where(overflows, signed_inf, ops.where(underflows, signed_zero, bits))
    return bits


def nan_result_bits(bits: Any, dtype: Any, ops: BitOps) -> Any:
    """The bits reduce-precision gives for the NaN whose pattern is `bits`: itself, or for
    bfloat16 XLA:CPU's quiet NaN with the operand's sign."""
    if np.dtype(dtype) != _BF16:
        return bits
    return ops.bit_or(ops.bit_and(bits, ops.const(0x8000)), ops.const(0x7FC0))


class _NumpyBits:
    """`BitOps` on numpy arrays of one unsigned dtype (wrapping around on overflow)."""

    def __init__(self, unsigned: np.dtype) -> None:
        self.unsigned = unsigned

    def const(self, value: int) -> np.ndarray:
        return np.asarray(value % (1 << (8 * self.unsigned.itemsize)), self.unsigned)

    add = staticmethod(np.add)
    bit_and = staticmethod(np.bitwise_and)
    bit_or = staticmethod(np.bitwise_or)
    shift_right = staticmethod(np.right_shift)
    greater = staticmethod(np.greater)
    less_equal = staticmethod(np.less_equal)
    where = staticmethod(np.where)


def reduce_precision(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's reduce-precision of a numpy float array (mirrors `jax.lax.reduce_precision`
    as XLA:CPU computes it, bit for bit)."""
    x = np.asarray(x)
    unsigned = np.dtype(f"uint{8 * x.dtype.itemsize}")
    ops = _NumpyBits(unsigned)
    bits = x.view(unsigned)
    with np.errstate(over="ignore"):
        out = reduce_precision_bits(bits, x.dtype, exponent_bits, mantissa_bits, ops)
    nan = nan_result_bits(bits, x.dtype, ops)
    out = np.where(np.isnan(x), nan, out)
    return np.asarray(out, unsigned).view(x.dtype).reshape(x.shape)
