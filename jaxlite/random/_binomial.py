"""Binomial and multinomial counts (mirrors `jax.random.binomial` and `multinomial`).

As JAX (and TensorFlow Probability), `binomial` counts geometric waiting times (the inversion
algorithm) where n q <= 10, q = min(p, 1 - p), and otherwise runs Hormann's transformed
rejection with squeeze (BTRS, "The generation of binomial random variates", 1993); both loops
are `while_loop`s over all elements, with JAX's key splits. `multinomial` draws the
categories one after another with a `scan` of binomials of the remaining count.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.random._continuous import check_shape, uniform
from jaxlite.random._keys import canonical_shape, check_prng_key, split_key, split_keys

__all__ = ["binomial", "multinomial"]

# log(k!) - (Stirling's approximation of it) for k = 0 ... 9, as JAX tabulates them.
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k: Any) -> Any:
    """The error of Stirling's approximation of log(k!): the table below 10, else the
    series 1/12 - 1/360 (k+1)^-2 + 1/1260 (k+1)^-4, over k+1."""
    table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_table = k <= 9
    k = lax.clamp(lax.full((), 0.0, k.dtype), k, lax.full((), 9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_table, table[jnp.asarray(k, dtype="int32")], approx)


def _binomial_inversion(key: Any, count: Any, prob: Any, shape: tuple[int, ...],
                        dtype: np.dtype, max_iters: Any) -> Any:
    """The number of geometric waiting times that fit in `count` trials, minus one."""
    log1minusprob = jnp.log1p(-prob)

    def body(carry: tuple) -> tuple:
        i, num_geom, geom_sum, key = carry
        subkey, key = split_keys(key)
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(subkey, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond(carry: tuple) -> Any:
        i, geom_sum = carry[0], carry[2]
        return (geom_sum <= count).any() & (i < max_iters)

    zeros = lax.full_like(prob, 0, prob.dtype, shape)
    k = lax.while_loop(cond, body, (0, zeros, zeros, key))[1]
    return (k - 1).astype(dtype)


def _btrs(key: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype,
          max_iters: Any) -> Any:
    """Transformed rejection with squeeze (p <= 1/2, n p > 10)."""
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry: tuple) -> tuple:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split_keys(key, 3)
        u = uniform(subkey_0, shape, prob.dtype)
        v = uniform(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
                 - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= upper))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry: tuple) -> Any:
        i, accepted = carry[0], carry[2]
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(prob, -1, prob.dtype, shape)
    carry = (0, k_init, jnp.full(shape, False, bool), key)
    return lax.while_loop(cond, body, carry)[1].astype(dtype)


def _as_inexact(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.to_inexact_dtype(x.dtype))


def _binomial(key: Any, count: Any, prob: Any, shape: tuple[int, ...] | None,
              dtype: np.dtype) -> Any:
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        check_shape("binomial", shape, np.shape(count), np.shape(prob))
    prob = _as_inexact(prob)
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = lax.ne(count, count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = lax.ne(q, q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)  # float counts as numpy takes them
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    # nan for a nan or negative p or n, inf for an infinite n, as JAX gives.
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & (~invalid), jnp.full_like(samples, np.inf, dtype),
                         samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count.astype(dtype) - samples)


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None,
             dtype: Any = None) -> Any:
    """Binomial counts of successes in `n` trials of probability `p`, as floats (mirrors
    `jax.random.binomial`)."""
    key, _ = check_prng_key("binomial", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dtype}")
    if shape is not None:
        shape = canonical_shape("binomial", shape)
    return _binomial(key, n, p, shape, np.dtype(dtype))


def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None,
                dtype: Any = None, unroll: int | bool = 1) -> Any:
    """Multinomial counts of `n` trials over the categories of `p` (last axis), as floats
    (mirrors `jax.random.multinomial`): a binomial per category of the count left."""
    key, _ = check_prng_key("multinomial", key)
    n, p = jnp.asarray(n), jnp.asarray(p)
    common = dtypes.to_inexact_dtype(dtypes.result_type(n, p))
    n, p = n.astype(common), p.astype(common)
    shape = tuple(p.shape) if shape is None else canonical_shape("multinomial", shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = split_key(key, ratios.shape[0])

    def draw(remainder: Any, ratio_key: tuple) -> tuple:
        ratio, k = ratio_key
        count = binomial(k, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count
    _, counts = lax.scan(draw, n, (ratios, keys), unroll=unroll)
    # dtype None means the default float type, as JAX's astype(None) reads it.
    return jnp.moveaxis(counts, 0, -1).astype(dtypes.default_float_dtype() if dtype is None
                                              else dtype)
