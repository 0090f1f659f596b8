"""Typed keys as JAX has them: arrays of the extended dtype key<fry> (issue 10).

A typed key array is a pytree leaf and a `jax.Array`; structural operations (indexing,
reshaping, concatenating, selecting, comparing) act on it as on an array, which the tests
check against numpy on the keys' uint32 data; it flows through jit, vmap, grad, scan,
while_loop, cond and fori_loop, where the tests compare with the same computation done
eagerly, key by key. The printed forms and the split values are JAX 0.10.2's.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax, random, tree_util
from jaxlite import dtypes as public_dtypes
from jaxlite.core import dtypes as core_dtypes

KEYS = random.split(random.key(3), 6)
DATA = np.asarray(random.key_data(KEYS))


def data_of(keys) -> np.ndarray:
    return np.asarray(random.key_data(keys))


def test_dtype_is_an_extended_prng_key_dtype():
    key = random.key(0)
    assert str(key.dtype) == repr(key.dtype) == key.dtype.name == "key<fry>"
    assert key.dtype == random.key_dtype() == random.key_dtype("threefry2x32")
    assert hash(key.dtype) == hash(random.key_dtype())
    assert key.dtype.itemsize == 8 and KEYS.nbytes == 48
    assert jnp.issubdtype(key.dtype, public_dtypes.prng_key)
    assert jnp.issubdtype(key.dtype, public_dtypes.extended)
    assert not jnp.issubdtype(key.dtype, np.integer)
    assert not jnp.issubdtype(np.uint32, public_dtypes.prng_key)
    assert isinstance(key.dtype, public_dtypes.ExtendedDType)
    assert jnp.result_type(KEYS) == key.dtype
    assert core_dtypes.is_extended(key.dtype) and not core_dtypes.is_extended(np.uint32)


def test_keys_are_array_leaves():
    key = random.key(0)
    assert isinstance(key, jax.Array) and isinstance(KEYS, jax.Array)
    assert tree_util.tree_leaves(key) == [key]
    assert tree_util.tree_leaves({"a": KEYS, "b": [key]}) == [KEYS, key]
    mapped = tree_util.tree_map(lambda x: x, {"k": key})
    assert mapped["k"] is key
    assert np.shape(KEYS) == (6,) and jnp.shape(KEYS) == (6,) and jnp.ndim(KEYS) == 1
    assert KEYS.size == 6 and len(KEYS) == 6 and KEYS.ndim == 1


def test_typeof_is_a_shaped_array_of_the_key_dtype():
    aval = jax.typeof(KEYS)
    assert aval.shape == (6,) and aval.dtype == random.key_dtype()
    assert str(aval) == "key<fry>[6]" and repr(aval) == "ShapedArray(key<fry>[6])"  # as JAX


def test_printing_as_jax():
    # repr(jax.random.key(0)) and repr(jax.random.split(jax.random.key(0))) in JAX 0.10.2
    assert repr(random.key(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert repr(random.split(random.key(0))) == (
        "Array((2,), dtype=key<fry>) overlaying:\n[[1797259609 2579123966]\n"
        " [ 928981903 3453687069]]")
    assert str(random.key(0)) == repr(random.key(0))


def test_key_data_and_wrap_key_data_round_trip():
    data = random.key_data(KEYS)
    assert data.dtype == np.uint32 and data.shape == (6, 2)
    again = random.wrap_key_data(data)
    assert again.dtype == KEYS.dtype and bool(jnp.all(again == KEYS))
    np.testing.assert_array_equal(random.key_data(random.PRNGKey(7)), random.PRNGKey(7))
    wrapped = random.wrap_key_data(np.zeros((4, 2), np.uint32), impl="threefry2x32")
    assert wrapped.shape == (4,)
    with pytest.raises(TypeError, match="end with"):
        random.wrap_key_data(np.zeros((4, 3), np.uint32))
    with pytest.raises(ValueError, match="Cannot specify both"):
        random.wrap_key_data(data, impl="threefry2x32", dtype=KEYS.dtype)


@pytest.mark.parametrize("num,shape", [(2, (2,)), (5, (5,)), ((2, 3), (2, 3))])
def test_split_gives_key_arrays_of_the_raw_keys_values(num, shape):
    keys = random.split(random.key(11), num)
    assert keys.dtype == random.key_dtype() and keys.shape == shape
    np.testing.assert_array_equal(data_of(keys), random.split(random.PRNGKey(11), num))


# (operation on keys, the same operation on their data with numpy)
STRUCTURAL = {
    "index": (lambda k: k[2], lambda d: d[2]),
    "slice": (lambda k: k[1:5:2], lambda d: d[1:5:2]),
    "negative_index": (lambda k: k[-1], lambda d: d[-1]),
    "gather": (lambda k: k[jnp.array([4, 0, 4])], lambda d: d[[4, 0, 4]]),
    "mask": (lambda k: k[np.array([True, False] * 3)], lambda d: d[[0, 2, 4]]),
    "reshape": (lambda k: k.reshape(2, 3), lambda d: d.reshape(2, 3, 2)),
    "jnp.reshape": (lambda k: jnp.reshape(k, (3, 2)), lambda d: d.reshape(3, 2, 2)),
    "transpose": (lambda k: k.reshape(2, 3).T, lambda d: d.reshape(2, 3, 2).transpose(1, 0, 2)),
    "ellipsis": (lambda k: k.reshape(2, 3)[..., 1], lambda d: d.reshape(2, 3, 2)[:, 1]),
    "newaxis": (lambda k: k[None, 1:3], lambda d: d[None, 1:3]),
    "concatenate": (lambda k: jnp.concatenate([k[:2], k[4:]]),
                    lambda d: np.concatenate([d[:2], d[4:]])),
    "stack": (lambda k: jnp.stack([k[0], k[3]]), lambda d: np.stack([d[0], d[3]])),
    "where": (lambda k: jnp.where(jnp.arange(6) % 2 == 0, k, k[0]),
              lambda d: np.where((np.arange(6) % 2 == 0)[:, None], d, d[0])),
    "select": (lambda k: lax.select(jnp.arange(6) < 3, k, k[::-1]),
               lambda d: np.where((np.arange(6) < 3)[:, None], d, d[::-1])),
    "broadcast_to": (lambda k: jnp.broadcast_to(k[1], (2, 3)),
                     lambda d: np.broadcast_to(d[1], (2, 3, 2))),
    "expand_dims": (lambda k: jnp.expand_dims(k, 0), lambda d: d[None]),
    "squeeze": (lambda k: k[None].squeeze(), lambda d: d),
    "flip": (lambda k: jnp.flip(k), lambda d: d[::-1]),
    "roll": (lambda k: jnp.roll(k, 2), lambda d: np.roll(d, 2, axis=0)),
    "take": (lambda k: jnp.take(k, jnp.array([5, 1])), lambda d: d[[5, 1]]),
    "repeat": (lambda k: jnp.repeat(k[:2], 2), lambda d: np.repeat(d[:2], 2, axis=0)),
    "tile": (lambda k: jnp.tile(k[0], (3,)), lambda d: np.tile(d[0], (3, 1))),
    "dynamic_slice": (lambda k: lax.dynamic_slice(k, (jnp.int32(2),), (3,)), lambda d: d[2:5]),
    "dynamic_update_slice": (lambda k: lax.dynamic_update_slice(k, k[:2], (jnp.int32(3),)),
                             lambda d: np.concatenate([d[:3], d[:2], d[5:]])),
    "at_set": (lambda k: k.at[1].set(k[5]), lambda d: np.concatenate([d[:1], d[5:], d[2:]])),
    "zeros_like": (lambda k: jnp.zeros_like(k), lambda d: np.zeros_like(d)),
    "copy": (lambda k: jnp.copy(k), lambda d: d),
    "asarray": (lambda k: jnp.asarray(k), lambda d: d),
}


@pytest.mark.parametrize("name", list(STRUCTURAL))
def test_structural_operations_act_on_the_key_data(name):
    on_keys, on_data = STRUCTURAL[name]
    out = on_keys(KEYS)
    assert out.dtype == random.key_dtype()
    np.testing.assert_array_equal(data_of(out), on_data(DATA))


@pytest.mark.parametrize("name", ["index", "gather", "reshape", "concatenate", "where",
                                  "dynamic_update_slice", "at_set", "roll", "zeros_like"])
def test_structural_operations_under_jit(name):
    on_keys, on_data = STRUCTURAL[name]
    out = jax.jit(on_keys)(KEYS)
    assert out.dtype == random.key_dtype()
    np.testing.assert_array_equal(data_of(out), on_data(DATA))


def test_equality_and_iteration():
    eq = KEYS == KEYS[2]
    assert eq.dtype == np.bool_ and eq.shape == (6,)
    np.testing.assert_array_equal(eq, np.all(DATA == DATA[2], axis=-1))
    np.testing.assert_array_equal(KEYS != KEYS[::-1], np.any(DATA != DATA[::-1], axis=-1))
    np.testing.assert_array_equal(jax.jit(lambda a, b: a == b)(KEYS, KEYS[0]),
                                  np.all(DATA == DATA[0], axis=-1))
    parts = list(KEYS)
    assert len(parts) == 6 and all(p.shape == () for p in parts)
    np.testing.assert_array_equal(np.stack([data_of(p) for p in parts]), DATA)
    first, second = random.split(random.key(0))  # unpacking, as users write it
    np.testing.assert_array_equal(data_of(second), random.split(random.PRNGKey(0))[1])


@pytest.mark.parametrize("operation", [
    lambda k: k + 1, lambda k: k * k, lambda k: jnp.sum(k), lambda k: k.astype(np.uint32),
    lambda k: jnp.sin(k), lambda k: lax.convert_element_type(k, np.float32)])
def test_arithmetic_on_keys_raises_type_error(operation):
    with pytest.raises(TypeError):
        operation(KEYS)
    with pytest.raises(TypeError):
        jax.jit(operation)(KEYS)


def test_numpy_conversion_raises():
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(KEYS)


# ------------------------------------------------------------------------ transformations

def _normals(keys):
    return np.stack([np.asarray(random.normal(k, (3,))) for k in keys])


def test_jit_with_keys_as_arguments_outputs_and_closures():
    key = random.key(5)
    split = jax.jit(random.split)(key)
    assert split.dtype == key.dtype and split.shape == (2,)
    np.testing.assert_array_equal(data_of(split), data_of(random.split(key)))
    same = jax.jit(lambda k: k)(KEYS)
    assert same.dtype == KEYS.dtype and bool(jnp.all(same == KEYS))
    closed = jax.jit(lambda: random.normal(key, (3,)))()
    np.testing.assert_array_equal(closed, random.normal(key, (3,)))
    pair = jax.jit(lambda k: (k, random.uniform(k)))(key)
    assert pair[0].dtype == key.dtype
    jaxpr = jax.make_jaxpr(lambda k: random.split(k)[0])(key)
    assert "key<fry>[]" in str(jaxpr)


def test_vmap_in_axes_and_out_axes():
    out = jax.vmap(lambda k: random.normal(k, (3,)))(KEYS)
    np.testing.assert_array_equal(out, _normals(KEYS))
    grid = KEYS.reshape(2, 3)
    by_column = jax.vmap(jax.vmap(random.uniform), in_axes=1)(grid)
    np.testing.assert_array_equal(
        by_column, np.array([[random.uniform(grid[i, j]) for i in range(2)] for j in range(3)]))
    splits = jax.vmap(random.split, out_axes=1)(KEYS)
    assert splits.shape == (2, 6) and splits.dtype == KEYS.dtype
    np.testing.assert_array_equal(data_of(splits[:, 4]), data_of(random.split(KEYS[4])))
    folded = jax.vmap(lambda i: random.fold_in(random.key(0), i))(jnp.arange(3))
    np.testing.assert_array_equal(
        data_of(folded), np.stack([data_of(random.fold_in(random.key(0), i)) for i in range(3)]))
    wrapped = jax.vmap(random.wrap_key_data, in_axes=1)(DATA.T.copy())
    assert wrapped.shape == (6,) and bool(jnp.all(wrapped == KEYS))


def test_grad_with_keys_as_plain_and_integer_arguments():
    key = random.key(2)
    expected = float(random.normal(key))
    assert float(jax.grad(lambda x, k: x * random.normal(k))(2.0, key)) == expected
    grads = jax.grad(lambda x, k: x * random.normal(k), argnums=(0, 1), allow_int=True)(2.0, key)
    assert float(grads[0]) == expected
    assert grads[1].dtype == core_dtypes.float0 and grads[1].shape == ()
    _, pullback = jax.vjp(lambda k: random.key_data(k).astype(np.float32), KEYS)
    (cotangent,) = pullback(jnp.ones((6, 2)))
    assert cotangent.dtype == core_dtypes.float0 and cotangent.shape == (6,)


def test_scan_with_keys_in_carry_and_xs():
    def step(carry, key):
        carry_key, total = carry
        carry_key, sub = random.split(carry_key)
        return (carry_key, total + random.normal(sub)), random.uniform(key)

    def by_hand():
        carry_key, total, ys = random.key(9), np.float32(0), []
        for key in KEYS:
            carry_key, sub = random.split(carry_key)
            total = total + np.asarray(random.normal(sub))
            ys.append(np.asarray(random.uniform(key)))
        return carry_key, total, np.stack(ys)
    want_key, want_total, want_ys = by_hand()
    for run in (lambda f: f, jax.jit):
        (key, total), ys = run(lambda k, ks: lax.scan(step, (k, 0.0), ks))(random.key(9), KEYS)
        assert key.dtype == random.key_dtype()
        np.testing.assert_array_equal(data_of(key), data_of(want_key))
        np.testing.assert_allclose(total, want_total, rtol=1e-6)
        np.testing.assert_array_equal(ys, want_ys)
    stacked = lax.scan(lambda c, x: (c, random.split(c)[1]), random.key(1), None, length=3)[1]
    assert stacked.dtype == random.key_dtype() and stacked.shape == (3,)


def test_while_loop_cond_and_fori_loop_carry_keys():
    def fold(i, key):
        return random.fold_in(key, i)
    by_hand = random.key(4)
    for i in range(5):
        by_hand = fold(i, by_hand)
    for run in (lambda f: f, jax.jit):
        out = run(lambda k: lax.fori_loop(0, 5, fold, k))(random.key(4))
        np.testing.assert_array_equal(data_of(out), data_of(by_hand))
        counted = run(lambda k: lax.while_loop(lambda c: c[0] < 5,
                                               lambda c: (c[0] + 1, fold(c[0], c[1])),
                                               (0, k)))(random.key(4))
        np.testing.assert_array_equal(data_of(counted[1]), data_of(by_hand))
        chosen = run(lambda p, k: lax.cond(p, lambda k: random.split(k)[1], lambda k: k, k))(
            True, random.key(4))
        np.testing.assert_array_equal(data_of(chosen), data_of(random.split(random.key(4))[1]))


def test_grad_through_scan_over_keys():
    def loss(x):
        return lax.scan(lambda c, k: (c + x * random.normal(k), None), 0.0, KEYS)[0]
    expected = float(np.sum(np.asarray(jax.vmap(random.normal)(KEYS))))
    np.testing.assert_allclose(jax.grad(loss)(1.5), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(1.5), expected, rtol=1e-6)


def test_checkpoint_and_pickling():
    key = random.key(8)
    grad = jax.grad(jax.checkpoint(lambda x, k: x * random.normal(k)))(1.0, key)
    assert float(grad) == float(random.normal(key))
    again = pickle.loads(pickle.dumps(KEYS))
    assert again.dtype == KEYS.dtype and bool(jnp.all(again == KEYS))


def test_other_implementations():
    rbg = random.key(0, impl="rbg")
    assert str(rbg.dtype) == "key<rbg>" and random.key_data(rbg).shape == (4,)
    assert random.key_impl(rbg) == "rbg" and random.split(rbg, 3).shape == (3,)
    with pytest.raises(NotImplementedError, match="RngBitGenerator"):
        random.uniform(rbg)
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        random.key(0, impl="philox")


def test_astype_of_keys_to_their_own_dtype_is_a_no_op():
    # optax.MultiSteps does jnp.astype(jnp.where(emit, new, old), old.dtype) on every state
    # leaf, keys included; JAX 0.10.2 returns the keys, and refuses other dtypes.
    keys = jax.random.split(jax.random.key(0))
    same = jnp.astype(jnp.where(True, keys, keys), keys.dtype)
    np.testing.assert_array_equal(jax.random.key_data(same), jax.random.key_data(keys))
    jitted = jax.jit(lambda k: jnp.astype(jnp.where(True, k, k), k.dtype))(keys)
    np.testing.assert_array_equal(jax.random.key_data(jitted), jax.random.key_data(keys))
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to uint32"):
        jnp.astype(keys, jnp.uint32)
    with pytest.raises(ValueError, match="Cannot convert_element_type from uint32 to key<fry>"):
        jnp.astype(jnp.ones(2, jnp.uint32), keys.dtype)
