"""`jaxlite.ref` (mutable array refs, eager only) and `jaxlite.typeof`, against JAX 0.10.2's
values and printing."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def test_ref_reads_writes_and_updates_like_jax():
    ref = jax.new_ref(jnp.zeros(3))
    assert repr(jax.typeof(ref)) == "Ref{float32[3]}"
    ref[0] = 5.0
    np.testing.assert_array_equal(ref[...], [5, 0, 0])
    np.testing.assert_array_equal(ref[1:], [0, 0])
    jax.ref.addupdate(ref, (), jnp.ones(3))
    np.testing.assert_array_equal(ref[...], [6, 1, 1])
    old = jax.ref.swap(ref, slice(0, 1), jnp.array([9.0]))
    np.testing.assert_array_equal(old, [6])
    np.testing.assert_array_equal(jax.ref.get(ref, None), [9, 1, 1])
    jax.ref.set(ref, None, jnp.zeros(3))
    np.testing.assert_array_equal(jax.ref.freeze(ref), [0, 0, 0])
    assert not isinstance(ref, jax.Array) and ref.shape == (3,) and ref.dtype == np.float32
    assert jax.ds(1, 2) == jax.ref.Slice(1, 2, 1)
    np.testing.assert_array_equal(jax.new_ref(jnp.arange(4.0))[jax.ds(1, 2)], [1, 2])


def test_refs_under_transformations_raise_instead_of_going_stale():
    ref = jax.new_ref(jnp.arange(4.0))

    @jax.jit
    def scale(x):
        ref[...] = ref[...] * x

    with pytest.raises(NotImplementedError, match="eager code only"):
        scale(2.0)
    with pytest.raises(NotImplementedError, match="eager code only"):
        jax.grad(lambda x: jax.new_ref(x)[...].sum())(1.0)
    np.testing.assert_array_equal(ref[...], [0, 1, 2, 3])


def test_typeof_prints_as_jax():
    assert repr(jax.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
    assert str(jax.typeof(1.0)) == "~float32[]"
    assert repr(jax.typeof(jnp.ones((2, 3)))) == "ShapedArray(float32[2,3])"
    assert str(jax.typeof(jnp.ones(2, jnp.bfloat16))) == "bfloat16[2]"
    with pytest.raises(TypeError):
        jax.typeof("a")
