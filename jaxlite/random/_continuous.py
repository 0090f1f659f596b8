"""Continuous distributions from uniform bits (mirrors `jax.random`).

`uniform` fills the mantissa of a float in [1, 2) with random bits and subtracts 1, and
scales with the multiply-add fused as XLA's CPU code fuses it, as JAX does, so that the
values are bit for bit JAX's for the same key; the other samplers transform uniform values
with JAX's formulas, in JAX's order of operations: `normal` (inverse error function),
`truncated_normal`, `exponential`, `laplace`, `logistic`, `gumbel`, `cauchy`,
`multivariate_normal` and `orthogonal`. In float32 all but the last three are bit for bit
JAX's too (float32 erf, erf_inv, log and log1p compute XLA's kernels).

Differences from JAX: `cauchy` (the C library's tan), the float64 samplers (XLA's float64
log calls the C library's) and the linear algebra agree with JAX's to a few ulps rather
than bit for bit.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.lax.fused_multiply_add import fused_multiply_add
from jaxlite.random._keys import canonical_shape, check_prng_key, random_bits, split_keys

__all__ = ["uniform", "normal", "truncated_normal", "exponential", "laplace", "logistic",
           "gumbel", "cauchy", "multivariate_normal", "orthogonal"]


# ---------------------------------------------------------------------------- helpers

def float_dtype(name: str, dtype: Any, kinds: Any = np.floating) -> np.dtype:
    """The sampler's dtype: the default float type for None, else `dtype` checked."""
    dtype = dtypes.check_and_canonicalize_user_dtype(float if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, kinds):
        kind = "float" if kinds is np.floating else "float or complex"
        raise ValueError(f"dtype argument to `{name}` must be a {kind} dtype, got {dtype}")
    return np.dtype(dtype)


def check_safe_to_cast(name: str, dtype: np.dtype, *args: Any) -> None:
    """JAX's TypePromotionError unless each argument converts to `dtype` without loss."""
    for arg in args:
        arg_dtype = dtypes.dtype(arg)
        if arg_dtype != dtype and dtypes.result_type(arg, dtype) != dtype:
            raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely cast "
                                            f"argument of type {arg_dtype} to {dtype}")


def check_shape(name: str, shape: tuple[int, ...], *param_shapes: Sequence[int]) -> None:
    """Parameters must broadcast to exactly `shape` (JAX's rule and message)."""
    if param_shapes:
        try:
            result = tuple(np.broadcast_shapes(shape, *param_shapes))
        except ValueError:
            result = None
        if result != tuple(shape):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             f"argument, and the result of broadcasting the shapes must equal "
                             f"the shape argument, but got result {result} for shape argument "
                             f"{shape}.")


def shape_or_broadcast(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """`shape` checked against the parameters' shapes, or their broadcast shape when None."""
    param_shapes = [tuple(np.shape(p)) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*param_shapes)) if param_shapes else ()
    shape = canonical_shape(name, shape)
    check_shape(name, shape, *param_shapes)
    return shape


def broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """`x` broadcast numpy-style to `shape` (lax only, so Python scalars work under jit)."""
    lead = len(shape) - np.ndim(x)
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def as_dtype(x: Any, dtype: Any, shape: tuple[int, ...] | None = None) -> Any:
    """`x` converted to `dtype` (and broadcast to `shape`, when given)."""
    x = lax.convert_element_type(x, dtype)
    return x if shape is None else broadcast_to(x, shape)


def unit_floats(bits: Any, dtype: np.dtype) -> Any:
    """Floats in [0, 1) from unsigned random bits: the top bits fill the mantissa of 1.x.

    `bits` has the width of `dtype` or, for types with fewer than 8 mantissa bits, 8 bits.
    """
    info = dtypes.finfo(dtype)
    uint = np.dtype(f"uint{info.bits}")
    rng_bits = np.dtype(dtypes.dtype(bits)).itemsize * 8
    if np.dtype(dtypes.dtype(bits)) != uint:
        bits = lax.convert_element_type(bits, uint)
    shift = lax.full((), rng_bits - info.nmant, uint)
    one = lax.full((), np.array(1.0, dtype).view(uint), uint)
    float_bits = lax.bitwise_or(lax.shift_right_logical(bits, shift), one)
    return lax.sub(lax.bitcast_convert_type(float_bits, dtype), lax.full((), 1.0, dtype))


def uniform_bits_width(dtype: np.dtype) -> int:
    info = dtypes.finfo(dtype)
    if info.bits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}.")
    return 8 if info.nmant < 8 else info.bits


