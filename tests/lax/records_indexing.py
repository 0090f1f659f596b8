"""Test records of the indexing primitives: dynamic_slice, dynamic_update_slice, gather and
the scatters (scatter, scatter-add, scatter-sub, scatter-mul, scatter-min, scatter-max).

The references here are plain Python loops over output (or update) positions, written from
XLA's and JAX's definitions and independent of the primitives' own numpy rules. Cases draw
random dimension numbers (windows, collapsed and batching dimensions, index batch shapes)
and indices partly out of bounds, under every GatherScatterMode.
"""
from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np

from jaxlite import lax
from records import Case, Record, standard_values

BF16 = np.dtype(ml_dtypes.bfloat16)
ALL = (np.bool_, np.int8, np.int32, np.uint8, np.float16, BF16, np.float32, np.complex64)
NUMERIC = tuple(d for d in ALL if d is not np.bool_)
REAL = (np.bool_, np.int32, np.uint8, np.float16, np.float32)
MODES = (lax.GatherScatterMode.CLIP, lax.GatherScatterMode.FILL_OR_DROP,
         lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _shape(rng: np.random.Generator, min_ndim: int = 1, max_ndim: int = 3) -> tuple:
    return tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(min_ndim, max_ndim + 1))))


def _index(value: int) -> np.ndarray:
    return np.asarray(value, np.int32)


# ----------------------------------------------------------------------- dynamic slicing

def _clamped_start(start: Any, dim: int, size: int) -> int:
    start = int(start)
    start = start + dim if start < 0 else start  # the wrappers wrap negative starts
    return min(max(start, 0), dim - size)


def _dynamic_slice_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng, 0)
    sizes = [int(rng.integers(0, d + 1)) for d in shape]
    starts = [_index(rng.integers(-d - 2, d + 3)) for d in shape]

    def reference(x: np.ndarray, *s: np.ndarray) -> np.ndarray:
        first = [_clamped_start(v, d, n) for v, d, n in zip(s, shape, sizes)]
        return x[tuple(slice(f, f + n) for f, n in zip(first, sizes))]
    return Case(lambda x, *s: lax.dynamic_slice(x, s, sizes), reference,
                [standard_values(rng, shape, dtype), *starts])


def _dynamic_update_slice_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng, 0)
    update_shape = tuple(int(rng.integers(0, d + 1)) for d in shape)
    starts = [_index(rng.integers(-d - 2, d + 3)) for d in shape]

    def reference(x: np.ndarray, u: np.ndarray, *s: np.ndarray) -> np.ndarray:
        first = [_clamped_start(v, d, n) for v, d, n in zip(s, shape, update_shape)]
        out = np.array(x)
        out[tuple(slice(f, f + n) for f, n in zip(first, update_shape))] = u
        return out
    return Case(lambda x, u, *s: lax.dynamic_update_slice(x, u, s), reference,
                [standard_values(rng, shape, dtype), standard_values(rng, update_shape, dtype),
                 *starts])


# ---------------------------------------------------------------- gather configurations

def _layout(rng: np.random.Generator, shape: tuple, unique: bool = False) -> dict:
    """Random dimension numbers over an operand of `shape`, in gather terms: which dims
    are indexed, collapsed or batching, the window sizes, the index batch shape, where the
    windows go in the output, and indices (partly out of bounds unless `unique`)."""
    rank = len(shape)
    dims = list(range(rank))
    batching = [] if unique or rank < 2 or rng.random() < 0.7 else [int(rng.integers(rank))]
    free = [d for d in dims if d not in batching]
    if unique:
        start_map, collapsed = list(rng.permutation(free)), list(free)
    else:
        start_map = [int(d) for d in rng.permutation(free)[:int(rng.integers(0, len(free) + 1))]]
        collapsed = [d for d in free if rng.random() < 0.5]
    sizes = [1 if d in collapsed or d in batching else int(rng.integers(0, shape[d] + 1))
             for d in dims]
    batch_shape = [int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3)))]
    index_batching = []
    if batching:
        at = int(rng.integers(0, len(batch_shape) + 1))
        batch_shape.insert(at, shape[batching[0]])
        index_batching = [at]
    if unique:
        count = int(rng.integers(1, int(np.prod(shape)) + 1))
        flat = rng.permutation(int(np.prod(shape)))[:count]
        positions = np.stack(np.unravel_index(flat, shape), -1)
        indices = positions[:, start_map].astype(np.int32)
        batch_shape = [count]
    else:
        lows = [-2] * len(start_map)
        highs = [shape[d] - sizes[d] + 3 for d in start_map]
        columns = [rng.integers(lo, hi, batch_shape) for lo, hi in zip(lows, highs)]
        indices = (np.stack(columns, -1) if columns else np.zeros(tuple(batch_shape) + (0,)))
        indices = indices.astype(np.int32).reshape(tuple(batch_shape) + (len(start_map),))
    windows = [d for d in dims if d not in collapsed and d not in batching]
    out_rank = len(windows) + len(batch_shape)
    offset_dims = sorted(int(p) for p in rng.permutation(out_rank)[:len(windows)])
    return dict(start_map=tuple(int(d) for d in start_map), collapsed=tuple(collapsed),
                batching=tuple(batching), index_batching=tuple(index_batching),
                sizes=tuple(sizes), indices=indices, offset_dims=tuple(offset_dims),
                windows=windows)


