"""lax's shape arithmetic against values and errors recorded from JAX 0.10.2.

Recorded with /tmp/jaxvenv/bin/python (jax 0.10.2) by calling the same jax.lax functions
on the same arguments; the expected tuples and messages below are its output.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

NHWC = ("NHWC", "HWIO", "NHWC")


def test_broadcast_shapes_values():
    assert lax.broadcast_shapes((2,)) == (2,)
    assert lax.broadcast_shapes((1, 3), (2, 1)) == (2, 3)
    assert lax.broadcast_shapes((3, 1), (1, 4), (5, 1, 1)) == (5, 3, 4)
    assert lax.broadcast_shapes((), (2, 3)) == (2, 3)
    assert lax.broadcast_shapes([2], [2]) == [2]  # JAX hands the longest shape back


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((2,), (2, 3)), ((3, 1), (4, 1), (1,))])
def test_broadcast_shapes_error(shapes):
    with pytest.raises(ValueError) as info:
        lax.broadcast_shapes(*shapes)
    assert str(info.value) == f"Incompatible shapes for broadcasting: shapes={list(shapes)}"


def test_broadcast_shapes_negative_size():
    with pytest.raises(TypeError, match="Only non-negative indices are allowed"):
        lax.broadcast_shapes((-1,), (2,))


def test_broadcast_to_rank_and_like():
    assert lax.broadcast_to_rank(jnp.ones(3), 3).shape == (1, 1, 3)
    assert lax.broadcast_to_rank(jnp.ones((3, 3)), 1).shape == (3, 3)  # as JAX: unchanged
    out = lax.broadcast_like(np.arange(3.0).reshape(3, 1), jnp.ones((2, 3, 4)))
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3.0).reshape(3, 1), (2, 3, 4)))
    assert out.dtype == np.float32
    weak = lax.broadcast_like(1.0, jnp.ones((2, 3)))
    assert weak.shape == (2, 3) and weak.dtype == np.float32 and weak.weak_type
    with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                                         r"type=float32\[2\] and requested type=float32\[2,3\]"):
        lax.broadcast_like(jnp.ones(2), jnp.ones((2, 3)))


def test_dtype_shape_as_value_empty():
    assert lax.dtype(1.0) == np.float32 and lax.dtype(1) == np.int32
    assert lax.dtype(True) == np.bool_ and lax.dtype(1j) == np.complex64
    assert lax.dtype("float64") == np.float32 and lax.dtype(np.float16(1)) == np.float16
    with pytest.raises(TypeError, match="Cannot determine dtype of"):
        lax.dtype([1, 2])
    value = lax.shape_as_value((2, 3))
    np.testing.assert_array_equal(value, [2, 3])
    assert value.dtype == np.int32 and lax.shape_as_value(()).shape == (0,)
    out = lax.empty((2, 3), jnp.int8)
    assert out.shape == (2, 3) and out.dtype == np.int8


def test_conv_general_permutations():
    assert lax.conv_general_permutations(NHWC) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_general_permutations(("NCHW", "OIHW", "NCHW")) == ((0, 1, 2, 3),) * 3
    assert lax.conv_general_permutations(("NWHC", "HWOI", "CNHW")) == (
        (0, 3, 2, 1), (2, 3, 0, 1), (1, 0, 2, 3))
    with pytest.raises(TypeError, match="must each have the same set of spatial characters"):
        lax.conv_general_permutations(("NHWC", "HWIO", "NHC"))
    with pytest.raises(TypeError, match=r"must contain the characters 'N' and 'C' exactly"):
        lax.conv_general_permutations(("NHWW", "HWIO", "NHWC"))


def test_conv_shape_tuples():
    assert lax.conv_shape_tuple((2, 3, 10, 11), (4, 3, 3, 2), (1, 2), "SAME") == (2, 4, 10, 6)
    assert lax.conv_shape_tuple((2, 3, 10, 11), (4, 3, 3, 2), (2, 3),
                                [(1, 0), (2, 2)]) == (2, 4, 5, 5)
    assert lax.conv_shape_tuple((4, 3, 10), (4, 3, 3), (1,), "VALID", 2) == (2, 4, 8)
    assert lax.conv_general_shape_tuple((2, 10, 11, 3), (3, 2, 3, 4), (1, 2), "SAME",
                                        NHWC) == (2, 10, 6, 4)
    assert lax.conv_transpose_shape_tuple((2, 10, 11, 3), (3, 2, 3, 4), (2, 2), "SAME",
                                          NHWC) == (2, 20, 22, 4)
    assert lax.conv_transpose_shape_tuple((2, 10, 11, 3), (3, 2, 3, 4), (2, 3), "VALID",
                                          NHWC) == (2, 21, 33, 4)
    assert lax.conv_transpose_shape_tuple((2, 10, 11, 3), (3, 2, 3, 4), (2, 3),
                                          [(1, 2), (0, 1)], NHWC) == (2, 20, 31, 4)
    with pytest.raises(TypeError, match="Wrong number of explicit pads for convolution: "
                                        "expected 1, got 2."):
        lax.conv_shape_tuple((2, 3, 10), (4, 3, 3), (1,), [(1, 1), (0, 0)])
    with pytest.raises(ValueError, match="Negative padding is larger than the size"):
        lax.conv_shape_tuple((2, 3, 2), (4, 3, 3), (1,), [(-3, 0)])


def test_conv_general_shape_tuple_matches_the_convolution():
    lhs, rhs = jnp.ones((2, 9, 7, 3)), jnp.ones((3, 2, 3, 5))
    out = lax.conv_general_dilated(lhs, rhs, (2, 1), "SAME", dimension_numbers=NHWC)
    assert out.shape == lax.conv_general_shape_tuple(lhs.shape, rhs.shape, (2, 1), "SAME",
                                                     NHWC)


def test_reduce_window_shape_tuple():
    assert lax.reduce_window_shape_tuple((5, 6), (2, 3), (1, 2), [(0, 1), (1, 1)]) == (5, 3)
    assert lax.reduce_window_shape_tuple((5, 6), (2, 3), (1, 2), [(0, 1), (1, 1)],
                                         (2, 1), (1, 2)) == (9, 2)
    x = jnp.ones((5, 6))
    out = lax.reduce_window(x, 0.0, lax.add, (2, 3), (1, 2), [(0, 1), (1, 1)], (2, 1), (1, 2))
    assert out.shape == (9, 2)


def test_joining_errors_match_jax():
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match=r"Sum of sizes 2 must be equal to dimension 1 of "
                                         r"the operand shape \[2, 3\]"):
        lax.split(x, (1, 1), 1)
    with pytest.raises(ValueError, match="Sizes passed to split must be nonnegative"):
        lax.split(x, (1, -1, 3), 1)
    with pytest.raises(ValueError, match="All input arrays must have the same shape"):
        lax.stack([x, x.T])
    with pytest.raises(TypeError, match="lax.stack requires arguments to have the same dtypes"):
        lax.stack([x, x.astype(jnp.int32)])
    with pytest.raises(TypeError, match=r"reps length must be equal to the ndim of x, got "
                                        r"len\(reps\)=1 and x.ndim=2."):
        lax.tile(x, (2,))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        lax.unstack(x, 2)


def test_joining_jaxprs_name_the_primitives():
    x = jnp.ones((2, 3))
    text = str(jax.make_jaxpr(lambda x: (lax.split(x, (1, 2), 1), lax.stack([x, x], 1),
                                         lax.tile(x, (2, 1)), lax.unstack(x, 1)))(x))
    for piece in ("split[axis=1 sizes=(1, 2)]", "stack[axis=1]", "tile[reps=(2, 1)]",
                  "unstack[axis=1]"):
        assert piece in text
    assert lax.stack([1.0, 2.0]).weak_type  # weak operands give a weak result, as in JAX


def test_keyword_arguments_of_jax_0_10():
    a = jnp.array([100, 3], jnp.int8)
    # JAX 0.10.2: the operands are converted to out_dtype before multiplying.
    np.testing.assert_array_equal(lax.mul(a, a, out_dtype=jnp.int32), [10000, 9])
    assert lax.mul(a, a, out_dtype=jnp.int32).dtype == np.int32
    np.testing.assert_array_equal(lax.mul(a, a), [16, 9])
    assert float(jax.grad(lambda x: lax.mul(x, x, out_dtype=jnp.float32))(jnp.bfloat16(3))) == 6
    # One device: every sharding places the result there.
    assert lax.full((2,), 1.0, sharding=None).shape == (2,)
    assert lax.broadcast(jnp.ones(2), (3,), out_sharding=None).shape == (3, 2)
    assert lax.broadcast_in_dim(jnp.ones(2), (3, 2), (1,), out_sharding=None).shape == (3, 2)
    assert lax.broadcasted_iota(jnp.int32, (2, 3), 1, out_sharding=None).shape == (2, 3)
    assert lax.reduce_sum(jnp.ones((2, 3)), (1,), out_sharding=None).shape == (2,)
    assert lax.reshape(jnp.ones((2, 3)), (3, 2), out_sharding=None).shape == (3, 2)
