"""Helpers of the tests that run jaxlite's StableHLO in real XLA: find a python with jax
(JAXLITE_JAX_PYTHON, else /tmp/jaxvenv/bin/python), collect cases (module text and
arguments) and run them all in one subprocess of stablehlo_runner.py."""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from jaxlite.core import dtypes

RUNNER = Path(__file__).with_name("stablehlo_runner.py")
JAX_PYTHON = os.environ.get("JAXLITE_JAX_PYTHON", "/tmp/jaxvenv/bin/python")


def jax_python_or_skip() -> str:
    """The python that has jax and jaxlib; skips the test when there is none."""
    if not os.path.exists(JAX_PYTHON):
        pytest.skip(f"no python with jax at {JAX_PYTHON} (set JAXLITE_JAX_PYTHON)")
    probe = subprocess.run([JAX_PYTHON, "-c", "import jax, jaxlib"], capture_output=True)
    if probe.returncode:
        pytest.skip(f"{JAX_PYTHON} cannot import jax: {probe.stderr.decode()[-200:]}")
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
