"""Narrow integer indices (issue 11, section 1) against JAX 0.10.2.

dynamic_slice / dynamic_update_slice and their *_in_dim wrappers with int8, uint8, int16,
uint16 and uint32 start indices, eagerly, under jit and vmap (the cpu backend and the HLO
evaluator), and x[i], jnp.take, take_along_axis and x.at[i] with narrow index arrays. The
expected answers were recorded from JAX 0.10.2 by record_with_jax.py robustness_indexing into
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


# Shapes whose byte count overflows int64: JAX 0.10.2's XLA aborts the whole process
# ("overflow in static extent product: dimensions=[1099511627776, 1099511627776]"), so
# there is nothing to record; jaxlite raises that phrase as a JaxRuntimeError at once,
# eagerly and when compiling, while eval_shape still gives the shape as JAX's does.
@pytest.mark.parametrize("make", [
    lambda: jnp.zeros((2**40, 2**40)),
    lambda: jnp.ones((2**62,)),
    lambda: jnp.broadcast_to(1.0, (2**40, 2**40)),
    lambda: jax.jit(lambda: jnp.zeros((2**40, 2**40)))(),
])
def test_sizes_beyond_int64_say_so(make):
    with pytest.raises(jax.errors.JaxRuntimeError,
                       match=r"overflow in static extent product: dimensions=\["):
        make()


def test_eval_shape_of_an_impossible_array_is_fine():
    assert jax.eval_shape(lambda: jnp.zeros((2**40, 2**40))).shape == (2**40, 2**40)


def test_arrays_up_to_the_memory_limit_stay_lazy_views():
    from jaxlite.runtime.allocation import MEMORY_BYTES, allocation_error
    assert allocation_error([jax.ShapeDtypeStruct((MEMORY_BYTES // 4,), jnp.float32)]) is None
    too_big = allocation_error([jax.ShapeDtypeStruct((MEMORY_BYTES // 4 + 1,), jnp.float32)])
    assert isinstance(too_big, jax.errors.JaxRuntimeError)
    assert str(too_big).startswith("RESOURCE_EXHAUSTED: Out of memory allocating "
                                   f"{(MEMORY_BYTES // 4 + 1) * 4} bytes.")


# JAX 0.10.2 lets MLIR refuse a negative key count ("invalid tensor dimension size", an
# MLIRError that jaxlite does not have); jaxlite raises a ValueError with that phrase
# instead of the internal iota message.
@pytest.mark.parametrize("num", [-1, (2, -1)])
def test_split_with_a_negative_count(num):
    with pytest.raises(ValueError, match=r"invalid tensor dimension size: random.split"):
        jax.random.split(jax.random.key(0), num)
    with pytest.raises(ValueError, match=r"invalid tensor dimension size: random.split"):
        jax.jit(lambda k: jax.random.split(k, num))(jax.random.key(0))
