"""Helpers shared by the case modules (run on JAX to record, on jaxlite to test) and the
tests that compare the two: answers as plain JSON values, and their comparison."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def plain(value: Any) -> Any:
    """Arrays and scalars as (nested lists of) numbers, complex numbers as [re, im]."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in sorted(value.items())}
    if value is None or isinstance(value, str):
        return value
    array = np.asarray(value)
    if array.dtype.kind == "c":
        return [plain(array.real), plain(array.imag)]
    if array.dtype.kind in "biu":
        return array.tolist()  # integers stay integers (and are compared exactly)
    return array.astype(np.float64).tolist()


def run_cases(cases: dict[str, Callable[[], Any]], jax: Any) -> dict:
    """Each case's value (or exception), 64-bit enabled for names ending in "64"."""
    answers = {}
    for name, fn in cases.items():
        jax.config.update("jax_enable_x64", name.endswith("64"))
        try:
            answers[name] = {"value": plain(fn())}
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            answers[name] = {"raises": type(e).__name__, "text": str(e)}
        finally:
            jax.config.update("jax_enable_x64", False)
    return answers


def leaves(value: Any) -> list:
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in leaves(value[k])]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v)]
    return [value]


def assert_same_answer(got: dict, want: dict, rtol: float, compare_text: bool = True) -> None:
    """Same exception (type, and message if `compare_text`), or values within `rtol` of
    the case's largest magnitude (at least 1)."""
    if "raises" in want:
        assert got.get("raises") == want["raises"], (got, want)
        if compare_text:
            assert got.get("text") == want["text"], (got, want)
        return
    assert "value" in got, got
    got_leaves, want_leaves = leaves(got["value"]), leaves(want["value"])
    assert len(got_leaves) == len(want_leaves)
    got_array = np.array(got_leaves, dtype=np.float64)
    want_array = np.array(want_leaves, dtype=np.float64)
    scale = max(np.nanmax(np.abs(want_array)), 1.0) if want_array.size else 1.0
    np.testing.assert_allclose(got_array, want_array, rtol=0, atol=rtol * scale)
