"""Every pass preserves meaning, on random programs (the property the design rests on).

For each generated program (tests/xla/hlo_strategies.py), the evaluator must give the same
numbers before and after each pass and after the whole pipeline, and the verifier must
accept every intermediate module. Integers and bools must match exactly; floats must match
bit for bit (NaN payloads aside), since none of our passes may change rounding: DCE and CSE
only remove work, the simplifier only applies exact identities, and constant folding runs
the evaluator itself. The count of generated programs is printed at the end of the module's
tests ("pass property tests: N generated HLO programs").
"""
from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings

from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_constants,
    simplify_algebra,
)
from jaxlite.xla.pipeline import PipelineOptions, optimize
from jaxlite.xla.text import parse_module, print_module
from jaxlite.xla.verifier import verify_module

from hlo_strategies import HloProgram, hlo_programs
from hlo_testing import assert_same_values

PASSES = (simplify_algebra, fold_constants, eliminate_common_subexpressions,
          eliminate_dead_code)
# Passes whose single run leaves nothing for a second run to do.
IDEMPOTENT = (eliminate_common_subexpressions, eliminate_dead_code)

PROGRAMS_RUN: collections.Counter = collections.Counter()


@pytest.fixture(scope="module", autouse=True)
def report_program_count(request: pytest.FixtureRequest) -> Iterator[None]:
    """Print how many generated programs the property tests below ran."""
    yield
    total = sum(PROGRAMS_RUN.values())
    detail = ", ".join(f"{name}: {n}" for name, n in sorted(PROGRAMS_RUN.items()))
    line = f"pass property tests: {total} generated HLO programs ({detail})"
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():  # shown even while output is captured
        reporter.write_line(line)


def _check(program: HloProgram, module: Any, expected: Any, what: str) -> None:
    verify_module(module)
    assert_same_values(expected, evaluate_module(module, program.args), what)


@settings(max_examples=400)
@given(hlo_programs())
def test_each_pass_preserves_meaning(program: HloProgram) -> None:
    PROGRAMS_RUN["each pass"] += 1
    verify_module(program.module)
    expected = evaluate_module(program.module, program.args)
    for p in PASSES:
        after = p(program.module)
        _check(program, after, expected, f"after {p.__name__}")
        if p in IDEMPOTENT:
            assert p(after) is after, f"{p.__name__} found more to do on its own output"


@settings(max_examples=400)
@given(hlo_programs())
def test_pipeline_preserves_meaning(program: HloProgram) -> None:
    PROGRAMS_RUN["pipeline"] += 1
    expected = evaluate_module(program.module, program.args)
    optimized = optimize(program.module, PipelineOptions(verify=True))
    _check(program, optimized, expected, "after the pipeline")
    # The pipeline ran to a fixed point: no pass has anything left to do.
    for p in PASSES:
        assert p(optimized) is optimized, f"{p.__name__} changed the pipeline's output"
    # What the passes build can be written as text and read back.
    _check(program, parse_module(print_module(optimized)), expected, "after printing")