def _start(layout: dict, vector: np.ndarray, batch_index: tuple) -> list[int]:
    start = [0] * len(layout["sizes"])
    for k, d in enumerate(layout["start_map"]):
        start[d] = int(vector[k])
    for d, i in zip(layout["batching"], layout["index_batching"]):
        start[d] = batch_index[i]
    return start


def _place(layout: dict, shape: tuple, sizes: list[int], start: list[int],
           clip: bool) -> list[int] | None:
    """The window start clamped inside (clip), or None when the window is outside."""
    inside = all(0 <= s <= d - n for s, d, n in zip(start, shape, sizes))
    if not inside and not clip:
        return None
    return [min(max(s, 0), d - n) for s, d, n in zip(start, shape, sizes)]


def _ref_gather(x: np.ndarray, indices: np.ndarray, layout: dict, mode: Any,
                fill: Any) -> np.ndarray:
    offset_dims, windows = layout["offset_dims"], layout["windows"]
    out_rank = len(windows) + indices.ndim - 1
    batch_positions = [p for p in range(out_rank) if p not in offset_dims]
    batch_shape, window_shape = indices.shape[:-1], [layout["sizes"][d] for d in windows]
    out_shape = [0] * out_rank
    for p, n in zip(batch_positions, batch_shape):
        out_shape[p] = n
    for p, n in zip(offset_dims, window_shape):
        out_shape[p] = n
    out = np.zeros(out_shape, x.dtype)
    fill_mode = mode is lax.GatherScatterMode.FILL_OR_DROP
    for position in np.ndindex(*out_shape):
        batch_index = tuple(position[p] for p in batch_positions)
        start = _start(layout, indices[batch_index], batch_index)
        start = _place(layout, x.shape, list(layout["sizes"]), start, clip=not fill_mode)
        if start is None:
            out[position] = fill
            continue
        for d, p in zip(windows, offset_dims):
            start[d] += position[p]
        out[position] = x[tuple(start)]
    return out


def _gather_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    layout = _layout(rng, shape)
    mode = MODES[int(rng.integers(len(MODES)))]
    fill = standard_values(rng, (), dtype)[()]
    dnums = lax.GatherDimensionNumbers(layout["offset_dims"], layout["collapsed"],
                                       layout["start_map"], layout["batching"],
                                       layout["index_batching"])

    def fun(x: Any, i: Any) -> Any:
        return lax.gather(x, i, dnums, layout["sizes"], mode=mode, fill_value=fill)
    return Case(fun, lambda x, i: _ref_gather(x, i, layout, mode, fill),
                [standard_values(rng, shape, dtype), layout["indices"]])


# --------------------------------------------------------------------------- scatters

def _ref_scatter(x: np.ndarray, indices: np.ndarray, updates: np.ndarray, layout: dict,
                 mode: Any, combine: Callable[[Any, Any], Any]) -> np.ndarray:
    out = np.array(x)
    with np.errstate(over="ignore"):
        _fold_updates(out, indices, updates, layout, mode, combine)
    return out


