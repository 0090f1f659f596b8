"""jax.experimental.jet: Taylor series of compositions against JAX 0.10.2's (recorded by
tests/experimental/record_jax_experimental.py from jet_cases.py) and against nested
first-order derivatives; the rule table and its errors."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.core.primitive import Primitive
from jaxlite.experimental import jet

import jet_cases
from case_util import assert_same_answer

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" / "experimental" /
                       "jax_expected.json").read_text())["jet"]
API = SimpleNamespace(jax=jax, jnp=jnp, lax=lax, jet=jet)


@pytest.fixture(scope="module")
def answers() -> dict:
    return jet_cases.run_all(API)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_same_answer_as_jax(answers, name):
    # A K-th coefficient is a sum of products of K lower ones: a few float32 roundings
    # each, compared relative to the case's largest number (JAX's factorials, computed
    # as exp(lgamma(n + 1)), are themselves off by ~1e-6 in float32). Exceptions: the
    # same type (our KeyError for a missing rule says more than the primitive's name).
    assert_same_answer(answers[name], EXPECTED[name],
                       1e-12 if name.endswith("64") else 1e-5, compare_text=False)


def _nested_derivatives(f, x, order):
    """f(x), f'(x), ..., by nesting first-order differentiation (elementwise f)."""
    derivatives, g = [], f
    for _ in range(order + 1):
        derivatives.append(np.asarray(jax.vmap(g)(x)))
        g = jax.grad(g)
    return derivatives


SCALAR_FUNCTIONS = {
    "softplus": jax.nn.softplus,  # (JAX's jet fails on its custom_jvp)
    "scalar min": lambda x: jnp.minimum(x * 2, 1.0),  # (JAX's min rule fails here)
    "scalar clamp": lambda x: lax.clamp(0.2, x * x, 5.0),
    "tan": jnp.tan,  # (no rule in JAX)
    "exp2": jnp.exp2,
    "sigmoid of log": lambda x: jax.nn.sigmoid(jnp.log(x) * 3),
}


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_derivatives_along_a_line_match_nested_grad(name):
    # Along x + t: the k-th jet term is the k-th derivative.
    jax.config.update("jax_enable_x64", True)
    try:
        f = SCALAR_FUNCTIONS[name]
        x = np.array([0.3, 0.8, 1.3])
        primal, terms = jet.jet(f, (x,), ([np.ones(3), np.zeros(3), np.zeros(3)],))
        want = _nested_derivatives(f, x, 3)
        np.testing.assert_allclose(primal, want[0], rtol=1e-13)
        for k in range(3):
            np.testing.assert_allclose(terms[k], want[k + 1], rtol=1e-10, atol=1e-12)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_rule_helpers_extend_the_table():
    double = Primitive("jet_test_double", register=False)
    double.def_impl(lambda x: 2 * np.asarray(x))
    double.def_abstract_eval(lambda x: x)
    jet.deflinear(double)
    primal, series = jet.jet(lambda x: double.bind(x) * x, (3.0,), ([1.0, 0.0],))
    np.testing.assert_allclose([primal, *series], [18.0, 12.0, 4.0])
    jet.defzero(double)
    primal, series = jet.jet(lambda x: double.bind(x), (3.0,), ([1.0, 5.0],))
    np.testing.assert_allclose([primal, *series], [6.0, 0.0, 0.0])
    del jet.jet_rules[double]


def test_zero_series_and_missing_rule():
    primal, series = jet.jet(lambda x: jnp.floor(x) * 2, (1.5,), ([1.0, 2.0],))
    assert float(primal) == 2.0 and [float(s) for s in series] == [0.0, 0.0]
    with pytest.raises(KeyError, match="while"):
        jet.jet(lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c * 2, x), (1.0,),
                ([1.0],))
    assert jax.tree_util.tree_leaves(jet.zero_series) == []
    assert jet.fact(4) == pytest.approx(24.0, rel=1e-6)
