"""XLA's own HLO for a few programs evaluates to what jaxlite computes for the same programs.

The fixtures (tests/xla/fixtures, written once by generate.py with JAX 0.10.2) hold XLA's
text before and after its passes and the inputs. Here the same Python programs, written
against jaxlite, run eagerly on those inputs; evaluating the parsed XLA text on the same
inputs must give the same numbers, within float32 tolerance.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.text import parse_module

FIXTURES = Path(__file__).parent / "fixtures"
# A few float32 roundings of accumulated error between two orders of summation.
TOLERANCE = 2e-5


def mlp_forward(params, x):
    (w1, b1), (w2, b2) = params
    return jnp.tanh(x @ w1 + b1) @ w2 + b2


def mlp_train_step(params, x, y):
    def loss_fn(p):
        return jnp.mean((mlp_forward(p, x) - y) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    return loss, jax.tree_util.tree_map(lambda p, g: p - 0.02 * g, params, grads)


def softmax_rows(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def layernorm(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * gamma + beta


def reduce_max(x):
    return jnp.max(x, axis=0), jnp.max(jnp.abs(x))


def movement(x, y):
    top = lax.pad(x[1:5, ::2], 0.0, ((1, 0, 0), (0, 2, 0)))  # jnp.pad arrives with issue 6
    both = jnp.concatenate([top, y.T], axis=1)
    return jnp.transpose(both) * 2.0, lax.pad(x, 0.0, ((0, 1, 1), (2, 0, 0)))


def _params(leaves):
    w1, b1, w2, b2 = leaves
    return ((w1, b1), (w2, b2))


PROGRAMS = {
    "mlp_forward": lambda ins: mlp_forward(_params(ins[:4]), ins[4]),
    "mlp_train_step": lambda ins: mlp_train_step(_params(ins[:4]), ins[4], ins[5]),
    "softmax": lambda ins: softmax_rows(*ins),
    "layernorm": lambda ins: layernorm(*ins),
    "reduce_max": lambda ins: reduce_max(*ins),
    "movement": lambda ins: movement(*ins),
}


def _inputs(program: str) -> list[np.ndarray]:
    data = np.load(FIXTURES / f"{program}.npz")
    return [data[f"in_{i}"] for i in range(sum(k.startswith("in_") for k in data.files))]


def _flat(result) -> list[np.ndarray]:
    if isinstance(result, tuple):
        return [leaf for part in result for leaf in _flat(part)]
    return [np.asarray(result)]


@pytest.mark.parametrize("stage", ["lowered.hlo", "hlo"])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_xla_text_evaluates_to_the_jaxlite_program(program, stage):
    inputs = _inputs(program)
    expected = jax.tree_util.tree_leaves(PROGRAMS[program](inputs))
    module = parse_module((FIXTURES / f"{program}.{stage}").read_text())
    actual = _flat(evaluate_module(module, inputs))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == np.shape(e) and a.dtype == np.asarray(e).dtype
        np.testing.assert_allclose(a, np.asarray(e), rtol=TOLERANCE, atol=TOLERANCE)
