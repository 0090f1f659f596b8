"""jax.example_libraries: stax models initialized and trained a few steps by every
optimizer give JAX 0.10.2's parameters and losses (recorded by
record_jax_example_libraries.py from example_cases.py; the initializers draw with
jaxlite.random, bit-identical to JAX's), and the schedules, utilities and errors agree."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers, stax

import example_cases
from case_util import assert_same_answer

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" / "example_libraries" /
                       "jax_expected.json").read_text())["cases"]
API = SimpleNamespace(jax=jax, jnp=jnp, optimizers=optimizers, stax=stax)


@pytest.fixture(scope="module")
def answers() -> dict:
    return example_cases.run_all(API)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_same_numbers_as_jax(answers, name):
    # A few float32 training steps: each number within ~10 ulps of the case's largest
    # (relative errors of near-zero entries, such as a bias whose gradient cancels, are
    # larger and meaningless).
    assert_same_answer(answers[name], EXPECTED[name], 2e-6)


def test_optimizer_state_is_a_pytree_for_jit():
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    state = opt_init({"w": jnp.ones(3), "b": jnp.zeros(())})
    leaves, tree = jax.tree_util.tree_flatten(state)
    assert len(leaves) == 6  # (x, m, v) per parameter
    stepped = jax.jit(opt_update)(0, {"w": jnp.ones(3), "b": jnp.ones(())}, state)
    np.testing.assert_allclose(get_params(stepped)["w"], 1 - 0.1 * (1 / (1 + 1e-8)),
                               rtol=1e-6)
    assert isinstance(stepped, optimizers.OptimizerState)
    assert optimizers.Optimizer(*optimizers.sgd(0.1)).init_fn is not None
