"""PRNG keys: raw uint32 keys, typed keys, and the key operations (mirrors `jax.random`).

A raw key (`PRNGKey(seed)`) is a uint32 array of shape (2,), as JAX's legacy keys are. A typed
key (`key(seed)`) is an array of the extended dtype `key<fry>` (`jaxlite.random._prng`):
a pytree leaf and a `jax.Array` that flows through jit, vmap, grad, scan, cond and
while_loop, and supports indexing, reshaping, `==`, `jnp.where`, `jnp.stack` and the other
structural operations. Every `jaxlite.random` function accepts both kinds; `split` and
`fold_in` return keys of the kind they were given. Internally the samplers work on typed
keys (raw ones are wrapped as threefry2x32 keys, JAX's default implementation).
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from jaxlite.errors import warn_at_user
from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.config import config
from jaxlite.core import dtypes
from jaxlite.core.basearray import Array
from jaxlite.random import _key_rules
from jaxlite.random._prng import (KeyTy, PRNGImpl, PRNGKeyArray, is_typed_key, prngs,
                                  random_unwrap, random_wrap, threefry_prng_impl)
from jaxlite.transforms.vmap import vmap

__all__ = ["PRNGKeyArray", "PRNGSpec", "PRNGKey", "key", "key_data", "wrap_key_data",
           "key_impl", "key_dtype", "split", "fold_in", "bits", "clone", "random_seed",
           "default_prng_impl", "resolve_prng_impl", "check_prng_key", "split_key",
           "random_bits", "canonical_shape"]

_key_rules.install_key_rules()


class PRNGSpec:
    """Names a PRNG implementation that is not registered (mirrors JAX's `PRNGSpec`)."""

    __slots__ = ("_impl",)

    def __init__(self, impl: PRNGImpl) -> None:
        self._impl = impl

    def __repr__(self) -> str:
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self) -> str:
        return str(self._impl)

    def __hash__(self) -> int:
        return hash(self._impl)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, PRNGSpec) and self._impl == other._impl


def default_prng_impl() -> PRNGImpl:
    """The implementation of raw keys and of keys made without `impl`: threefry2x32."""
    return threefry_prng_impl


def resolve_prng_impl(impl_spec: Any) -> PRNGImpl:
    """The implementation a user named: None (the default), a name, a key dtype, a
    `PRNGSpec` or a `PRNGImpl` (mirrors JAX's `resolve_prng_impl`)."""
    if impl_spec is None:
        return default_prng_impl()
    if type(impl_spec) is PRNGImpl:
        return impl_spec
    if isinstance(impl_spec, (PRNGSpec, KeyTy)):
        return impl_spec._impl
    if type(impl_spec) is str:
        if impl_spec in prngs:
            return prngs[impl_spec]
        names = ", ".join(f'"{name}"' for name in prngs)
        raise ValueError(f'unrecognized PRNG implementation "{impl_spec}". Did you mean one '
                         f"of: {names}?")
    raise TypeError(f"unrecognized type {type(impl_spec)} for specifying PRNG implementation.")


# ----------------------------------------------------------------------------- checks

def _is_array_like(value: Any) -> bool:
    return isinstance(value, (np.ndarray, Array)) or np.isscalar(value)


def check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """`key` as typed keys, and whether it was a raw key (mirrors JAX's `_check_prng_key`).

    A raw uint32 key is wrapped as a threefry2x32 key (JAX's errors for invalid key data);
    unless `allow_batched`, an array of keys raises ValueError.
    """
    if is_typed_key(key):
        typed, wrapped = key, False
    elif _is_array_like(key):
        typed, wrapped = random_wrap(key, impl=default_prng_impl()), True
        _check_legacy_key_allowed()
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(np.shape(key))} != (). Use jax.vmap for batching.")
    return typed, wrapped


def _check_legacy_key_allowed() -> None:
    """The option jax_legacy_prng_key: a raw uint32 key is allowed, warned about or an error."""
    mode = config.read("jax_legacy_prng_key")
    if mode == "allow":
        return
    message = ("Legacy uint32 key array passed as key to jax.random function. Please create "
               "keys using jax.random.key(). If use of a raw key array was intended, set "
               'jax_legacy_prng_key="allow".')
    if mode == "error":
        raise ValueError(message)
    warn_at_user(message)


def _return_keys(wrapped: bool, keys: Any) -> Any:
    """Raw keys back for a raw key given, else the typed keys."""
    return random_unwrap(keys) if wrapped else keys


