"""The Threefry-2x32 counter-based hash as the primitive `threefry2x32` (mirrors JAX's).

`threefry2x32(k1, k2, x1, x2)` hashes each counter pair (x1, x2) under the key (k1, k2) with 20
rounds of Threefry-2x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11),
giving two uint32 words per element. Every random bit of `jaxlite.random` comes from it, and
it computes exactly what JAX's default PRNG implementation computes.

The rounds are written once, against a small table of uint32 operations (`_NumpyOps` for the
eager reference, `_HloOps` for the lowering), so that the two cannot drift apart. The lowering
reuses the lowering rules of `add`, `xor`, `or`, `shift_left` and `shift_right_logical`, so it
emits exactly those HLO opcodes on uint32 arrays.

Also here: the key derivation that JAX's threefry implementation builds on the primitive
(seed, split, fold_in, random bits), on raw uint32 key data of shape (..., 2).

Differences from JAX: operands must be uint32 arrays of one shape, or scalars (which are
broadcast); JAX accepts the same combinations. Random bits for arrays of 2**32 elements or more
are not supported (the high counter word is always zero).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.ad_util import zeros_like_tangent

__all__ = ["threefry2x32_p", "threefry2x32", "threefry_2x32", "threefry_seed",
           "threefry_split", "threefry_fold_in", "threefry_random_bits",
           "threefry_random_bits_per_key", "threefry_split_per_key"]

UINT32 = np.dtype(np.uint32)
# Rotation distances of the even and odd groups of four rounds (Threefry-2x32, 20 rounds).
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
# The key schedule's parity constant for 32-bit words.
_KEY_PARITY = 0x1BD11BDA


def _threefry_rounds(ops: Any, k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """Threefry-2x32 with 20 rounds and a key injection after every 4, on any `ops`.

    `ops` supplies add, xor, or_, shl, shr (logical) on uint32 values and const(value).
    """
    schedule = (k1, k2, ops.xor(ops.xor(k1, k2), ops.const(_KEY_PARITY)))
    x1, x2 = ops.add(x1, schedule[0]), ops.add(x2, schedule[1])
    for block in range(5):
        for distance in _ROTATIONS[block % 2]:
            x1 = ops.add(x1, x2)
            rotated = ops.or_(ops.shl(x2, ops.const(distance)),
                              ops.shr(x2, ops.const(32 - distance)))
            x2 = ops.xor(x1, rotated)
        x1 = ops.add(x1, schedule[(block + 1) % 3])
        x2 = ops.add(ops.add(x2, schedule[(block + 2) % 3]), ops.const(block + 1))
    return x1, x2


class _NumpyOps:
    """uint32 arithmetic on numpy arrays (additions wrap modulo 2**32)."""

    @staticmethod
    def const(value: int) -> np.ndarray:
        return np.asarray(value, UINT32)

    add = staticmethod(np.add)
    xor = staticmethod(np.bitwise_xor)
    or_ = staticmethod(np.bitwise_or)
    shl = staticmethod(np.left_shift)
    shr = staticmethod(np.right_shift)


class _HloOps:
    """uint32 operations as HLO instructions, through the lax primitives' lowering rules."""

    def __init__(self, ctx: Any, shape: tuple[int, ...]) -> None:
        self._ctx = ctx
        self._shape = shape
        self._aval = ShapedArray(shape, UINT32)
        self._constants: dict[int, Any] = {}

    def _apply(self, primitive: Primitive, x: Any, y: Any) -> Any:
        ctx = self._ctx.with_builder(self._ctx.builder, [self._aval] * 2, [self._aval])
        return primitive.lower(ctx, x, y)

    def const(self, value: int) -> Any:
        if value not in self._constants:
            self._constants[value] = hlo.constant(self._ctx, value, UINT32, self._shape)
        return self._constants[value]

    def broadcast(self, x: Any, aval: ShapedArray) -> Any:
        if aval.shape == self._shape:
            return x
        ctx = self._ctx.with_builder(self._ctx.builder, [aval], [self._aval])
        return lax.broadcast_in_dim_p.lower(ctx, x, shape=self._shape, broadcast_dimensions=())

    def add(self, x: Any, y: Any) -> Any:
        return self._apply(lax.add_p, x, y)

    def xor(self, x: Any, y: Any) -> Any:
        return self._apply(lax.xor_p, x, y)

    def or_(self, x: Any, y: Any) -> Any:
        return self._apply(lax.or_p, x, y)

    def shl(self, x: Any, y: Any) -> Any:
        return self._apply(lax.shift_left_p, x, y)

    def shr(self, x: Any, y: Any) -> Any:
        return self._apply(lax.shift_right_logical_p, x, y)


# ----------------------------------------------------------------------- the primitive

threefry2x32_p = Primitive("threefry2x32", multiple_results=True)


