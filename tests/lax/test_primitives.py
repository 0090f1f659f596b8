"""Every primitive, through its test record: values, derivatives, batching and jit.

For each record (see records.py): eager values against numpy on hypothesis-drawn cases;
jvp and vjp against finite differences in float64 up to second order; vmap against a
Python loop with in_axes 0, 1, -1 and None; jit against eager.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxlite as jax
from jaxlite.test_util import VALUE_TOLERANCE, check_grads
from records import all_records

RECORDS = all_records()
NAMES = sorted(RECORDS)
SEEDS = st.integers(0, 2**32 - 1)


def _assert_matches(actual, expected, dtype, what):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    tol = VALUE_TOLERANCE[np.dtype(dtype)]
    if tol == 0:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        np.testing.assert_allclose(actual.astype(np.complex128), expected.astype(np.complex128),
                                   rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def _outputs(value):
    return value if isinstance(value, (list, tuple)) else [value]


@pytest.mark.parametrize("name", NAMES)
@given(seed=SEEDS, data=st.data())
def test_values_against_numpy(name, seed, data):
    record = RECORDS[name]
    dtype = data.draw(st.sampled_from(list(record.dtypes)), label="dtype")
    case = record.make_case(np.random.default_rng(seed), dtype)
    actual = case.fun(*case.args)
    expected = case.reference(*case.args)
    for a, e in zip(_outputs(actual), _outputs(expected)):
        _assert_matches(a, e, np.asarray(a).dtype, f"{name} on {dtype}")


@pytest.mark.parametrize("name", [n for n in NAMES if RECORDS[n].grad])
@settings(max_examples=4)
@given(seed=SEEDS)
def test_derivatives_against_finite_differences(name, seed):
    record = RECORDS[name]
    with jax.enable_x64(True):
        case = record.make_case(np.random.default_rng(seed), record.grad_dtype)
        args = list(case.args)
        argnums = case.grad_argnums
        if argnums is None:
            argnums = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.inexact)]

        def partial_fun(*diff_args):
            full = list(args)
            for n, value in zip(argnums, diff_args):
                full[n] = value
            return case.fun(*full)
        if not jax.tree_util.tree_leaves(partial_fun(*[args[n] for n in argnums])):
            return  # nothing to differentiate (unstack of a 0-sized axis); JAX's check_grads
            # raises TypeError on such functions too
        # The point varies with the seed; the directions are JAX's (RandomState(0)).
        check_grads(partial_fun, [args[n] for n in argnums], order=2, modes=("fwd", "rev"))


def _stack(values, axis):
    return np.stack(values, axis=axis)


@pytest.mark.parametrize("name", [n for n in NAMES if RECORDS[n].vmap])
@settings(max_examples=4)
@given(seed=SEEDS, data=st.data())
def test_vmap_against_loop(name, seed, data):
    record = RECORDS[name]
    dtype = data.draw(st.sampled_from(list(record.dtypes)), label="dtype")
    rng = np.random.default_rng(seed)
    case = record.make_case(rng, dtype)
    size = 3
    members = [list(case.args)] + [
        [case.values(rng, np.shape(a), np.asarray(a).dtype) for a in case.args]
        for _ in range(size - 1)]
    for axis in record.vmap_axes:
        in_axes = []
        batched_args = []
        for i, arg in enumerate(case.args):
            if axis is None and i > 0:
                in_axes.append(None)
                batched_args.append(arg)
                for member in members:
                    member[i] = arg
                continue
            chosen = 0 if axis is None or np.ndim(arg) == 0 else axis
            in_axes.append(chosen)
            batched_args.append(_stack([m[i] for m in members], chosen))
        expected = [case.fun(*m) for m in members]
        actual = jax.vmap(case.fun, in_axes=tuple(in_axes))(*batched_args)
        for j, out in enumerate(_outputs(actual)):
            stacked = np.stack([np.asarray(_outputs(e)[j]) for e in expected])
            _assert_matches(out, stacked, np.asarray(out).dtype, f"vmap {name} axes {in_axes}")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=3)
@given(seed=SEEDS, data=st.data())
def test_jit_against_eager(name, seed, data):
    record = RECORDS[name]
    dtype = data.draw(st.sampled_from(list(record.dtypes)), label="dtype")
    case = record.make_case(np.random.default_rng(seed), dtype)
    eager = case.fun(*case.args)
    compiled = jax.jit(case.fun)(*case.args)
    for a, e in zip(_outputs(compiled), _outputs(eager)):
        assert np.asarray(a).dtype == np.asarray(e).dtype
        _assert_matches(a, e, np.asarray(a).dtype, f"jit {name}")
