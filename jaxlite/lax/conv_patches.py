"""Convolutions built on `conv_general_dilated`: patch extraction and unshared (locally
connected) convolution.

Mirrors `jax.lax.conv_general_dilated_patches` and `jax.lax.conv_general_dilated_local`.

- patches: a grouped convolution (one group per input channel) with a kernel of one-hot
  filters, one per position of the receptive window; the output's feature dimension holds
  each patch flattened as (channel, window positions in the kernel spec's spatial order).
- local: the patches contracted with a kernel that has its own weights at every output
  position: a `dot_general` over the patch dimension, batched over the spatial ones.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core.avals import get_aval
from jaxlite.lax.broadcast import broadcast_in_dim, reshape, transpose
from jaxlite.lax.comparisons import eq
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.convolution import conv_dimension_numbers, conv_general_dilated
from jaxlite.lax.dot import Precision, canonicalize_precision, dot_general
from jaxlite.lax.shape_ops import broadcasted_iota

__all__ = ["conv_general_dilated_patches", "conv_general_dilated_local"]


def _one_hot_kernel(dtype: Any, channels: int, filter_shape: tuple[int, ...],
                    rhs_spec: Sequence[int]) -> Any:
    """Kernel (out = channels * window, in = 1, *filter_shape), laid out as `rhs_spec` says:
    output feature c * window + k picks window position k of channel c."""
    window = math.prod(filter_shape)
    eye = convert_element_type(eq(broadcasted_iota(np.int32, (window, window), 0),
                                  broadcasted_iota(np.int32, (window, window), 1)), dtype)
    kernel = reshape(broadcast_in_dim(eye, (channels, window, window), (1, 2)),
                     (channels * window, 1, *filter_shape))
    return _move_pair(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))


def _move_pair(x: Any, source: tuple[int, int], destination: tuple[int, int]) -> Any:
    """`x` with axes `source` moved to `destination`, the others in their order (as
    numpy's moveaxis)."""
    ndim = len(get_aval(x).shape)
    source = tuple(s % ndim for s in source)
    rest = iter(a for a in range(ndim) if a not in source)
    placed = dict(zip(destination, source))
    return transpose(x, tuple(placed[i] if i in placed else next(rest) for i in range(ndim)))


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int],
                                 window_strides: Sequence[int], padding: Any,
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Any:
    """The patches `conv_general_dilated` would see, flattened into the output's feature
    dimension as (channel, window positions) (mirrors
    `jax.lax.conv_general_dilated_patches`)."""
    filter_shape = tuple(int(f) for f in filter_shape)
    lhs_shape = tuple(get_aval(lhs).shape)
    numbers = conv_dimension_numbers(lhs_shape, (1, 1) + filter_shape, dimension_numbers)
    channels = lhs_shape[numbers.lhs_spec[1]]
    kernel = _one_hot_kernel(get_aval(lhs).dtype, channels, filter_shape, numbers.rhs_spec)
    return conv_general_dilated(
        lhs, kernel, window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=numbers,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=channels, preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                               filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Any:
    """Convolution with a separate kernel at every output position (a locally connected
    layer) (mirrors `jax.lax.conv_general_dilated_local`).

    `rhs` has the output's spatial dimensions where a convolution kernel has the window's,
    and its input-feature dimension holds (channel, window positions) flattened, as
    `conv_general_dilated_patches` lays patches out.
    """
    canonical = canonicalize_precision(precision)
    if canonical is None:
        lhs_precision = None
    elif isinstance(canonical, tuple) and len(canonical) == 2:
        lhs_precision = canonical[0]
    else:
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           lhs_precision)
    filter_shape = tuple(int(f) for f in filter_shape)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        tuple(get_aval(lhs).shape), (1, 1) + filter_shape, dimension_numbers)
    # Batch over the output's spatial dimensions, paired by their place in the spec.
    patch_spatial, kernel_spatial = out_spec[2:], rhs_spec[2:]
    order = sorted(range(len(patch_spatial)), key=lambda k: patch_spatial[k])
    numbers = (((out_spec[1],), (rhs_spec[1],)),
               (tuple(patch_spatial[k] for k in order), tuple(kernel_spatial[k] for k in order)))
    out = dot_general(patches, rhs, numbers, precision=precision)
    # (spatial..., batch, features): batch and features to the output spec's places.
    return _move_pair(out, (-2, -1), (out_spec[0], out_spec[1]))
