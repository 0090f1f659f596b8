"""Gamma and the distributions built on it: gamma, loggamma, beta, dirichlet, t, chisquare, f.

Mirrors `jax.random.gamma` and friends. The samples come from the `random_gamma` primitive
(`_gamma_sampler`): each element of `a` gets its own key, `split(key, a.size)`, and its own
Marsaglia-Tsang rejection loop, with JAX's key usage; `gamma` is differentiable with respect
to `a` (implicitly, through the sample). The other distributions combine gamma samples with
JAX's formulas and key splits.

Differences from JAX: values agree with JAX's to a few ulps (log, pow, erf_inv).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.random._continuous import (as_dtype, check_shape, float_dtype, normal_raw,
                                        shape_or_broadcast)
from jaxlite.random._gamma_sampler import random_gamma
from jaxlite.random._keys import canonical_shape, check_prng_key, split_keys

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f"]


def _gamma(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Any:
    key, _ = check_prng_key(name, key)
    dtype = float_dtype(name, dtype)
    shape = shape_or_broadcast(name, shape, a)
    return random_gamma(key, as_dtype(a, dtype, shape), log_space=log_space)


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None,
          *, out_sharding: Any = None) -> Any:
    """Gamma(a, 1) values (mirrors `jax.random.gamma`).

    `a` (> 0) broadcasts to `shape` (default: a's shape). Divide by a rate, or multiply by a
    scale, for other gamma distributions.
    """
    return _gamma("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None,
             *, out_sharding: Any = None) -> Any:
    """The logarithms of Gamma(a, 1) values, computed in log space (`jax.random.loggamma`).

    Accurate where `gamma` underflows to 0 (small `a`).
    """
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None,
         dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Beta(a, b) values (mirrors `jax.random.beta`): G_a / (G_a + G_b) from log-gammas."""
    key, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    shape = shape_or_broadcast("beta", shape, a, b)
    key_a, key_b = split_keys(key)
    a, b = as_dtype(a, dtype, shape), as_dtype(b, dtype, shape)
    log_gamma_a = loggamma(key_a, a, shape, dtype)
    log_gamma_b = loggamma(key_b, b, shape, dtype)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a = lax.exp(lax.sub(log_gamma_a, log_max))
    gamma_b = lax.exp(lax.sub(log_gamma_b, log_max))
    return lax.div(gamma_a, lax.add(gamma_a, gamma_b))


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None,
              dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Dirichlet(alpha) values (mirrors `jax.random.dirichlet`): normalized gammas.

    `alpha` has shape (..., n); the result has shape `shape + (n,)` (default: alpha's).
    """
    key, _ = check_prng_key("dirichlet", key)
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
    log_gammas = loggamma(key, alpha, shape + tuple(np.shape(alpha))[-1:], dtype)
    # softmax along the last axis, as JAX computes it
    unnormalized = jnp.exp(log_gammas - jnp.max(log_gammas, axis=-1, keepdims=True))
    return unnormalized / jnp.sum(unnormalized, axis=-1, keepdims=True)


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None,
      *, out_sharding: Any = None) -> Any:
    """Student's t values with `df` degrees of freedom (mirrors `jax.random.t`).

    `normal * sqrt((df / 2) / gamma(df / 2))`, from two subkeys.
    """
    key, _ = check_prng_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = shape_or_broadcast("t", shape, df)
    df = as_dtype(df, dtype)
    key_n, key_g = split_keys(key)
    n = normal_raw(key_n, shape, dtype)
    half_df = lax.div(df, lax.full((), 2, dtype))
    g = gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)



def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None,
              *, out_sharding: Any = None) -> Any:
    """Chi-square values with `df` degrees of freedom (mirrors `jax.random.chisquare`):
    `2 exp(loggamma(df / 2))`."""
    key, _ = check_prng_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = shape_or_broadcast("chisquare", shape, df)
    return _chisquare(key, df, shape, dtype)


def _chisquare(key: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    df = as_dtype(df, dtype)
    two = lax.full((), 2, dtype)
    log_g = loggamma(key, lax.div(df, two), shape, dtype)
    return lax.mul(jnp.exp(log_g), two)


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None,
      dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """F-distributed values (mirrors `jax.random.f`): the ratio of two chi-square values,
    each divided by its degrees of freedom."""
    key, _ = check_prng_key("f", key)
    dtype = float_dtype("f", dtype)
    shape = shape_or_broadcast("f", shape, dfnum, dfden)
    dfden, dfnum = as_dtype(dfden, dtype), as_dtype(dfnum, dtype)
    key_dfd, key_dfn = split_keys(key)
    num = lax.div(_chisquare(key_dfn, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare(key_dfd, dfden, shape, dtype), dfden)
    return lax.div(num, den)