def fma(a: Any, b: Any, c: Any) -> Any:
    """a * b + c (broadcast), the multiply and add fused into one rounding in float32 and
    float64 where XLA's CPU code fuses them (narrower floats round each operation there)."""
    shape = tuple(np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c)))
    dtype = dtypes.result_type(a, b, c)
    a, b, c = (broadcast_to(lax.convert_element_type(x, dtype), shape) for x in (a, b, c))
    if np.dtype(dtype) in (np.float32, np.float64):
        return fused_multiply_add(a, b, c)
    return lax.add(lax.mul(a, b), c)


def scale_unit(floats: Any, minval: Any, maxval: Any) -> Any:
    """`floats` in [0, 1) mapped to [minval, maxval), never below minval: JAX's
    `max(minval, floats * (maxval - minval) + minval)`, with XLA's fused multiply-add."""
    minval = broadcast_to(minval, np.shape(floats))
    return lax.max(minval, fma(floats, lax.sub(maxval, minval), minval))


def uniform_raw(key: Any, minval: Any, maxval: Any, shape: tuple[int, ...],
                dtype: np.dtype) -> Any:
    """`uniform` from a typed key, with checked arguments."""
    minval = as_dtype(minval, dtype, shape)
    maxval = as_dtype(maxval, dtype, shape)
    floats = unit_floats(random_bits(key, uniform_bits_width(dtype), shape), dtype)
    return scale_unit(floats, minval, maxval)


def normal_lower_bound(dtype: np.dtype) -> np.ndarray:
    """The float just above -1 (so that erf_inv stays finite)."""
    return np.array(-1.0 + float(dtypes.finfo(dtype).epsneg), dtype)


def normal_raw(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Standard normal values from a typed key (complex: real and imaginary from two keys)."""
    if dtypes.issubdtype(dtype, np.complexfloating):
        real_dtype = dtypes.real_dtype(dtype)
        key_re, key_im = split_keys(key)
        parts = [lax.convert_element_type(normal_raw(k, shape, real_dtype), dtype)
                 for k in (key_re, key_im)]
        imaginary = lax.mul(parts[1], lax.full((), 1j, dtype))
        return lax.div(lax.add(parts[0], imaginary), lax.full((), np.sqrt(2), dtype))
    u = uniform_raw(key, normal_lower_bound(dtype), 1.0, shape, dtype)
    return lax.mul(lax.full((), np.sqrt(2), dtype), lax.erf_inv(u))


# ----------------------------------------------------------------------------- samplers

def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0, *, out_sharding: Any = None) -> Any:
    """Uniform floats in [minval, maxval) (mirrors `jax.random.uniform`).

    Parameters
    ----------
    key : a PRNG key.
    shape : the result shape; `minval` and `maxval` broadcast to it.
    dtype : a float dtype (default: float32, float64 with x64 on).
    minval, maxval : the bounds.
    """
    key, _ = check_prng_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    shape = canonical_shape("uniform", shape)
    check_shape("uniform", shape, np.shape(minval), np.shape(maxval))
    return uniform_raw(key, minval, maxval, shape, dtype)


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None,
           *, out_sharding: Any = None) -> Any:
    """Standard normal values (mirrors `jax.random.normal`): `sqrt(2) * erf_inv(u)`.

    `u` is uniform in (-1, 1); a complex dtype gives real and imaginary parts of variance
    1/2 each.
    """
    key, _ = check_prng_key("normal", key)
    dtype = float_dtype("normal", dtype, np.inexact)
    return normal_raw(key, canonical_shape("normal", shape), dtype)


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Standard normal values conditioned on (lower, upper) (`jax.random.truncated_normal`).

    The result lies in the open interval: it is clipped to the floats next to the bounds.
    """
    key, _ = check_prng_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    shape = shape_or_broadcast("truncated_normal", shape, lower, upper)
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower, upper = as_dtype(lower, dtype), as_dtype(upper, dtype)
    # XLA divides by a constant as a product with its reciprocal (rounded once), so JAX's
    # lower / sqrt(2) is this product.
    recip = lax.full((), np.array(1, dtype) / sqrt2, dtype)
    a, b = lax.erf(lax.mul(lower, recip)), lax.erf(lax.mul(upper, recip))
    u = uniform_raw(key, a, b, shape, dtype)
    out = lax.mul(lax.full((), sqrt2, dtype), lax.erf_inv(u))
    low = lax.nextafter(lax.stop_gradient(lower), lax.full_like(lower, np.inf))
    high = lax.nextafter(lax.stop_gradient(upper), lax.full_like(upper, -np.inf))
    return jnp.clip(out, low, high)


def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None,
                *, out_sharding: Any = None) -> Any:
    """Exponential values of rate 1 (mirrors `jax.random.exponential`): `-log1p(-u)`."""
    key, _ = check_prng_key("exponential", key)
    dtype = float_dtype("exponential", dtype)
    u = uniform_raw(key, 0.0, 1.0, canonical_shape("exponential", shape), dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None,
            *, out_sharding: Any = None) -> Any:
    """Laplace values of scale 1 (mirrors `jax.random.laplace`)."""
    key, _ = check_prng_key("laplace", key)
    dtype = float_dtype("laplace", dtype)
    low = -1.0 + float(dtypes.finfo(dtype).epsneg)
    u = uniform_raw(key, low, 1.0, canonical_shape("laplace", shape), dtype)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None,
             *, out_sharding: Any = None) -> Any:
    """Standard logistic values (mirrors `jax.random.logistic`): `log(u) - log1p(-u)`."""
    key, _ = check_prng_key("logistic", key)
    dtype = float_dtype("logistic", dtype)
    tiny = float(dtypes.finfo(dtype).tiny)
    x = uniform_raw(key, tiny, 1.0, canonical_shape("logistic", shape), dtype)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None,
           *, out_sharding: Any = None) -> Any:
    """Standard Cauchy values (mirrors `jax.random.cauchy`): `tan(pi * (u - 1/2))`."""
    key, _ = check_prng_key("cauchy", key)
    dtype = float_dtype("cauchy", dtype)
    eps = float(dtypes.finfo(dtype).eps)
    u = uniform_raw(key, eps, 1.0, canonical_shape("cauchy", shape), dtype)
    half, pi = lax.full((), 0.5, dtype), lax.full((), np.pi, dtype)
    return lax.tan(lax.mul(pi, lax.sub(u, half)))


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None,
           mode: str | None = None, *, out_sharding: Any = None) -> Any:
    """Standard Gumbel values (mirrors `jax.random.gumbel`): `-log(-log(u))`.

    `mode="high"` builds each uniform value from two draws, for resolution near 0;
    the default `"low"` uses one. Differences from JAX: `mode="highest"` is not supported.
    """
    key, _ = check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return gumbel_raw(key, canonical_shape("gumbel", shape), dtype, mode)


