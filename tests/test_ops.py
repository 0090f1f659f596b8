"""jaxlite.ops segment reductions against values printed by JAX 0.10.2
(/tmp/jaxvenv/bin/python running the same calls)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import ops
from jaxlite.errors import ConcretizationTypeError

INF = np.inf
D = jnp.arange(6.0)
S = jnp.array([0, 0, 1, 3, 3, -1])


def check(actual, expected, dtype=np.float32):
    assert np.asarray(actual).dtype == dtype
    np.testing.assert_array_equal(actual, expected)


def test_segment_reductions_and_identities():
    check(ops.segment_sum(D, S), [1, 2, 0, 7])  # num_segments from the ids; -1 dropped
    check(ops.segment_sum(D, S, 5), [1, 2, 0, 7, 0])
    check(ops.segment_max(D, S, 5), [1, 2, -INF, 4, -INF])
    check(ops.segment_min(D, S, 5), [0, 2, INF, 3, INF])
    check(ops.segment_prod(D + 1, S, 5), [2, 3, 1, 20, 1])
    check(ops.segment_sum(D, jnp.array([0, 0, 1, 3, 3, 7]), 4), [1, 2, 0, 7])
    check(ops.segment_sum(D, S, 4, mode="clip"), [6, 2, 0, 7])
    rows = jnp.arange(6).reshape(3, 2)
    check(ops.segment_sum(rows, jnp.array([1, 0, 1]), 2), [[2, 3], [4, 6]], np.int32)
    check(ops.segment_max(rows, jnp.array([1, 0, 1]), 3),
          [[2, 3], [4, 5], [-2147483648, -2147483648]], np.int32)


def test_buckets_dtypes_and_edges():
    check(ops.segment_sum(D, S, 5, bucket_size=2), [1, 2, 0, 7, 0])
    check(ops.segment_max(D, S, 5, bucket_size=2), [1, 2, -INF, 4, -INF])
    check(ops.segment_prod(D + 1, S, 5, bucket_size=4), [2, 3, 1, 20, 1])
    check(ops.segment_sum(D.astype(jnp.bfloat16), S, 5), [1, 2, 0, 7, 0], jnp.bfloat16)
    check(ops.segment_max(D.astype(jnp.int32), S, 5), [1, 2, -2147483648, 4, -2147483648],
          np.int32)
    check(ops.segment_max(D > 2, S, 5), [False, False, False, True, False], np.bool_)
    check(ops.segment_min(D > 2, S, 5), [False, False, True, True, True], np.bool_)
    check(ops.segment_sum(D, S, 0), np.zeros(0))
    check(ops.segment_sum(jnp.zeros((0, 2)), jnp.zeros(0, jnp.int32), 3), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="num_segments must be non-negative."):
        ops.segment_sum(D, S, -1)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda d, s: ops.segment_sum(d, s))(D, S)


def test_transformations():
    check(jax.grad(lambda d: ops.segment_max(d, S, 5).sum())(D), [0, 1, 1, 0, 1, 0])
    check(jax.grad(lambda d: (ops.segment_sum(d, S, 5) ** 2).sum())(D), [2, 2, 4, 14, 14, 0])
    with pytest.raises(NotImplementedError, match="scatter_mul gradients are only implemented"):
        jax.grad(lambda d: ops.segment_prod(d + 1, S, 5).sum())(D)
    check(jax.jit(lambda d: ops.segment_sum(d, S, 5))(D), [1, 2, 0, 7, 0])
    check(jax.vmap(lambda d: ops.segment_min(d, S, 5))(jnp.stack([D, -D])),
          [[0, 2, INF, 3, INF], [-1, -2, INF, -4, INF]])
