"""Differential tests of `jaxlite.numpy` against numpy, driven by `cases_*.py`.

For every `Case` (see `np_cases.py`):
- result dtypes on the case's fixed call equal JAX 0.10.2's, read from the committed tables in
  `tests/data/numpy_dtypes/` (x64 off; "*" marks a weak type, "-" an error);
- values on hypothesis-drawn shapes, dtypes and keyword arguments match numpy within a
  tolerance derived from the result dtype;
- `jit` gives what eager mode gives; `vmap` gives what a loop gives;
- derivatives match finite differences (float64, x64 on) where the case says `grad`.
"""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.test_util import check_grads

import np_cases
from np_cases import DTYPE_CODES, Case, draw_values, dtype_code, output_leaves

CASES, DTYPE_TABLES = np_cases.load_cases()
CASES_BY_KEY = {case.key: case for case in CASES}
KEYS = sorted(CASES_BY_KEY)
SEEDS = st.integers(0, 2**32 - 1)


_WIDER = {"b": None, "i": np.int64, "u": np.uint64, "f": np.float64, "c": np.complex128,
          "V": np.float64}


def _reference_input(case: Case, value: np.ndarray) -> np.ndarray:
    """The reference's copy of an argument: widened when the case says `upcast`.

    numpy has no bfloat16 loops at all, so those are always widened to float32 or more."""
    if value.dtype == DTYPE_CODES["bf16"]:
        return value.astype(np.float64 if case.upcast else np.float32)
    wider = _WIDER.get(value.dtype.kind)
    return value.astype(wider) if case.upcast and wider is not None else value


def _eps(dtype: np.dtype) -> float:
    if dtype == DTYPE_CODES["bf16"]:
        return float(ml_dtypes.finfo(dtype).eps)
    return float(np.finfo(dtype).eps)


def assert_matches(actual, expected, ulps: float, what: str) -> None:
    """Integers and booleans exactly; inexact values within `ulps` of the result dtype."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected.astype(actual.dtype), err_msg=what)
        return
    tol = _eps(actual.dtype) * ulps
    wide = np.complex128 if actual.dtype.kind == "c" or expected.dtype.kind == "c" else np.float64
    expected = expected.astype(wide)
    finite = np.abs(expected[np.isfinite(expected)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    # assert_allclose compares complex infinities exactly, finite part included; comparing
    # the real and imaginary parts apart gives those the tolerance too.
    parts = (np.real, np.imag) if wide == np.complex128 else (np.asarray,)
    for part in parts:
        np.testing.assert_allclose(part(actual.astype(wide)), part(expected), rtol=tol,
                                   atol=tol * scale, equal_nan=True, err_msg=what)


def _draw_call(case: Case, data, seed: int) -> tuple[str, list, dict]:
    code = data.draw(st.sampled_from(list(case.dtypes)), label="dtype")
    shapes = data.draw(case.shape_strategy(), label="shapes")
    kwargs = data.draw(case.kwargs(shapes), label="kwargs") if case.kwargs else {}
    rng = np.random.default_rng(seed)
    return code, [draw_values(rng, shape, code, case.domain) for shape in shapes], kwargs


def _expected_or_reject(case: Case, args: list, kwargs: dict):
    """numpy's answer; examples numpy itself refuses are not ours to judge."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return case.fn(np, *[_reference_input(case, a) for a in args], **kwargs)
    except (ValueError, TypeError, IndexError, ZeroDivisionError):
        assume(False)


def _refused_by_jax(case: Case, code: str) -> bool:
    return DTYPE_TABLES.get(case.key, {}).get(code) == "-"


def _draw_allowed_call(case: Case, data, seed: int) -> tuple[str, list, dict]:
    """A drawn call, on a dtype JAX accepts for this case (refusals are checked elsewhere)."""
    code, args, kwargs = _draw_call(case, data, seed)
    assume(not _refused_by_jax(case, code))
    return code, args, kwargs


