"""The counter-based generators behind `rng_bit_generator` and `rng_uniform`: Philox-4x32-10
and Threefry-2x32-20 on uint32 words, and how XLA lays their words out in a result.

Written once over a small set of word operations, given by `NumpyWords` (the primitives'
references) or `LaxWords` (their lowering, as lax operations), so that both compute the
same bits. See `jaxlite.lax.rng` for the layouts.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core.avals import get_aval
from jaxlite.lax.arithmetic import add, mul, rem, sub
from jaxlite.lax.bit_math import mulhi
from jaxlite.lax.bitwise import bitwise_or, bitwise_xor, shift_left, shift_right_logical
from jaxlite.lax.broadcast import broadcast_in_dim, reshape
from jaxlite.lax.comparisons import lt
from jaxlite.lax.convert import bitcast_convert_type, convert_element_type
from jaxlite.lax.joining import stack
from jaxlite.lax.shape_ops import iota
from jaxlite.lax.slicing import concatenate, slice_in_dim

U32, U64 = np.dtype(np.uint32), np.dtype(np.uint64)
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
THREEFRY_PARITY = 0x1BD11BDA


class NumpyWords:
    """Word operations on numpy uint32 arrays (they wrap around as the hardware does)."""

    add = staticmethod(np.add)
    mul = staticmethod(np.multiply)
    xor = staticmethod(np.bitwise_xor)
    or_ = staticmethod(np.bitwise_or)
    shl = staticmethod(lambda x, n: np.left_shift(x, np.asarray(n, np.asarray(x).dtype)))
    shr = staticmethod(lambda x, n: np.right_shift(x, np.asarray(n, np.asarray(x).dtype)))
    lt = staticmethod(np.less)
    mulhi = staticmethod(lambda a, b: ((np.asarray(a, U64) * np.asarray(b, U64)) >> 32)
                         .astype(U32))
    convert = staticmethod(lambda x, dtype: np.asarray(x).astype(dtype))
    iota = staticmethod(lambda n: np.arange(n, dtype=U32))
    reshape = staticmethod(np.reshape)
    stack = staticmethod(lambda xs, axis: np.stack(xs, axis=axis))
    concatenate = staticmethod(lambda xs, axis: np.concatenate(xs, axis=axis))
    take = staticmethod(lambda x, start, stop, axis: np.take(x, np.arange(start, stop), axis))
    bitcast = staticmethod(lambda x, dtype: np.asarray(x).view(dtype))
    sub = staticmethod(np.subtract)
    rem = staticmethod(lambda x, y: np.remainder(x, np.maximum(y, 1)))
    broadcast_to = staticmethod(lambda x, like: np.broadcast_to(x, np.shape(like)))
    dtype_of = staticmethod(lambda x: np.asarray(x).dtype)

    @staticmethod
    def key_words(key: np.ndarray) -> list[np.ndarray]:
        return list(np.asarray(key).view(U32).reshape(4))

    @staticmethod
    def new_key(key: np.ndarray, words: Sequence[Any], blocks: int) -> np.ndarray:
        counter = (int(words[2]) | int(words[3]) << 32) + blocks
        out = np.array([words[0], words[1], counter & 0xFFFFFFFF, (counter >> 32) & 0xFFFFFFFF],
                       U32)
        return out.view(key.dtype)

    @staticmethod
    def constant_key(seed: int) -> np.ndarray:
        return np.array([seed & 0xFFFFFFFF, seed >> 32 & 0xFFFFFFFF, 0, 0], U32)

    @staticmethod
    def uniform(words: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return uniform_from_words(words, a, b, NumpyWords)


class LaxWords:
    """Word operations as lax functions (for lowering)."""

    add = staticmethod(add)
    mul = staticmethod(mul)
    xor = staticmethod(bitwise_xor)
    or_ = staticmethod(bitwise_or)
    shl = staticmethod(lambda x, n: shift_left(x, np.asarray(n, get_aval(x).dtype)))
    shr = staticmethod(lambda x, n: shift_right_logical(x, np.asarray(n, get_aval(x).dtype)))
    lt = staticmethod(lt)
    mulhi = staticmethod(lambda a, b: mulhi(*_same_shape(np.asarray(a, U32), b)))
    convert = staticmethod(convert_element_type)
    iota = staticmethod(lambda n: iota(U32, n))
    reshape = staticmethod(lambda x, shape: reshape(x, tuple(shape)))
    stack = staticmethod(lambda xs, axis: stack(xs, axis))
    concatenate = staticmethod(lambda xs, axis: concatenate(list(xs), axis))
    take = staticmethod(lambda x, start, stop, axis: slice_in_dim(x, start, stop, 1, axis))
    bitcast = staticmethod(bitcast_convert_type)
    sub = staticmethod(sub)
    rem = staticmethod(rem)
    broadcast_to = staticmethod(lambda x, like: broadcast_in_dim(x, get_aval(like).shape, ()))
    dtype_of = staticmethod(lambda x: np.dtype(get_aval(x).dtype))

    @staticmethod
    def key_words(key: Any) -> list[Any]:
        words = reshape(bitcast_convert_type(key, U32), (4,)) \
            if get_aval(key).dtype == U64 else key
        return [reshape(slice_in_dim(words, i, i + 1, 1, 0), ()) for i in range(4)]

    @staticmethod
    def new_key(key: Any, words: Sequence[Any], blocks: int) -> Any:
        low = add(words[2], np.uint32(blocks & 0xFFFFFFFF))
        carry = convert_element_type(lt(low, words[2]), U32)
        high = add(add(words[3], np.uint32(blocks >> 32 & 0xFFFFFFFF)), carry)
        out = stack([words[0], words[1], low, high], 0)
        if get_aval(key).dtype == U64:
            return bitcast_convert_type(reshape(out, (2, 2)), U64)
        return out

    @staticmethod
    def constant_key(seed: int) -> np.ndarray:
        return NumpyWords.constant_key(seed)

    @staticmethod
    def uniform(words: Any, a: Any, b: Any) -> Any:
        return uniform_from_words(words, a, b, LaxWords)


def _same_shape(a: np.ndarray, b: Any) -> tuple[Any, Any]:
    return broadcast_in_dim(a, get_aval(b).shape, ()), b


def _u32(ops: Any, value: int) -> np.ndarray:
    return np.asarray(value & 0xFFFFFFFF, U32)


def _carry(ops: Any, total: Any, addend: Any) -> Any:
    """1 where `total = x + addend` wrapped around, else 0 (as uint32)."""
    return ops.convert(ops.lt(total, addend), U32)


# ----------------------------------------------------------------------------- Philox

def philox_rounds(counter: Sequence[Any], key: Sequence[Any], ops: Any) -> list[Any]:
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        hi0, lo0 = ops.mulhi(PHILOX_M[0], c0), ops.mul(_u32(ops, PHILOX_M[0]), c0)
        hi1, lo1 = ops.mulhi(PHILOX_M[1], c2), ops.mul(_u32(ops, PHILOX_M[1]), c2)
        c0, c1, c2, c3 = (ops.xor(ops.xor(hi1, c1), k0), lo1,
                          ops.xor(ops.xor(hi0, c3), k1), lo0)
        k0, k1 = ops.add(k0, _u32(ops, PHILOX_W[0])), ops.add(k1, _u32(ops, PHILOX_W[1]))
    return [c0, c1, c2, c3]


def philox_output(words: Sequence[Any], shape: tuple, dtype: np.dtype,
                  ops: Any) -> tuple[Any, int]:
    """Philox words for a result of `shape` and `dtype`, and the blocks used."""
    k0, k1, c0, c1 = words
    size = int(np.prod(shape, dtype=np.int64))
    needed = 2 * size if dtype == U64 else size
    blocks = -(-needed // 4)
    if blocks == 0:
        return ops.reshape(ops.convert(ops.iota(0), dtype), shape), 0
    index = ops.iota(blocks)
    # The 128-bit counter (c0, c1, k0, k1) plus the block index, with carries.
    x0 = ops.add(c0, index)
    carry = _carry(ops, x0, index)
    x1 = ops.add(c1, carry)
    carry = _carry(ops, x1, carry)
    x2 = ops.add(k0, carry)
    carry = _carry(ops, x2, carry)
    x3 = ops.add(k1, carry)
    out = philox_rounds([x0, x1, x2, x3], [k0, k1], ops)
    stream = ops.reshape(ops.stack(out, 1), (4 * blocks,))
    return _from_stream(ops.take(stream, 0, needed, 0), size, shape, dtype, ops), blocks


def _from_stream(stream: Any, size: int, shape: tuple, dtype: np.dtype, ops: Any) -> Any:
    """Consecutive words as `dtype`: truncated, or joined in (low, high) pairs."""
    if dtype == U64:
        pairs = ops.reshape(stream, (size, 2))
        low = ops.convert(ops.reshape(ops.take(pairs, 0, 1, 1), (size,)), U64)
        high = ops.convert(ops.reshape(ops.take(pairs, 1, 2, 1), (size,)), U64)
        return ops.reshape(ops.or_(low, ops.shl(high, 32)), shape)
    return ops.reshape(ops.convert(stream, dtype), shape)


# ---------------------------------------------------------------------------- Threefry

def _rotl(x: Any, r: int, ops: Any) -> Any:
    return ops.or_(ops.shl(x, r), ops.shr(x, 32 - r))


def threefry_rounds(x: Sequence[Any], key: Sequence[Any], ops: Any) -> list[Any]:
    k0, k1 = key
    schedule = [k0, k1, ops.xor(ops.xor(k0, k1), _u32(ops, THREEFRY_PARITY))]
    x0, x1 = ops.add(x[0], schedule[0]), ops.add(x[1], schedule[1])
    for group in range(5):
        for r in THREEFRY_ROTATIONS[group % 2]:
            x0 = ops.add(x0, x1)
            x1 = ops.xor(_rotl(x1, r, ops), x0)
        x0 = ops.add(x0, schedule[(group + 1) % 3])
        x1 = ops.add(ops.add(x1, schedule[(group + 2) % 3]), _u32(ops, group + 1))
    return [x0, x1]


def _split_dimension(shape: tuple) -> int:
    """XLA's choice: the first dimension of even size, else the (first) longest."""
    for d, n in enumerate(shape):
        if n % 2 == 0:
            return d
    return int(np.argmax(shape))


