"""rng_bit_generator bit for bit against JAX 0.10.2, and rng_uniform's contract.

data/rng_bits_script.py prints results over 14 shapes, three dtypes, the three algorithms,
eager and jit, uint64 results and keys, counter carries, the jaxpr and the errors;
data/rng_bits_jax.txt is what JAX 0.10.2 printed.
"""
from __future__ import annotations

import numpy as np
import pytest
from recorded_scripts import recorded, run_with_jaxlite

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

def test_rng_bit_generator_matches_jax_line_by_line():
    actual = run_with_jaxlite("rng_bits", "quick")
    quick = ("(5,)", "(2, 3)", "(3, 3)")
    expected = [line for line in recorded("rng_bits")
                if not line.startswith("True ") or line.split(" ", 2)[2].startswith(quick)]
    assert len(actual) == len(expected)
    for number, (a, e) in enumerate(zip(actual, expected)):
        assert a == e, f"line {number}: {a!r} != {e!r}"


def test_random_algorithm_enum():
    assert [(m.name, m.value) for m in lax.RandomAlgorithm] == [
        ("RNG_DEFAULT", 0), ("RNG_THREE_FRY", 1), ("RNG_PHILOX", 2)]
    assert str(lax.RandomAlgorithm.RNG_THREE_FRY) == "RNG_THREE_FRY"


def test_rng_bit_generator_batches_per_key():
    keys = jnp.array([[1, 2, 3, 4], [5, 6, 7, 8]], jnp.uint32)
    batched = jax.vmap(lambda k: lax.rng_bit_generator(k, (3,))[1])(keys)
    for key, row in zip(keys, batched):
        np.testing.assert_array_equal(row, lax.rng_bit_generator(key, (3,))[1])
    with pytest.raises(TypeError, match="the key must be uint32\\[4\\] or uint64\\[2\\]"):
        lax.rng_bit_generator(jnp.array([1, 2], jnp.uint32), (2,))


def test_rng_uniform_range_dtypes_and_errors():
    first, second = lax.rng_uniform(0.0, 1.0, (100,)), lax.rng_uniform(0.0, 1.0, (100,))
    assert first.dtype == np.float32 and np.all((first >= 0) & (first < 1))
    assert not np.array_equal(first, second)  # stateful, as XLA's
    ints = lax.rng_uniform(0, 10, (100,))
    assert ints.dtype == np.int32 and np.all((ints >= 0) & (ints < 10))
    assert "rng_uniform[shape=(3,)]" in str(jax.make_jaxpr(
        lambda: lax.rng_uniform(0.0, 1.0, (3,)))())
    with pytest.raises(ValueError, match="Arguments to rng_uniform must have identical "
                                         "dtypes, got float32 and int32."):
        lax.rng_uniform(0.0, 1, (3,))
