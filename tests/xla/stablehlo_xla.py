"""Helpers of the tests that run jaxlite's StableHLO in real XLA: find a python with jax
(JAXLITE_JAX_PYTHON, else /tmp/jaxvenv/bin/python), collect cases (module text and
arguments) and run them all in one subprocess of stablehlo_runner.py."""
import functools
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
from jaxlite.core import dtypes
from jaxlite.export import from_stablehlo

RUNNER = Path(__file__).with_name("stablehlo_runner.py")
JAX_PYTHON = os.environ.get("JAXLITE_JAX_PYTHON", "/tmp/jaxvenv/bin/python")


@functools.lru_cache(maxsize=None)
def _jax_python_problem() -> str:
    """Why JAX_PYTHON cannot run jax ("" when it can). Asked once per process: the probe
    imports jax, about 2 s of CPU, and the answer does not change during a run."""
    if not os.path.exists(JAX_PYTHON):
        return f"no python with jax at {JAX_PYTHON} (set JAXLITE_JAX_PYTHON)"
    probe = subprocess.run([JAX_PYTHON, "-c", "import jax, jaxlib"], capture_output=True)
    if probe.returncode:
        return f"{JAX_PYTHON} cannot import jax: {probe.stderr.decode()[-200:]}"
    return ""


def jax_python_or_skip() -> str:
    """The python that has jax and jaxlib; skips the test when there is none."""
    problem = _jax_python_problem()
    if problem:
        pytest.skip(problem)
    return JAX_PYTHON


def pack(array) -> np.ndarray:
    """npz files cannot hold bfloat16: its bits travel as uint16 (the runner's output too)."""
    array = np.asarray(array)
    return array.view(np.uint16) if array.dtype == dtypes.bfloat16 else array


def add_text_case(cases: dict, name: str, text: str, inputs, parse_only: bool = False):
    """Case `name`: StableHLO `text` run on `inputs` (a flat list of arrays)."""
    cases[f"{name}/text"] = np.array(text)
    for i, value in enumerate(inputs):
        cases[f"{name}/arg{i}"] = pack(value)
    cases[f"{name}/bf16"] = np.array([i for i, v in enumerate(inputs)
                                      if np.asarray(v).dtype == dtypes.bfloat16], int)
    if parse_only:
        cases[f"{name}/parse_only"] = np.array(True)


def add_lowered_case(cases: dict, name: str, lowered, leaves, parse_only: bool = False):
    """Case `name` of a `Lowered`: its StableHLO, run on the large constants that became
    leading parameters, then `leaves` (the flat arguments)."""
    inputs = list(lowered._lowered.const_args) + list(leaves)
    add_text_case(cases, name, lowered.as_text(dialect="stablehlo"), inputs, parse_only)


def run_cases(cases: dict, folder: Path) -> dict:
    """Every case through jaxlib at once; the runner's results by key (see the runner)."""
    python = jax_python_or_skip()
    np.savez(folder / "cases.npz", **cases)
    done = subprocess.run([python, str(RUNNER), str(folder / "cases.npz"),
                           str(folder / "out.npz")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(np.load(folder / "out.npz", allow_pickle=False))


def unpack_like(result: np.ndarray, mine: np.ndarray) -> np.ndarray:
    return result.view(dtypes.bfloat16) if mine.dtype == dtypes.bfloat16 else result


def lower_programs(programs: dict, x64) -> dict:
    """name -> (Lowered, jaxlite's result leaves, StableHLO text) of each
    `programs[name] = (function, arguments, tolerance)`, traced with x64 where `x64(name)`."""
    out = {}
    for name, (fn, args, _) in programs.items():
        jitted = jax.jit(fn)
        with jax.enable_x64(x64(name)):
            lowered = jitted.lower(*args)
            out[name] = (lowered, [np.asarray(v) for v in
                                   jax.tree_util.tree_leaves(jitted(*args))],
                         lowered.as_text(dialect="stablehlo"))
    return out


def run_programs(programs: dict, lowered: dict, x64, folder: Path) -> dict:
    """Every lowered program run by jaxlib on its arguments (see `run_cases`)."""
    cases = {}
    for name, (fn, args, _) in programs.items():
        with jax.enable_x64(x64(name)):
            add_lowered_case(cases, name, lowered[name][0], jax.tree_util.tree_leaves(args))
    return run_cases(cases, folder)


def assert_relative_close(theirs, mine: np.ndarray, tolerance: float, what: str):
    """Same shape and dtype, and equal to a relative `tolerance` (inf and NaN alike)."""
    theirs = unpack_like(np.asarray(theirs), mine)
    assert theirs.shape == mine.shape and theirs.dtype == mine.dtype, (what, theirs, mine)
    np.testing.assert_allclose(theirs, mine, rtol=tolerance, atol=0, err_msg=what)


def check_runs_in_xla(programs: dict, name: str, lowered: dict, xla_results: dict):
    """jaxlib ran program `name` without error, with jaxlite's numbers, leaf by leaf."""
    assert f"{name}/error" not in xla_results, xla_results.get(f"{name}/error")
    mine = lowered[name][1]
    assert f"{name}/out{len(mine)}" not in xla_results
    for i, value in enumerate(mine):
        assert_relative_close(xla_results[f"{name}/out{i}"], value, programs[name][2],
                              f"{name} output {i}")


def check_reads_back(programs: dict, name: str, lowered: dict, x64):
    """`from_stablehlo` of the text runs (through jaxlite's compiler) with the same numbers."""
    _, args, tolerance = programs[name]
    inputs = list(lowered[name][0]._lowered.const_args) + jax.tree_util.tree_leaves(args)
    with jax.enable_x64(x64(name)):
        again = jax.tree_util.tree_leaves(from_stablehlo(lowered[name][2]).call(*inputs))
    assert len(again) == len(lowered[name][1])
    for i, (theirs, value) in enumerate(zip(again, lowered[name][1])):
        assert_relative_close(np.asarray(theirs), value, tolerance, f"{name} output {i}")
