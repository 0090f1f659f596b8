"""Bitwise operations on bool and integer arrays: and, or, xor, not, shifts, popcount.

Mirrors `jax.lax.bitwise_and`, `bitwise_or`, `bitwise_xor`, `bitwise_not`, `shift_left`,
`shift_right_logical`, `shift_right_arithmetic` and `population_count` (XLA's And, Or, Xor,
Not, ShiftLeft, ShiftRightLogical, ShiftRightArithmetic and PopulationCount). The primitives
are named as JAX names them: `and`, `or`, `xor`, `not`, `shift_left`, ...

Shift amounts are read as unsigned numbers, as XLA does: an amount at least the bit width
(negative amounts included) shifts every bit out, giving 0, or the sign fill for an
arithmetic right shift. The logical right shift treats signed operands as their unsigned bit
pattern, and the arithmetic one treats unsigned operands as signed.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.interpreters import ad
from jaxlite.lax._declare import BOOL, INTEGER, elementwise
from jaxlite.lax.arithmetic import elementwise_operands
from jaxlite.xla.opcodes import Opcode

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left",
           "shift_right_logical", "shift_right_arithmetic", "population_count",
           "and_p", "or_p", "xor_p", "not_p", "shift_left_p", "shift_right_logical_p",
           "shift_right_arithmetic_p", "population_count_p"]


def _unsigned(dtype: np.dtype) -> np.dtype:
    """The unsigned integer type of the same width (the bit pattern's type)."""
    return np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")


def _signed(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"int{np.dtype(dtype).itemsize * 8}")


def _shift_amount(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The amount as an unsigned number, clipped below the bit width, and where it was not.

    numpy (like C) leaves shifts by the bit width or more undefined, so the clipped amount
    is what is computed with and the mask says where XLA's saturated result must replace it.
    """
    bits = x.dtype.itemsize * 8
    amount = np.asarray(y).view(_unsigned(y.dtype))
    too_far = amount >= bits
    return np.minimum(amount, bits - 1), too_far


# ------------------------------------------------------------------------------ logical

and_p = elementwise("and", np.bitwise_and, kinds=(BOOL, *INTEGER), num_args=2,
                    hlo_opcode=Opcode.AND)
or_p = elementwise("or", np.bitwise_or, kinds=(BOOL, *INTEGER), num_args=2, hlo_opcode=Opcode.OR)
xor_p = elementwise("xor", np.bitwise_xor, kinds=(BOOL, *INTEGER), num_args=2,
                    hlo_opcode=Opcode.XOR)
# np.invert is logical negation on bools and two's complement negation on integers.
not_p = elementwise("not", np.invert, kinds=(BOOL, *INTEGER), hlo_opcode=Opcode.NOT)
for _primitive in (and_p, or_p, xor_p, not_p):
    ad.defjvp_zero(_primitive)


def bitwise_and(x: Any, y: Any) -> Any:
    """Elementwise AND of bools or integers (mirrors `jax.lax.bitwise_and`)."""
    return and_p.bind(*elementwise_operands("and", x, y))


def bitwise_or(x: Any, y: Any) -> Any:
    """Elementwise OR of bools or integers (mirrors `jax.lax.bitwise_or`)."""
    return or_p.bind(*elementwise_operands("or", x, y))


def bitwise_xor(x: Any, y: Any) -> Any:
    """Elementwise exclusive OR of bools or integers (mirrors `jax.lax.bitwise_xor`)."""
    return xor_p.bind(*elementwise_operands("xor", x, y))


def bitwise_not(x: Any) -> Any:
    """Elementwise NOT: logical for bools, every bit flipped for integers.

    Mirrors `jax.lax.bitwise_not`.
    """
    return not_p.bind(*elementwise_operands("not", x))


# ------------------------------------------------------------------------------- shifts

def _shift_left_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    amount, too_far = _shift_amount(x, y)
    shifted = np.left_shift(x, amount.astype(x.dtype))
    return np.where(too_far, np.zeros((), x.dtype), shifted)


def _shift_right_logical_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    amount, too_far = _shift_amount(x, y)
    pattern = np.asarray(x).view(_unsigned(x.dtype))
    shifted = np.right_shift(pattern, amount.astype(pattern.dtype))
    return np.where(too_far, np.zeros((), pattern.dtype), shifted).view(x.dtype)


def _shift_right_arithmetic_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Shifting a signed value by width - 1 already gives the sign fill that XLA gives for
    # larger amounts, so the clipped amount is the whole answer.
    amount, _ = _shift_amount(x, y)
    signed = np.asarray(x).view(_signed(x.dtype))
    return np.right_shift(signed, amount.astype(signed.dtype)).view(x.dtype)


shift_left_p = elementwise("shift_left", _shift_left_reference, kinds=INTEGER, num_args=2,
                           hlo_opcode=Opcode.SHIFT_LEFT)
shift_right_logical_p = elementwise("shift_right_logical", _shift_right_logical_reference,
                                    kinds=INTEGER, num_args=2,
                                    hlo_opcode=Opcode.SHIFT_RIGHT_LOGICAL)
shift_right_arithmetic_p = elementwise("shift_right_arithmetic",
                                       _shift_right_arithmetic_reference, kinds=INTEGER,
                                       num_args=2, hlo_opcode=Opcode.SHIFT_RIGHT_ARITHMETIC)
for _primitive in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p):
    ad.defjvp_zero(_primitive)


def shift_left(x: Any, y: Any) -> Any:
    """Shift the bits of `x` left by `y` (mirrors `jax.lax.shift_left`).

    Amounts of at least the bit width, or negative, give 0, as in XLA.
    """
    return shift_left_p.bind(*elementwise_operands("shift_left", x, y))


def shift_right_logical(x: Any, y: Any) -> Any:
    """Shift the bits of `x` right by `y`, filling with zeros.

    Mirrors `jax.lax.shift_right_logical`. Amounts of at least the bit width, or negative,
    give 0, as in XLA.
    """
    return shift_right_logical_p.bind(*elementwise_operands("shift_right_logical", x, y))


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    """Shift the bits of `x` right by `y`, filling with copies of the top (sign) bit.

    Mirrors `jax.lax.shift_right_arithmetic`. Amounts of at least the bit width, or
    negative, give the sign fill (0 or -1), as in XLA; unsigned operands are shifted as the
    signed numbers of the same bits.
    """
    return shift_right_arithmetic_p.bind(*elementwise_operands("shift_right_arithmetic", x, y))


# ----------------------------------------------------------------------- population count

def _population_count_reference(x: np.ndarray) -> np.ndarray:
    # np.bitwise_count counts the bits of |x| for signed types; XLA counts the bit pattern.
    pattern = np.asarray(x).view(_unsigned(x.dtype))
    return np.bitwise_count(pattern).astype(x.dtype)


population_count_p = elementwise("population_count", _population_count_reference,
                                 kinds=INTEGER, hlo_opcode=Opcode.POPCNT)
ad.defjvp_zero(population_count_p)


def population_count(x: Any) -> Any:
    """The number of set bits in each element of an integer array, in `x`'s dtype.

    Mirrors `jax.lax.population_count`.
    """
    return population_count_p.bind(*elementwise_operands("population_count", x))
