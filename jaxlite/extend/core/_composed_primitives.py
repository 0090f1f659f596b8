"""JAX primitives that jaxlite composes from its own operations: the typed-key primitives
(`random_seed_p`, `random_split_p`, `random_fold_in_p`, `random_bits_p`), `empty2_p`, and
`get_p`/`swap_p` on jaxlite's eager refs (without indexers: see `_check_ref_operands`).

JAX gives each of these its own rules; jaxlite's `jax.random` never binds them (it composes
the same key operations itself). A library that binds one directly gets, under the current
trace, the PRNG implementation's seed/split/fold_in/bits applied to each key (vmapped over
the key array's dimensions), so the bits are JAX's and jit, vmap and grad see through them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import ref as ref_api
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.extend.core._primitive import composed_primitive
from jaxlite.random._keys import canonical_shape
from jaxlite.random._prng import PRNGImpl, is_typed_key, random_unwrap, random_wrap
from jaxlite.tree_util import tree_unflatten
from jaxlite.transforms.vmap import vmap

__all__ = ["random_seed_p", "random_split_p", "random_fold_in_p", "random_bits_p",
           "empty2_p", "get_p", "swap_p"]


def _per_key(fn: Callable[..., Any], ndim: int) -> Callable[..., Any]:
    """`fn` of one key (and message), mapped over `ndim` leading dimensions."""
    for _ in range(ndim):
        fn = vmap(fn)
    return fn


def _impl_of_keys(name: str, keys: Any) -> PRNGImpl:
    if not is_typed_key(keys):
        raise TypeError(f"{name} takes typed PRNG keys (jax.random.key), got "
                        f"{getattr(keys, 'dtype', type(keys))}; wrap raw uint32 key data "
                        "with jax.random.wrap_key_data first.")
    return keys.dtype.impl


def _random_seed(seeds: Any, *, impl: PRNGImpl) -> Any:
    """Keys of `impl` from integer seeds of any shape: JAX's random_seed_p, which (unlike
    jax.random.key) neither widens Python ints to int64 nor adds jax_random_seed_offset."""
    if not isinstance(impl, PRNGImpl):
        raise TypeError(f"random_seed_p: impl must be a PRNGImpl (such as "
                        f"jax.extend.random.threefry_prng_impl), got {impl!r}.")
    seeds = jnp.asarray(seeds)
    if not dtypes.issubdtype(seeds.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got a seed of dtype "
                        f"{seeds.dtype}.")
    return random_wrap(_per_key(impl.seed, seeds.ndim)(seeds), impl=impl)


def _random_split(keys: Any, *, shape: Sequence[int]) -> Any:
    """Keys of shape `keys.shape + shape`: each key split into `shape` new ones."""
    impl = _impl_of_keys("random_split_p", keys)
    shape = canonical_shape("random_split_p", shape)
    split = _per_key(lambda key: impl.split(key, shape), keys.ndim)
    return random_wrap(split(random_unwrap(keys)), impl=impl)


def _random_fold_in(keys: Any, msgs: Any) -> Any:
    """Each key folded with its message; keys and messages broadcast as in JAX (equal
    ranks with size-1 dimensions stretched, or one of them a scalar)."""
    impl = _impl_of_keys("random_fold_in_p", keys)
    msgs = jnp.asarray(msgs)
    shape = _fold_in_shape(keys.shape, msgs.shape)
    data = jnp.broadcast_to(random_unwrap(keys), shape + tuple(impl.key_shape))
    folded = _per_key(impl.fold_in, len(shape))(data, jnp.broadcast_to(msgs, shape))
    return random_wrap(folded, impl=impl)


def _fold_in_shape(keys_shape: tuple[int, ...], msgs_shape: tuple[int, ...]
                   ) -> tuple[int, ...]:
    if not keys_shape or not msgs_shape:
        return tuple(keys_shape or msgs_shape)
    if len(keys_shape) == len(msgs_shape) and all(
            a == b or 1 in (a, b) for a, b in zip(keys_shape, msgs_shape)):
        return tuple(b if a == 1 else a for a, b in zip(keys_shape, msgs_shape))
    raise TypeError(f"random_fold_in got incompatible shapes for broadcasting: "
                    f"{tuple(keys_shape)}, {tuple(msgs_shape)}.")


def _random_bits(keys: Any, *, bit_width: int, shape: Sequence[int]) -> Any:
    """Unsigned integers of `bit_width` bits, shape `keys.shape + shape`."""
    impl = _impl_of_keys("random_bits_p", keys)
    shape = canonical_shape("random_bits_p", shape)
    bits = _per_key(lambda key: impl.random_bits(key, bit_width, shape), keys.ndim)
    return bits(random_unwrap(keys))


def _empty2(*, dtype: Any, memory_space: Any) -> Any:
    """A scalar of `dtype` whose value does not matter (JAX's scan fills it in); JAX's
    compiled value is zero (a key of zero data for a key dtype), and so is this one."""
    return lax.full((), 0, dtype)


def _ref_get(ref: Any, *flat_transforms: Any, tree: Any) -> Any:
    """The whole value of an (eager) ref: JAX's get_p without indexers."""
    _check_ref_operands("get", ref, flat_transforms, tree)
    return ref_api.get(ref)


def _ref_swap(ref: Any, value: Any, *flat_transforms: Any, tree: Any) -> Any:
    """Replace an (eager) ref's whole value, returning the old one: JAX's swap_p without
    indexers. As in JAX, the value must have the ref's shape and (canonical) dtype."""
    _check_ref_operands("swap", ref, flat_transforms, tree)
    if isinstance(value, (list, tuple)) or value is None:
        raise TypeError(f"Error interpreting argument to swap as a JAX value: "
                        f"{type(value)}.")
    value = jnp.asarray(value)
    if value.dtype != ref.dtype:
        raise ValueError(f"Invalid dtype for `swap`. Ref dtype: {ref.dtype}. "
                         f"Value dtype: {value.dtype}.")
    if value.shape != ref.shape:
        raise ValueError(f"Invalid shape for `swap`. Ref shape: {ref.shape}. "
                         f"Value shape: {value.shape}.")
    return ref_api.swap(ref, None, value)


def _check_ref_operands(name: str, ref: Any, flat_transforms: Sequence[Any], tree: Any
                        ) -> None:
    if not isinstance(ref, ref_api.Ref):
        raise ValueError(f"`{name}` must be called on `Ref` types: {ref!r}.")
    if tree_unflatten(tree, list(flat_transforms)) != ():
        raise NotImplementedError(
            f"jaxlite's {name}_p takes no indexers (tree must be the treedef of ()): "
            "jaxlite has no counterpart of JAX's internal NDIndexer transforms. Index the "
            f"ref with ref[idx] or jax.ref.{name}(ref, idx, ...) instead.")


random_seed_p = composed_primitive("random_seed", _random_seed)
random_split_p = composed_primitive("random_split", _random_split)
random_fold_in_p = composed_primitive("random_fold_in", _random_fold_in)
random_bits_p = composed_primitive("random_bits", _random_bits)
empty2_p = composed_primitive("empty2", _empty2)
get_p = composed_primitive("get", _ref_get)
swap_p = composed_primitive("swap", _ref_swap)
