"""`jaxlite.tree`, `jaxlite.flatten_util`, `jaxlite.typing` and `jaxlite.dtypes` (the public
faces), against behaviour recorded from JAX 0.10.2."""
from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.flatten_util import ravel_pytree


def test_tree_functions_are_tree_util_functions():
    tree = {"b": [1, 2], "a": (3, None)}
    assert jax.tree.leaves(tree) == [3, 1, 2]
    assert jax.tree.map(lambda x: x * 2, tree) == {"b": [2, 4], "a": (6, None)}
    leaves, treedef = jax.tree.flatten(tree)
    assert jax.tree.unflatten(treedef, leaves) == tree
    assert jax.tree.structure(tree) == treedef
    assert jax.tree.reduce(lambda a, b: a + b, tree) == 6
    assert jax.tree.reduce_associative(lambda a, b: a + b, tree) == 6
    assert jax.tree.all([True, (1, 2)]) and not jax.tree.all([True, 0])
    assert jax.tree.map_with_path(lambda p, x: len(p), [1, [2]]) == [1, [2]]
    assert [len(p) for p, _ in jax.tree.leaves_with_path([1, [2]])] == [1, 2]
    assert jax.tree.broadcast([1, 2], [[3, 4], 5]) == [[1, 1], 2]
    inner = jax.tree.structure((0, 0))
    assert jax.tree.transpose(jax.tree.structure([0, 0]), inner,
                              [(1, 2), (3, 4)]) == ([1, 3], [2, 4])


def test_tree_static_marks_a_dataclass_field_static():
    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: typing.Any
        op: str = jax.tree.static(default="add")

    leaves, treedef = jax.tree.flatten(Op(x=jnp.ones(3)))
    assert len(leaves) == 1
    assert str(treedef) == "PyTreeDef(CustomNode(Op[('add',)], [*]))"
    assert jax.tree.unflatten(treedef, leaves).op == "add"


def test_ravel_pytree_mixed_dtypes():
    tree = {"a": jnp.ones(2, jnp.int32), "b": jnp.zeros((1, 2), jnp.float32)}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float32 and flat.tolist() == [1, 1, 0, 0]
    back = unravel(flat)
    assert back["a"].dtype == np.int32 and back["b"].dtype == np.float32
    assert back["b"].shape == (1, 2)
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(jnp.ones(4, jnp.float16))
    # int32 joins float16 at float16 on JAX's lattice.
    tree["b"] = tree["b"].astype(jnp.float16)
    assert ravel_pytree(tree)[0].dtype == np.float16
    with pytest.raises(ValueError, match="Sum of sizes 4"):
        unravel(jnp.ones(5))


def test_ravel_pytree_edge_cases_as_jax():
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == np.float32 and unravel(flat) == {}
    flat, unravel = ravel_pytree([1.0, 2])
    assert [x.dtype for x in unravel(flat)] == [np.float32, np.int32]
    # One common dtype: the vector's dtype passes through, as in JAX.
    _, unravel = ravel_pytree([jnp.ones(2)])
    assert unravel(jnp.ones(2, jnp.int32))[0].dtype == np.int32
    flat, unravel = ravel_pytree([jnp.ones(2, jnp.complex64), jnp.ones(1)])
    assert flat.dtype == np.complex64 and unravel(flat)[1].dtype == np.float32
    flat, _ = ravel_pytree([jnp.ones(2, jnp.uint32), jnp.ones(1, jnp.int32)])
    assert flat.dtype == np.int32


def test_ravel_pytree_under_transformations():
    tree = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(2)}
    flat = jax.jit(lambda t: ravel_pytree(t)[0])(tree)
    np.testing.assert_array_equal(flat, [1, 1, 0, 1, 2, 3, 4, 5])
    grads = jax.grad(lambda t: jnp.sum(ravel_pytree(t)[0] ** 2))(tree)
    np.testing.assert_array_equal(grads["w"], 2 * tree["w"])
    batched = jax.vmap(lambda t: ravel_pytree(t)[0])({"x": jnp.ones((4, 2)), "y": jnp.zeros(4)})
    assert batched.shape == (4, 3)


def test_typing_aliases_cover_arrays_and_dtypes():
    args = typing.get_args(jax.typing.ArrayLike)
    assert jax.Array in args and np.ndarray in args and float in args
    assert np.dtype in typing.get_args(jax.typing.DTypeLike)


def test_dtypes_module():
    assert jax.dtypes.canonicalize_dtype(np.float64) == np.float32
    with jax.enable_x64():
        assert jax.dtypes.canonicalize_dtype(np.float64) == np.float64
    assert jax.dtypes.issubdtype(jnp.bfloat16, np.floating)
    assert jax.dtypes.result_type(jnp.int8, 1.0) == np.float32
    assert jax.dtypes.itemsize_bits("int4") == 4
    assert jax.dtypes.scalar_type_of(1.0) is float
    assert jax.dtypes.finfo(jnp.bfloat16).eps == 2.0 ** -7
    assert jax.dtypes.iinfo(np.int8).max == 127
    assert isinstance(jax.dtypes.finfo, type) and isinstance(jax.dtypes.iinfo, type)
    assert issubclass(jax.dtypes.TypePromotionError, ValueError)
