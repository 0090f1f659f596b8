"""Distributions derived from the basic samplers (mirrors `jax.random`).

`pareto`, `rademacher`, `maxwell`, `double_sided_maxwell`, `weibull_min`,
`generalized_normal`, `ball`, `rayleigh`, `wald`, `geometric`, `triangular` and `lognormal`
transform uniform, normal, exponential, bernoulli and gamma samples with JAX's formulas, in
JAX's order of operations and with JAX's key splits, so that their values are JAX's for the
same key wherever the underlying math functions (log, exp, pow, sqrt) agree.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.random._continuous import (as_dtype, check_safe_to_cast, exponential,
                                        float_dtype, fma, normal, shape_or_broadcast, uniform)
from jaxlite.random._discrete import bernoulli
from jaxlite.random._gamma import gamma
from jaxlite.random._keys import canonical_shape, check_prng_key, split_keys

__all__ = ["pareto", "rademacher", "maxwell", "double_sided_maxwell", "weibull_min",
           "generalized_normal", "ball", "rayleigh", "wald", "geometric", "triangular",
           "lognormal"]


def _float_sampler(name: str, key: Any, dtype: Any, shape: Any, *params: Any,
                   kinds: Any = np.floating) -> tuple[Any, np.dtype, tuple[int, ...]]:
    """The typed key, dtype and shape of a sampler with float results and parameters."""
    key, _ = check_prng_key(name, key)
    dtype = float_dtype(name, dtype, kinds)
    shape = shape_or_broadcast(name, shape, *params)
    check_safe_to_cast(name, dtype, *params)
    return key, dtype, shape


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None,
           *, out_sharding: Any = None) -> Any:
    """Pareto values with shape `b`, on [1, inf) (mirrors `jax.random.pareto`):
    `exp(e / b)` for an exponential `e`."""
    key, dtype, shape = _float_sampler("pareto", key, dtype, shape, b)
    e = exponential(key, shape, dtype)
    return lax.exp(lax.div(e, as_dtype(b, dtype, shape)))


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None,
               *, out_sharding: Any = None) -> Any:
    """-1 or +1 with equal probability (mirrors `jax.random.rademacher`); integer dtype by
    default."""
    key, _ = check_prng_key("rademacher", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype)
    samples = bernoulli(key, 0.5, canonical_shape("rademacher", shape)).astype(dtype)
    return (2 * samples - 1).astype(dtype)


def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None,
            *, out_sharding: Any = None) -> Any:
    """Maxwell values (mirrors `jax.random.maxwell`): the norm of three standard normals."""
    key, _ = check_prng_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    shape = canonical_shape("maxwell", shape)
    # (Not bit for bit JAX's: XLA's reduction of the three squares adds them in an order,
    # and fuses multiplies into it, that depend on the shape.)
    return jnp.linalg.norm(normal(key, shape + (3,), dtype), axis=-1)


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Any:
    """Maxwell values with random signs, scaled and shifted (mirrors
    `jax.random.double_sided_maxwell`).

    As in JAX, the result's shape is `shape` (or, when empty, the parameters' broadcast
    shape) followed by the parameters' broadcast shape.
    """
    key, _ = check_prng_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    shape = canonical_shape("double_sided_maxwell", shape)
    params_shape = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = (shape or params_shape) + params_shape
    maxwell_key, rademacher_key = split_keys(key)
    maxwell_values = maxwell(maxwell_key, shape, dtype)
    signs = rademacher(rademacher_key, shape, dtype)
    return fma(signs * maxwell_values, scale, loc)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: Any = None) -> Any:
    """Weibull values (mirrors `jax.random.weibull_min`), by the inverse CDF:
    `(-log1p(-u)) ** (1 / concentration) * scale`."""
    key, _ = check_prng_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    u = uniform(key, canonical_shape("weibull_min", shape), dtype, 0, 1)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def generalized_normal(key: Any, p: float, shape: Sequence[int] = (),
                       dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Generalized normal values with density proportional to exp(-|x|^p) (mirrors
    `jax.random.generalized_normal`): `r * g ** (1/p)`, g ~ Gamma(1/p), r = +-1."""
    shape = canonical_shape("generalized_normal", shape)
    key, _ = check_prng_key("generalized_normal", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype)
    gamma_key, sign_key = split_keys(key)
    g = gamma(gamma_key, 1 / p, shape, dtype)
    r = rademacher(sign_key, shape, dtype)
    return r * g ** (1 / p)


def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (),
         dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Points uniform in the unit p-norm ball of dimension `d` (mirrors
    `jax.random.ball`); the result has shape `shape + (d,)`."""
    shape = canonical_shape("ball", shape)
    key, _ = check_prng_key("ball", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype)
    d = operator.index(d)
    k1, k2 = split_keys(key)
    g = generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None,
             dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Rayleigh values (mirrors `jax.random.rayleigh`): `scale * sqrt(-2 log u)`."""
    key, dtype, shape = _float_sampler("rayleigh", key, dtype, shape, scale)
    u = uniform(key, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    root = lax.sqrt(lax.mul(lax.log(u), lax.full((), -2, dtype)))
    return lax.mul(scale, root)


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None,
         *, out_sharding: Any = None) -> Any:
    """Wald (inverse Gaussian) values with scale 1 (mirrors `jax.random.wald`), by the
    transformation of Michael, Schucany and Haas from a normal and a uniform value."""
    key, dtype, shape = _float_sampler("wald", key, dtype, shape, mean)
    k1, k2 = split_keys(key)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    # The multiply-adds fused as XLA's CPU code fuses them.
    sqrt_term = lax.sqrt(fma(4 * mean, y, mean_sq * y_sq))
    x = fma(-(mean / 2), sqrt_term, mean + mean_sq * y / 2)
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None,
              *, out_sharding: Any = None) -> Any:
    """Geometric counts, trials until the first success with probability `p` (mirrors
    `jax.random.geometric`): `floor(log u / log1p(-p)) + 1`; integer dtype."""
    key, _ = check_prng_key("geometric", key)
    dtype = dtypes.check_and_canonicalize_user_dtype(int if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = shape_or_broadcast("geometric", shape, p)
    p = jnp.asarray(p)
    p = p.astype(dtypes.to_inexact_dtype(p.dtype)) if not dtypes.is_inexact(p.dtype) else p
    u = uniform(key, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)  # as JAX: u = 0 counts as u = 1
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1
    return g.astype(dtype)


def triangular(key: Any, left: Any, mode: Any, right: Any,
               shape: Sequence[int] | None = None, dtype: Any = None,
               *, out_sharding: Any = None) -> Any:
    """Triangular values on [left, right] with peak at `mode` (mirrors
    `jax.random.triangular`), by the inverse CDF."""
    key, dtype, shape = _float_sampler("triangular", key, dtype, shape, left, mode, right)
    left, right, mode = (jnp.broadcast_to(lax.convert_element_type(x, dtype), shape)
                         for x in (left, right, mode))
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def lognormal(key: Any, sigma: Any = np.float32(1), shape: Sequence[int] | None = None,
              dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Log-normal values (mirrors `jax.random.lognormal`): `exp(sigma * normal)`; complex
    dtypes too."""
    key, dtype, shape = _float_sampler("lognormal", key, dtype, shape, sigma,
                                       kinds=np.inexact)
    return lax.exp(normal(key, shape, dtype) * lax.convert_element_type(sigma, dtype))
