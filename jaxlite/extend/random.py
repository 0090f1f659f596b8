"""`jax.extend.random`: PRNG implementations for libraries (mirrors `jax.extend.random`).

`define_prng_impl` makes an implementation from functions on uint32 key data (its result
names it in `jax.random.key(seed, impl=...)` and `wrap_key_data`); `seed_with_impl` and
`random_seed` make typed keys of an implementation from integer seeds. The implementations
`threefry_prng_impl` (the default), `rbg_prng_impl` and `unsafe_rbg_prng_impl`, and the
Threefry-2x32 hash (`threefry2x32_p`, `threefry_2x32`) are jaxlite.random's own.

Differences from JAX: the rbg implementations seed (and "rbg" splits and folds in) as JAX
does, but their random bits need XLA's RngBitGenerator and raise NotImplementedError.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

from jaxlite.random._keys import PRNGSpec, random_seed
from jaxlite.random._prng import PRNGImpl, threefry_prng_impl
from jaxlite.random._rbg import rbg_prng_impl, unsafe_rbg_prng_impl
from jaxlite.random._threefry import threefry2x32_p, threefry_2x32

__all__ = ["define_prng_impl", "random_seed", "rbg_prng_impl", "seed_with_impl",
           "threefry2x32_p", "threefry_2x32", "threefry_prng_impl", "unsafe_rbg_prng_impl"]


def define_prng_impl(*, key_shape: tuple[int, ...], seed: Callable[[Any], Any],
                     split: Callable[[Any, tuple[int, ...]], Any],
                     random_bits: Callable[[Any, int, tuple[int, ...]], Any],
                     fold_in: Callable[[Any, int], Any], name: str = "<unnamed>",
                     tag: str = "?") -> Hashable:
    """A PRNG implementation from its key data shape and operations (mirrors
    `jax.extend.random.define_prng_impl`).

    On uint32 key data K of shape `key_shape`: `seed(int[]) -> K`,
    `split(K, shape) -> K[*shape]`, `random_bits(K, bit_width, shape) -> uint[*shape]`,
    `fold_in(K, uint32[]) -> K`. Pass the result as `impl` to `jax.random.key`.
    """
    return PRNGSpec(PRNGImpl(tuple(key_shape), seed, split, random_bits, fold_in, name=name,
                             tag=tag))


def seed_with_impl(impl: PRNGImpl, seed: Any) -> Any:
    """Typed keys of `impl` from integer seeds (mirrors `jax.extend.random.seed_with_impl`)."""
    return random_seed(seed, impl=impl)
