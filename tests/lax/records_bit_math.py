"""Test records of bit_math.py: clz, mulhi, reduce_precision and the total-order
comparisons eq_to, le_to, lt_to.

The references are written without the primitives' bit tricks: Python integers for clz and
mulhi, numpy's float16 and bfloat16 casts (flushing below the smallest normal, as XLA's
ReducePrecision does) for reduce_precision, and a sort key of (NaN class, value, sign) for
the total order.
"""
from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

from jaxlite import lax
from records import Case, Record

INTEGERS = (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)
BF16 = np.dtype(ml_dtypes.bfloat16)


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(0, 3))))


def _integers(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, shape, dtype=np.int64, endpoint=True)
    # Small magnitudes and the extremes, where carries and signs matter most.
    special = rng.choice([0, 1, -1, info.min, info.max, 2, -2], shape)
    pick = rng.random(shape) < 0.3
    return np.where(pick, special, values).astype(np.int64).clip(info.min, info.max).astype(dtype)


def _clz_case(rng: np.random.Generator, dtype: Any) -> Case:
    width = 8 * np.dtype(dtype).itemsize

    def reference(x):
        bits = x.astype(np.int64) % (1 << width)
        return np.vectorize(lambda v: width - int(v).bit_length())(bits).astype(dtype)
    return Case(lax.clz, reference, [_integers(rng, _shape(rng), dtype)], values=_integers)


def _mulhi_case(rng: np.random.Generator, dtype: Any) -> Case:
    width = 8 * np.dtype(dtype).itemsize
    signed = np.issubdtype(dtype, np.signedinteger)

    def high(a, b):
        value = (int(a) * int(b)) >> width
        value %= 1 << width
        return value - (1 << width) if signed and value >= 1 << (width - 1) else value

    def reference(x, y):
        return np.vectorize(high, otypes=[np.int64])(x, y).astype(dtype)
    shape = _shape(rng)
    return Case(lax.mulhi, reference, [_integers(rng, shape, dtype), _integers(rng, shape, dtype)],
                values=_integers)


def _float_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Magnitudes from 1e-9 to 1e6 (under- and overflow of float16), halfway cases, NaN.

    float16 operands stay normal: rounding a float16 subnormal's bits (what XLA does) is not
    the double rounding through bfloat16 that the reference would do."""
    low = -4.2 if np.dtype(dtype) == np.float16 else -9
    magnitude = 10.0 ** rng.uniform(low, 6, shape)
    values = np.where(rng.random(shape) < 0.5, -magnitude, magnitude)
    special = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1 + 2.0 ** -11, 65520.0], shape)
    with np.errstate(over="ignore"):
        return np.where(rng.random(shape) < 0.2, special, values).astype(dtype)


def _reduce_precision_case(rng: np.random.Generator, dtype: Any) -> Case:
    narrow = [np.float16, BF16] if np.dtype(dtype) == np.float32 else [BF16]
    target = np.dtype(narrow[int(rng.integers(len(narrow)))])
    info = ml_dtypes.finfo(target)
    exponent_bits, mantissa_bits = int(info.nexp), int(info.nmant)

    def reference(x):
        with np.errstate(over="ignore"):
            rounded = x.astype(target).astype(x.dtype)
        if np.dtype(dtype).itemsize > 2 and target == np.float16:
            # XLA flushes what the narrow format can only hold as a subnormal.
            tiny = np.abs(rounded) < np.float32(info.smallest_normal)
            rounded = np.where(tiny, np.copysign(np.zeros_like(x), x), rounded)
        return rounded
    return Case(lambda x: lax.reduce_precision(x, exponent_bits, mantissa_bits), reference,
                [_float_values(rng, _shape(rng), dtype)], values=_float_values)


def _order_key(v: float) -> tuple:
    if math.isnan(v):
        return (-1 if math.copysign(1.0, v) < 0 else 1, 0.0, 0)
    return (0, v, 0 if math.copysign(1.0, v) < 0 else 1)


def _total_order_case(primitive: Any, compare: Any) -> Any:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        pool = np.array([-np.nan, np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf])
        if np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16:
            x, y = (rng.choice(pool, shape).astype(dtype) for _ in range(2))
            key = np.vectorize(lambda a, b: compare(_order_key(float(a)), _order_key(float(b))))
        else:
            x, y = (_integers(rng, shape, dtype) for _ in range(2))
            key = np.vectorize(compare)
        return Case(lambda a, b: primitive.bind(a, b), lambda a, b: key(a, b).astype(bool),
                    [x, y], values=lambda r, s, d: r.choice(pool, s).astype(d)
                    if np.dtype(d).kind == "f" or np.dtype(d) == BF16 else _integers(r, s, d))
    return make_case


TOTAL_ORDER_DTYPES = (np.float32, np.float16, BF16, np.int8, np.uint32)

RECORDS = [
    Record("clz", _clz_case, dtypes=INTEGERS, grad=False),
    Record("mulhi", _mulhi_case, dtypes=INTEGERS, grad=False),
    Record("reduce_precision", _reduce_precision_case, dtypes=(np.float32, np.float16),
           grad=False, notes="derivative (a rounding of the tangent) in test_bit_math.py"),
    Record("eq_to", _total_order_case(lax.eq_to_p, lambda a, b: a == b),
           dtypes=TOTAL_ORDER_DTYPES, grad=False),
    Record("le_to", _total_order_case(lax.le_to_p, lambda a, b: a <= b),
           dtypes=TOTAL_ORDER_DTYPES, grad=False),
    Record("lt_to", _total_order_case(lax.lt_to_p, lambda a, b: a < b),
           dtypes=TOTAL_ORDER_DTYPES, grad=False),
]