def gumbel_raw(key: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    info = dtypes.finfo(dtype)
    if mode == "high":
        both = uniform_raw(key, 0.0, 1.0, (2,) + shape, dtype)
        high, low = both[0], both[1]
        fine = lax.add(lax.add(high, lax.mul(lax.full((), 2.0 ** -info.nmant, dtype), low)),
                       lax.full((), float(info.tiny), dtype))
        x = lax.select(lax.ge(high, lax.full_like(high, 0.5)), high, fine)
        return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    u = uniform_raw(key, float(info.tiny), 1.0, shape, dtype)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: Any = None, method: str = "cholesky",
                        *, out_sharding: Any = None) -> Any:
    """Multivariate normal values (mirrors `jax.random.multivariate_normal`).

    `mean` has shape (..., n) and `cov` (..., n, n); the result has shape `shape + (n,)`
    (default: the broadcast batch shapes of mean and cov). `method` factors `cov`: with
    "cholesky" (default), "eigh" or "svd" (the last two accept singular matrices).
    """
    key, _ = check_prng_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    common = dtypes.to_inexact_dtype(dtypes.result_type(mean, cov))
    mean, cov = mean.astype(common), cov.astype(common)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = np.dtype(common) if dtype is None else float_dtype("multivariate_normal", dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        shape = canonical_shape("multivariate_normal", shape)
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = lax.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        v, w = lax.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = lax.linalg.cholesky(cov)
    samples = normal_raw(key, shape + (n,), dtype)
    return mean + jnp.matmul(factor, samples[..., None])[..., 0]


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None, *, out_sharding: Any = None) -> Any:
    """Uniformly (Haar) random matrices with orthonormal columns or rows.

    Mirrors `jax.random.orthogonal`: the result has shape `shape + (n, m)` (m defaults to
    n); it is the Q of a QR factorization of a normal matrix, with column signs fixed by R's
    diagonal.
    """
    key, _ = check_prng_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype)
    shape = canonical_shape("orthogonal", shape)
    n = int(n)
    m = n if m is None else int(m)
    z = normal_raw(key, shape + (max(n, m), min(n, m)), dtype)
    q, r = lax.linalg.qr(z, full_matrices=False)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x
