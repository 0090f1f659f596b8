"""The argument path of `jit` calls: views made C-contiguous once and kept in the Array,
and call plans for pytrees of Arrays (`transforms/jit.py`, `runtime/dispatch.py`)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.config import config


def test_broadcast_arguments_are_laid_out_once_and_kept():
    zeros = jnp.zeros((300, 200), jnp.float32)
    ones = jnp.broadcast_to(jnp.asarray(np.float32([1.0, 2.0])), (3, 2))
    assert not np.asarray(zeros).flags.c_contiguous  # a view until passed to jit
    f = jaxlite.jit(lambda z, o: (z[0, :3] + 1.0, o * 2.0))
    for _ in range(2):
        corner, doubled = f(zeros, ones)
        np.testing.assert_array_equal(np.asarray(corner), np.float32([1, 1, 1]))
        np.testing.assert_array_equal(np.asarray(doubled), np.float32([[2, 4]] * 3))
    kept = np.asarray(zeros)
    assert kept.flags.c_contiguous and not kept.flags.writeable
    assert np.asarray(zeros) is kept  # the same buffer on later calls
    np.testing.assert_array_equal(kept, np.zeros((300, 200), np.float32))
    np.testing.assert_array_equal(np.asarray(ones), np.float32([[1, 2]] * 3))
    # Eager operations on the Array see the same contents.
    assert float(jnp.sum(zeros)) == 0.0 and float(jnp.sum(ones)) == 9.0


def test_strided_and_zero_size_arguments():
    x = jnp.asarray(np.arange(24, dtype=np.float32).reshape(4, 6))
    every_other = x[:, ::2]
    empty = jnp.zeros((0, 3), jnp.float32)
    f = jaxlite.jit(lambda a, e: (a.sum(axis=1), e.shape[0] + a[0, 0]))
    sums, first = f(every_other, empty)
    np.testing.assert_array_equal(np.asarray(sums),
                                  np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2].sum(1))
    assert float(first) == 0.0


def test_donating_a_broadcast_argument():
    zeros = jnp.zeros((4, 4), jnp.float32)
    f = jaxlite.jit(lambda z: z + 1.0, donate_argnums=0)
    out = f(zeros)
    np.testing.assert_array_equal(np.asarray(out), np.ones((4, 4), np.float32))
    assert zeros.is_deleted()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(zeros)


def test_plans_for_pytrees_of_arrays():
    tree = {f"w{i}": jnp.zeros((2, 3), jnp.float32) for i in range(5)}
    tree["n"] = jnp.asarray(np.int32([1, 2]))
    f = jaxlite.jit(lambda t, scale: {k: v * scale for k, v in t.items()})
    scale = jnp.asarray(np.float32(3.0))
    for _ in range(3):
        out = f(tree, scale)
        assert out["w0"].dtype == jnp.float32 and not out["w0"].weak_type
        assert out["n"].dtype == jnp.float32  # int32 * float32 promotes
        np.testing.assert_array_equal(np.asarray(out["n"]), np.float32([3, 6]))
    assert len(f._plans) == 1
    # Another leaf dtype, weak type or structure is another signature.
    weak = jnp.asarray(2.0)
    out = f(tree, weak)
    assert out["w1"].dtype == jnp.float32 and not out["w1"].weak_type
    assert out["n"].dtype == jnp.float32 and out["n"].weak_type  # as JAX: int32 * f*
    out = f({"a": weak}, weak)
    assert out["a"].weak_type and float(out["a"]) == 4.0
    out = f({"a": tree["n"]}, scale=scale)  # by keyword
    np.testing.assert_array_equal(np.asarray(out["a"]), np.float32([3, 6]))
    assert len(f._plans) == 4
    # A leaf that is not an Array takes the general path (and JAX's weak scalar rules).
    out = f({"a": tree["n"]}, 2)
    assert out["a"].dtype == jnp.int32 and not out["a"].weak_type  # as JAX
    with config.override("jax_enable_x64", True):
        out = f({"a": jnp.asarray(np.arange(2))}, 2)
        assert out["a"].dtype == jnp.int64


def test_deleted_leaf_in_a_tree_raises():
    leaf = jnp.asarray(np.float32([1.0]))
    f = jaxlite.jit(lambda t: t["a"] + 1.0)
    f({"a": leaf})
    leaf.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f({"a": leaf})
