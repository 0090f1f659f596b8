"""top_k and approx_max_k / approx_min_k against JAX 0.10.2 (/tmp/jaxvenv/bin/python: the
same calls, and jax._src.lib._jax.approx_top_k_reduction_output_size for the sizes)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.lax.approx_top_k import approx_output_size

X = jnp.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0])

# (input size, rank, k, recall target, override) -> JAX's output size (aggregate_to_topk off).
SIZES = {
    (2000, 1, 3, 0.95, -1): 2000, (2000, 1, 1, 0.95, -1): 1024, (5000, 2, 10, 0.9, -1): 256,
    (100000, 1, 64, 0.99, -1): 13312, (3000, 1, 3, 0.95, 10000): 2048,
    (3000, 1, 30, 0.95, -1): 2048, (500, 1, 3, 0.95, -1): 500, (129, 2, 3, 1.0, -1): 129,
    (3000, 2, 64, 0.99, 200000): 256, (5000, 2, 64, 0.99, 200000): 384,
    (100000, 2, 64, 0.99, 200000): 6272, (1025, 2, 10, 0.95, -1): 384,
}


@pytest.mark.parametrize("args", sorted(SIZES))
def test_output_sizes_match_jax(args):
    n, rank, k, recall, override = args
    assert approx_output_size(n, rank, k, recall, False, override) == SIZES[args]
    assert approx_output_size(n, rank, k, recall, True, override) == k


@pytest.mark.parametrize("compiled", [False, True])
def test_approx_values_and_indices(compiled):
    def run(f, *args):
        return (jax.jit(f) if compiled else f)(*args)
    values, indices = run(lambda x: lax.approx_max_k(x, 3), X)
    np.testing.assert_array_equal(values, [9, 6, 5])
    np.testing.assert_array_equal(indices, [5, 7, 4])
    values, indices = run(lambda x: lax.approx_min_k(x, 3), X)
    np.testing.assert_array_equal(values, [1, 1.5, 2])
    np.testing.assert_array_equal(indices, [1, 3, 6])
    values, indices = run(lambda x: lax.approx_max_k(x.reshape(2, 4), 1, reduction_dimension=0),
                          X)
    np.testing.assert_array_equal(values, [[5, 9, 4, 6]])
    np.testing.assert_array_equal(indices, [[1, 1, 0, 1]])
    noise = np.random.default_rng(0).standard_normal(3000).astype(np.float32)
    values, indices = lax.approx_max_k(noise, 3, aggregate_to_topk=False)
    assert values.shape == (2048,)  # JAX's size; on the CPU a sorted prefix
    np.testing.assert_array_equal(values, np.sort(noise)[::-1][:2048])


def test_approx_top_k_transformations_and_errors():
    grad = jax.grad(lambda x: lax.approx_max_k(x, 2)[0].sum())(X)
    np.testing.assert_array_equal(grad, [0, 0, 0, 0, 0, 1, 0, 1])
    batched = jax.vmap(lambda x: lax.approx_min_k(x, 2))(X.reshape(2, 4))
    np.testing.assert_array_equal(batched[1], [[1, 3], [2, 0]])
    text = str(jax.make_jaxpr(lambda x: lax.approx_max_k(x, 2))(X))
    for piece in ("approx_top_k[", "aggregate_to_topk=True", "is_max_k=True", "k=2",
                  "recall_target=0.95", "reduction_dimension=-1",
                  "reduction_input_size_override=-1"):
        assert piece in text
    with pytest.raises(ValueError, match="k must be smaller than the size of reduction_dim 8, "
                                         "got 9"):
        lax.approx_max_k(X, 9)
    with pytest.raises(ValueError, match="k must be positive, got 0"):
        lax.approx_max_k(X, 0)
    with pytest.raises(TypeError, match="approx_top_k operand must have >= 1 dimension"):
        lax.approx_max_k(jnp.float32(1), 1)
    with pytest.raises(ValueError, match="operand must be a floating type"):
        lax.approx_max_k(jnp.arange(3), 1)


def test_top_k_primitive_matches_jax():
    x = jnp.array([[3.0, -0.0, 0.0, np.nan, -np.nan, 1.0]])
    values, indices = lax.top_k(x, 6)
    np.testing.assert_array_equal(indices, [[3, 0, 5, 2, 1, 4]])
    assert np.signbit(np.asarray(values)[0, 4]) and not np.signbit(np.asarray(values)[0, 3])
    assert isinstance(lax.top_k(x, 2), list)  # as JAX's multiple-results primitive
    assert "top_k[axis=1 k=2]" in str(jax.make_jaxpr(lambda x: lax.top_k(x, 2))(x))
    _, tangents = jax.jvp(lambda x: lax.top_k(x, 2), (jnp.array([1.0, 3.0, 2.0]),),
                          (jnp.array([10.0, 30.0, 20.0]),))
    np.testing.assert_array_equal(tangents[0], [30, 20])
    batched = jax.vmap(lambda x: lax.top_k(x, 2, axis=0), in_axes=1)(jnp.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(batched[0], [[4, 2], [5, 3]])
    with pytest.raises(ValueError, match="top_k is not compatible with complex inputs."):
        lax.top_k(jnp.array([1 + 1j, 2]), 1)
    with pytest.raises(ValueError, match="k argument to top_k must be no larger than size "
                                         r"along axis; got k=4 with shape=\[3\] and axis=0"):
        lax.top_k(jnp.ones(3), 4)
    with pytest.raises(ValueError, match="k argument to top_k must be nonnegative, got -1"):
        lax.top_k(jnp.ones(3), -1)
