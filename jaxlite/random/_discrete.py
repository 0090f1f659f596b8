"""Discrete distributions and shuffling (mirrors `jax.random`).

`bernoulli`, `randint`, `categorical`, `permutation`, `choice` and `poisson`, each with JAX's
algorithm and key usage, so that the values are JAX's for the same key: `randint` reduces
two words of random bits modulo the span, `permutation` sorts by random 32-bit keys (several
rounds for large arrays), `categorical` and sampling without replacement use the Gumbel trick,
and `poisson` runs Knuth's algorithm for small rates and Hormann's transformed rejection for
large ones.

Differences from JAX: `bernoulli`'s `p` and `choice`'s `p` are not differentiated through.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.random._continuous import (broadcast_to, check_shape, gumbel_raw, shape_or_broadcast,
                                        uniform_raw)
from jaxlite.random._keys import canonical_shape, check_prng_key, random_bits, split_keys

__all__ = ["bernoulli", "randint", "categorical", "permutation", "choice", "poisson"]


def _canonical_axis(name: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None,
              mode: str = "low", *, out_sharding: Any = None) -> Any:
    """Booleans that are True with probability `p` (mirrors `jax.random.bernoulli`).

    `p` is a float (array) broadcast to `shape` (default: p's shape). `mode="high"` compares
    with a uniform value of twice the resolution, for tiny `p`.
    """
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    key, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    shape = shape_or_broadcast("bernoulli", shape, p)
    p = broadcast_to(lax.convert_element_type(p, dtype), shape)
    if mode == "high":
        both = uniform_raw(key, 0.0, 1.0, (2,) + shape, dtype)
        fine = lax.mul(both[1], lax.full((), 2.0 ** -dtypes.finfo(dtype).nmant, dtype))
        return lax.lt(fine, lax.sub(p, both[0]))
    return lax.lt(uniform_raw(key, 0.0, 1.0, shape, dtype), p)


def _integer_array(value: Any) -> Any:
    """`value` (int or float, array or scalar) as an array of an integer dtype (JAX's rule)."""
    dtype = np.dtype(dtypes.dtype(value))
    if not np.issubdtype(dtype, np.integer):
        dtype = np.dtype(dtypes.default_int_dtype())
    return lax.convert_element_type(value, dtype)


def _convert_and_clip(value: Any, dtype: np.dtype) -> Any:
    """An integer array converted to `dtype`, saturating instead of wrapping."""
    source = np.dtype(dtypes.dtype(value))
    low = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(source).min))
    high = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(source).max))
    clipped = lax.clamp(lax.full((), low, source), value, lax.full((), high, source))
    return lax.convert_element_type(clipped, dtype)


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any,
            dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Uniform integers in [minval, maxval) (mirrors `jax.random.randint`).

    As JAX, two words of random bits are reduced modulo the span (slightly biased unless the
    span is a power of 2); types narrower than 32 bits are sampled as int32; a `maxval` past
    the dtype's range means "up to the largest value, inclusive".
    """
    key, _ = check_prng_key("randint", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    shape = canonical_shape("randint", shape)
    info = dtypes.iinfo(dtype)
    sampling = np.dtype(dtype)
    if info.bits < 32:
        sampling = np.dtype(np.int32)
        bounds = [(int(info.min), int(info.max)), (int(info.min), int(info.max) + 1)]
        minval, maxval = [
            lax.clamp(lax.full((), low, np.int32), lax.convert_element_type(v, np.int32),
                      lax.full((), high, np.int32))
            for v, (low, high) in zip((minval, maxval), bounds)]
    return lax.convert_element_type(_randint(key, minval, maxval, shape, sampling), dtype)


def _randint(key: Any, minval: Any, maxval: Any, shape: tuple[int, ...],
             dtype: np.dtype) -> Any:
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval, maxval = _integer_array(minval), _integer_array(maxval)
    top = _convert_and_clip(lax.full((), dtypes.iinfo(dtype).max, dtype),
                            np.dtype(dtypes.dtype(maxval)))
    maxval_out_of_range = broadcast_to(lax.gt(maxval, top), shape)
    minval = broadcast_to(_convert_and_clip(minval, dtype), shape)
    maxval = broadcast_to(_convert_and_clip(maxval, dtype), shape)
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    key_high, key_low = split_keys(key)
    higher_bits = random_bits(key_high, nbits, shape)
    lower_bits = random_bits(key_low, nbits, shape)
    unsigned = np.dtype(f"uint{nbits}")
    span = lax.convert_element_type(lax.sub(maxval, minval), unsigned)
    one = lax.full_like(span, 1)
    span = lax.select(lax.le(maxval, minval), one, span)
    # With maxval past the type's range the span is one larger (wrapping to 0 at 2**nbits,
    # where the remainders below then leave the bits alone: the whole range).
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                      lax.add(span, one), span)
    # (high * 2**nbits + low) mod span, without overflow: 2**nbits mod span is computed as
    # (2**(nbits/2) mod span)**2 mod span.
    multiplier = lax.rem(lax.full_like(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier),
                     lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None, *, out_sharding: Any = None) -> Any:
    """Category indices drawn with probabilities `softmax(logits)` along `axis`.

    Mirrors `jax.random.categorical` (the Gumbel-max trick): `shape` defaults to the logits'
    shape without `axis`, and may add leading dimensions of independent draws. Without
    replacement, the draws of one batch element are distinct (Gumbel top-k).
    """
    key, _ = check_prng_key("categorical", key)
    logits = jnp.asarray(logits)
    axis = _canonical_axis("categorical", axis, logits.ndim)
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape("categorical", shape)
        check_shape("categorical", shape, batch_shape)
    mode = "low" if mode is None else mode
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis, logits.shape[axis])
        noise = gumbel_raw(key, (*prefix, *logits_shape), np.dtype(logits.dtype), mode)
        expanded = lax.expand_dims(logits, tuple(range(len(prefix))))
        return jnp.argmax(noise + expanded, axis=axis + len(prefix))
    perturbed = logits + gumbel_raw(key, tuple(logits.shape), np.dtype(logits.dtype), mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(perturbed, axis, -1), k)
    indices = jnp.moveaxis(indices, -1, 0)
    return jnp.reshape(indices, shape)


# ---------------------------------------------------------------------------- shuffling

def _shuffle(key: Any, x: Any, axis: int) -> Any:
    """`x` sorted along `axis` by random 32-bit keys, in enough rounds that ties are unlikely.

    JAX's rule: ceil(3 ln(size) / ln(2**32 - 1)) rounds, each with a fresh subkey.
    """
    size = math.prod(np.shape(x))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = split_keys(key)
        sort_keys = random_bits(subkey, 32, tuple(np.shape(x)))
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def _take(x: Any, indices: Any, axis: int) -> Any:
    return x[(slice(None),) * axis + (indices,)]


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False,
                *, out_sharding: Any = None) -> Any:
    """A random permutation of `arange(x)`, or of `x`'s entries along `axis`.

    Mirrors `jax.random.permutation`: with `independent`, each slice along `axis` is
    shuffled separately; otherwise whole slices move together.
    """
    key, _ = check_prng_key("permutation", key)
    if not np.ndim(x):
        if not np.issubdtype(np.dtype(dtypes.dtype(x)), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(key, jnp.arange(int(x)), 0)
    x = jnp.asarray(x)
    axis = _canonical_axis("permutation", axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    return _take(x, order, axis)


def _searchsorted_left(sorted_values: Any, queries: Any) -> Any:
    """For each query, the number of entries of the 1-d `sorted_values` below it."""
    below = jnp.less(sorted_values, jnp.expand_dims(queries, -1))
    return jnp.sum(below.astype(dtypes.default_int_dtype()), axis=-1)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True,
           p: Any = None, axis: int = 0, mode: str | None = None) -> Any:
    """A random sample of `arange(a)`, or of `a`'s entries along `axis`.

    Mirrors `jax.random.choice`: `shape` draws, with or without replacement, uniformly or
    with probabilities `p` (inverse CDF with replacement, Gumbel top-k without).
    """
    key, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = canonical_shape("choice", shape)
    scalar = np.ndim(a) == 0
    arr = a if scalar else jnp.asarray(a)
    if scalar:
        n_inputs = int(a)
    else:
        axis = _canonical_axis("choice", axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=dtypes.dtype(arr))
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if scalar else _take(arr, ind, axis)
        else:
            chosen = permutation(key, n_inputs if scalar else arr, axis)
            index = (slice(None),) * (0 if scalar else axis) + (slice(n_draws),)
            result = chosen[index]
    else:
        p_arr = jnp.asarray(p)
        p_arr = p_arr.astype(dtypes.to_inexact_dtype(p_arr.dtype))
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError(f"p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {tuple(p_arr.shape)} and "
                             f"a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            u = uniform_raw(key, 0.0, 1.0, shape, np.dtype(p_cuml.dtype))
            r = p_cuml[-1] * (1 - u)
            ind = _searchsorted_left(p_cuml, r).astype(int)
        else:
            noise = gumbel_raw(key, (n_inputs,), np.dtype(p_arr.dtype),
                               "low" if mode is None else mode)
            ind = lax.top_k(noise + jnp.log(p_arr), n_draws)[1].astype(int)
        result = ind if scalar else _take(arr, ind, axis)
    final = shape if scalar else \
        tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:])
    return jnp.reshape(result, final)


# ------------------------------------------------------------------------------ poisson

def _poisson_knuth(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype,
                   max_iters: Any) -> Any:
    """Count uniform factors until their product falls below exp(-lam) (small rates)."""
    def cond(carry: tuple) -> Any:
        i, _, _, log_prod = carry
        return jnp.logical_and(jnp.any(log_prod > -lam), i < max_iters)

    def body(carry: tuple) -> tuple:
        i, k, rng, log_prod = carry
        rng, subkey = split_keys(rng)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = uniform_raw(subkey, 0.0, 1.0, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + jnp.log(u)

    init = (lax.full((), 0, max_iters.dtype), lax.full(shape, 0, dtype), key,
            lax.full(shape, 0.0, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(key: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype,
                       max_iters: Any) -> Any:
    """Hormann's transformed rejection with squeeze (PTRS), for large rates."""
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def cond(carry: tuple) -> Any:
        i, _, accepted, _ = carry
        return jnp.logical_and(jnp.any(jnp.logical_not(accepted)), i < max_iters)

    def body(carry: tuple) -> tuple:
        i, k_out, accepted, rng = carry
        keys = split_keys(rng, 3)
        rng, subkey_0, subkey_1 = keys[0], keys[1], keys[2]
        u = uniform_raw(subkey_0, 0.0, 1.0, shape, np.dtype(lam.dtype)) - 0.5
        v = uniform_raw(subkey_1, 0.0, 1.0, shape, np.dtype(lam.dtype))
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, rng

    init = (lax.full((), 0, max_iters.dtype), lax.full(shape, -1, lam.dtype),
            lax.full(shape, False, np.bool_), key)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None,
            *, out_sharding: Any = None) -> Any:
    """Poisson counts with rate `lam` (mirrors `jax.random.poisson`).

    Rates below 10 use Knuth's algorithm, larger ones transformed rejection; the rate is
    computed in float32 as in JAX; a rate of 0 gives 0.
    """
    key, _ = check_prng_key("poisson", key)
    dtype = np.dtype(dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype))
    shape = tuple(np.shape(lam)) if shape is None else canonical_shape("poisson", shape)
    lam = broadcast_to(lax.convert_element_type(lam, np.float32), shape)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = np.array(dtypes.iinfo(dtype).max, dtype)
    result = lax.select(use_knuth,
                        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)

