"""Test record of `threefry2x32`, the primitive behind `jaxlite.random`.

The reference is an independent scalar Threefry-2x32 (20 rounds) in Python integers, checked
itself against the known-answer vectors of Random123 in tests/random/test_threefry.py.
Operands are full-range uint32 words; the keys are now and then scalars, which the primitive
broadcasts against array counters.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.random import _threefry
from records import Case, Record

MASK = 0xFFFFFFFF
ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)


def threefry_scalar(k0: int, k1: int, x0: int, x1: int) -> tuple[int, int]:
    """Threefry-2x32-20 of one counter pair, in Python integers (Salmon et al., 2011)."""
    keys = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0, x1 = (x0 + keys[0]) & MASK, (x1 + keys[1]) & MASK
    for round_index in range(20):
        r = ROTATIONS[round_index % 8]
        x0 = (x0 + x1) & MASK
        x1 = ((x1 << r) | (x1 >> (32 - r))) & MASK
        x1 ^= x0
        if round_index % 4 == 3:
            injection = round_index // 4 + 1
            x0 = (x0 + keys[injection % 3]) & MASK
            x1 = (x1 + keys[(injection + 1) % 3] + injection) & MASK
    return x0, x1


def _reference(k0: np.ndarray, k1: np.ndarray, x0: np.ndarray,
               x1: np.ndarray) -> list[np.ndarray]:
    shape = np.broadcast_shapes(*(np.shape(a) for a in (k0, k1, x0, x1)))
    flat = [np.broadcast_to(a, shape).reshape(-1) for a in (k0, k1, x0, x1)]
    pairs = [threefry_scalar(*(int(a[i]) for a in flat)) for i in range(flat[0].size)]
    return [np.array([p[j] for p in pairs], np.uint32).reshape(shape) for j in (0, 1)]


def _words(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)


def _make_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(1, 3))))
    key_shape = () if rng.random() < 0.4 else shape
    args = [_words(rng, key_shape, dtype), _words(rng, key_shape, dtype),
            _words(rng, shape, dtype), _words(rng, shape, dtype)]
    return Case(_threefry.threefry2x32, _reference, args, values=_words)


RECORDS = [Record("threefry2x32", _make_case, dtypes=(np.uint32,), grad=False,
                  notes="integer hash: no derivative; scalar keys broadcast")]
