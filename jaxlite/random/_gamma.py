"""Gamma and the distributions built on it: gamma, loggamma, beta, dirichlet, t.

Mirrors `jax.random.gamma` and friends. Each element of a gamma sample gets its own key
(`split(key, a.size)`), and runs Marsaglia and Tsang's rejection method ("A simple method for
generating gamma variables", 2000) with JAX's sequence of key splits: per attempt the key
splits in three (next key, normal key, uniform key), the normal key is split again until
`1 + c x > 0`, and shape parameters below 1 are boosted to a + 1 with a final uniform factor
`u ** (1 / a)` (in log space for `loggamma`). The elements are computed together, as JAX's
vmapped loop does: a `while_loop` over all of them in which finished elements keep their
state, so each element's values are those of its own scalar loop.

Differences from JAX: `gamma` is not differentiable with respect to `a` (JAX differentiates
implicitly through the sample); values agree with JAX's to a few ulps (log, pow, erf_inv).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.random._continuous import (as_dtype, check_shape, float_dtype, normal_lower_bound,
                                        normal_raw, scale_unit, shape_or_broadcast,
                                        uniform_bits_width, unit_floats)
from jaxlite.random._keys import canonical_shape, check_prng_key, split_data
from jaxlite.random._threefry import threefry_random_bits_per_key, threefry_split_per_key

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t"]


def _uniform_per_key(keys: Any, dtype: np.dtype, minval: Any = 0.0) -> Any:
    """`uniform(key, (), dtype, minval, 1)` for each raw key of `keys` (shape (n, 2))."""
    bits = threefry_random_bits_per_key(keys, uniform_bits_width(dtype))
    return scale_unit(unit_floats(bits, dtype), lax.full((), minval, dtype),
                      lax.full((), 1.0, dtype))


def _normal_per_key(keys: Any, dtype: np.dtype) -> Any:
    u = _uniform_per_key(keys, dtype, normal_lower_bound(dtype))
    return lax.mul(lax.full((), np.sqrt(2), dtype), lax.erf_inv(u))


def _pick(keep_new: Any, new: Any, old: Any) -> Any:
    """`new` where `keep_new` (one flag per element), else `old`; keys keep their last axis."""
    if np.ndim(new) > np.ndim(keep_new):
        keep_new = jnp.expand_dims(keep_new, -1)
    return jnp.where(keep_new, new, old)


def _gamma_per_key(keys: Any, alpha: Any, log_space: bool) -> Any:
    """One gamma(alpha[i]) sample from each key (keys (n, 2), alpha (n,)): Marsaglia-Tsang."""
    dtype = np.dtype(alpha.dtype)
    const = lambda value: lax.full((), value, dtype)  # noqa: E731
    zero, one = const(0), const(1)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, const(1.0 / 3.0))
    c = lax.div(const(1.0 / 3.0), lax.sqrt(d))
    first = threefry_split_per_key(keys, 2)
    key, subkey = first[:, 0], first[:, 1]

    def rejected(x_squared: Any, v: Any, u: Any) -> Any:
        squeeze = lax.sub(one, lax.mul(const(0.0331), lax.mul(x_squared, x_squared)))
        log_ratio = lax.add(lax.mul(x_squared, const(0.5)),
                            lax.mul(d, lax.add(lax.sub(one, v), lax.log(v))))
        return lax.bitwise_and(lax.ge(u, squeeze), lax.ge(lax.log(u), log_ratio))

    def draw_positive_v(x_key: Any) -> tuple[Any, Any]:
        # Normal x until v = 1 + c x > 0, splitting the key before each draw.
        def cond(state: tuple) -> Any:
            return jnp.any(lax.le(state[2], zero))

        def body(state: tuple) -> tuple:
            k, x, v = state
            active = lax.le(v, zero)
            pair = threefry_split_per_key(k, 2)
            x_new = _normal_per_key(pair[:, 1], dtype)
            v_new = lax.add(one, lax.mul(x_new, c))
            return (_pick(active, pair[:, 0], k), _pick(active, x_new, x),
                    _pick(active, v_new, v))
        start = (x_key, jnp.zeros_like(alpha), lax.full_like(alpha, -1))
        _, x, v = lax.while_loop(cond, body, start)
        return x, v

    def cond(state: tuple) -> Any:
        _, x_squared, v, u = state
        return jnp.any(rejected(x_squared, v, u))

    def body(state: tuple) -> tuple:
        k, x_squared, v, u = state
        active = rejected(x_squared, v, u)
        three = threefry_split_per_key(k, 3)
        x, v_root = draw_positive_v(three[:, 1])
        new = (three[:, 0], lax.mul(x, x), lax.mul(lax.mul(v_root, v_root), v_root),
               _uniform_per_key(three[:, 2], dtype))
        return tuple(_pick(active, n, o) for n, o in zip(new, state))

    # The initial state (x^2 = 0, v = 1, u = 2) is rejected, so every element draws.
    start = (key, jnp.zeros_like(alpha), jnp.ones_like(alpha), lax.full_like(alpha, 2))
    _, _, v, _ = lax.while_loop(cond, body, start)
    if log_space:
        u = _uniform_per_key(subkey, dtype)
        log_samples = lax.log1p(lax.neg(u))  # minus an exponential sample, as in JAX
        keep = lax.bitwise_or(boost_mask, lax.eq(log_samples, zero))
        log_boost = lax.select(keep, jnp.zeros_like(alpha),
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = lax.sub(one, _uniform_per_key(subkey, dtype))
    boost = lax.select(boost_mask, jnp.ones_like(alpha),
                       lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Any:
    data, _ = check_prng_key(name, key)
    dtype = float_dtype(name, dtype)
    shape = shape_or_broadcast(name, shape, a)
    alpha = as_dtype(a, dtype, shape)
    size = int(np.prod(shape))
    keys = split_data(data, size)
    samples = _gamma_per_key(keys, jnp.reshape(alpha, (size,)), log_space)
    return jnp.reshape(samples, shape)


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) values (mirrors `jax.random.gamma`).

    `a` (> 0) broadcasts to `shape` (default: a's shape). Divide by a rate, or multiply by a
    scale, for other gamma distributions.
    """
    return _gamma("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """The logarithms of Gamma(a, 1) values, computed in log space (`jax.random.loggamma`).

    Accurate where `gamma` underflows to 0 (small `a`).
    """
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None,
         dtype: Any = None) -> Any:
    """Beta(a, b) values (mirrors `jax.random.beta`): G_a / (G_a + G_b) from log-gammas."""
    data, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    shape = shape_or_broadcast("beta", shape, a, b)
    key_a, key_b = split_data(data)
    a, b = as_dtype(a, dtype, shape), as_dtype(b, dtype, shape)
    log_gamma_a = loggamma(key_a, a, shape, dtype)
    log_gamma_b = loggamma(key_b, b, shape, dtype)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a = lax.exp(lax.sub(log_gamma_a, log_max))
    gamma_b = lax.exp(lax.sub(log_gamma_b, log_max))
    return lax.div(gamma_a, lax.add(gamma_a, gamma_b))


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """Dirichlet(alpha) values (mirrors `jax.random.dirichlet`): normalized gammas.

    `alpha` has shape (..., n); the result has shape `shape + (n,)` (default: alpha's).
    """
    data, _ = check_prng_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    batch = tuple(np.shape(alpha))[:-1]
    if shape is None:
        shape = batch
    else:
        shape = canonical_shape("dirichlet", shape)
        check_shape("dirichlet", shape, batch)
    alpha = as_dtype(alpha, dtype)
    log_gammas = loggamma(data, alpha, shape + tuple(np.shape(alpha))[-1:], dtype)
    # softmax along the last axis, as JAX computes it
    unnormalized = jnp.exp(log_gammas - jnp.max(log_gammas, axis=-1, keepdims=True))
    return unnormalized / jnp.sum(unnormalized, axis=-1, keepdims=True)


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t values with `df` degrees of freedom (mirrors `jax.random.t`).

    `normal * sqrt((df / 2) / gamma(df / 2))`, from two subkeys.
    """
    data, _ = check_prng_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = shape_or_broadcast("t", shape, df)
    df = as_dtype(df, dtype)
    key_n, key_g = split_data(data)
    n = normal_raw(key_n, shape, dtype)
    half_df = lax.div(df, lax.full((), 2, dtype))
    g = gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)

