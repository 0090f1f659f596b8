"""The gamma sampler as the primitive `random_gamma` (mirrors JAX's `random_gamma_p`).

`random_gamma_p.bind(key_data, a, log_space=..., impl=...)` draws one Gamma(a[i], 1) sample
per element of `a`, from keys derived from `key_data` (the uint32 data of typed keys of
`impl`, whose shape is a prefix of a's): each key is split into as many keys as its slice of
`a` has elements, as JAX does. Each element then runs Marsaglia and Tsang's rejection method
("A simple method for generating gamma variables", 2000) with JAX's sequence of key splits:
per attempt the key splits in three (next key, normal key, uniform key), the normal key is
split again until `1 + c x > 0`, and shape parameters below 1 are boosted to a + 1 with a
final uniform factor `u ** (1 / a)` (in log space for `loggamma`). The elements run
together, as JAX's vmapped loop does: a `while_loop` over all of them in which finished
elements keep their state, so each element's values are those of its own scalar loop.

It is a primitive, rather than a composition, for its derivative: the sample is
differentiated implicitly with respect to `a` (`lax.random_gamma_grad`), not through the
loop. Differences from JAX: the operand is the keys' data and the implementation a parameter
(JAX binds typed keys), so that the lowering knows the implementation. The samples are JAX's
to a few ulps, not bit for bit: XLA computes c = (1/3) / sqrt(d) as (1/3) * rsqrt(d) with
the processor's approximate reciprocal square root, and the boost for a < 1 with the C
library's powf (the multiply-adds XLA fuses are fused here too).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.lax._composed import lower_by_expansion
from jaxlite.lax.ad_util import is_symbolic_zero, zeros_like_tangent
from jaxlite.random._continuous import (fma, normal_lower_bound, scale_unit,
                                        uniform_bits_width, unit_floats)
from jaxlite.random._prng import PRNGImpl, random_unwrap, threefry_prng_impl
from jaxlite.random._threefry import threefry_random_bits_per_key, threefry_split_per_key
from jaxlite.transforms.vmap import vmap

__all__ = ["random_gamma_p", "random_gamma"]


# --------------------------------------------------------------- per-key key operations

def _split_each(impl: PRNGImpl, keys: Any, num: int) -> Any:
    """`num` new keys from each key of `keys` (data (n, *key_shape) -> (n, num, *key_shape))."""
    if impl is threefry_prng_impl:
        return threefry_split_per_key(keys, num)
    return vmap(lambda k: impl.split(k, (num,)))(keys)


def _uniform_each(impl: PRNGImpl, keys: Any, dtype: np.dtype, minval: Any = 0.0) -> Any:
    """`uniform(key, (), dtype, minval, 1)` for each key of `keys` (data (n, *key_shape))."""
    width = uniform_bits_width(dtype)
    if impl is threefry_prng_impl:
        bits = threefry_random_bits_per_key(keys, width)
    else:
        bits = vmap(lambda k: impl.random_bits(k, width, ()))(keys)
    return scale_unit(unit_floats(bits, dtype), lax.full((), minval, dtype),
                      lax.full((), 1.0, dtype))


def _normal_each(impl: PRNGImpl, keys: Any, dtype: np.dtype) -> Any:
    u = _uniform_each(impl, keys, dtype, normal_lower_bound(dtype))
    return lax.mul(lax.full((), np.sqrt(2), dtype), lax.erf_inv(u))


def _pick(keep_new: Any, new: Any, old: Any) -> Any:
    """`new` where `keep_new` (one flag per element), else `old`; key data keeps its axes."""
    while np.ndim(keep_new) < np.ndim(new):
        keep_new = jnp.expand_dims(keep_new, -1)
    return jnp.where(keep_new, new, old)


# ------------------------------------------------------------------ Marsaglia and Tsang

def _gamma_each(impl: PRNGImpl, keys: Any, alpha: Any, log_space: bool) -> Any:
    """One gamma(alpha[i]) sample from each key (data (n, *key_shape), alpha (n,))."""
    dtype = np.dtype(alpha.dtype)
    const = lambda value: lax.full((), value, dtype)  # noqa: E731
    zero, one = const(0), const(1)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, const(1.0 / 3.0))
    c = lax.div(const(1.0 / 3.0), lax.sqrt(d))
    first = _split_each(impl, keys, 2)
    key, subkey = first[:, 0], first[:, 1]

    # The multiply-adds fused as XLA's CPU code fuses them.
    def rejected(x_squared: Any, v: Any, u: Any) -> Any:
        squeeze = fma(lax.neg(const(0.0331)), lax.mul(x_squared, x_squared), one)
        log_ratio = fma(d, lax.add(lax.sub(one, v), lax.log(v)), lax.mul(x_squared, const(0.5)))
        return lax.bitwise_and(lax.ge(u, squeeze), lax.ge(lax.log(u), log_ratio))

    def draw_positive_v(x_key: Any) -> tuple[Any, Any]:
        # Normal x until v = 1 + c x > 0, splitting the key before each draw.
        def cond(state: tuple) -> Any:
            return jnp.any(lax.le(state[2], zero))

        def body(state: tuple) -> tuple:
            k, x, v = state
            active = lax.le(v, zero)
            pair = _split_each(impl, k, 2)
            x_new = _normal_each(impl, pair[:, 1], dtype)
            v_new = fma(x_new, c, one)
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
        three = _split_each(impl, k, 3)
        x, v_root = draw_positive_v(three[:, 1])
        new = (three[:, 0], lax.mul(x, x), lax.mul(lax.mul(v_root, v_root), v_root),
               _uniform_each(impl, three[:, 2], dtype))
        return tuple(_pick(active, n, o) for n, o in zip(new, state))

    # The initial state (x^2 = 0, v = 1, u = 2) is rejected, so every element draws.
    start = (key, jnp.zeros_like(alpha), jnp.ones_like(alpha), lax.full_like(alpha, 2))
    _, _, v, _ = lax.while_loop(cond, body, start)
    if log_space:
        u = _uniform_each(impl, subkey, dtype)
        log_samples = lax.log1p(lax.neg(u))  # minus an exponential sample, as in JAX
        keep = lax.bitwise_or(boost_mask, lax.eq(log_samples, zero))
        log_boost = lax.select(keep, jnp.zeros_like(alpha),
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = lax.sub(one, _uniform_each(impl, subkey, dtype))
    boost = lax.select(boost_mask, jnp.ones_like(alpha),
                       lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_impl(key_data: Any, a: Any, *, log_space: bool, impl: PRNGImpl) -> Any:
    """The samples, composed from lax operations (eager, and traced for the lowering)."""
    key_shape = tuple(impl.key_shape)
    keys_ndim = np.ndim(key_data) - len(key_shape)
    a_shape = tuple(np.shape(a))
    size = math.prod(a_shape)
    if size == 0:
        return jnp.zeros(a_shape, a.dtype)
    keys = jnp.reshape(key_data, (-1,) + key_shape)
    keys = _split_each(impl, keys, math.prod(a_shape[keys_ndim:]))
    keys = jnp.reshape(keys, (size,) + key_shape)
    samples = _gamma_each(impl, keys, jnp.reshape(a, (size,)), log_space)
    return jnp.reshape(samples, a_shape)


# ------------------------------------------------------------------------ the primitive

random_gamma_p = Primitive("random_gamma")


def _random_gamma_abstract_eval(key_data: ShapedArray, a: ShapedArray, *, log_space: bool,
                                impl: PRNGImpl) -> ShapedArray:
    keys_shape = tuple(key_data.shape)[:key_data.ndim - len(impl.key_shape)]
    if tuple(a.shape)[:len(keys_shape)] != keys_shape:
        raise TypeError(f"random_gamma: the keys' shape {keys_shape} must be a prefix of the "
                        f"shape parameter's shape {tuple(a.shape)}.")
    return a.strip_weak_type()


def _random_gamma_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                        log_space: bool, impl: PRNGImpl) -> tuple[Any, int]:
    # Each batch element gets its own keys: the batch axis leads both operands.
    key_data, a = (lax.broadcast(x, (axis_size,)) if d is None else lax.moveaxis(x, d, 0)
                   for x, d in zip(args, dims))
    return random_gamma_p.bind(key_data, a, log_space=log_space, impl=impl), 0


def _gamma_grad(sample: Any, a: Any, log_space: bool) -> Any:
    """d sample / d a, implicitly (mirrors JAX's `_gamma_grad`)."""
    if log_space:
        # d log(x) = dx / x; exp(log x) may round to 0, where the smallest normal stands in.
        x = lax.exp(sample)
        x = lax.select(lax.eq(x, lax.full_like(x, 0)),
                       lax.full_like(x, float(jnp.finfo(x.dtype).tiny)), x)
        return lax.div(lax.random_gamma_grad(a, x), x)
    return lax.random_gamma_grad(a, sample)


def _random_gamma_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, log_space: bool,
                      impl: PRNGImpl) -> tuple[Any, Any]:
    key_data, a = primals
    out = random_gamma_p.bind(key_data, a, log_space=log_space, impl=impl)
    a_dot = tangents[1]
    if is_symbolic_zero(a_dot):
        return out, zeros_like_tangent(ShapedArray(np.shape(out), out.dtype))
    return out, lax.mul(a_dot, _gamma_grad(out, a, log_space))


random_gamma_p.abstract_eval = _random_gamma_abstract_eval
random_gamma_p.impl = _gamma_impl
random_gamma_p.lower = lower_by_expansion(random_gamma_p, _gamma_impl)
random_gamma_p.batch = _random_gamma_batch
random_gamma_p.jvp = _random_gamma_jvp


def random_gamma(keys: Any, a: Any, *, log_space: bool) -> Any:
    """Gamma(a, 1) samples (or their logarithms) from typed keys whose shape is a prefix of
    a's (one key per element when they match)."""
    return random_gamma_p.bind(random_unwrap(keys), a, log_space=log_space,
                               impl=keys.dtype.impl)
