"""jaxlite.scipy against the outputs real JAX 0.10.2 recorded for the same calls
(jax_cases.py, recorded by record_jax_scipy.py into tests/data/scipy/): values within
dtype-scaled tolerances, the same dtypes and weak types, the same exception types with
JAX's message first; under jit too for the cases marked so.
"""
from __future__ import annotations

import builtins
import json
from pathlib import Path

import numpy as np
import pytest

import jaxlite
import jaxlite.scipy.linalg  # noqa: F401
import jaxlite.scipy.optimize  # noqa: F401
import jaxlite.scipy.sparse.linalg  # noqa: F401
import jaxlite.scipy.fft  # noqa: F401
import jaxlite.scipy.signal  # noqa: F401
import jaxlite.scipy.integrate  # noqa: F401
import jaxlite.scipy.interpolate  # noqa: F401
import jaxlite.scipy.ndimage  # noqa: F401
import jaxlite.scipy.cluster.vq  # noqa: F401
import jaxlite.scipy.spatial.transform  # noqa: F401
import jaxlite.transforms  # noqa: F401  (grad, jacfwd, jvp of the gradient cases)
from jax_cases import MODES, all_cases, default_rtol
from jaxlite.tree_util import tree_leaves

DATA = Path(__file__).parents[1] / "data" / "scipy"
RECORDED = {mode: (json.loads((DATA / f"jax_{mode}.json").read_text()),
                   np.load(DATA / f"jax_{mode}.npz")) for mode in MODES}
CASES = {case.id: case for case in all_cases()}
PARAMS = [(case_id, mode) for case_id, case in CASES.items() for mode in case.modes]


def _compare(case, mode, leaves, what):
    meta, arrays = RECORDED[mode]
    entry = meta[case.id]
    assert len(leaves) == len(entry["dtypes"]), f"{what}: number of outputs"
    actual = [np.asarray(leaf) for leaf in leaves]
    expected = [arrays[f"{case.id}|{i}"] for i in range(len(leaves))]
    for i, (a, dtype) in enumerate(zip(actual, entry["dtypes"])):
        assert a.dtype.name == dtype, f"{what}: output {i} dtype {a.dtype} != JAX's {dtype}"
        assert a.shape == expected[i].shape, f"{what}: output {i} shape"
    if case.gauge is not None:
        actual, expected = case.gauge(actual), case.gauge(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        rtol = case.rtol.get(mode, default_rtol(e.dtype))
        if rtol == 0:
            np.testing.assert_array_equal(a, e, err_msg=f"{what}: output {i}")
            continue
        scale = float(np.max(np.abs(e), initial=0)) if np.all(np.isfinite(e)) else 1.0
        atol = max(rtol * scale, case.atol.get(mode, 0.0))
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{what}: output {i}")


def _weak_types(case, mode, leaves):
    entry = RECORDED[mode][0][case.id]
    weak = [bool(getattr(leaf, "weak_type", False)) for leaf in leaves]
    assert weak == entry["weak"], f"{case.id}: weak types {weak} != JAX's {entry['weak']}"


@pytest.mark.parametrize("case_id,mode", PARAMS)
def test_eager_agrees_with_jax(case_id, mode):
    case = CASES[case_id]
    entry = RECORDED[mode][0][case_id]
    with jaxlite.enable_x64(mode == "x64"):
        if "error" in entry:
            with pytest.raises(getattr(builtins, entry["error"], Exception)) as info:
                case.call(jaxlite)
            assert type(info.value).__name__ == entry["error"]
            first = entry["message"].split("JitTracer")[0].split("Traced")[0][:40]
            assert str(info.value).startswith(first), (str(info.value), entry["message"])
            return
        leaves = tree_leaves(case.call(jaxlite))
        _compare(case, mode, leaves, f"{case_id} [{mode}]")
        _weak_types(case, mode, leaves)


@pytest.mark.parametrize("case_id", [c.id for c in CASES.values() if c.jit])
def test_jit_agrees_with_jax(case_id):
    case = CASES[case_id]
    with jaxlite.enable_x64(True):
        leaves = tree_leaves(jaxlite.jit(lambda: case.call(jaxlite))())
        _compare(case, "x64", leaves, f"jit {case_id}")

