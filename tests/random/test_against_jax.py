"""jaxlite.random against the values real JAX 0.10.2 gives (tests/random/data/expected.json,
written by tools/gen_random_expected.py).

Each case calls a `jaxlite.random` sampler (or a `jaxlite.nn.initializers` initializer, or an
operation on "rbg" keys) with the key `PRNGKey(seed)` and JAX's arguments. Bits, keys and
every integer or boolean result must be identical, and so must the floats of the samplers in
`EXACT`; floats that go through other functions (exp, pow, tan, QR, float64 log and erf_inv)
must agree to a few ulps, since those are not yet XLA's bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import random
from random_cases import DATA, call, expected, ids

# Functions whose float results must be bit-identical to JAX's (the others go through exp,
# pow, tan or reductions, which are not yet XLA's bit for bit).
EXACT = {"uniform", "normal", "truncated_normal", "exponential", "gumbel", "logistic",
         "laplace", "rayleigh", "wald", "triangular",
         "initializers.uniform",
         "initializers.normal", "initializers.glorot_normal", "initializers.he_normal",
         "initializers.lecun_normal", "initializers.variance_scaling"}
# float64 erf_inv is not XLA's bit for bit (its log1p calls the C library's log).
EXACT_FLOAT64 = {"uniform", "initializers.uniform"}
# Relative tolerance of float results by dtype (a few ulps; more where errors compound).
RTOL = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-5, "float64": 1e-12,
        "complex64": 2e-5}


def _check(actual, case: dict) -> None:
    want = expected(case)
    actual = np.asarray(actual)
    what = f"{case['fn']} seed {case['seed']} args {case['args']} kwargs {case['kwargs']}"
    assert actual.shape == want.shape, what
    assert actual.dtype == want.dtype, what
    kind = np.dtype(actual.dtype).kind
    exact = EXACT_FLOAT64 if want.dtype in (np.float64, np.complex128) else EXACT
    if kind in "iub" or case["fn"] in exact:
        np.testing.assert_array_equal(actual, want, err_msg=what)
    else:
        rtol = RTOL[case["expected"]["dtype"]]
        np.testing.assert_allclose(actual.astype(np.complex128), want.astype(np.complex128),
                                   rtol=rtol, atol=rtol, err_msg=what)


@pytest.mark.parametrize("case", DATA["x32"], ids=ids(DATA["x32"]))
def test_matches_jax(case):
    _check(call(case, random.PRNGKey(case["seed"])), case)


@pytest.mark.parametrize("case", DATA["x64"], ids=ids(DATA["x64"]))
def test_matches_jax_with_x64(case):
    with jax.enable_x64(True):
        _check(call(case, random.PRNGKey(case["seed"])), case)


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


@pytest.mark.parametrize("case", SAMPLED, ids=ids(SAMPLED))
def test_typed_keys_give_the_same_values(case):
    out = call(case, random.key(case["seed"]))
    if isinstance(out, random.PRNGKeyArray):
        out = random.key_data(out)
    _check(out, case)


JITTED = [c for c in DATA["x32"] if c["fn"] in
          ("split", "fold_in", "bits", "uniform", "normal", "randint", "exponential",
           "truncated_normal", "initializers.he_normal")] + \
    [c for c in DATA["x32"] if (c["fn"], c["seed"]) in {("gamma", 0), ("poisson", 0)}]


@pytest.mark.parametrize("case", JITTED, ids=ids(JITTED))
def test_jit_gives_the_same_values(case):
    out = jax.jit(lambda key: call(case, key))(random.PRNGKey(case["seed"]))
    _check(out, case)
