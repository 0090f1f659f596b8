"""Warnings point at the user's line, not into jaxlite (issue 13): `errors.warn_at_user`
sets the stack level to the first frame outside the package, however deep the warning is
raised (eagerly, while tracing under jit, or from a deprecated module attribute)."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def _line() -> int:
    return sys._getframe(1).f_lineno


def _caught(function):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        function()
    return [(w.filename, w.lineno, w.category) for w in seen]


def test_dtype_warnings_point_at_the_call():
    def make():
        jnp.array([1.0], dtype=np.float64); line = _line()  # noqa: E702
        return line
    lines = []
    seen = _caught(lambda: lines.append(make()))
    assert seen == [(__file__, lines[0], UserWarning)]


def test_warnings_raised_while_tracing_point_into_the_traced_function():
    lines = []

    def f(x):
        lines.append(_line() + 1)
        return x + jnp.zeros(3, dtype="float64")
    seen = _caught(lambda: jax.jit(f)(np.ones(3, np.float32)))
    assert (__file__, lines[0], UserWarning) in seen


def test_unusable_donation_warns_at_the_call():
    f = jax.jit(lambda x: x.sum(), donate_argnums=0)
    lines = []
    seen = _caught(lambda: lines.append(_line()) or f(np.ones(3, np.float32)))
    assert [(path, line) for path, line, _ in seen] == [(__file__, lines[0])]


def test_frames_outside_jaxlite_only():
    from jaxlite.errors import warn_at_user
    with pytest.warns(RuntimeWarning) as record:
        warn_at_user("plain", RuntimeWarning); line = _line()  # noqa: E702
    assert (record[0].filename, record[0].lineno) == (__file__, line)
