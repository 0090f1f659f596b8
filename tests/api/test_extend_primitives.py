"""jax.extend.core.primitives' typed-key primitives and empty2_p, bound directly: the same
keys, bits and dtypes as JAX 0.10.2 (recorded by record_with_jax.py extend_primitives from
extend_primitives_cases.py), eagerly, under jit, vmap and grad; and their errors."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.extend.random  # noqa: F401  (the cases read jax.extend.random's impls)
from jaxlite import numpy as jnp
from jaxlite.extend.core import primitives as P

sys.path.insert(0, str(Path(__file__).parent))
import extend_primitives_cases  # noqa: E402

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "api" /
                       "extend_primitives_jax.json").read_text())
CASES = sorted(k for k in RECORDED if k != "jax_version")


@pytest.fixture(scope="module")
def ours():
    return extend_primitives_cases.run_all(SimpleNamespace(jax=jax, jnp=jnp, P=P))


def test_recorded_from_jax_0_10_2():
    assert RECORDED["jax_version"] == "0.10.2"


@pytest.mark.parametrize("case", CASES)
def test_agrees_with_jax(ours, case):
    dtype, value = RECORDED[case]
    assert ours[case][0] == dtype
    # Bits and key data are integers: they must be equal, not close.
    assert np.array_equal(np.asarray(ours[case][1]), np.asarray(value)), case


def test_jax_random_does_not_bind_them():
    """jaxlite.random keeps its own composition: its jaxprs are unchanged."""
    text = str(jax.make_jaxpr(lambda k: jax.random.bits(jax.random.split(k)[0], (2,)))(
        jax.random.key(0)))
    assert "random_bits" not in text and "random_split" not in text


def test_they_leave_no_equation_of_their_own():
    jaxpr = jax.make_jaxpr(lambda k: P.random_bits_p.bind(k, bit_width=32, shape=(2,)))(
        jax.random.key(0))
    assert "threefry2x32" in str(jaxpr) and "random_bits" not in str(jaxpr)


def test_seed_keeps_its_keys_impl():
    keys = P.random_seed_p.bind(jnp.arange(2), impl=jax.extend.random.rbg_prng_impl)
    assert jax.random.key_impl(keys) == "rbg" and keys.shape == (2,)


@pytest.mark.parametrize("call, error, phrase", [
    (lambda: P.random_seed_p.bind(jnp.float32(1), impl=jax.extend.random.threefry_prng_impl),
     TypeError, "PRNG key seed must be an integer"),
    (lambda: P.random_seed_p.bind(jnp.int32(1), impl="threefry2x32"), TypeError, "PRNGImpl"),
    (lambda: P.random_split_p.bind(jax.random.PRNGKey(0), shape=(2,)), TypeError,
     "typed PRNG keys"),
    (lambda: P.random_bits_p.bind(jax.random.key(0), bit_width=12, shape=(2,)), TypeError,
     "64-bit"),
    (lambda: P.random_fold_in_p.bind(jax.random.split(jax.random.key(0), 3),
                                     jnp.arange(2, dtype=jnp.uint32)),
     TypeError, "incompatible shapes for broadcasting: (3,), (2,)"),
    (lambda: P.random_split_p.bind(jax.random.key(0), shape=(1.5,)), TypeError,
     "shape must be a sequence of integers"),
    (lambda: P.empty2_p.bind(dtype=jnp.float32), TypeError, "memory_space"),
])
def test_errors(call, error, phrase):
    with pytest.raises(error, match=re.escape(phrase)):
        call()


def test_rbg_bits_are_refused_not_approximated():
    with pytest.raises(NotImplementedError, match="RngBitGenerator"):
        P.random_bits_p.bind(jax.random.key(5, impl="rbg"), bit_width=32, shape=(4,))


REF_TREE = jax.tree_util.tree_structure(())


@pytest.mark.parametrize("call, error, phrase", [
    (lambda r: P.swap_p.bind(r, jnp.ones(4, jnp.int32), tree=REF_TREE), ValueError,
     "Invalid dtype for `swap`. Ref dtype: float32. Value dtype: int32."),
    (lambda r: P.swap_p.bind(r, 5, tree=REF_TREE), ValueError, "Invalid dtype for `swap`"),
    (lambda r: P.swap_p.bind(r, jnp.ones(3), tree=REF_TREE), ValueError,
     "Invalid shape for `swap`. Ref shape: (4,)"),
    (lambda r: P.swap_p.bind(r, [1.0, 2.0, 3.0, 4.0], tree=REF_TREE), TypeError,
     "Error interpreting argument to swap as a JAX value"),
    (lambda r: P.get_p.bind(jnp.ones(3), tree=REF_TREE), ValueError,
     "`get` must be called on `Ref` types"),
    (lambda r: P.get_p.bind(r), TypeError, "tree"),
    # JAX's indexers are its internal NDIndexer pytrees, which jaxlite does not have.
    (lambda r: P.get_p.bind(r, *jax.tree_util.tree_flatten((1,))[0],
                            tree=jax.tree_util.tree_flatten((1,))[1]),
     NotImplementedError, "takes no indexers"),
    # jaxlite's refs are eager-only (JAX threads them through jit as effects).
    (lambda r: jax.jit(lambda: P.get_p.bind(r, tree=REF_TREE))(), NotImplementedError,
     "eager code only"),
])
def test_ref_errors(call, error, phrase):
    ref = jax.new_ref(jnp.arange(4.0))
    with pytest.raises(error, match=re.escape(phrase)):
        call(ref)
    assert np.array_equal(ref[...], np.arange(4.0))  # a refused write leaves the ref alone


def test_every_jax_primitive_is_provided():
    assert P.NOT_PROVIDED == {}
    assert P.get_p.name == "get" and P.swap_p.name == "swap"
