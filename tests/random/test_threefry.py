"""The threefry2x32 primitive: known answers, shape rule, lowering, derivative and batching.

(Values against numpy on random operands, vmap and jit are in the shared primitive tests,
through tests/lax/records_random.py.)
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.random import _threefry
from jaxlite.random._threefry import threefry2x32

# Threefry-2x32 with 20 rounds: Random123's known-answer vectors (key, counter, result).
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def _u32(*values):
    return np.array(values, np.uint32)


@pytest.mark.parametrize("key,counter,expected", KNOWN_ANSWERS)
def test_known_answers(key, counter, expected):
    args = [_u32(key[0]), _u32(key[1]), _u32(counter[0]), _u32(counter[1])]
    for run in (threefry2x32, jax.jit(threefry2x32)):
        out = run(*args)
        np.testing.assert_array_equal(np.concatenate([np.asarray(o) for o in out]),
                                      _u32(*expected))


def test_scalar_keys_broadcast_against_counters():
    counters = np.arange(6, dtype=np.uint32).reshape(2, 3)
    out = threefry2x32(np.uint32(7), np.uint32(9), counters, counters + 100)
    for i in np.ndindex(2, 3):
        single = threefry2x32(_u32(7), _u32(9), _u32(counters[i]), _u32(counters[i] + 100))
        assert out[0][i] == single[0][0] and out[1][i] == single[1][0]


def test_shape_and_dtype_errors():
    with pytest.raises(TypeError, match="uint32"):
        threefry2x32(_u32(1), _u32(2), np.ones(2, np.int32), np.ones(2, np.int32))
    with pytest.raises(TypeError, match="one shape"):
        threefry2x32(_u32(1, 2), _u32(2, 3), _u32(1, 2, 3), _u32(1, 2, 3))


def test_lowering_uses_uint32_integer_opcodes():
    text = jax.jit(threefry2x32).lower(_u32(1), _u32(2), _u32(3), _u32(4)).as_text()
    opcodes = set(re.findall(r"= \S+ ([a-z-]+)\(", text))
    assert {"add", "xor", "or", "shift-left", "shift-right-logical"} <= opcodes
    assert not opcodes & {"multiply", "convert", "while"}
    assert "u32[" in text


def test_derivative_is_zero():
    def f(x):
        bits = jax.random.bits(jax.random.PRNGKey(0), (3,))
        return x * bits.astype(jnp.float32)
    out, tangent = jax.jvp(f, (2.0,), (1.0,))
    np.testing.assert_allclose(tangent, np.asarray(out) / 2.0, rtol=1e-6)
    _, tangents = jax.jvp(lambda k: threefry2x32(k[0], k[1], k[0], k[1]),
                          (_u32(1, 2),), (np.zeros(2, jax.float0),))
    assert all(np.asarray(t).dtype == jax.float0 for t in tangents)


def test_vmap_with_batched_scalar_key_and_unbatched_counters():
    keys = np.array([[1, 2], [3, 4], [5, 6]], np.uint32)
    counters = np.arange(4, dtype=np.uint32)
    out = jax.vmap(lambda k: threefry2x32(k[0], k[1], counters, counters))(keys)
    for i, k in enumerate(keys):
        expected = threefry2x32(k[0], k[1], counters, counters)
        np.testing.assert_array_equal(out[0][i], expected[0])
        np.testing.assert_array_equal(out[1][i], expected[1])


def test_threefry_2x32_hash_of_odd_length_counts():
    key = _u32(0, 42)
    counts = np.arange(5, dtype=np.uint32)
    out = _threefry.threefry_2x32(key, counts)
    padded = np.concatenate([counts, [0]]).astype(np.uint32)
    words = threefry2x32(key[0], key[1], padded[:3], padded[3:])
    np.testing.assert_array_equal(out, np.concatenate([np.asarray(w) for w in words])[:5])


def test_per_key_helpers_agree_with_single_keys():
    keys = np.asarray(jax.random.split(jax.random.PRNGKey(3), 4))
    bits = _threefry.threefry_random_bits_per_key(keys, 32)
    splits = _threefry.threefry_split_per_key(keys, 3)
    for i, k in enumerate(keys):
        assert bits[i] == jax.random.bits(k)
        np.testing.assert_array_equal(splits[i], jax.random.split(k, 3))
