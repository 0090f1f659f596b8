"""jax.experimental.ode.odeint: solutions and adjoint gradients against JAX 0.10.2's
(recorded by tests/experimental/record_jax_experimental.py from ode_cases.py), against
scipy's solver, and gradients against finite differences."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.integrate

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental import ode

import ode_cases
from case_util import assert_same_answer

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" / "experimental" /
                       "jax_expected.json").read_text())["ode"]
API = SimpleNamespace(jax=jax, jnp=jnp, ode=ode)


@pytest.fixture(scope="module")
def answers() -> dict:
    return ode_cases.run_all(API)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_same_answer_as_jax(answers, name):
    # Hundreds of steps, each deciding acceptance from a rounded error estimate: float32
    # answers agree to a few ulps per step, float64 ones to far below the tolerance.
    assert_same_answer(answers[name], EXPECTED[name], 1e-8 if name.endswith("64") else 2e-5)


@pytest.fixture
def x64():
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)


def test_solution_against_scipy(x64):
    t = np.linspace(0.0, 3.0, 7)
    y0 = np.array([1.0, 2.0])
    ours = ode.odeint(ode_cases.forced_decay, jnp.asarray(y0), jnp.asarray(t), 0.5,
                      rtol=1e-10, atol=1e-10)
    reference = scipy.integrate.solve_ivp(
        lambda t, y: ode_cases.forced_decay(y, t, 0.5), (0.0, 3.0), y0, t_eval=t,
        method="DOP853", rtol=1e-12, atol=1e-12).y.T
    np.testing.assert_allclose(ours, reference, rtol=1e-8)


def test_gradients_against_finite_differences(x64):
    t = jnp.linspace(0.0, 2.0, 4)

    @jax.jit
    def loss(y0, k, t):
        return jnp.sum(ode.odeint(ode_cases.forced_decay, y0, t, k, rtol=1e-11,
                                  atol=1e-11) ** 2)
    y0, k = jnp.array([1.0, -0.5]), jnp.asarray(0.7)
    grads = jax.grad(loss, argnums=(0, 1, 2))(y0, k, t)
    eps = 1e-5
    for i, (arg, grad) in enumerate(zip((y0, k, t), grads)):
        flat = np.asarray(arg, dtype=np.float64).ravel()
        for j in range(flat.size):
            up, down = flat.copy(), flat.copy()
            up[j] += eps
            down[j] -= eps
            args = [y0, k, t]
            args[i] = jnp.asarray(up.reshape(np.shape(arg)))
            high = float(loss(*args))
            args[i] = jnp.asarray(down.reshape(np.shape(arg)))
            low = float(loss(*args))
            np.testing.assert_allclose(np.ravel(grad)[j], (high - low) / (2 * eps),
                                       rtol=1e-6, atol=1e-8)


def test_pytree_state_keeps_structure_and_dtypes():
    state = {"x": jnp.float32(1.0), "y": jnp.ones(2, jnp.float32)}
    out = ode.odeint(lambda s, t: {"x": -s["x"], "y": s["y"] * t}, state,
                     jnp.linspace(0.0, 1.0, 3, dtype=jnp.float32))
    assert out["x"].shape == (3,) and out["y"].shape == (3, 2)
    assert out["x"].dtype == out["y"].dtype == np.float32
    np.testing.assert_allclose(out["x"], np.exp(-np.array([0.0, 0.5, 1.0])), rtol=1e-6)
    np.testing.assert_allclose(out["y"][:, 0], np.exp(np.array([0.0, 0.5, 1.0]) ** 2 / 2),
                               rtol=1e-6)


def test_ravel_first_arg():
    f = ode.ravel_first_arg(lambda y, s: {"a": y["a"] * s, "b": y["b"] + s},
                            lambda v: {"a": v[:2], "b": v[2]})
    np.testing.assert_allclose(f(jnp.array([1.0, 2.0, 3.0]), 2.0), [2.0, 4.0, 5.0])
