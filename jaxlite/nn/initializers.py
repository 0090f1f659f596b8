"""Parameter initializers (mirrors `jax.nn.initializers`).

An initializer is a function `init(key, shape, dtype=None)` returning an array; the factories
here (`normal(stddev)`, `glorot_uniform()`, ...) build them. They draw with `jaxlite.random`
in JAX's way, so the same key gives JAX's values. `variance_scaling` is the general form:
variance `scale / fan` (fan_in, fan_out, their mean or geometric mean, from `in_axis`,
`out_axis`, `batch_axis`) from a truncated normal (rescaled to unit variance), a normal or a
uniform distribution; glorot, he and lecun are its special cases.

With one device, `out_sharding` places nothing. Differences from JAX: complex dtypes are not
supported.
"""
from __future__ import annotations

import math
from typing import Any, Protocol, Sequence

import numpy as np

from jaxlite import numpy as jnp
from jaxlite import random
from jaxlite.core import dtypes

__all__ = ["zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal",
           "Initializer"]

class Initializer(Protocol):
    """What the factories here return: `init(key, shape, dtype=None, out_sharding=None)`
    (mirrors `jax.nn.initializers.Initializer`)."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None,
                 out_sharding: Any = None) -> Any:
        raise NotImplementedError

Axes = int | Sequence[int]


def _dtype(dtype: Any) -> np.dtype:
    dtype = dtypes.default_float_dtype() if dtype is None else \
        dtypes.check_and_canonicalize_user_dtype(dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise NotImplementedError("jaxlite.nn.initializers supports real dtypes only, got "
                                  f"{np.dtype(dtype)}.")
    return np.dtype(dtype)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An initializer of zeros (mirrors `jax.nn.initializers.zeros`)."""
    return jnp.zeros(shape, _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An initializer of ones (mirrors `jax.nn.initializers.ones`)."""
    return jnp.ones(shape, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling with `value` (mirrors `jax.nn.initializers.constant`)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        return jnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer of uniform values in [0, scale) (`jax.nn.initializers.uniform`)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer of normal values with standard deviation `stddev`.

    Mirrors `jax.nn.initializers.normal`.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """An initializer of `stddev` times standard normals truncated to (lower, upper).

    Mirrors `jax.nn.initializers.truncated_normal` (the values are not rescaled).
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * \
            jnp.array(stddev, dtype)
    return init


def _size(shape: Sequence[int], axes: Axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape: Sequence[int], in_axis: Axes = -2, out_axis: Axes = -1,
                  batch_axis: Axes = ()) -> tuple[float, float]:
    """(fan_in, fan_out): the input and output sizes times the receptive field size."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    batch_size = _size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNCATED_STDDEV = 0.87962566103423978


def variance_scaling(scale: Any, mode: str, distribution: str, in_axis: Axes = -2,
                     out_axis: Axes = -1, batch_axis: Axes = (),
                     dtype: Any = None) -> Initializer:
    """An initializer whose values have variance `scale / fan`.

    Mirrors `jax.nn.initializers.variance_scaling`.

    Parameters
    ----------
    scale : the variance numerator.
    mode : "fan_in", "fan_out", "fan_avg" (their mean) or "fan_geo_avg" (geometric mean).
    distribution : "truncated_normal" (within two standard deviations, rescaled), "normal"
        or "uniform".
    in_axis, out_axis, batch_axis : the axes of the weights shape that are the inputs, the
        outputs and the batch; the others form the receptive field.
    dtype : the default dtype of the initializer.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        shape = tuple(int(d) for d in shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")
    return init


def glorot_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                   dtype: Any = None) -> Initializer:
    """variance_scaling(1, "fan_avg", "uniform") (`jax.nn.initializers.glorot_uniform`)."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                  dtype: Any = None) -> Initializer:
    """variance_scaling(1, "fan_avg", "truncated_normal") (`jax.nn.initializers.glorot_normal`)."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                  dtype: Any = None) -> Initializer:
    """variance_scaling(1, "fan_in", "uniform") (`jax.nn.initializers.lecun_uniform`)."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                 dtype: Any = None) -> Initializer:
    """variance_scaling(1, "fan_in", "truncated_normal") (`jax.nn.initializers.lecun_normal`)."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
               dtype: Any = None) -> Initializer:
    """variance_scaling(2, "fan_in", "uniform") (`jax.nn.initializers.he_uniform`)."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
              dtype: Any = None) -> Initializer:
    """variance_scaling(2, "fan_in", "truncated_normal") (`jax.nn.initializers.he_normal`)."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (scaled) matrices with orthonormal rows or columns.

    Mirrors `jax.nn.initializers.orthogonal`: the shape is flattened to a matrix whose
    columns are `column_axis`, filled with `random.orthogonal`, and reshaped back.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        dtype = _dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1,
                     dtype: Any = None) -> Initializer:
    """An initializer of convolution kernels that are zero but at the centre of the window,
    where they hold an orthogonal matrix (mirrors `jax.nn.initializers.delta_orthogonal`).

    The shape must be 3-, 4- or 5-dimensional, (window..., fan_in, fan_out) with
    fan_in <= fan_out.
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype,
             out_sharding: Any = None) -> Any:
        dtype = _dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre].set(matrix)
    return init
