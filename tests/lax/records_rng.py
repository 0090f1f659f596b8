"""Test records of rng.py: rng_bit_generator against Philox and Threefry written here with
Python integers, one block at a time (independently of jaxlite.lax._rng_bits), and
rng_uniform against the range it must stay in."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from jaxlite import lax
from records import Case, Record

MASK = 0xFFFFFFFF


def philox_block(counter: int, key: tuple[int, int]) -> list[int]:
    """Philox-4x32-10 of a 128-bit counter (word 0 lowest)."""
    c = [(counter >> (32 * i)) & MASK for i in range(4)]
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & MASK, p1 & MASK, ((p0 >> 32) ^ c[3] ^ k1) & MASK,
             p0 & MASK]
        k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
    return c


def threefry_block(counter: int, key: tuple[int, int]) -> tuple[int, int]:
    """Threefry-2x32-20 of a 64-bit counter (x0 the low word)."""
    ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDA]
    x0, x1 = (counter & MASK) + ks[0] & MASK, (counter >> 32) + ks[1] & MASK
    rotations = [(13, 15, 26, 6), (17, 29, 16, 24)]
    for group in range(5):
        for r in rotations[group % 2]:
            x0 = (x0 + x1) & MASK
            x1 = (((x1 << r) | (x1 >> (32 - r))) & MASK) ^ x0
        x0 = (x0 + ks[(group + 1) % 3]) & MASK
        x1 = (x1 + ks[(group + 2) % 3] + group + 1) & MASK
    return x0, x1


def _threefry_positions(shape: tuple) -> list[tuple[int, int]]:
    """(pair, which word) of each element in row-major order: XLA halves one dimension (the
    first even one, else the first longest) and interleaves the two words along it."""
    full = shape or (1,)
    split = next((d for d, n in enumerate(full) if n % 2 == 0),
                 max(range(len(full)), key=lambda d: (full[d], -d)))
    half = list(full)
    half[split] = (full[split] + 1) // 2
    strides = [int(np.prod(half[d + 1:])) for d in range(len(half))]
    positions = []
    for index in itertools.product(*map(range, full)):
        pair = sum((i // 2 if d == split else i) * strides[d] for d, i in enumerate(index))
        positions.append((pair, index[split] % 2))
    return positions[:1] if not shape else positions


def reference_bits(key: np.ndarray, shape: tuple, dtype: Any, algorithm: int) -> list:
    k = [int(w) for w in np.asarray(key).view(np.uint32)]
    counter = k[2] | k[3] << 32
    size = int(np.prod(shape))
    dtype = np.dtype(dtype)
    if algorithm == 1:  # Threefry
        if dtype == np.uint64:
            pairs = [threefry_block(counter + i & (2**64 - 1), (k[0], k[1])) for i in range(size)]
            values, blocks = [x | y << 32 for x, y in pairs], size
        else:
            positions = _threefry_positions(shape)
            blocks = max(p for p, _ in positions) + 1 if size else 0
            pairs = [threefry_block(counter + i & (2**64 - 1), (k[0], k[1]))
                     for i in range(blocks)]
            values = [pairs[p][w] for p, w in positions][:size]
            if shape:
                blocks = int(np.prod([((n + 1) // 2 if d == _split(shape) else n)
                                      for d, n in enumerate(shape)]))
    else:  # Philox, the CPU's default
        words_needed = 2 * size if dtype == np.uint64 else size
        blocks = -(-words_needed // 4)
        base = counter | k[0] << 64 | k[1] << 96
        stream = [w for i in range(blocks) for w in philox_block(base + i, (k[0], k[1]))]
        values = ([stream[2 * i] | stream[2 * i + 1] << 32 for i in range(size)]
                  if dtype == np.uint64 else stream[:size])
    new = counter + blocks
    new_key = np.array([k[0], k[1], new & MASK, new >> 32 & MASK], np.uint32).view(key.dtype)
    bits = np.array([v % (1 << (8 * dtype.itemsize)) for v in values], dtype).reshape(shape)
    return [new_key, bits]


def _split(shape: tuple) -> int:
    return next((d for d, n in enumerate(shape) if n % 2 == 0),
                max(range(len(shape)), key=lambda d: (shape[d], -d)))


def _keys(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)


def _bits_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(0, 5, int(rng.integers(0, 4))))
    algorithm = int(rng.integers(0, 3))

    def fun(key):
        return list(lax.rng_bit_generator(key, shape, dtype, algorithm))
    return Case(fun, lambda key: reference_bits(key, shape, dtype, algorithm),
                [_keys(rng, (4,), np.uint32)], values=_keys)


def _uniform_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(0, 3))))
    low, high = np.array(-2, dtype), np.array(3, dtype)

    def inside(a, b):  # the values are jaxlite's own: check the range, as the reference
        out = lax.rng_uniform(a, b, shape)
        full = lax.full_like(out, 1)
        return lax.convert_element_type(lax.bitwise_and(lax.ge(out, a * full),
                                                        lax.lt(out, b * full)), np.int32)
    return Case(inside, lambda a, b: np.ones(shape, np.int32), [low, high])


RECORDS = [
    Record("rng_bit_generator", _bits_case, dtypes=(np.uint32, np.uint8, np.uint16),
           grad=False, notes="Philox and Threefry bit for bit, all of XLA's layouts"),
    Record("rng_uniform", _uniform_case, dtypes=(np.float32, np.int32), grad=False,
           vmap=False, notes="stateful: only the range is checkable"),
]
