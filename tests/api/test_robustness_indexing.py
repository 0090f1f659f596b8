"""Narrow integer indices (issue 11, section 1) against JAX 0.10.2.

dynamic_slice / dynamic_update_slice and their *_in_dim wrappers with int8, uint8, int16,
uint16 and uint32 start indices, eagerly, under jit and vmap (the cpu backend and the HLO
evaluator), and x[i], jnp.take, take_along_axis and x.at[i] with narrow index arrays. The
expected answers were recorded from JAX 0.10.2 by record_robustness_indexing.py into
tests/data/api/robustness_indexing_jax.json; see robustness_indexing_cases.py for the one
JAX quirk (eager int8 updates) that jaxlite deliberately does not copy.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

sys.path.insert(0, str(Path(__file__).parent))
import robustness_indexing_cases  # noqa: E402

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "api" /
                       "robustness_indexing_jax.json").read_text())


@pytest.fixture(scope="module")
def ours():
    return robustness_indexing_cases.run_all(SimpleNamespace(jax=jax, jnp=jnp, lax=lax))


def test_recorded_from_jax_0_10_2():
    assert RECORDED["jax_version"] == "0.10.2"


def _same_values(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same_values, a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


@pytest.mark.parametrize("case", sorted(k for k in RECORDED if k != "jax_version"))
def test_agrees_with_jax(ours, case):
    want, got = RECORDED[case], ours[case]
    if want[0] == "error":
        assert got[0] == "error" and got[1] == want[1], (case, got, want)
        key_phrase = want[2].split(". ")[0].split(" See ")[0][:60]
        assert key_phrase in got[2], (case, got, want)
    else:
        assert got[0] == "ok" and _same_values(got[1], want[1]), (case, got, want)
