"""Bit packing: packbits and unpackbits (mirror `jax.numpy.packbits` and `unpackbits`).

Eight truth values make one uint8, the first value in the most significant bit ('big') or
the least ('little'). Both are shifts, masks and a sum over a new axis of length 8.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import canonicalize_axis, check_arraylike, ensure_array
from jaxlite.numpy._shape import moveaxis, ravel

__all__ = ["packbits", "unpackbits"]

_U8 = np.dtype(np.uint8)


def _bit_weights(bitorder: str, fun_name: str) -> np.ndarray:
    if bitorder not in ("big", "little"):
        raise ValueError(f"{fun_name}: bitorder must be 'big' or 'little', got "
                         f"{bitorder!r}.")
    shifts = np.arange(8, dtype=np.uint8)
    return shifts[::-1].copy() if bitorder == "big" else shifts


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Pack the truth values of `a` into uint8 along `axis` (the flattened `a` when None),
    padding the axis with zeros to a multiple of 8 (mirrors `jax.numpy.packbits`)."""
    check_arraylike("packbits", a)
    a = ensure_array(a)
    if not (dtypes.is_integer(a.dtype) or a.dtype == np.bool_):
        raise TypeError("packbits: expected an input array of integer or boolean data type, "
                        f"got {a.dtype}.")
    shifts = _bit_weights(bitorder, "packbits")
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    bits = lax.convert_element_type(lax.ne(a, lax.full_like(a, 0)), _U8)
    bits = moveaxis(bits, axis, -1)
    length = bits.shape[-1]
    padded = -(-length // 8) * 8
    bits = lax.pad(bits, np.zeros((), _U8), [(0, 0, 0)] * (bits.ndim - 1)
                   + [(0, padded - length, 0)])
    groups = lax.reshape(bits, bits.shape[:-1] + (padded // 8, 8))
    weights = lax.broadcast_in_dim(shifts, groups.shape, (groups.ndim - 1,))
    packed = lax.reduce_sum(lax.shift_left(groups, weights), (groups.ndim - 1,))
    return moveaxis(packed, -1, axis)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The bits of the uint8 array `a` as 0/1 uint8 values along `axis` (the flattened `a`
    when None); `count` keeps that many bits, or drops bits from the end when negative
    (mirrors `jax.numpy.unpackbits`)."""
    check_arraylike("unpackbits", a)
    a = ensure_array(a)
    if a.dtype != _U8:
        raise TypeError(f"unpackbits: expected an input array of unsigned byte data type "
                        f"(uint8), got {a.dtype}.")
    shifts = _bit_weights(bitorder, "unpackbits")
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    moved = moveaxis(a, axis, -1)
    spread_shape = moved.shape + (8,)
    spread = lax.broadcast_in_dim(moved, spread_shape, tuple(range(moved.ndim)))
    weights = lax.broadcast_in_dim(shifts, spread_shape, (moved.ndim,))
    bits = lax.bitwise_and(lax.shift_right_logical(spread, weights), lax.full_like(spread, 1))
    bits = lax.reshape(bits, moved.shape[:-1] + (moved.shape[-1] * 8,))
    if count is not None:
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = lax.slice_in_dim(bits, 0, keep, 1, bits.ndim - 1)
        else:
            bits = lax.pad(bits, np.zeros((), _U8), [(0, 0, 0)] * (bits.ndim - 1)
                           + [(0, keep - total, 0)])
    return moveaxis(bits, -1, axis)
