"""scaled_dot against JAX 0.10.2 (data/scaled_dot_script.py and data/scaled_dot_jax.txt):
bfloat16 results bit for bit; float32 results within float32 rounding (the order of the
dot's sums is our GEMM's), errors by message."""
from __future__ import annotations

import ast

import numpy as np
from recorded_scripts import recorded, run_with_jaxlite


def _values(line: str) -> tuple[str, list[float]]:
    head, _, rest = line.partition(") ")
    return head, ast.literal_eval(rest)


def test_scaled_dot_matches_jax():
    actual, expected = run_with_jaxlite("scaled_dot"), recorded("scaled_dot")
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if e.startswith("float32"):
            (a_head, a_values), (e_head, e_values) = _values(a), _values(e)
            assert a_head == e_head
            np.testing.assert_allclose(a_values, e_values, rtol=2e-6, atol=1e-6)
        else:
            assert a == e