def _common_shape(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """The one non-scalar shape among `shapes` (or ()), or a TypeError naming them all."""
    arrays = {s for s in shapes if s != ()}
    if len(arrays) > 1:
        listed = ", ".join(str(s) for s in shapes)
        raise TypeError(f"threefry2x32: the keys and counts must be scalars or arrays of one "
                        f"shape, got shapes {listed}. Broadcast them to a common shape first.")
    return arrays.pop() if arrays else ()


def _threefry2x32_abstract_eval(k1: ShapedArray, k2: ShapedArray, x1: ShapedArray,
                                x2: ShapedArray) -> list[ShapedArray]:
    operands = (k1, k2, x1, x2)
    if any(a.dtype != UINT32 for a in operands):
        names = ", ".join(np.dtype(a.dtype).name for a in operands)
        raise TypeError(f"threefry2x32: the arguments must have dtype uint32, got {names}.")
    shape = _common_shape([a.shape for a in operands])
    return [ShapedArray(shape, UINT32), ShapedArray(shape, UINT32)]


def _threefry2x32_reference(k1: np.ndarray, k2: np.ndarray, x1: np.ndarray,
                            x2: np.ndarray) -> list[np.ndarray]:
    shape = _common_shape([np.shape(a) for a in (k1, k2, x1, x2)])
    # At least 1-d, so that numpy wraps silently instead of warning about scalar overflow.
    operands = [np.broadcast_to(np.asarray(a, UINT32), shape).reshape(-1)
                for a in (k1, k2, x1, x2)]
    out1, out2 = _threefry_rounds(_NumpyOps, *operands)
    return [out1.reshape(shape), out2.reshape(shape)]


def _threefry2x32_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
    # Integer outputs: the tangents are float0 zeros, whatever the input tangents.
    outs = threefry2x32_p.bind(*primals)
    zeros = [zeros_like_tangent(ShapedArray(np.shape(o), dtypes.float0)) for o in outs]
    return outs, zeros


def _threefry2x32_batch(axis_size: int, args: Sequence[Any],
                        dims: Sequence[int | None]) -> tuple[list, list[int]]:
    batched = [np.shape(a)[:d] + np.shape(a)[d + 1:] for a, d in zip(args, dims)
               if d is not None]
    unbatched = [np.shape(a) for a, d in zip(args, dims) if d is None]
    shape = (axis_size,) + _common_shape(batched + unbatched)
    moved = []
    for arg, dim in zip(args, dims):
        if dim is None and np.shape(arg) == ():
            moved.append(arg)  # a scalar broadcasts by itself
            continue
        if dim is None:
            arg = lax.broadcast(arg, (axis_size,))
        elif dim != 0:
            arg = lax.moveaxis(arg, dim, 0)
        if np.shape(arg) != shape:  # a batched scalar against batched arrays
            arg = lax.broadcast_in_dim(arg, shape, (0,))
        moved.append(arg)
    return threefry2x32_p.bind(*moved), [0, 0]


def _threefry2x32_lower(ctx: Any, k1: Any, k2: Any, x1: Any, x2: Any) -> list[Any]:
    shape = tuple(ctx.avals_out[0].shape)
    ops = _HloOps(ctx, shape)
    operands = [ops.broadcast(x, aval) for x, aval in zip((k1, k2, x1, x2), ctx.avals_in)]
    return list(_threefry_rounds(ops, *operands))


threefry2x32_p.abstract_eval = _threefry2x32_abstract_eval
threefry2x32_p.reference = _threefry2x32_reference
threefry2x32_p.jvp = _threefry2x32_jvp
threefry2x32_p.batch = _threefry2x32_batch
threefry2x32_p.lower = _threefry2x32_lower


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> list[Any]:
    """The Threefry-2x32 hash of the counters (x1, x2) under the key (k1, k2).

    Mirrors binding JAX's `threefry2x32_p`: uint32 operands, scalars or arrays of one shape;
    returns the two uint32 output words.
    """
    return threefry2x32_p.bind(k1, k2, x1, x2)


# ------------------------------------------------------------- key derivation (JAX's)

def threefry_2x32(keypair: Any, count: Any) -> Any:
    """Hash a uint32 array of counts under a raw key (mirrors `jax.extend.random.threefry_2x32`).

    The flattened counts (padded with a zero to even length) are split in halves, which are
    hashed as the counter pairs; the two output words, concatenated and unpadded, take the
    counts' shape.
    """
    key1, key2 = keypair[0], keypair[1]
    for name, value in (("keypair", key1), ("count", count)):
        if dtypes.dtype(value) != UINT32:
            raise TypeError(f"threefry_2x32 requires uint32 arguments, got {name} of dtype "
                            f"{np.dtype(dtypes.dtype(value)).name}.")
    shape = tuple(np.shape(count))
    flat = lax.reshape(count, (math.prod(shape),))
    odd = flat.shape[0] % 2
    if odd:
        flat = lax.concatenate([flat, lax.full((1,), 0, UINT32)], 0)
    half = flat.shape[0] // 2
    x1, x2 = lax.slice(flat, (0,), (half,)), lax.slice(flat, (half,), (2 * half,))
    out1, out2 = threefry2x32(key1, key2, x1, x2)
    out = lax.concatenate([out1, out2], 0)
    if odd:
        out = lax.slice(out, (0,), (2 * half - 1,))
    return lax.reshape(out, shape)


def threefry_seed(seed: Any) -> Any:
    """Raw key data (uint32[2]) of an integer seed, as JAX's threefry implementation makes it.

    The first word is the seed's bits above the 32nd (zero for seeds of 32 bits or fewer),
    the second its low 32 bits (sign-extended from narrower signed types).
    """
    dtype = np.dtype(dtypes.dtype(seed))
    if not np.issubdtype(dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got a seed of dtype {dtype.name}.")
    if np.shape(seed) != ():
        raise TypeError(f"PRNG key seed must be a scalar; got shape {np.shape(seed)}.")
    high = lax.shift_right_logical(seed, lax.full((), 32, dtype))
    words = [lax.convert_element_type(w, UINT32) for w in (high, seed)]
    return lax.concatenate([lax.expand_dims(w, (0,)) for w in words], 0)


def _counts(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The row-major element index of `shape` as (high, low) uint32 words (JAX's iota_2x32)."""
    size = math.prod(shape)
    if size >= 2**32:
        raise NotImplementedError(f"random bits for arrays of {size} elements (2**32 or more) "
                                  "are not supported.")
    low = lax.reshape(lax.iota(UINT32, size), shape)
    return lax.full(shape, 0, UINT32), low


def threefry_split(key: Any, shape: tuple[int, ...]) -> Any:
    """`shape` new raw keys from one (uint32[2] -> uint32[*shape, 2]), partitionable scheme."""
    high, low = _counts(shape)
    bits1, bits2 = threefry2x32(key[0], key[1], high, low)
    return lax.concatenate([lax.expand_dims(b, (len(shape),)) for b in (bits1, bits2)],
                           len(shape))


def threefry_fold_in(key: Any, data: Any) -> Any:
    """A new raw key from a key and a 32-bit integer (JAX's threefry fold_in)."""
    return threefry_2x32(key, threefry_seed(lax.convert_element_type(data, UINT32)))


def threefry_random_bits(key: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    """Unsigned integers of `bit_width` bits, of `shape`, from a raw key (partitionable scheme).

    The element with row-major index i gets the hash of the counter (0, i): 32-bit values are
    the xor of the two words, 64-bit ones the two words side by side (first word high), and
    8/16-bit ones the xor truncated.
    """
    _check_bit_width(bit_width)
    high, low = _counts(shape)
    return _combine_words(*threefry2x32(key[0], key[1], high, low), bit_width)


def threefry_random_bits_per_key(keys: Any, bit_width: int) -> Any:
    """One random value from each raw key of `keys` (shape (..., 2) -> (...)).

    Each equals `threefry_random_bits(key, bit_width, ())` of its key: the hash of the
    counter (0, 0).
    """
    _check_bit_width(bit_width)
    words = [lax.squeeze(w, (w.ndim - 1,))
             for w in (lax.slice_in_dim(keys, 0, 1, axis=-1),
                       lax.slice_in_dim(keys, 1, 2, axis=-1))]
    zero = lax.full(np.shape(words[0]), 0, UINT32)
    return _combine_words(*threefry2x32(words[0], words[1], zero, zero), bit_width)


def threefry_split_per_key(keys: Any, num: int) -> Any:
    """`num` new keys from each raw key of `keys` (shape (..., 2) -> (..., num, 2))."""
    batch = tuple(np.shape(keys))[:-1]
    shape = batch + (num,)
    words = [lax.broadcast_in_dim(lax.squeeze(lax.slice_in_dim(keys, i, i + 1, axis=-1),
                                              (len(batch),)),
                                  shape, tuple(range(len(batch))))
             for i in (0, 1)]
    low = lax.broadcasted_iota(UINT32, shape, len(batch))
    bits1, bits2 = threefry2x32(words[0], words[1], lax.full(shape, 0, UINT32), low)
    return lax.concatenate([lax.expand_dims(b, (len(shape),)) for b in (bits1, bits2)],
                           len(shape))


def _check_bit_width(bit_width: int) -> None:
    if bit_width not in (8, 16, 32, 64):
        raise TypeError(f"random bits require an 8-, 16-, 32- or 64-bit width, got "
                        f"{bit_width}.")


def _combine_words(bits1: Any, bits2: Any, bit_width: int) -> Any:
    """The random value of `bit_width` bits that JAX makes from the two hash words."""
    if bit_width == 64:
        wide = [lax.convert_element_type(b, np.uint64) for b in (bits1, bits2)]
        shift = lax.full(np.shape(bits1), 32, np.uint64)
        return lax.bitwise_or(lax.shift_left(wide[0], shift), wide[1])
    mixed = lax.bitwise_xor(bits1, bits2)
    if bit_width == 32:
        return mixed
    return lax.convert_element_type(mixed, np.dtype(f"uint{bit_width}"))
