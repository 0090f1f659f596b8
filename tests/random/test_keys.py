"""Keys: raw and typed keys, split, fold_in, bits, and the errors JAX gives for bad keys."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import random


def test_raw_key_is_uint32_pair():
    key = random.PRNGKey(3)
    assert key.shape == (2,) and key.dtype == np.uint32
    np.testing.assert_array_equal(key, [0, 3])


def test_typed_key_wraps_raw_data():
    key = random.key(3)
    assert isinstance(key, random.PRNGKeyArray)
    assert key.shape == () and key.ndim == 0 and key.size == 1
    assert str(key.dtype) == "key<fry>" and key.dtype == random.key_dtype()
    np.testing.assert_array_equal(random.key_data(key), [0, 3])
    assert "key<fry>" in repr(key)
    assert random.key_impl(key) == random.key_impl(random.PRNGKey(0)) == "threefry2x32"


def test_split_keeps_the_kind_of_key():
    raw = random.split(random.PRNGKey(0), 3)
    assert raw.shape == (3, 2) and raw.dtype == np.uint32
    typed = random.split(random.key(0), (2, 3))
    assert isinstance(typed, random.PRNGKeyArray) and typed.shape == (2, 3)
    np.testing.assert_array_equal(random.key_data(typed)[0, 1],
                                  random.split(random.PRNGKey(0), (2, 3))[0, 1])


def test_typed_key_indexing_iteration_and_equality():
    keys = random.split(random.key(1), 4)
    assert len(keys) == 4
    assert keys[1].shape == () and keys[1:3].shape == (2,) and keys[..., 0].shape == ()
    parts = list(keys)
    assert len(parts) == 4 and all(p.shape == () for p in parts)
    assert bool(parts[2] == keys[2]) and not bool(parts[2] == keys[3])
    assert bool(parts[0] != keys[1])
    assert keys.reshape(2, 2).shape == (2, 2) and keys.reshape((2, 2)).ravel().shape == (4,)
    again = random.wrap_key_data(random.key_data(keys))
    assert bool(jnp.all(again == keys))
    with pytest.raises(TypeError, match="unsized"):
        len(random.key(0))


def test_fold_in():
    key = random.PRNGKey(0)
    a, b = random.fold_in(key, 1), random.fold_in(key, 2)
    assert a.shape == (2,) and not np.array_equal(a, b)
    np.testing.assert_array_equal(random.fold_in(key, jnp.uint32(1)), a)
    typed = random.fold_in(random.key(0), 1)
    assert isinstance(typed, random.PRNGKeyArray)
    np.testing.assert_array_equal(random.key_data(typed), a)
    with pytest.raises(OverflowError):
        random.fold_in(key, -1)
    with pytest.raises(TypeError, match="scalar"):
        random.fold_in(key, jnp.arange(2))


@pytest.mark.parametrize("dtype,bits", [(np.uint8, 8), (np.uint16, 16), (np.uint32, 32)])
def test_bits_dtypes(dtype, bits):
    out = random.bits(random.PRNGKey(5), (3, 4), dtype)
    assert out.dtype == dtype and out.shape == (3, 4)
    # The narrow types are the truncated 32-bit words.
    wide = np.asarray(random.bits(random.PRNGKey(5), (3, 4)))
    np.testing.assert_array_equal(out, (wide & (2**bits - 1)).astype(dtype))


def test_default_dtypes_follow_x64():
    key = random.PRNGKey(0)
    assert random.bits(key).dtype == np.uint32
    assert random.uniform(key).dtype == np.float32
    assert random.randint(key, (), 0, 3).dtype == np.int32
    with jax.enable_x64(True):
        assert random.bits(key).dtype == np.uint64
        assert random.uniform(key).dtype == np.float64
        assert random.randint(key, (), 0, 3).dtype == np.int64
        assert random.poisson(key, 2.0).dtype == np.int64


@pytest.mark.parametrize("bad,error,match", [
    (np.array([1, 2], np.int32), TypeError, "expected key_data.dtype = uint32"),
    (np.zeros(3, np.uint32), TypeError, "end with"),
    (5, TypeError, "ndim, shape, and dtype"),
])
def test_invalid_key_data(bad, error, match):
    with pytest.raises(error, match=match):
        random.split(bad)


def test_samplers_take_one_key():
    with pytest.raises(ValueError, match="accepts a single key"):
        random.normal(random.split(random.PRNGKey(0)))
    with pytest.raises(ValueError, match="accepts a single key"):
        random.uniform(random.split(random.key(0)))


def test_seed_errors():
    with pytest.raises(TypeError, match="scalar seed"):
        random.PRNGKey(np.arange(2))
    with pytest.raises(TypeError, match="PRNG key"):
        random.key(random.key(0))
    with pytest.raises(OverflowError):
        random.PRNGKey(2**64)
    with pytest.raises(TypeError, match="integer"):
        random.PRNGKey(1.5)


def test_keys_through_jit_and_vmap():
    keys = random.split(random.key(7), 3)
    eager = np.stack([np.asarray(random.normal(k, (2,))) for k in keys])
    np.testing.assert_allclose(jax.vmap(lambda k: random.normal(k, (2,)))(keys), eager,
                               rtol=1e-6)
    split = jax.jit(random.split)(random.key(7))
    assert isinstance(split, random.PRNGKeyArray) and split.shape == (2,)
    np.testing.assert_array_equal(random.key_data(split), random.key_data(random.split(
        random.key(7))))
    seeded = jax.jit(random.PRNGKey)(-1)
    np.testing.assert_array_equal(seeded, random.PRNGKey(-1))
    raw = jax.vmap(random.PRNGKey)(jnp.arange(3))
    np.testing.assert_array_equal(raw, np.stack([random.PRNGKey(i) for i in range(3)]))


def test_keys_have_no_derivative_but_samples_do():
    def f(scale):
        key = random.fold_in(random.PRNGKey(0), 3)
        return jnp.sum(scale * random.normal(key, (4,)))
    expected = np.sum(np.asarray(random.normal(random.fold_in(random.PRNGKey(0), 3), (4,))))
    np.testing.assert_allclose(jax.grad(f)(2.0), expected, rtol=1e-6)