def canonical_shape(name: str, shape: Any) -> tuple[int, ...]:
    """`shape` as a tuple of nonnegative ints (an int is a 1-d shape), or a TypeError."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        result = tuple(_dimension(d) for d in shape)
    except TypeError as error:
        raise TypeError(f"{name}: shape must be a sequence of integers, got {shape!r}.") \
            from error
    if any(d < 0 for d in result):
        raise ValueError(f"{name}: shape must have nonnegative dimensions, got {result}.")
    return result


def _dimension(value: Any) -> int:
    """An integer dimension (a Python or numpy integer; not a bool or a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{value!r} is not an integer")
    return int(value)


# ------------------------------------------------------------------ internal operations

def split_key(key: Any, num: int | Sequence[int] = 2) -> Any:
    """New typed keys of shape `num` from one typed key."""
    impl = key.dtype.impl
    return random_wrap(impl.split(random_unwrap(key), _split_shape(num)), impl=impl)


def _split_shape(num: Any) -> tuple[int, ...]:
    """`split`'s `num` as a shape: integers only (JAX reads them with `operator.index`),
    none negative (JAX's compiler refuses the key array's "invalid tensor dimension
    size"; there is no MLIRError here, so a ValueError)."""
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    shape = tuple(operator.index(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"invalid tensor dimension size: random.split was asked for "
                         f"num={num!r} keys; the number of keys (or each entry of a shape "
                         f"of them) must be a nonnegative integer.")
    return shape


def split_keys(key: Any, num: int = 2) -> list[Any]:
    """`num` new typed keys from one, as a list (`split` then unpacked, without indexing
    typed keys)."""
    impl = key.dtype.impl
    data = impl.split(random_unwrap(key), (num,))
    return [random_wrap(data[i], impl=impl) for i in range(num)]


def random_bits(key: Any, bit_width: int, shape: Sequence[int]) -> Any:
    """Unsigned random integers of `bit_width` bits and `shape` from one typed key."""
    return key.dtype.impl.random_bits(random_unwrap(key), bit_width, tuple(shape))


# ----------------------------------------------------------------------- construction

def random_seed(seeds: Any, impl: PRNGImpl) -> Any:
    """Typed keys of `impl`, one per integer of `seeds` (mirrors
    `jax.extend.random.random_seed`)."""
    if is_typed_key(seeds):
        raise TypeError("random_seed accepts integer seeds, but was given a PRNG key.")
    # A Python int goes through int64, as in JAX: with x64 off that keeps its low 32 bits
    # (Python hashes work as seeds), and ints beyond int64 raise OverflowError.
    seeds = jnp.asarray(np.int64(seeds)) if isinstance(seeds, int) else jnp.asarray(seeds)
    if not dtypes.issubdtype(seeds.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got a seed of dtype "
                        f"{seeds.dtype}.")
    offset = config.read("jax_random_seed_offset")
    if offset:
        seeds = seeds + offset
    seed = impl.seed
    for _ in range(seeds.ndim):
        seed = vmap(seed)
    return random_wrap(seed(seeds), impl=impl)


def _key(name: str, seed: Any, impl_spec: Any) -> Any:
    impl = resolve_prng_impl(impl_spec)
    if is_typed_key(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    return random_seed(seed, impl)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:  # noqa: N802 (JAX's name)
    """A raw PRNG key, uint32[2], from an integer seed (mirrors `jax.random.PRNGKey`).

    The key is the seed's 64 bits as two uint32 words, high word first; with x64 off the
    seed is first converted to a 32-bit integer, so the high word is 0.
    """
    return random_unwrap(_key("PRNGKey", seed, impl))


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """A typed PRNG key (a scalar array of dtype `key<fry>`) from an integer seed.

    Mirrors `jax.random.key`; its data is `PRNGKey(seed)`. `impl` or `dtype` name another
    implementation.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def key_data(keys: Any) -> Any:
    """The uint32 data of keys, shape `(*keys.shape, 2)` (mirrors `jax.random.key_data`).

    Raw keys are returned as they are.
    """
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return random_unwrap(typed)


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """Typed keys over uint32 key data of shape `(..., 2)` (`jax.random.wrap_key_data`)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    if not (hasattr(key_bits_array, "shape") and hasattr(key_bits_array, "dtype")):
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {key_bits_array!r}")
    if isinstance(key_bits_array, np.ndarray):
        key_bits_array = jnp.asarray(key_bits_array)
    return random_wrap(key_bits_array, impl=resolve_prng_impl(impl))


def key_impl(keys: Any) -> str | PRNGSpec:
    """The keys' PRNG implementation: its name when registered (`jax.random.key_impl`)."""
    typed, _ = check_prng_key("key_impl", keys, allow_batched=True)
    impl = typed.dtype.impl
    return impl.name if prngs.get(impl.name) is impl else PRNGSpec(impl)


def key_dtype(impl_spec: Any = None) -> KeyTy:
    """The dtype of typed keys of an implementation (`jax.random.key_dtype`)."""
    return KeyTy(resolve_prng_impl(impl_spec))


def clone(key: Any) -> Any:
    """The key itself (`jax.random.clone`; keys are immutable values here)."""
    return key


# ------------------------------------------------------------------------- operations

def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """New keys from one, along new leading axes (mirrors `jax.random.split`).

    Parameters
    ----------
    key : a single key, raw or typed.
    num : the number (or shape) of keys to make; default 2.

    Returns
    -------
    Keys of the kind given: raw ones of shape `(*num, 2)`, or typed ones of shape `num`.
    """
    typed, wrapped = check_prng_key("split", key)
    return _return_keys(wrapped, split_key(typed, num))


def fold_in(key: Any, data: Any) -> Any:
    """A new key that depends on `key` and a 32-bit integer (mirrors `jax.random.fold_in`)."""
    typed, wrapped = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use jax.vmap for batching.")
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data < 2**32:
            raise OverflowError(f"Python integer {data} out of bounds for uint32")
        data = np.uint32(data)
    message = lax.convert_element_type(jnp.asarray(data), np.uint32)
    impl = typed.dtype.impl
    out = random_wrap(impl.fold_in(random_unwrap(typed), message), impl=impl)
    return _return_keys(wrapped, out)


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None,
         *, out_sharding: Any = None) -> Any:
    """Uniformly random unsigned integers of `shape` (mirrors `jax.random.bits`).

    `dtype` is an unsigned integer type (default uint32, uint64 with x64 on).
    """
    typed, _ = check_prng_key("bits", key)
    dtype = dtypes.default_uint_dtype() if dtype is None else \
        dtypes.check_and_canonicalize_user_dtype(dtype)
    if not np.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(typed, np.dtype(dtype).itemsize * 8, canonical_shape("bits", shape))

