"""The ../shared/bench workloads (the yardstick jaxlite is measured on) as StableHLO:
each one's `jit(...).lower(args).as_text(dialect="stablehlo")` runs in real XLA (jaxlib, in
a subprocess) with jaxlite's numbers, within the workload's own tolerance.

Skips when ../shared/bench or a python with jax is absent (see stablehlo_xla.py).
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import jaxlite
from stablehlo_xla import add_lowered_case, jax_python_or_skip, run_cases

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "workloads.py"


def _workloads():
    if not BENCH.exists():
        return None
    spec = importlib.util.spec_from_file_location("bench_workloads", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WORKLOADS = _workloads()
RUNNABLE = {w.key.replace("/", "_"): w for w in (WORKLOADS.WORKLOADS if WORKLOADS else [])
            if w.build_jx is not None and w.inputs is not None}


def _inputs(workload):
    return workload.inputs(np.random.default_rng(0))


@pytest.fixture(scope="module")
def bench_results(tmp_path_factory):
    if WORKLOADS is None:
        pytest.skip(f"no bench workloads at {BENCH}")
    jax_python_or_skip()
    cases = {}
    for name, workload in RUNNABLE.items():
        args = _inputs(workload)
        lowered = workload.build_jx(jaxlite).lower(*args)
        add_lowered_case(cases, name, lowered, jaxlite.tree_util.tree_leaves(args))
    return run_cases(cases, tmp_path_factory.mktemp("stablehlo_bench"))


@pytest.mark.parametrize("name", sorted(RUNNABLE) or ["(no bench workloads)"])
def test_bench_workload_runs_in_xla_with_our_numbers(name, bench_results):
    error = bench_results.get(f"{name}/error")
    assert error is None, f"jaxlib rejected the StableHLO of {name}: {error}"
    workload = RUNNABLE[name]
    args = _inputs(workload)
    ours = [np.asarray(x) for x in jaxlite.tree_util.tree_leaves(workload.build_jx(jaxlite)(*args))]
    assert f"{name}/out{len(ours)}" not in bench_results
    for i, mine in enumerate(ours):
        theirs = bench_results[f"{name}/out{i}"]
        assert theirs.shape == mine.shape and theirs.dtype == mine.dtype
        # the bench's own measure: max |a - b| / max |b|
        scale = max(float(np.max(np.abs(mine))), 1e-30) if mine.size else 1.0
        error = float(np.max(np.abs(theirs - mine))) / scale if mine.size else 0.0
        assert error <= workload.tol, (name, i, error)
