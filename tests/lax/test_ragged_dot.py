"""ragged_dot and ragged_dot_general against JAX 0.10.2: data/ragged_dot_script.py prints
the three modes, bfloat16 with and without preferred_element_type, gradients and errors;
data/ragged_dot_jax.txt is what JAX printed."""
from __future__ import annotations

import numpy as np
import pytest
from recorded_scripts import recorded, run_with_jaxlite

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

def test_ragged_dot_matches_jax_line_by_line():
    actual, expected = run_with_jaxlite("ragged_dot"), recorded("ragged_dot")
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if e.startswith("TypeError unhashable type"):  # JAX's failure on group_offset
            assert a.startswith("NotImplementedError ragged_dot_general: group_offset")
        elif e.startswith("TypeError dot_general requires contracting dimensions"):
            assert a.startswith(e[:-1])  # our message goes on with the shapes
        else:
            assert a == e


def test_ragged_dot_under_vmap_and_jit():
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal((2, 5, 3)).astype(np.float32)
    rhs = rng.standard_normal((2, 3, 4)).astype(np.float32)
    sizes = jnp.array([2, 3], jnp.int32)
    batched = jax.vmap(lambda l: lax.ragged_dot(l, rhs, sizes))(lhs)
    for member, out in zip(lhs, batched):
        np.testing.assert_allclose(out, lax.ragged_dot(member, rhs, sizes), rtol=1e-6)
    expected = np.concatenate([lhs[0, :2] @ rhs[0], lhs[0, 2:] @ rhs[1]])
    np.testing.assert_allclose(jax.jit(lax.ragged_dot)(lhs[0], rhs, sizes), expected,
                               rtol=1e-5)
    numbers = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    assert repr(numbers) == ("RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (0,)), "
                             "((), ())), lhs_ragged_dimensions=(1,), rhs_group_dimensions=())")
    with pytest.raises(AttributeError):
        numbers.lhs_ragged_dimensions = (0,)
