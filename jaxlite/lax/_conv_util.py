"""Helpers of `jaxlite.lax.convolution`: dimension numbers, the shape rule and the numpy
reference of `conv_general_dilated` (XLA's Convolution), in the layouts the dimension
numbers give (see `jaxlite.lax.convolution` for their meaning).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.lax.dot import _dot_compute_dtype, _dot_result_dtype


class ConvDimensionNumbers(NamedTuple):
    """Where each role sits in the operands and the result (mirrors
    `jax.lax.ConvDimensionNumbers`): `lhs_spec` = (batch, feature, spatial...),
    `rhs_spec` = (output feature, input feature, spatial...), `out_spec` = (batch, feature,
    spatial...), each a tuple of dimension indices."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


Pairs = tuple[tuple[int, int], ...]


def dilate_dim(size: int, dilation: int) -> int:
    """The extent of `size` elements with `dilation - 1` holes between neighbours."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _out_size(size: int, kernel: int, stride: int, pad: tuple[int, int], lhs_dil: int,
              rhs_dil: int) -> int:
    padded = dilate_dim(size, lhs_dil) + pad[0] + pad[1]
    extent = dilate_dim(kernel, rhs_dil)
    return max(0, (padded - extent) // stride + 1) if padded >= extent else 0


# ---------------------------------------------------------------------- shape rule

def _check_spec(name: str, spec: tuple[int, ...], rank: int) -> None:
    if sorted(spec) != list(range(rank)):
        raise TypeError(f"conv_general_dilated: dimension_numbers.{name} must be a permutation "
                        f"of range({rank}) for operands of rank {rank}, got {spec}.")


def _conv_abstract_eval(lhs: ShapedArray, rhs: ShapedArray, *, window_strides: tuple,
                        padding: Pairs, lhs_dilation: tuple, rhs_dilation: tuple,
                        dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                        batch_group_count: int, precision: Any,
                        preferred_element_type: Any) -> ShapedArray:
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {lhs.ndim} "
                        f"and {rhs.ndim} (at least 2; shapes {lhs.shape} and {rhs.shape}).")
    n_spatial = lhs.ndim - 2
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    for name, spec in (("lhs_spec", lhs_spec), ("rhs_spec", rhs_spec),
                       ("out_spec", out_spec)):
        _check_spec(name, spec, lhs.ndim)
    for name, value in (("window_strides", window_strides), ("padding", padding),
                        ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(value) != n_spatial:
            if name == "window_strides":  # JAX's ValueError
                raise ValueError("conv_general_dilated window and window_strides must have "
                                 f"the same number of dimensions, but got {n_spatial} and "
                                 f"{len(value)}")
            raise TypeError(f"conv_general_dilated {name} must have one entry per spatial "
                            f"dimension ({n_spatial}), got {value}.")
    for name, value in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                        ("rhs_dilation", rhs_dilation)):
        if any(v < 1 for v in value):
            raise ValueError(f"conv_general_dilated {name} must be positive, got {value}.")
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"lax.conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {lhs.dtype.name}, {rhs.dtype.name}. Convert one with "
                        "lax.convert_element_type.")
    groups, batch_groups = feature_group_count, batch_group_count
    if groups < 1 or batch_groups < 1:
        raise ValueError(f"conv_general_dilated feature_group_count ({groups}) and "
                         f"batch_group_count ({batch_groups}) must be positive.")
    if groups > 1 and batch_groups > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may be > "
                         f"1, got batch_group_count={batch_groups} and "
                         f"feature_group_count={groups}")
    batch, features = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    out_features, in_features = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    # JAX's wording, with the shapes added.
    if features % groups:
        raise ValueError(f"conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {groups} does not divide {features} (lhs shape "
                         f"{lhs.shape}).")
    if features // groups != in_features:
        raise ValueError(f"conv_general_dilated lhs feature dimension size divided by "
                         f"feature_group_count must equal the rhs input feature dimension "
                         f"size, but {features} // {groups} != {in_features} (lhs shape "
                         f"{lhs.shape}, rhs shape {rhs.shape}).")
    if out_features % groups:
        raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {out_features} is not a "
                         f"multiple of {groups}.")
    if batch % batch_groups or out_features % batch_groups:
        raise ValueError(f"conv_general_dilated lhs batch dimension size ({batch}) and rhs "
                         f"output feature dimension size ({out_features}) must be multiples "
                         f"of batch_group_count ({batch_groups}).")
    out = [0] * lhs.ndim
    out[out_spec[0]] = batch // batch_groups
    out[out_spec[1]] = out_features
    for i in range(n_spatial):
        out[out_spec[2 + i]] = _out_size(lhs.shape[lhs_spec[2 + i]], rhs.shape[rhs_spec[2 + i]],
                                         window_strides[i], padding[i], lhs_dilation[i],
                                         rhs_dilation[i])
    dtype = _dot_result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return ShapedArray(tuple(out), dtype, lhs.weak_type and rhs.weak_type)


# ---------------------------------------------------------------------- reference

def _dilate_pad(x: np.ndarray, pads: Pairs, dilation: tuple) -> np.ndarray:
    """`x` (batch, feature, spatial...) dilated, then padded (negative pads crop)."""
    shape = x.shape[:2] + tuple(dilate_dim(n, d) for n, d in zip(x.shape[2:], dilation))
    dilated = np.zeros(shape, x.dtype)
    dilated[(slice(None),) * 2 + tuple(slice(None, None, d) for d in dilation)] = x
    widths = [(0, 0)] * 2 + [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    padded = np.pad(dilated, widths)
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0))
                 for (lo, hi), n in zip(pads, padded.shape[2:]))
    return padded[(slice(None),) * 2 + crop]


def _conv_reference(lhs: np.ndarray, rhs: np.ndarray, *, window_strides: tuple,
                    padding: Pairs, lhs_dilation: tuple, rhs_dilation: tuple,
                    dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                    batch_group_count: int, precision: Any,
                    preferred_element_type: Any) -> np.ndarray:
    out_dtype = _dot_result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    acc = _dot_compute_dtype(lhs.dtype, rhs.dtype, out_dtype)
    acc = np.dtype(np.int64) if dtypes.is_integer(acc) or acc == np.bool_ else acc
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    x = _dilate_pad(np.transpose(lhs, lhs_spec).astype(acc), padding, lhs_dilation)
    k = np.transpose(rhs, rhs_spec).astype(acc)
    n, c = x.shape[:2]
    o = k.shape[0]
    out_sizes = [_out_size(lhs.shape[lhs_spec[2 + i]], k.shape[2 + i], s, p, ld, rd)
                 for i, (s, p, ld, rd) in enumerate(zip(window_strides, padding, lhs_dilation,
                                                        rhs_dilation))]
    g, b = feature_group_count, batch_group_count
    result = np.zeros((n // b, b, o // b, *out_sizes), acc) if b > 1 else np.zeros(
        (n, g, o // g, *out_sizes), acc)
    for tap in np.ndindex(*k.shape[2:]):
        window = tuple(slice(t * d, t * d + s * (m - 1) + 1, s) for t, d, s, m in zip(
            tap, rhs_dilation, window_strides, out_sizes))
        xs = x[(slice(None),) * 2 + window] if all(out_sizes) else np.zeros(
            (n, c, *out_sizes), acc)
        ks = k[(slice(None),) * 2 + tap]
        if b > 1:
            result += np.einsum("bnc...,boc->nbo...", xs.reshape(b, n // b, c, *out_sizes),
                                ks.reshape(b, o // b, c))
        else:
            result += np.einsum("ngc...,goc->ngo...", xs.reshape(n, g, c // g, *out_sizes),
                                ks.reshape(g, o // g, c // g))
    result = result.reshape(result.shape[0], o, *out_sizes)
    result = np.transpose(result, np.argsort(out_spec))
    if dtypes.is_complex(result.dtype) and not dtypes.is_complex(out_dtype):
        result = result.real
    return result != 0 if out_dtype == np.bool_ else result.astype(out_dtype)