def threefry_output(words: Sequence[Any], shape: tuple, dtype: np.dtype,
                    ops: Any) -> tuple[Any, int]:
    """Threefry words for a result of `shape` and `dtype`, and the blocks (pairs) used."""
    k0, k1, c0, c1 = words
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return ops.reshape(ops.convert(ops.iota(0), dtype), shape), 0
    if dtype == U64:
        blocks = size
    else:
        full = shape or (1,)
        split = _split_dimension(full)
        half = full[:split] + (-(-full[split] // 2), 1) + full[split + 1:]
        blocks = int(np.prod(half, dtype=np.int64))
    index = ops.iota(blocks)
    low = ops.add(c0, index)
    x, y = threefry_rounds([low, ops.add(c1, _carry(ops, low, index))], [k0, k1], ops)
    if dtype == U64:
        joined = ops.or_(ops.convert(x, U64), ops.shl(ops.convert(y, U64), 32))
        return ops.reshape(joined, shape), blocks
    pairs = ops.concatenate([ops.reshape(x, half), ops.reshape(y, half)], split + 1)
    widened = full[:split] + (2 * half[split],) + full[split + 1:]
    out = ops.take(ops.reshape(pairs, widened), 0, full[split], split)
    return ops.reshape(ops.convert(out, dtype), shape), blocks


# ------------------------------------------------------------------------------ uniform

def uniform_from_words(words: Any, a: Any, b: Any, ops: Any) -> Any:
    """Numbers in [a, b) from uint32 words: the top 23 bits as a float32 mantissa in
    [1, 2) for floats (scaled to [a, b)), the words modulo b - a for integers."""
    dtype = ops.dtype_of(a)
    if dtype.kind == "f":
        mantissa = ops.or_(ops.shr(words, 9), _u32(ops, 0x3F800000))
        unit = ops.sub(ops.bitcast(mantissa, np.dtype(np.float32)), np.float32(1.0))
        unit = ops.convert(unit, dtype)
        scaled = ops.mul(unit, ops.broadcast_to(ops.sub(b, a), unit))
        return ops.add(scaled, ops.broadcast_to(a, unit))
    span = ops.broadcast_to(ops.convert(ops.sub(b, a), U32), words)
    offset = ops.convert(ops.rem(words, span), dtype)
    return ops.add(offset, ops.broadcast_to(a, offset))
