"""JAX's ecosystem libraries, unmodified, on jaxlite: each script in `scripts/` trains or
samples a small model with one library and prints its numbers; here it runs under
`python -m jaxlite.run` and must print what it printed under JAX 0.10.2 (recorded in
`expected/` by `record_jax.py`). A script is skipped, with the reason, where its library
is not installed.

Tolerances: each script runs tens to hundreds of float32 steps in which jaxlite's and XLA's
rounding differ by an ulp here and there (fused multiply-adds, reduction order,
transcendental functions); training damps such differences and MCMC chains amplify them,
so the tolerance is per script, set from the number and kind of steps.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# script -> (modules it needs, relative tolerance)
SCRIPTS = {
    "optax_mlp": (["optax"], 1e-4),
    "flax_linen_mlp": (["flax", "optax"], 1e-3),
    "flax_nnx_mlp": (["flax", "optax"], 1e-4),
    "equinox_mlp": (["equinox", "optax"], 1e-4),
    "numpyro_models": (["numpyro"], 1e-5),
    "blackjax_nuts": (["blackjax"], 1e-5),
    "diffrax_ode": (["diffrax"], 1e-4),
    # An argmin of a float32 objective is determined to about sqrt(eps) = 3.5e-4 (the
    # objective is flat to second order there), so two correct solvers agree to that.
    "jaxopt_lbfgs": (["jaxopt"], 3.5e-4),
    "chex_checks": (["chex"], 0.0),
}

# Values of long MCMC chains, where an ulp of difference sends jaxlite's and JAX's chains
# apart after ~100 steps: compared statistically, with the true value where it is known,
# else with JAX's estimate (JAX), within an absolute tolerance of about four standard
# errors of the difference. script -> {key: (true value or JAX, tolerance)}.
JAX = "JAX's value"
STATISTICAL = {
    # 2000 NUTS draws of a 2-d Gaussian (means 0, correlation 0.8); effective sample size
    # 655 under JAX, so the means' standard error is 0.04 and the correlation's
    # (1 - 0.8^2) / sqrt(655) = 0.014.
    "blackjax_nuts": {"stats.mean": ([0.0, 0.0], 0.15), "stats.corr": (0.8, 0.05)},
    # 150 draws; under JAX posterior sd / n_eff: w 0.12 / 107, b 0.07 / 141, sigma
    # 0.05 / 58, so the difference of two chains' means has standard error 0.016, 0.008
    # and 0.009.
    "numpyro_models": {"nuts.w_mean": (JAX, 0.066), "nuts.b_mean": (JAX, 0.033),
                       "nuts.sigma_mean": (JAX, 0.037)},
}


def _missing(modules: list[str]) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def _compare(actual, expected, rtol: float, statistical: dict, path: str = "") -> None:
    if path.lstrip(".") in statistical:
        value, atol = statistical[path.lstrip(".")]
        value = expected if value is JAX else value
        np.testing.assert_allclose(actual, value, rtol=0, atol=atol, err_msg=path)
    elif isinstance(expected, dict):
        assert sorted(actual) == sorted(expected), path
        for key in expected:
            _compare(actual[key], expected[key], rtol, statistical, f"{path}.{key}")
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool) or \
            isinstance(expected, list):
        np.testing.assert_allclose(np.asarray(actual, float), np.asarray(expected, float),
                                   rtol=rtol, atol=rtol * 1e-2, err_msg=path)
    else:
        assert actual == expected, path


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_prints_jax_numbers(name):
    modules, rtol = SCRIPTS[name]
    missing = _missing(modules)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "jaxlite.run",
                             str(HERE / "scripts" / f"{name}.py")],
                            capture_output=True, text=True, env=env, timeout=1800)
    assert result.returncode == 0, result.stderr[-4000:]
    actual = json.loads(result.stdout.strip().splitlines()[-1])
    expected = json.loads((HERE / "expected" / f"{name}.json").read_text())
    _compare(actual, expected, rtol, STATISTICAL.get(name, {}))
