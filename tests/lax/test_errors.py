"""Exception types and messages of bad `lax` calls against JAX 0.10.2.

The calls are in error_cases.py; data/errors_jax.txt holds what JAX 0.10.2 did with each
(recorded with `/tmp/jaxvenv/bin/python tests/lax/error_cases.py`). jaxlite must raise the
same exception type, its message must begin with JAX's key phrase (the first 30 characters
of JAX's message), and calls JAX accepts must give the same shape.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from error_cases import error_cases, outcome

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

RECORDED = Path(__file__).parent / "data" / "errors_jax.txt"
PHRASE = 30  # characters of JAX's message that ours must begin with

# Where jaxlite knowingly differs from JAX, and why.
DIFFERENT_MESSAGE = {
    # JAX rejects every negative axis; jaxlite takes -ndim <= axis < 0 and words the
    # out-of-range error by the bounds.
    "cummax-axis": "axis -2 is out of bounds",
}


def _recorded() -> list[tuple[str, str, str]]:
    rows = []
    for line in RECORDED.read_text().splitlines():
        name, kind, text = line.split("\t", 2)
        rows.append((name, kind, text))
    return rows


CASES = error_cases(lax, jnp)
ROWS = _recorded()


def test_every_case_was_recorded():
    assert {name for name, _, _ in ROWS} == set(CASES)


@pytest.mark.parametrize("name,kind,text", ROWS, ids=[row[0] for row in ROWS])
def test_outcome_matches_jax(name, kind, text):
    got_kind, got_text = outcome(CASES[name])
    assert got_kind == kind, f"{name}: JAX gave {kind} ({text}), jaxlite {got_kind} ({got_text})"
    if kind == "ok":
        assert got_text == text, f"{name}: result shape {got_text}, JAX {text}"
    elif name in DIFFERENT_MESSAGE:
        assert DIFFERENT_MESSAGE[name] in got_text
    else:
        assert got_text.startswith(text[:PHRASE]), f"{name}: {got_text!r} vs JAX {text!r}"


# ---------------------------------------------------------------- under transformations

def test_shape_errors_are_the_same_under_jit_and_vmap():
    a, b = np.ones(3, np.float32), np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"^add: arrays must have the same number of "
                                        r"dimensions, got \{1, 2\}"):
        jax.jit(lax.add)(a, b)
    # Under vmap the operands' own ranks still count, not the batched ones.
    with pytest.raises(TypeError, match=r"^mul: arrays must have the same number"):
        jax.vmap(lambda x, y: lax.mul(x, y))(b, np.ones((2, 3, 1), np.float32))
    with pytest.raises(TypeError, match=r"^sub got incompatible shapes for broadcasting: "
                                        r"\(3,\), \(4,\)"):
        jax.jit(lax.sub)(a, np.ones(4, np.float32))


def test_size_one_and_scalar_operands_broadcast_as_in_jax():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    row, col = np.arange(3, dtype=np.float32)[None], np.arange(2, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(lax.add(a, row), a + row)
    np.testing.assert_array_equal(jax.jit(lax.mul)(col, row), col * row)
    np.testing.assert_array_equal(lax.max(np.float32(2), a), np.maximum(2, a))
    batched = jax.vmap(lambda x: lax.sub(x, row))(np.stack([a, a]))
    np.testing.assert_array_equal(batched, np.stack([a - row, a - row]))
    grad = jax.grad(lambda r: lax.mul(a, r).sum())(row)
    np.testing.assert_array_equal(grad, a.sum(0, keepdims=True))


def test_clamp_takes_scalar_bounds_only():
    x = np.array([-2.0, 0.5, 3.0], np.float32)
    np.testing.assert_array_equal(lax.clamp(np.float32(0), x, np.float32(1)), [0, 0.5, 1])
    np.testing.assert_array_equal(jax.jit(lax.clamp)(0.0, x, 1.0), [0, 0.5, 1])
    with pytest.raises(TypeError, match=r"^clamp requires max.shape == operand.shape or "
                                        r"max.shape == \(\)"):
        lax.clamp(0.0, x, np.ones(2, np.float32))
