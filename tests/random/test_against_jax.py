"""jaxlite.random against the values real JAX 0.10.2 gives (tests/random/data/expected.json,
written by tools/gen_random_expected.py).

Each case calls a `jaxlite.random` sampler (or a `jaxlite.nn.initializers` initializer, or an
operation on "rbg" keys) with the key `PRNGKey(seed)` and JAX's arguments. Bits, keys and
every integer or boolean result must be identical, and so must the floats of the samplers in
`EXACT`; floats that go through other transcendental functions (log, exp, pow, tan, QR) must
agree to a few ulps, since jaxlite's math functions are not yet XLA's bit for bit.
"""
from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import random
from jaxlite.nn import initializers

DATA = json.loads((Path(__file__).parent / "data" / "expected.json").read_text())

# Functions whose float results must be bit-identical to JAX's.
EXACT = {"uniform", "initializers.uniform"}
# Relative tolerance of float results by dtype (a few ulps; more where errors compound).
RTOL = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-5, "float64": 1e-12,
        "complex64": 2e-5}
def _decode(value):
    if isinstance(value, dict) and "array" in value:
        return jnp.asarray(np.asarray(value["array"], value["dtype"]))
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return tuple(value)
    return value


def _call(case: dict, key):
    args = [_decode(a) for a in case["args"]]
    kwargs = {k: _decode(v) for k, v in case["kwargs"].items()}
    if case["fn"].startswith("initializers."):
        factory = getattr(initializers, case["fn"].split(".")[1])
        return factory(**kwargs)(key, *args)
    if case["fn"].startswith("rbg."):
        rbg_key = random.key(case["seed"], impl="rbg")
        op = case["fn"].split(".")[1]
        return random.key_data(rbg_key if op == "seed" else getattr(random, op)(rbg_key, *args))
    return getattr(random, case["fn"])(key, *args, **kwargs)


def _expected(case: dict) -> np.ndarray:
    spec = case["expected"]
    dtype = ml_dtypes.bfloat16 if spec["dtype"] == "bfloat16" else np.dtype(spec["dtype"])
    if spec["dtype"].startswith("complex"):
        values = [complex(re, im) for re, im in spec["values"]]
        return np.asarray(values, dtype).reshape(spec["shape"])
    if np.dtype(dtype).kind in "iub":
        return np.array(spec["values"], dtype).reshape(spec["shape"])
    return np.asarray(spec["values"]).astype(dtype).reshape(spec["shape"])


def _check(actual, case: dict) -> None:
    expected = _expected(case)
    actual = np.asarray(actual)
    what = f"{case['fn']} seed {case['seed']} args {case['args']} kwargs {case['kwargs']}"
    assert actual.shape == expected.shape, what
    assert actual.dtype == expected.dtype, what
    kind = np.dtype(actual.dtype).kind
    if kind in "iub" or case["fn"] in EXACT:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        rtol = RTOL[case["expected"]["dtype"]]
        np.testing.assert_allclose(actual.astype(np.complex128), expected.astype(np.complex128),
                                   rtol=rtol, atol=rtol, err_msg=what)


def _ids(cases):
    return [f"{i}-{c['fn']}-{c['seed']}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("case", DATA["x32"], ids=_ids(DATA["x32"]))
def test_matches_jax(case):
    _check(_call(case, random.PRNGKey(case["seed"])), case)


@pytest.mark.parametrize("case", DATA["x64"], ids=_ids(DATA["x64"]))
def test_matches_jax_with_x64(case):
    with jax.enable_x64(True):
        _check(_call(case, random.PRNGKey(case["seed"])), case)


@pytest.mark.parametrize("seed,data", DATA["seeds_x32"])
def test_seeds_as_jax(seed, data):
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(seed)), np.asarray(data, np.uint32))
    np.testing.assert_array_equal(np.asarray(random.key_data(random.key(seed))), data)


@pytest.mark.parametrize("seed,data", DATA["seeds_x64"])
def test_seeds_as_jax_with_x64(seed, data):
    with jax.enable_x64(True):
        np.testing.assert_array_equal(np.asarray(random.PRNGKey(seed)), data)


SAMPLED = [c for c in DATA["x32"] if c["fn"] in
           ("split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli", "gumbel",
            "categorical", "choice", "initializers.glorot_normal")]


@pytest.mark.parametrize("case", SAMPLED, ids=_ids(SAMPLED))
def test_typed_keys_give_the_same_values(case):
    out = _call(case, random.key(case["seed"]))
    if isinstance(out, random.PRNGKeyArray):
        out = random.key_data(out)
    _check(out, case)


JITTED = [c for c in DATA["x32"] if c["fn"] in
          ("split", "fold_in", "bits", "uniform", "normal", "randint", "exponential",
           "truncated_normal", "initializers.he_normal")] + \
    [c for c in DATA["x32"] if (c["fn"], c["seed"]) in {("gamma", 0), ("poisson", 0)}]


@pytest.mark.parametrize("case", JITTED, ids=_ids(JITTED))
def test_jit_gives_the_same_values(case):
    out = jax.jit(lambda key: _call(case, key))(random.PRNGKey(case["seed"]))
    _check(out, case)
