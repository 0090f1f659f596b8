"""jaxlite.scipy.special and jaxlite.scipy.stats against the outputs real JAX 0.10.2
recorded for the same calls (special_stats_cases.py, recorded by
record_jax_special_stats.py into tests/data/scipy/special_stats_<mode>.*): values within
dtype-scaled tolerances (nan and inf in the same places), the same dtypes and weak types,
the same exception types with JAX's message first. Elements where jaxlite deliberately
gives scipy's value (a case's `deviation`, with the reason) are compared with that
reference instead; calls JAX never returned from must return on jaxlite.
"""
from __future__ import annotations

import builtins
import json
from pathlib import Path

import numpy as np
import pytest

import jaxlite
import jaxlite.scipy.special  # noqa: F401
import jaxlite.scipy.stats  # noqa: F401
from jaxlite.tree_util import tree_leaves
from special_stats_cases import MODES, all_cases, default_rtol

DATA = Path(__file__).parents[1] / "data" / "scipy"


def _load(mode: str) -> tuple[dict, dict]:
    meta_path, arrays_path = (DATA / f"special_stats_{mode}.json",
                              DATA / f"special_stats_{mode}.npz")
    if not meta_path.exists():
        return {}, {}
    return json.loads(meta_path.read_text()), dict(np.load(arrays_path))


RECORDED = {mode: _load(mode) for mode in MODES}
CASES = {case.id: case for case in all_cases()}
PARAMS = [(case_id, mode) for case_id, case in CASES.items() for mode in case.modes]


def _expected(case, mode, count):
    meta, arrays = RECORDED[mode]
    expected = [arrays[f"{case.id}|{i}"] for i in range(count)]
    if case.deviation is not None:
        grid = np.broadcast_arrays(*[np.asarray(a) for a in case.args])
        with np.errstate(all="ignore"):
            where = np.asarray(case.deviation.where(*grid))
            reference = np.asarray(case.deviation.reference(*grid))
        with np.errstate(over="ignore"):  # a float64 reference beyond float32's range
            if case.pointwise:
                expected = [np.where(w, r, e).astype(e.dtype)
                            for w, r, e in zip(where.ravel(), reference.ravel(), expected)]
            else:
                expected[0] = np.where(where, reference,
                                       expected[0]).astype(expected[0].dtype)
    return expected


def _compare(case, mode, leaves):
    entry = RECORDED[mode][0][case.id]
    assert len(leaves) == len(entry["dtypes"]), "number of outputs"
    actual = [np.asarray(leaf) for leaf in leaves]
    expected = _expected(case, mode, len(leaves))
    for i, (a, e, dtype) in enumerate(zip(actual, expected, entry["dtypes"])):
        assert a.dtype.name == dtype, f"output {i} dtype {a.dtype} != JAX's {dtype}"
        assert a.shape == e.shape, f"output {i} shape {a.shape} != {e.shape}"
        rtol = case.rtol.get(mode, default_rtol(e.dtype))
        if rtol == 0:
            np.testing.assert_array_equal(a, e, err_msg=f"output {i}")
            continue
        finite = np.isfinite(e)
        scale = float(np.max(np.abs(e[finite]), initial=0))
        # Absolute errors at the dtype's precision relative to magnitude 1 are allowed
        # (values near a zero of the function: JAX's float32 lgamma(1) is 5e-7).
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * max(scale, 1.0),
                                   equal_nan=True, err_msg=f"output {i}")
    weak = [bool(getattr(leaf, "weak_type", False)) for leaf in leaves]
    assert weak == entry["weak"], f"weak types {weak} != JAX's {entry['weak']}"


@pytest.mark.parametrize("case_id,mode", PARAMS)
def test_agrees_with_jax(case_id, mode):
    case = CASES[case_id]
    entry = RECORDED[mode][0].get(case_id)
    if entry is None:
        pytest.fail(f"{case_id} [{mode}] has no recorded JAX output: run "
                    "record_jax_special_stats.py")
    with jaxlite.enable_x64(mode == "x64"):
        if "error" in entry:
            with pytest.raises(getattr(builtins, entry["error"], Exception)) as info:
                case.call(jaxlite)
            assert type(info.value).__name__ == entry["error"]
            first = entry["message"].split("JitTracer")[0].split("Traced")[0][:40]
            assert str(info.value).startswith(first), (str(info.value), entry["message"])
            return
        leaves = tree_leaves(case.call(jaxlite))
        if "hang" in entry:
            return  # JAX never returned; jaxlite did, which is all there is to check
        _compare(case, mode, leaves)
