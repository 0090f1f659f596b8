"""`jaxlite.extend.random`: PRNG implementations for libraries (mirrors jax.extend.random).

threefry_2x32's values are JAX 0.10.2's (tests/random/data/expected.json); a toy
implementation defined with `define_prng_impl` must drive every key operation, eagerly and
under jit and vmap, the way JAX runs it (the printed values in the comments are JAX's).
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import random
from jaxlite.extend import random as xr
from random_cases import DATA, expected


@pytest.mark.parametrize("case", DATA["threefry_2x32"])
def test_threefry_2x32_as_jax(case):
    out = xr.threefry_2x32(jnp.asarray(case["keypair"], jnp.uint32),
                           jnp.asarray(case["count"], jnp.uint32))
    np.testing.assert_array_equal(out, expected(case))
    assert xr.threefry2x32_p.name == "threefry2x32"


def test_seed_with_impl_and_random_seed():
    key = xr.seed_with_impl(xr.threefry_prng_impl, 5)
    assert key.dtype == random.key_dtype() and bool(key == random.key(5))
    keys = xr.random_seed(jnp.arange(3), xr.threefry_prng_impl)
    assert keys.shape == (3,)
    np.testing.assert_array_equal(random.key_data(keys), [[0, 0], [0, 1], [0, 2]])
    rbg = xr.seed_with_impl(xr.rbg_prng_impl, 5)
    np.testing.assert_array_equal(random.key_data(rbg), [0, 5, 0, 5])
    assert str(xr.unsafe_rbg_prng_impl) == "urbg"


TOY = xr.define_prng_impl(
    key_shape=(1,),
    seed=lambda s: jnp.reshape(s.astype(jnp.uint32), (1,)),
    split=lambda k, shape: (jnp.broadcast_to(k, (*shape, 1))
                            + jnp.arange(int(np.prod(shape)), dtype=jnp.uint32).reshape(*shape, 1)),
    random_bits=lambda k, width, shape: jnp.full(shape, k[0] * 7, jnp.uint32),
    fold_in=lambda k, d: k + d, name="toy", tag="toy")


def test_a_defined_implementation_drives_the_key_operations():
    key = random.key(3, impl=TOY)
    assert str(key.dtype) == "key<toy>" and str(random.key_impl(key)) == "toy"
    assert repr(key) == "Array((), dtype=key<toy>) overlaying:\n[3]"  # JAX's repr
    np.testing.assert_array_equal(random.key_data(random.split(key, 3)), [[3], [4], [5]])
    np.testing.assert_array_equal(random.bits(key, (2,)), [21, 21])
    assert float(random.uniform(key)) == 0.0  # 21 >> 9 == 0, as in JAX
    np.testing.assert_array_equal(random.key_data(random.fold_in(key, 4)), [7])
    np.testing.assert_array_equal(jax.vmap(random.bits)(random.split(key, 3)), [21, 28, 35])
    np.testing.assert_array_equal(jax.jit(lambda k: random.bits(random.fold_in(k, 1)))(key), 28)
    again = random.wrap_key_data(random.key_data(key), impl=TOY)
    assert again.dtype == key.dtype and bool(again == key)
    assert key.dtype != random.key_dtype()
