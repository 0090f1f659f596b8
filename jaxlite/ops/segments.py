"""Segment reductions: `segment_sum`, `segment_prod`, `segment_max`, `segment_min`.

Mirrors `jax.ops.segment_*`. Row i of `data` is combined into output row `segment_ids[i]`
by a scatter (scatter-add, -mul, -max, -min) into an array of `num_segments` rows filled
with the reduction's identity (so empty segments hold 0, 1, the lowest or the highest
value). Segment ids are not wrapped around: with the default mode ('fill_or_drop'),
negative or too-large ids are dropped; 'clip' moves them to the first or last segment.
With `bucket_size`, the rows are reduced in buckets of that many rows first (one scatter
into (buckets, segments) rows), then across buckets, as JAX does.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.lax._reducer_util import identity_of

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _identity(kind: str, dtype: np.dtype) -> Any:
    return identity_of({"sum": "add", "prod": "mul"}.get(kind, kind), dtype)


_SCATTERS: dict[str, Callable[..., Any]] = {
    "sum": lax.scatter_add, "prod": lax.scatter_mul, "max": lax.scatter_max,
    "min": lax.scatter_min}
_REDUCERS: dict[str, Callable[..., Any]] = {
    "sum": jnp.sum, "prod": jnp.prod, "max": jnp.max, "min": jnp.min}


def _segment(kind: str, name: str, data: Any, segment_ids: Any, num_segments: int | None,
             indices_are_sorted: bool, unique_indices: bool, bucket_size: int | None,
             mode: Any, out_sharding: Any) -> Any:
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not jnp.issubdtype(segment_ids.dtype, jnp.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got {segment_ids.dtype}.")
    mode = lax.GatherScatterMode.FILL_OR_DROP if mode is None else mode
    dtype = np.dtype(data.dtype)
    if num_segments is None:
        num_segments = int(jnp.max(segment_ids)) + 1  # must be known now, as in JAX
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    rest = tuple(data.shape[1:])
    window = tuple(range(1, 1 + len(rest)))
    if bucket_size is None:
        out = jnp.full((num_segments,) + rest, _identity(kind, dtype), dtype)
        numbers = lax.ScatterDimensionNumbers(update_window_dims=window,
                                              inserted_window_dims=(0,),
                                              scatter_dims_to_operand_dims=(0,))
        return _SCATTERS[kind](out, segment_ids[:, None], data, numbers,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)
    buckets = -(-segment_ids.size // int(bucket_size))
    out = jnp.full((buckets, num_segments) + rest, _identity(kind, dtype), dtype)
    bucket = jnp.arange(segment_ids.shape[0], dtype=segment_ids.dtype) // int(bucket_size)
    numbers = lax.ScatterDimensionNumbers(update_window_dims=window,
                                          inserted_window_dims=(0, 1),
                                          scatter_dims_to_operand_dims=(0, 1))
    out = _SCATTERS[kind](out, jnp.stack([bucket, segment_ids], axis=1), data, numbers,
                          indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode)
    return _REDUCERS[kind](out, axis=0).astype(dtype)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The sums of the rows of `data` per segment id (mirrors `jax.ops.segment_sum`);
    empty segments hold 0."""
    return _segment("sum", "segment_sum", data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Any = None,
                 out_sharding: Any = None) -> Any:
    """The products of the rows of `data` per segment id (mirrors `jax.ops.segment_prod`);
    empty segments hold 1."""
    return _segment("prod", "segment_prod", data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The maxima of the rows of `data` per segment id (mirrors `jax.ops.segment_max`);
    empty segments hold the dtype's lowest value (-inf for floats)."""
    return _segment("max", "segment_max", data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The minima of the rows of `data` per segment id (mirrors `jax.ops.segment_min`);
    empty segments hold the dtype's highest value (inf for floats)."""
    return _segment("min", "segment_min", data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)
