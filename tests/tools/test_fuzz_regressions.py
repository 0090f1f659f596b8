"""Replays the fuzzer's regression cases (tests/tools/fuzz_regressions/*.json).

Each case is a minimal program the fuzzer found disagreeing, with JAX 0.10.2's outcome
recorded next to it (`expected_from_jax`: eager and under jit, written by `jaxlite.tools.fuzz.engine.save_case`
through the oracle worker running /tmp/jaxvenv/bin/python). Every jaxlite mode (eager, jit on
the interpreter, jit on cpu) must agree with that outcome; vmap and grad cases rerun their
check. A case whose bug is reported but not fixed here says `"status": "open"` and why, and
is a strict xfail: it fails the day the bug is fixed, so that the status gets updated.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxlite.tools.fuzz import runners

CASES = sorted((Path(__file__).parent / "fuzz_regressions").glob("*.json"))


def _param(path):
    case = json.loads(path.read_text())
    marks = []
    if case.get("status") == "open":
        marks.append(pytest.mark.xfail(strict=True, reason=case.get("reason", "open")))
    return pytest.param(case, id=path.stem, marks=marks)


@pytest.mark.parametrize("case", [_param(p) for p in CASES])
def test_case_agrees(case):
    program = case["program"]
    mode = case["kind"].split(" vs ")[0].split(": ")[-1]
    if mode == "vmap":
        findings = runners.check_vmap(program)
    elif mode == "grad":
        findings = runners.check_grad(program)
    else:
        want = runners.from_oracle(case["expected_from_jax"])
        _, findings = runners.check_modes(program, runners.MODES, want)
    assert not findings, [f"{f.kind}: {f.detail}" for f in findings]


def test_cases_exist():
    assert len(CASES) >= 2
