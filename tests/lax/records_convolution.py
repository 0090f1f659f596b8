"""Test records for the convolution primitive (`conv_general_dilated`).

Cases draw one or two spatial dimensions, strides, explicit (possibly negative) padding,
lhs and rhs dilation, feature or batch groups and random dimension numbers. The reference
is an independent loop over output positions and kernel taps that maps each tap back into
the undilated, unpadded input (no padded or dilated copy is built).
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from jaxlite import lax
from records import Case, Record, standard_values

DTYPES = (np.int8, np.int32, np.float16, np.dtype(ml_dtypes.bfloat16), np.float32,
          np.complex64)


def quarter_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Multiples of 1/4 in [-2, 2] for floats (exact sums in every float type)."""
    if not np.issubdtype(np.dtype(dtype), np.inexact) and np.dtype(dtype) != \
            np.dtype(ml_dtypes.bfloat16):
        return standard_values(rng, shape, dtype)
    values = rng.integers(-8, 9, shape) / 4
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        values = values + 1j * rng.integers(-8, 9, shape) / 4
    return values.astype(dtype)


def out_size(size: int, kernel: int, stride: int, pad: tuple, lhs_dil: int,
             rhs_dil: int) -> int:
    padded = (size - 1) * lhs_dil + 1 + pad[0] + pad[1]
    extent = (kernel - 1) * rhs_dil + 1
    return (padded - extent) // stride + 1 if padded >= extent else 0


def loop_conv(lhs, rhs, strides, padding, lhs_dil, rhs_dil, specs, groups, batch_groups,
              out_dtype):
    """Convolution by loops over output positions and taps, in float64/complex128."""
    lhs_spec, rhs_spec, out_spec = specs
    wide = np.complex128 if np.iscomplexobj(lhs) else np.float64
    x = np.transpose(np.asarray(lhs).astype(wide), lhs_spec)
    k = np.transpose(np.asarray(rhs).astype(wide), rhs_spec)
    n, c, *sizes = x.shape
    o, i, *ksizes = k.shape
    outs = [out_size(*a) for a in zip(sizes, ksizes, strides, padding, lhs_dil, rhs_dil)]
    result = np.zeros((n // batch_groups, o, *outs), wide)
    per_group = o // max(groups, batch_groups)
    for pos in np.ndindex(*outs):
        for tap in np.ndindex(*ksizes):
            coords = []
            for p, t, s, (lo, _), ld, rd, size in zip(pos, tap, strides, padding, lhs_dil,
                                                      rhs_dil, sizes):
                q = p * s + t * rd - lo  # position in the dilated input
                coords.append(q // ld if q % ld == 0 and 0 <= q // ld < size else None)
            if None in coords:
                continue
            column = x[(slice(None), slice(None)) + tuple(coords)]  # (n, c)
            for out_feature in range(o):
                group = out_feature // per_group
                weights = k[(out_feature, slice(None)) + tap]  # (i,)
                if batch_groups > 1:
                    rows = column[group * (n // batch_groups):(group + 1) * (n // batch_groups)]
                    result[(slice(None), out_feature) + pos] += rows @ weights
                else:
                    feats = column[:, group * i:(group + 1) * i]
                    result[(slice(None), out_feature) + pos] += feats @ weights
    result = np.transpose(result, np.argsort(out_spec))
    if np.dtype(out_dtype) == np.dtype(np.int8) or np.issubdtype(out_dtype, np.integer):
        return np.round(result.real).astype(np.int64).astype(out_dtype)
    return result.astype(out_dtype)


def draw_config(rng: np.random.Generator) -> dict:
    n_spatial = int(rng.integers(1, 3))
    while True:
        sizes = [int(s) for s in rng.integers(1, 6, n_spatial)]
        ksizes = [int(s) for s in rng.integers(1, 4, n_spatial)]
        strides = [int(s) for s in rng.integers(1, 3, n_spatial)]
        lhs_dil = [int(s) for s in rng.choice([1, 1, 2], n_spatial)]
        rhs_dil = [int(s) for s in rng.choice([1, 1, 2], n_spatial)]
        padding = [(int(a), int(b)) for a, b in rng.integers(-1, 3, (n_spatial, 2))]
        outs = [out_size(*a) for a in zip(sizes, ksizes, strides, padding, lhs_dil, rhs_dil)]
        if all(outs):
            break
    groups, batch_groups = 1, 1
    kind = rng.random()
    if kind < 0.25:
        groups = 2
    elif kind < 0.45:
        batch_groups = 2
    g = max(groups, batch_groups)
    n = int(rng.integers(1, 3)) * batch_groups
    i = int(rng.integers(1, 3))
    c = i * groups
    o = int(rng.integers(1, 3)) * g
    rank = n_spatial + 2
    specs = tuple(tuple(int(d) for d in rng.permutation(rank)) for _ in range(3))
    lhs_shape = [0] * rank
    rhs_shape = [0] * rank
    for d, size in zip(specs[0], [n, c] + sizes):
        lhs_shape[d] = size
    for d, size in zip(specs[1], [o, i] + ksizes):
        rhs_shape[d] = size
    return dict(lhs_shape=tuple(lhs_shape), rhs_shape=tuple(rhs_shape), strides=strides,
                padding=padding, lhs_dil=lhs_dil, rhs_dil=rhs_dil, specs=specs,
                groups=groups, batch_groups=batch_groups)


def _conv_case(rng: np.random.Generator, dtype: Any) -> Case:
    cfg = draw_config(rng)
    numbers = lax.ConvDimensionNumbers(*cfg["specs"])

    def fun(lhs, rhs):
        return lax.conv_general_dilated(
            lhs, rhs, cfg["strides"], cfg["padding"], cfg["lhs_dil"], cfg["rhs_dil"],
            numbers, feature_group_count=cfg["groups"],
            batch_group_count=cfg["batch_groups"])

    def reference(lhs, rhs):
        return loop_conv(lhs, rhs, cfg["strides"], cfg["padding"], cfg["lhs_dil"],
                         cfg["rhs_dil"], cfg["specs"], cfg["groups"], cfg["batch_groups"],
                         np.asarray(lhs).dtype)

    args = [quarter_values(rng, cfg["lhs_shape"], dtype),
            quarter_values(rng, cfg["rhs_shape"], dtype)]
    return Case(fun, reference, args, values=quarter_values)


RECORDS: list[Record] = [Record("conv_general_dilated", _conv_case, dtypes=DTYPES)]
