"""Cases run on JAX 0.10.2 (recorded by record_with_jax.py extend_primitives) and on jaxlite
(test_extend_primitives.py): binding jax.extend.core.primitives' typed-key primitives
(random_seed_p, random_split_p, random_fold_in_p, random_bits_p), empty2_p, and get_p and
swap_p on refs, directly: eagerly, under jit and under vmap.

`run_all(api)` takes a namespace with `jax`, `jnp` and `P` (jax.extend.core.primitives)
and returns {case: [dtype name, nested lists]}; keys are given as their key data.
"""
from __future__ import annotations

import numpy as np


def _out(api, x):
    jax = api.jax
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return [str(x.dtype), np.asarray(jax.random.key_data(x)).tolist()]
    return [str(x.dtype), np.asarray(x).tolist()]


def _impl(api, name):
    return getattr(api.jax.extend.random, name)


def seed_cases(api):
    jax, jnp, P = api.jax, api.jnp, api.P
    fry = _impl(api, "threefry_prng_impl")
    seeds = {"i32": jnp.array([-3, 0, 7, 2**31 - 1], jnp.int32),
             "u32": jnp.array([0, 7, 2**32 - 1], jnp.uint32),
             "i8": jnp.array([-2, 5], jnp.int8), "u8": jnp.array([200, 1], jnp.uint8),
             "grid": jnp.arange(6, dtype=jnp.int32).reshape(2, 3)}
    out = {}
    for name, s in seeds.items():
        seed = lambda s: P.random_seed_p.bind(s, impl=fry)  # noqa: E731
        out[f"seed_{name}"] = _out(api, seed(s))
        out[f"seed_{name}_scalar"] = _out(api, seed(s.reshape(-1)[0]))
        out[f"seed_{name}_jit"] = _out(api, jax.jit(seed)(s))
        out[f"seed_{name}_vmap"] = _out(api, jax.vmap(seed)(s))
    rbg = _impl(api, "rbg_prng_impl")
    out["seed_rbg"] = _out(api, P.random_seed_p.bind(jnp.array([1, 2], jnp.int32), impl=rbg))
    return out


def split_cases(api):
    jax, jnp, P = api.jax, api.jnp, api.P
    key = jax.random.key(0)
    keys = jax.random.split(jax.random.key(42), 3)
    out = {}
    for label, shape in (("3", (3,)), ("2x2", (2, 2)), ("scalar", ())):
        out[f"split_{label}"] = _out(api, P.random_split_p.bind(key, shape=shape))
    out["split_keys"] = _out(api, P.random_split_p.bind(keys, shape=(2,)))
    out["split_jit"] = _out(api, jax.jit(lambda k: P.random_split_p.bind(k, shape=(2, 3)))(keys))
    out["split_vmap"] = _out(api, jax.vmap(lambda k: P.random_split_p.bind(k, shape=(4,)))(keys))
    rbg = jax.random.key(5, impl="rbg")
    out["split_rbg"] = _out(api, P.random_split_p.bind(rbg, shape=(2,)))
    return out


def fold_in_cases(api):
    jax, jnp, P = api.jax, api.jnp, api.P
    key = jax.random.key(0)
    keys = jax.random.split(jax.random.key(7), 3)
    u32 = lambda *v: jnp.array(v, jnp.uint32)  # noqa: E731
    fold = P.random_fold_in_p.bind
    out = {"fold_u32": _out(api, fold(key, jnp.uint32(5))),
           "fold_i32_negative": _out(api, fold(key, jnp.int32(-5))),
           "fold_key_msgs": _out(api, fold(key, u32(0, 1, 2))),
           "fold_keys_msg": _out(api, fold(keys, jnp.uint32(5))),
           "fold_keys_msgs": _out(api, fold(keys, u32(3, 4, 5))),
           "fold_broadcast": _out(api, fold(keys.reshape(3, 1), u32(8, 9).reshape(1, 2))),
           "fold_jit": _out(api, jax.jit(fold)(keys.reshape(3, 1), u32(8, 9).reshape(1, 2))),
           "fold_vmap": _out(api, jax.vmap(fold)(keys, u32(3, 4, 5))),
           "fold_vmap_key": _out(api, jax.vmap(fold, (None, 0))(key, u32(6, 7)))}
    rbg = jax.random.key(5, impl="rbg")
    out["fold_rbg"] = _out(api, fold(rbg, jnp.uint32(3)))
    return out


def bits_cases(api):
    jax, jnp, P = api.jax, api.jnp, api.P
    key = jax.random.key(0)
    keys = jax.random.split(jax.random.key(3), 3)
    out = {}
    for width in (8, 16, 32, 64):
        for label, shape in (("scalar", ()), ("3", (3,)), ("2x3", (2, 3))):
            out[f"bits{width}_{label}"] = _out(
                api, P.random_bits_p.bind(key, bit_width=width, shape=shape))
    bits = lambda k: P.random_bits_p.bind(k, bit_width=32, shape=(2,))  # noqa: E731
    out["bits_keys"] = _out(api, bits(keys))
    out["bits_jit"] = _out(api, jax.jit(bits)(keys))
    out["bits_vmap"] = _out(api, jax.vmap(bits)(keys))
    out["bits16_jit"] = _out(api, jax.jit(
        lambda k: P.random_bits_p.bind(k, bit_width=16, shape=(5,)))(key))
    # The bits are constant in x: the gradient is the bits themselves.
    scaled = lambda x: jnp.sum(x * bits(key).astype(jnp.float32))  # noqa: E731
    out["bits_grad"] = _out(api, jax.grad(scaled)(jnp.float32(1.0)))
    return out


def empty2_cases(api):
    jax, jnp, P = api.jax, api.jnp, api.P
    device = jax.memory.Space.Device
    out = {}
    for label, dtype in (("f32", jnp.float32), ("i32", np.dtype("int32")), ("bool", bool),
                         ("u8", jnp.uint8), ("key", jax.random.key(0).dtype)):
        out[f"empty2_{label}"] = _out(api, P.empty2_p.bind(dtype=dtype, memory_space=device))
        out[f"empty2_{label}_jit"] = _out(api, jax.jit(
            lambda: P.empty2_p.bind(dtype=dtype, memory_space=device))())
    return out


def ref_cases(api):
    """get_p and swap_p on refs without indexers (the treedef of ())."""
    jax, jnp, P = api.jax, api.jnp, api.P
    tree = jax.tree_util.tree_structure(())
    ref = jax.new_ref(jnp.arange(4.0))
    out = {"get": _out(api, P.get_p.bind(ref, tree=tree)),
           "swap_returns_old": _out(api, P.swap_p.bind(ref, jnp.ones(4), tree=tree)),
           "get_after_swap": _out(api, ref[...]),
           "swap_numpy_float64": _out(api, P.swap_p.bind(ref, np.full(4, 2.5), tree=tree)),
           "get_after_numpy": _out(api, P.get_p.bind(ref, tree=tree))}
    scalar = jax.new_ref(jnp.int32(3))
    out["swap_scalar"] = _out(api, P.swap_p.bind(scalar, jnp.int32(-7), tree=tree))
    out["get_scalar"] = _out(api, P.get_p.bind(scalar, tree=tree))
    weak = jax.new_ref(jnp.float32(3))
    out["swap_python_float"] = _out(api, P.swap_p.bind(weak, 5.0, tree=tree))
    out["get_python_float"] = _out(api, weak[...])
    return out


def run_all(api):
    return {**seed_cases(api), **split_cases(api), **fold_in_cases(api), **bits_cases(api),
            **empty2_cases(api), **ref_cases(api)}
