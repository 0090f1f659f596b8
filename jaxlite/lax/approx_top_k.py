"""Approximate top-k: `approx_max_k`, `approx_min_k` and the primitive `approx_top_k`.

Mirrors `jax.lax.approx_max_k` and `approx_min_k` as they run on the CPU, where XLA's
ApproxTopK falls back to an exact answer: the operand is sorted along the reduction
dimension with a `>` (or `<`) comparator and cut to the output size. That size is
k when `aggregate_to_topk`, else the size XLA's approximate algorithm would reduce to (for
which the TPU tiling and `recall_target` matter: `approx_output_size`), so results have
JAX's shapes.

Differences from JAX: equal values (-0.0 and 0.0 included) keep their order here, and NaNs
order above every number (first for max_k, last for min_k). JAX's CPU fallback sorts
unstably, with a comparator that is no strict weak order once NaNs are present, so its
order of ties and the place of NaNs follow its sort algorithm's steps; the values and the
indices of distinct values agree.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.lax._composed import lower_by_expansion
from jaxlite.lax.arithmetic import neg
from jaxlite.lax.bitwise import bitwise_not
from jaxlite.lax.comparisons import ne
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.shape_ops import broadcasted_iota
from jaxlite.lax.slicing import slice_in_dim
from jaxlite.lax.sorting import _take_along, sort_p

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p"]

# XLA's TPU tiling along the reduction dimension: rank-1 operands, and the others.
_CHUNK_TILING, _LANE_TILING = 1024, 128


def _log2_floor(value: int) -> int:
    return value.bit_length() - 1 if value > 0 else 0


def _log2_ceil(value: int) -> int:
    return (value - 1).bit_length() if value > 0 else 0


def approx_output_size(input_size: int, rank: int, k: int, recall_target: float,
                       aggregate_to_topk: bool, input_size_override: int = -1) -> int:
    """The size of the reduction dimension after XLA's approximate top-k.

    With `aggregate_to_topk` it is k. Otherwise the input is cut into M windows (at least one
    TPU tile each), where M is chosen so that the chance that two of the top k share a
    window, about exp((1 - k) / M), stays within `recall_target`; the output keeps a tile per
    window, halved log2(input / M) times.
    """
    if aggregate_to_topk:
        return k
    tiling = _CHUNK_TILING if rank == 1 else _LANE_TILING
    if input_size <= tiling:
        return input_size
    if 0 <= input_size_override < input_size:
        raise ValueError(f"reduction_input_size_override: {input_size_override} should be "
                         f"greater equals to operands[reduction_dim]: {input_size}")
    logical = input_size_override if input_size_override >= 0 else input_size
    if k == 1:
        return tiling
    recall = float(np.float32(recall_target))
    if recall >= 1.0:
        return input_size
    windows = min(max(int((1.0 - k) / math.log(recall)), tiling), logical)
    halvings = _log2_floor(logical // windows)
    if halvings == 0:
        return input_size
    halvings = min(halvings, _log2_ceil(input_size // tiling))
    return -(-(-(-input_size // tiling)) // (1 << halvings)) * tiling


approx_top_k_p = Primitive("approx_top_k", multiple_results=True)


def _abstract_eval(operand: ShapedArray, *, k: int, reduction_dimension: int,
                   recall_target: float, is_max_k: bool, reduction_input_size_override: int,
                   aggregate_to_topk: bool) -> list[ShapedArray]:
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if operand.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {operand.shape}")
    dims = list(operand.shape)
    if dims[reduction_dimension] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim "
                         f"{dims[reduction_dimension]}, got {k}")
    if not dtypes.is_floating(operand.dtype):
        raise ValueError("operand must be a floating type")
    dims[reduction_dimension] = approx_output_size(
        dims[reduction_dimension], len(dims), k, recall_target, aggregate_to_topk,
        reduction_input_size_override)
    return [operand.update(shape=tuple(dims)), ShapedArray(tuple(dims), np.dtype(np.int32))]


def _size(operand_shape: Sequence[int], axis: int, params: dict) -> int:
    return approx_output_size(operand_shape[axis], len(operand_shape), params["k"],
                              params["recall_target"], params["aggregate_to_topk"],
                              params["reduction_input_size_override"])


def _reference(operand: np.ndarray, **params: Any) -> list[np.ndarray]:
    axis = params["reduction_dimension"] % operand.ndim
    wide = operand.astype(np.float64)
    nan = np.isnan(wide)
    value = np.where(nan, 0.0, -wide if params["is_max_k"] else wide)
    # lexsort: the last key is the primary one; NaNs first for max_k, last for min_k.
    primary = ~nan if params["is_max_k"] else nan
    order = np.lexsort((value, primary), axis=axis) if operand.size else \
        np.zeros(operand.shape, np.int64)
    index = np.take(order, np.arange(_size(operand.shape, axis, params)), axis=axis)
    return [np.take_along_axis(operand, index, axis=axis), index.astype(np.int32)]


def _expansion(operand: Any, **params: Any) -> list[Any]:
    shape = get_aval(operand).shape
    axis = params["reduction_dimension"] % len(shape)
    is_nan = ne(operand, operand)
    primary = convert_element_type(bitwise_not(is_nan) if params["is_max_k"] else is_nan,
                                   np.int32)
    value = neg(operand) if params["is_max_k"] else operand
    iota = broadcasted_iota(np.int32, shape, axis)
    _, _, values, indices = sort_p.bind(primary, value, operand, iota, dimension=axis,
                                        is_stable=True, num_keys=2)
    size = _size(shape, axis, params)
    return [slice_in_dim(values, 0, size, 1, axis), slice_in_dim(indices, 0, size, 1, axis)]


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[list, list]:
    values, indices = approx_top_k_p.bind(*primals, **params)
    (tangent,) = tangents
    index_zero = ad.Zero(ad.tangent_aval(get_aval(indices)))
    if isinstance(tangent, ad.Zero):
        return [values, indices], [ad.Zero(ad.tangent_aval(get_aval(values))), index_zero]
    axis = params["reduction_dimension"] % len(get_aval(indices).shape)
    return [values, indices], [_take_along(tangent, indices, axis), index_zero]


def _batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any],
           **params: Any) -> tuple[list, list]:
    (operand,), (dim,) = args, dims
    kept = [d for d in range(np.ndim(operand)) if d != dim]
    moved = dict(params, reduction_dimension=kept[params["reduction_dimension"]])
    return approx_top_k_p.bind(operand, **moved), [dim, dim]


approx_top_k_p.abstract_eval = _abstract_eval
approx_top_k_p.reference = _reference
approx_top_k_p.jvp = _jvp
approx_top_k_p.batch = _batch
approx_top_k_p.lower = lower_by_expansion(approx_top_k_p, _expansion)


def _approx_top_k(operand: Any, k: int, reduction_dimension: int, recall_target: float,
                  is_max_k: bool, reduction_input_size_override: int,
                  aggregate_to_topk: bool) -> list[Any]:
    return approx_top_k_p.bind(
        operand, k=operator.index(k), reduction_dimension=operator.index(reduction_dimension),
        recall_target=float(recall_target), is_max_k=is_max_k,
        reduction_input_size_override=operator.index(reduction_input_size_override),
        aggregate_to_topk=bool(aggregate_to_topk))


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The (approximately) k largest values along `reduction_dimension` and their indices
    (mirrors `jax.lax.approx_max_k`; on the CPU the answer is exact)."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, True,
                         reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The (approximately) k smallest values along `reduction_dimension` and their indices
    (mirrors `jax.lax.approx_min_k`; on the CPU the answer is exact)."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, False,
                         reduction_input_size_override, aggregate_to_topk)