def _fold_updates(out: np.ndarray, indices: np.ndarray, updates: np.ndarray, layout: dict,
                  mode: Any, combine: Callable[[Any, Any], Any]) -> None:
    window_dims, windows = layout["offset_dims"], layout["windows"]
    sizes = list(layout["sizes"])
    for d, u in zip(windows, window_dims):
        sizes[d] = updates.shape[u]
    scatter_positions = [p for p in range(updates.ndim) if p not in window_dims]
    for position in np.ndindex(*updates.shape):
        batch_index = tuple(position[p] for p in scatter_positions)
        start = _start(layout, indices[batch_index], batch_index)
        start = _place(layout, out.shape, sizes, start,
                       clip=mode is lax.GatherScatterMode.CLIP)
        if start is None:
            continue
        for d, u in zip(windows, window_dims):
            start[d] += position[u]
        target = tuple(start)
        out[target] = combine(out[target], updates[position])


def _separated_values(rng: np.random.Generator, shape: tuple, dtype: Any,
                      offset: float = 0.0) -> np.ndarray:
    """Distinct multiples of 1/2 plus `offset` (no ties within finite-difference steps)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or dtype.kind in "iu":
        return standard_values(rng, shape, dtype)
    count = int(np.prod(shape))
    values = (rng.permutation(2 * count + 8)[:count] - count) / 2 + offset
    return values.reshape(shape).astype(dtype)


def _scatter_record(name: str, function: Callable[..., Any],
                    combine: Callable[[Any, Any], Any], dtypes: tuple, *,
                    unique_grads_only: bool = False, separated: bool = False) -> Record:
    values = _separated_values if separated else standard_values

    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        unique = rng.random() < 0.3
        layout = _layout(rng, shape, unique)
        mode = (lax.GatherScatterMode.FILL_OR_DROP if unique
                else MODES[int(rng.integers(len(MODES)))])
        # Updates: the gather output shape of the layout (windows up to the slice sizes).
        batch_shape = layout["indices"].shape[:-1]
        out_rank = len(layout["windows"]) + len(batch_shape)
        update_shape, batch = [0] * out_rank, iter(batch_shape)
        for p in range(out_rank):
            if p in layout["offset_dims"]:
                d = layout["windows"][layout["offset_dims"].index(p)]
                update_shape[p] = layout["sizes"][d]
            else:
                update_shape[p] = next(batch)
        dnums = lax.ScatterDimensionNumbers(layout["offset_dims"], layout["collapsed"],
                                            layout["start_map"], layout["batching"],
                                            layout["index_batching"])

        def fun(x: Any, i: Any, u: Any) -> Any:
            return function(x, i, u, dnums, mode=mode, unique_indices=unique)
        # (Separated operand values and updates never tie with each other either.)
        updates = (_separated_values(rng, tuple(update_shape), dtype, 0.25) if separated
                   else values(rng, tuple(update_shape), dtype))
        args = [values(rng, shape, dtype), layout["indices"], updates]
        grad_argnums = [0] if unique_grads_only and not unique else None
        return Case(fun, lambda x, i, u: _ref_scatter(x, i, u, layout, mode, combine), args,
                    values=values, grad_argnums=grad_argnums)
    return Record(name, make_case, dtypes=dtypes)


def _add(old: Any, new: Any) -> Any:
    return old | new if np.asarray(old).dtype == np.bool_ else old + new


def _mul(old: Any, new: Any) -> Any:
    return old & new if np.asarray(old).dtype == np.bool_ else old * new


def _max(old: Any, new: Any) -> Any:
    return np.maximum(old, new)


def _min(old: Any, new: Any) -> Any:
    return np.minimum(old, new)


RECORDS = [
    Record("dynamic_slice", _dynamic_slice_case, dtypes=ALL),
    Record("dynamic_update_slice", _dynamic_update_slice_case, dtypes=ALL),
    Record("gather", _gather_case, dtypes=ALL),
    _scatter_record("scatter", lax.scatter, lambda old, new: new, ALL),
    # bool raises in JAX for add and mul (its combiners are lax.add / lax.mul)
    _scatter_record("scatter-add", lax.scatter_add, _add, NUMERIC),
    _scatter_record("scatter-sub", lax.scatter_sub, lambda old, new: old - new, NUMERIC),
    _scatter_record("scatter-mul", lax.scatter_mul, _mul, NUMERIC, unique_grads_only=True),
    _scatter_record("scatter-min", lax.scatter_min, _min, REAL, separated=True),
    _scatter_record("scatter-max", lax.scatter_max, _max, REAL, separated=True),
]
