"""scaled_dot against JAX 0.10.2 (data/scaled_dot_script.py and data/scaled_dot_jax.txt):
bfloat16 results bit for bit; float32 results within float32 rounding (the order of the
dot's sums is our GEMM's), errors by message."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data"


def _values(line: str) -> tuple[str, list[float]]:
    head, _, rest = line.partition(") ")
    return head, ast.literal_eval(rest)


def test_scaled_dot_matches_jax():
    result = subprocess.run([sys.executable, str(DATA / "scaled_dot_script.py"), "jaxlite"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    actual = result.stdout.splitlines()
    expected = (DATA / "scaled_dot_jax.txt").read_text().splitlines()
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if e.startswith("float32"):
            (a_head, a_values), (e_head, e_values) = _values(a), _values(e)
            assert a_head == e_head
            np.testing.assert_allclose(a_values, e_values, rtol=2e-6, atol=1e-6)
        else:
            assert a == e
