"""The "rbg" and "unsafe_rbg" PRNG implementations (mirrors JAX's `jax._src.random.rbg`).

Their keys are four uint32 words. Seeding, and for "rbg" splitting and folding in, run
threefry2x32 on each half of the key, as JAX does, and give JAX's keys. Their random bits
come from XLA's RngBitGenerator (and "unsafe_rbg" splits and folds in with it too), whose
algorithm jaxlite does not reproduce: those operations raise NotImplementedError rather than
give bits that differ from JAX's.
"""
from __future__ import annotations

from typing import Any, Sequence

from jaxlite import lax
from jaxlite.random import _threefry
from jaxlite.random._prng import PRNGImpl, register_prng
from jaxlite.transforms.vmap import vmap

__all__ = ["rbg_prng_impl", "unsafe_rbg_prng_impl"]


def _rbg_seed(seed: Any) -> Any:
    half = _threefry.threefry_seed(seed)
    return lax.concatenate([half, half], 0)


def _rbg_split(key: Any, shape: Sequence[int]) -> Any:
    shape = tuple(shape)
    halves = lax.reshape(key, (2, 2))
    split = vmap(_threefry.threefry_split, in_axes=(0, None), out_axes=len(shape))
    return lax.reshape(split(halves, shape), shape + (4,))


def _rbg_fold_in(key: Any, data: Any) -> Any:
    halves = lax.reshape(key, (2, 2))
    return lax.reshape(vmap(_threefry.threefry_fold_in, in_axes=(0, None))(halves, data), (4,))


def _needs_rng_bit_generator(operation: str) -> Any:
    def fail(*args: Any) -> Any:
        raise NotImplementedError(
            f"{operation} uses XLA's RngBitGenerator, whose bits jaxlite does not reproduce; "
            "use the default threefry2x32 implementation (jax.random.key(seed)).")
    return fail


rbg_prng_impl = PRNGImpl(
    key_shape=(4,), seed=_rbg_seed, split=_rbg_split,
    random_bits=_needs_rng_bit_generator("random bits of 'rbg' keys"),
    fold_in=_rbg_fold_in, name="rbg", tag="rbg")
register_prng(rbg_prng_impl)

unsafe_rbg_prng_impl = PRNGImpl(
    key_shape=(4,), seed=_rbg_seed,
    split=_needs_rng_bit_generator("splitting 'unsafe_rbg' keys"),
    random_bits=_needs_rng_bit_generator("random bits of 'unsafe_rbg' keys"),
    fold_in=_needs_rng_bit_generator("folding data into 'unsafe_rbg' keys"),
    name="unsafe_rbg", tag="urbg")
register_prng(unsafe_rbg_prng_impl)
