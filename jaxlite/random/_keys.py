"""PRNG keys: raw uint32 keys, typed keys, and the key operations (mirrors `jax.random`).

A raw key (`PRNGKey(seed)`) is a uint32 array of shape (2,), as JAX's legacy keys are. A typed
key (`key(seed)`) is a `PRNGKeyArray`: an array of keys of dtype `key<fry>` whose shape leaves
out the trailing 2 words of key data. Every `jaxlite.random` function accepts both; `split`
and `fold_in` return keys of the kind they were given.

Differences from JAX: a typed key is a small wrapper around its uint32 data registered as a
pytree (the data is its one leaf), not an array of an extended dtype. It flows through `jit`
and `vmap` (batched along its leading axes) and supports indexing, iteration, `shape`,
`ndim`, `size`, `dtype`, `reshape` and `==`; jnp functions do not accept it (use
`key_data`). Only the threefry2x32 implementation exists.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.random import _threefry
from jaxlite.tree_util import register_pytree_node

__all__ = ["PRNGKeyArray", "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl",
           "key_dtype", "split", "fold_in", "bits", "clone"]

IMPL_NAME = "threefry2x32"
KEY_SHAPE = (2,)


class PRNGKeyDType:
    """The dtype of typed keys: `key<fry>` for threefry2x32 (mirrors JAX's `KeyTy`)."""

    name = "key<fry>"
    itemsize = 8

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, PRNGKeyDType) or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = PRNGKeyDType()


class PRNGKeyArray:
    """An array of typed PRNG keys over uint32 key data of shape `(*shape, 2)`.

    Mirrors the arrays `jax.random.key` returns (dtype `key<fry>`).
    """

    __slots__ = ("_base",)

    def __init__(self, base: Any) -> None:
        self._base = base

    @property
    def dtype(self) -> PRNGKeyDType:
        return KEY_DTYPE

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(np.shape(self._base))[:-1]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def itemsize(self) -> int:
        return KEY_DTYPE.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a scalar key array)")
        return self.shape[0]

    def __iter__(self) -> Iterator["PRNGKeyArray"]:
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index: Any) -> "PRNGKeyArray":
        index = index if isinstance(index, tuple) else (index,)
        if Ellipsis in index:
            index = index + (slice(None),)  # the key data axis stays whole
        return PRNGKeyArray(self._base[index])

    def reshape(self, *shape: Any) -> "PRNGKeyArray":
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return PRNGKeyArray(jnp.reshape(self._base, tuple(shape) + KEY_SHAPE))

    def ravel(self) -> "PRNGKeyArray":
        return self.reshape(-1)

    flatten = ravel

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.all(self._base == other._base, axis=-1)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.any(self._base != other._base, axis=-1)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{self._base}"


register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None),
                     lambda _, children: PRNGKeyArray(children[0]))


# ----------------------------------------------------------------------------- checks

def _check_impl(name: str, impl: Any) -> None:
    if impl is not None and str(impl) not in (IMPL_NAME, KEY_DTYPE.name):
        raise ValueError(f'{name}: unrecognized PRNG implementation "{impl}". jaxlite has '
                         f'only "{IMPL_NAME}".')


def _check_key_data(data: Any) -> Any:
    """`data` as a uint32 array whose shape ends in (2,), or JAX's TypeError."""
    if not (hasattr(data, "shape") and hasattr(data, "dtype")):
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {data!r}")
    if np.dtype(get_aval(data).dtype) != np.uint32:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={np.dtype(get_aval(data).dtype).name}")
    if tuple(np.shape(data))[-1:] != KEY_SHAPE:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with (2,); got shape={tuple(np.shape(data))} for impl="
                        f"{IMPL_NAME}")
    return data if not isinstance(data, np.ndarray) else jnp.asarray(data)


def check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """The raw uint32 data of `key` (typed or raw) and whether it was typed.

    Raises JAX's errors for invalid key data and, unless `allow_batched`, for arrays of keys.
    """
    if isinstance(key, PRNGKeyArray):
        data, typed = key._base, True
    else:
        data, typed = _check_key_data(key), False
    if not allow_batched and np.ndim(data) > 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(np.shape(data))[:-1] if typed else tuple(np.shape(data))} "
                         "!= (). Use jax.vmap for batching.")
    return data, typed


