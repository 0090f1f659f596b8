"""Activation functions and normalizations (mirrors `jax.nn`).

Written with lax and jaxlite.numpy, with JAX's formulas, dtype rules and derivatives. JAX
gives `relu` and `relu6` hand-written derivatives (0 at the kinks); here the same derivatives
come from `select`: the function is `x` where its slope is 1 and a stop-gradient copy of
JAX's value elsewhere, so that values (NaN included) and gradients are JAX's.

Differences from JAX: `softmax` is differentiated through its formula (with the maximum
held constant) rather than by JAX's custom rule; the two agree to rounding.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import canonicalize_axis, promote_args_inexact
from jaxlite.scipy.special import logsumexp  # jax.nn.logsumexp is the scipy one

__all__ = ["identity", "relu", "relu6", "sigmoid", "softplus", "soft_sign", "silu", "swish",
           "gelu", "elu", "celu", "selu", "leaky_relu", "hard_tanh", "log_sigmoid",
           "log_softmax", "softmax", "logsumexp", "one_hot", "standardize", "glu",
           "hard_sigmoid", "hard_silu", "hard_swish", "mish", "squareplus", "sparse_plus",
           "sparse_sigmoid"]


def _array(x: Any) -> Any:
    return jnp.asarray(x)


def identity(x: Any) -> Any:
    """x itself (mirrors `jax.nn.identity`)."""
    return _array(x)


def relu(x: Any) -> Any:
    """max(x, 0), with derivative 0 at 0 (mirrors `jax.nn.relu`)."""
    x = _array(x)
    rest = jnp.maximum(lax.stop_gradient(x), 0)
    return jnp.where(x > 0, x, rest)


def relu6(x: Any) -> Any:
    """min(max(x, 0), 6), with derivative 0 at 0 and 6 (mirrors `jax.nn.relu6`)."""
    x = _array(x)
    rest = jnp.minimum(jnp.maximum(lax.stop_gradient(x), 0), 6.0)
    return jnp.where(jnp.logical_and(x > 0, x < 6), x, rest)


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)) (mirrors `jax.nn.sigmoid`)."""
    return lax.logistic(x)


def softplus(x: Any) -> Any:
    """log(1 + exp(x)) (mirrors `jax.nn.softplus`, which is `jnp.logaddexp(x, 0)`).

    The same values as JAX's max(x, 0) + log1p(exp(-|x|)), written per sign of x (with
    each branch fed only its own half of the line), so that the derivative is sigmoid(x)
    everywhere, 1/2 at 0 included, as JAX's hand-written rule gives.
    """
    (x,) = promote_args_inexact("softplus", x)
    positive = x > 0
    x_pos = jnp.where(positive, x, 0)
    x_neg = jnp.where(positive, 0, x)
    return jnp.where(positive, x_pos + jnp.log1p(jnp.exp(-x_pos)), jnp.log1p(jnp.exp(x_neg)))


def soft_sign(x: Any) -> Any:
    """x / (|x| + 1) (mirrors `jax.nn.soft_sign`)."""
    x = _array(x)
    return x / (jnp.abs(x) + 1)


def silu(x: Any) -> Any:
    """x * sigmoid(x) (mirrors `jax.nn.silu`, also named `swish`)."""
    x = _array(x)
    return x * sigmoid(x)


swish = silu


def mish(x: Any) -> Any:
    """x * tanh(softplus(x)) (mirrors `jax.nn.mish`)."""
    x = _array(x)
    return x * jnp.tanh(softplus(x))


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x) (mirrors `jax.nn.log_sigmoid`)."""
    x = _array(x)
    return -softplus(-x)


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """x for x > 0, alpha (exp(x) - 1) otherwise (mirrors `jax.nn.elu`)."""
    x = _array(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + alpha (exp(min(x, 0) / alpha) - 1) (mirrors `jax.nn.celu`)."""
    x = _array(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with the self-normalizing constants (mirrors `jax.nn.selu`)."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """x for x >= 0, negative_slope * x otherwise (mirrors `jax.nn.leaky_relu`)."""
    x = _array(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    """x clipped to [-1, 1] (mirrors `jax.nn.hard_tanh`)."""
    x = _array(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6 (mirrors `jax.nn.hard_sigmoid`)."""
    return relu6(_array(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x) (mirrors `jax.nn.hard_silu`, also named `hard_swish`)."""
    x = _array(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def squareplus(x: Any, b: Any = 4) -> Any:
    """(x + sqrt(x^2 + b)) / 2 (mirrors `jax.nn.squareplus`)."""
    x = _array(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def sparse_plus(x: Any) -> Any:
    """0 below -1, x above 1, (x + 1)^2 / 4 between (mirrors `jax.nn.sparse_plus`)."""
    x = _array(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Any:
    """clip((x + 1) / 2, 0, 1) (mirrors `jax.nn.sparse_sigmoid`)."""
    return 0.5 * jnp.clip(_array(x) + 1.0, 0.0, 2.0)


def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit x * Phi(x) (mirrors `jax.nn.gelu`).

    `approximate=True` (the default) uses the tanh form
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); False the exact erfc form.
    """
    (x,) = promote_args_inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.asarray(np.sqrt(2 / np.pi)).astype(x.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.asarray(np.sqrt(0.5)).astype(x.dtype)
    return jnp.asarray(0.5 * x * lax.erfc(-x * sqrt_half), dtype=x.dtype)


def glu(x: Any, axis: int = -1) -> Any:
    """The gated linear unit: first half * sigmoid(second half) along `axis` (`jax.nn.glu`)."""
    x = _array(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even, got shape "
                         f"{tuple(x.shape)}.")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """x - logsumexp(x) along `axis` (mirrors `jax.nn.log_softmax`).

    Entries masked out by `where` give -inf.
    """
    x = _array(x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    return result if where is None else jnp.where(where, result, -np.inf)


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along `axis` (mirrors `jax.nn.softmax`).

    Entries masked out by `where` give 0.
    """
    x = _array(x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    return result if where is None else jnp.where(where, result, 0)


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """(x - mean) / sqrt(variance + epsilon) along `axis` (mirrors `jax.nn.standardize`).

    `algorithm="fast"` (default) computes the variance as E[x^2] - E[x]^2 clipped at 0,
    "stable" as E[(x - E[x])^2].
    """
    x = _array(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) \
                - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """Indicator vectors of the integers `x` along a new axis (mirrors `jax.nn.one_hot`).

    Out-of-range entries give all zeros; `dtype` defaults to the default float type.
    """
    num_classes = int(num_classes)
    x = _array(x)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    out_axis = canonicalize_axis(axis, x.ndim + 1)
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, rhs_shape, out_axis)
    return (lhs == rhs).astype(dtype)