@pytest.mark.parametrize("key", KEYS)
def test_result_dtypes_match_jax(key):
    case = CASES_BY_KEY[key]
    table = DTYPE_TABLES.get(key)
    assert table is not None, (
        f"no dtype table entry for {key!r}: run "
        f"`/tmp/jaxvenv/bin/python tools/gen_numpy_dtypes.py <cases module>`")
    for code in case.dtypes:
        args = np_cases.example_args(case, code)
        expected = table[code]
        if expected == "-":
            with pytest.raises((TypeError, ValueError)):
                case.fn(jnp, *args, **case.example_kwargs)
            continue
        result = case.fn(jnp, *args, **case.example_kwargs)
        actual = "|".join(dtype_code(leaf) for leaf in output_leaves(result))
        assert actual == expected, f"{key} on {code}: {actual} != JAX's {expected}"


@pytest.mark.parametrize("key", KEYS)
@given(seed=SEEDS, data=st.data())
def test_values_against_numpy(key, seed, data):
    case = CASES_BY_KEY[key]
    code, args, kwargs = _draw_allowed_call(case, data, seed)
    expected = _expected_or_reject(case, args, kwargs)
    actual = case.fn(jnp, *args, **kwargs)
    actual_leaves, expected_leaves = output_leaves(actual), output_leaves(expected)
    assert len(actual_leaves) == len(expected_leaves), key
    for a, e in zip(actual_leaves, expected_leaves):
        assert_matches(a, e, case.ulps, f"{key} on {code} {kwargs}")


@pytest.mark.parametrize("key", [k for k in KEYS if CASES_BY_KEY[k].jit])
@settings(max_examples=4)
@given(seed=SEEDS, data=st.data())
def test_jit_matches_eager(key, seed, data):
    case = CASES_BY_KEY[key]
    code, args, kwargs = _draw_allowed_call(case, data, seed)
    eager = case.fn(jnp, *args, **kwargs)
    jitted = jaxlite.jit(lambda *a: case.fn(jnp, *a, **kwargs))(*args)
    for a, e in zip(output_leaves(jitted), output_leaves(eager)):
        assert np.asarray(a).dtype == np.asarray(e).dtype, key
        assert_matches(a, e, case.ulps, f"jit of {key} on {code} {kwargs}")


@pytest.mark.parametrize("key", [k for k in KEYS if CASES_BY_KEY[k].vmap])
@settings(max_examples=4)
@given(seed=SEEDS, data=st.data())
def test_vmap_matches_loop(key, seed, data):
    case = CASES_BY_KEY[key]
    code, first, kwargs = _draw_allowed_call(case, data, seed)
    rng = np.random.default_rng(seed + 1)
    second = [draw_values(rng, a.shape, code, case.domain) for a in first]
    stacked = [np.stack([a, b]) for a, b in zip(first, second)]
    batched = jaxlite.vmap(lambda *a: case.fn(jnp, *a, **kwargs))(*stacked)
    looped = [case.fn(jnp, *args, **kwargs) for args in (first, second)]
    for n, leaf in enumerate(output_leaves(batched)):
        expected = np.stack([np.asarray(output_leaves(r)[n]) for r in looped])
        assert_matches(leaf, expected, case.ulps, f"vmap of {key} on {code} {kwargs}")


def _grad_cases() -> list[str]:
    return [k for k in KEYS if CASES_BY_KEY[k].grad and "f64" in CASES_BY_KEY[k].dtypes]


@pytest.mark.parametrize("key", _grad_cases())
@settings(max_examples=3)
@given(seed=SEEDS, data=st.data())
def test_derivatives_against_finite_differences(key, seed, data):
    case = CASES_BY_KEY[key]
    shapes = data.draw(case.shape_strategy(), label="shapes")
    kwargs = data.draw(case.kwargs(shapes), label="kwargs") if case.kwargs else {}
    rng = np.random.default_rng(seed)
    args = [draw_values(rng, shape, "f64", case.domain) for shape in shapes]
    with jaxlite.enable_x64(True):
        if not jaxlite.tree_util.tree_leaves(case.fn(jnp, *args, **kwargs)):
            return  # no output (unstack of an empty axis): JAX's check_grads raises TypeError
        # The point varies with the seed; the directions are JAX's (RandomState(0)).
        check_grads(lambda *a: case.fn(jnp, *a, **kwargs), args, order=1,
                    modes=("fwd", "rev"))