def _return_keys(data: Any, typed: bool) -> Any:
    return PRNGKeyArray(data) if typed else data


# ----------------------------------------------------------------------- construction

def _seed_data(name: str, seed: Any) -> Any:
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    # A Python int goes through int64, as in JAX: with x64 off that keeps its low 32 bits
    # (Python hashes work as seeds), and ints beyond int64 raise OverflowError.
    if isinstance(seed, int):
        seed = np.int64(seed)
    return _threefry.threefry_seed(jnp.asarray(seed))


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:  # noqa: N802 (JAX's name)
    """A raw PRNG key, uint32[2], from an integer seed (mirrors `jax.random.PRNGKey`).

    The key is the seed's 64 bits as two uint32 words, high word first; with x64 off the
    seed is first converted to a 32-bit integer, so the high word is 0.
    """
    _check_impl("PRNGKey", impl)
    return _seed_data("PRNGKey", seed)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """A typed PRNG key (a scalar array of dtype `key<fry>`) from an integer seed.

    Mirrors `jax.random.key`; its data is `PRNGKey(seed)`.
    """
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    _check_impl("key", impl if dtype is None else dtype)
    return PRNGKeyArray(_seed_data("key", seed))


def key_data(keys: Any) -> Any:
    """The uint32 key data of typed keys, shape `(*keys.shape, 2)` (`jax.random.key_data`).

    Raw keys are returned as they are.
    """
    data, _ = check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """Typed keys over uint32 key data of shape `(..., 2)` (`jax.random.wrap_key_data`)."""
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                         "jax.random.wrap_key_data")
    _check_impl("wrap_key_data", impl if dtype is None else dtype)
    return PRNGKeyArray(_check_key_data(key_bits_array))


def key_impl(keys: Any) -> str:
    """The name of the keys' PRNG implementation: "threefry2x32" (`jax.random.key_impl`)."""
    check_prng_key("key_impl", keys, allow_batched=True)
    return IMPL_NAME


def key_dtype(impl: Any = None) -> PRNGKeyDType:
    """The dtype of typed keys of an implementation (`jax.random.key_dtype`)."""
    _check_impl("key_dtype", impl)
    return KEY_DTYPE


def clone(key: Any) -> Any:
    """The key itself (`jax.random.clone`; keys are immutable values here)."""
    return key


# ------------------------------------------------------------------------- operations

def split_data(data: Any, num: int | Sequence[int] = 2) -> Any:
    """Split raw key data (uint32[2]) into raw keys of shape `(*num, 2)`."""
    shape = tuple(int(n) for n in num) if isinstance(num, Sequence) else (int(num),)
    return _threefry.threefry_split(data, shape)


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
    data, typed = check_prng_key("split", key)
    return _return_keys(split_data(data, num), typed)


def fold_in(key: Any, data: Any) -> Any:
    """A new key that depends on `key` and a 32-bit integer (mirrors `jax.random.fold_in`)."""
    base, typed = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use jax.vmap for batching.")
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data < 2**32:
            raise OverflowError(f"Python integer {data} out of bounds for uint32")
        data = np.uint32(data)
    message = lax.convert_element_type(jnp.asarray(data), np.uint32)
    return _return_keys(_threefry.threefry_fold_in(base, message), typed)


def random_bits(data: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    """Unsigned random integers of `bit_width` bits from raw key data (uint32[2])."""
    return _threefry.threefry_random_bits(data, bit_width, tuple(shape))


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


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniformly random unsigned integers of `shape` (mirrors `jax.random.bits`).

    `dtype` is an unsigned integer type (default uint32, uint64 with x64 on).
    """
    data, _ = check_prng_key("bits", key)
    dtype = dtypes.default_uint_dtype() if dtype is None else \
        dtypes.check_and_canonicalize_user_dtype(dtype)
    if not np.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(data, np.dtype(dtype).itemsize * 8, canonical_shape("bits", shape))
