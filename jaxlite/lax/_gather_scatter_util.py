"""What gather and the scatters share: dimension numbers, modes, shape rules, numpy semantics.

Mirrors `jax.lax.GatherDimensionNumbers`, `ScatterDimensionNumbers` and `GatherScatterMode`
(XLA's Gather and Scatter, with the index vector always the last dimension of the indices,
as in JAX). The numpy functions here are the eager references of the primitives: they
compute, for every output element of a gather or every update element of a scatter, the
operand position it reads or writes, with JAX's out-of-bounds semantics (CLIP clamps each
window into the operand; FILL_OR_DROP fills a gathered window or drops a scattered one when
any part of it falls outside; PROMISE_IN_BOUNDS behaves as XLA does on the CPU: gathers clamp,
scatters drop).
"""
from __future__ import annotations

import enum
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode"]


class GatherDimensionNumbers(NamedTuple):
    """How a gather reads its operand (mirrors `jax.lax.GatherDimensionNumbers`).

    offset_dims : output dimensions that hold the slice (window) dimensions, increasing.
    collapsed_slice_dims : operand dimensions whose slice (of size 1) is dropped.
    start_index_map : for each entry of the index vector, the operand dimension it starts.
    operand_batching_dims : operand dimensions paired with `start_indices_batching_dims`.
    start_indices_batching_dims : index dimensions paired with `operand_batching_dims`.

    The index vector is the last dimension of the indices, as in JAX.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter writes its operand (mirrors `jax.lax.ScatterDimensionNumbers`).

    update_window_dims : update dimensions that hold the window dimensions, increasing.
    inserted_window_dims : operand dimensions with a window of size 1 absent from updates.
    scatter_dims_to_operand_dims : for each entry of the index vector, its operand dimension.
    operand_batching_dims : operand dimensions paired with `scatter_indices_batching_dims`.
    scatter_indices_batching_dims : index dimensions paired with `operand_batching_dims`.
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds handling of gathers and scatters (mirrors `jax.lax.GatherScatterMode`).

    CLIP : indices are clamped so that the whole window is inside the operand.
    FILL_OR_DROP : a gathered window that is partly outside is filled with `fill_value`; a
        scattered one is dropped.
    PROMISE_IN_BOUNDS : the caller promises indices in bounds; in practice gathers clamp
        and scatters drop, as XLA does.
    ONE_HOT : accepted by `from_any` as in JAX, but not supported by jaxlite's primitives.
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: "str | GatherScatterMode | None") -> "GatherScatterMode":
        """The mode named by `s`: "clip", "fill" or "drop" (also None), "promise_in_bounds"
        or "one_hot"."""
        if isinstance(s, GatherScatterMode):
            return s
        names = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP,
                 "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
                 "one_hot": GatherScatterMode.ONE_HOT}
        if not isinstance(s, (str, type(None))) or s not in names:
            raise ValueError(f'Unknown gather mode "{s}"')
        return names[s]


def check_mode(name: str, mode: GatherScatterMode) -> None:
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"{name}: mode GatherScatterMode.ONE_HOT is not supported "
                                  "by jaxlite; use CLIP, FILL_OR_DROP or PROMISE_IN_BOUNDS.")


def default_fill_value(dtype: Any) -> Any:
    """The value a FILL_OR_DROP gather fills with by default, as JAX chooses it."""
    if dtypes.is_extended(dtype):  # typed keys are gathered as their uint32 data
        dtype = dtype.physical_dtype
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype == np.bool_:
        return True
    if dtypes.is_unsigned(dtype):
        return int(np.iinfo(dtype).max)
    return int(np.iinfo(dtype).min)


def shifted(dims: Sequence[int], by: int = 1) -> tuple[int, ...]:
    return tuple(int(d) + by for d in dims)


# ------------------------------------------------------------------------- shape rules

def _out_of_range_phrase(op: str, what: str, position: int, dim: int, bound: int) -> str:
    # JAX words this three ways, by the kind of dimension list.
    if what in ("start_index_map", "scatter_dims_to_operand_dims"):
        mapping = " mapping" if op == "scatter" else ""
        return f"Invalid {what}{mapping}; domain is [0, {bound}), got: {position}->{dim}."
    if what == "offset_dims":
        return (f"Offset dimension {position} in gather op is out of bounds; got {dim}, but "
                f"should have been in [0, {bound})")
    return f"Invalid {what} set in {op} op; valid range is [0, {bound}); got: {dim}."


def _check_dim_list(name: str, what: str, dims: Sequence[int], bound: int, *,
                    increasing: bool, where: str) -> None:
    """JAX's key phrase first, then which function and what the dimensions index."""
    op = "scatter" if name.startswith("scatter") else "gather"
    dims = tuple(dims)
    for position, d in enumerate(dims):
        if not 0 <= d < bound:
            raise TypeError(f"{_out_of_range_phrase(op, what, position, d, bound)} ({name}: "
                            f"{what} {dims} must be in [0, {bound}), the dimensions of "
                            f"{where}.)")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{what} in {op} op must not repeat; got: {dims}. ({name})")
    if increasing and list(dims) != sorted(dims):
        raise TypeError(f"{what} in {op} op must be sorted; got {dims} ({name}).")


def _check_indices(name: str, indices: ShapedArray) -> None:
    if not dtypes.is_integer(indices.dtype):
        raise ValueError(f"indices must have an integer type, got "  # JAX's type and words
                         f"{np.dtype(indices.dtype).name} ({name}).")
    if indices.ndim < 1:
        raise TypeError(f"{name}: the indices need at least one dimension (the last one is "
                        "the index vector), got a 0-d array; add a trailing axis of size 1.")


def _check_index_vector(op: str, what: str, dims: Sequence[int],
                        indices: ShapedArray) -> None:
    if len(dims) != indices.shape[-1]:
        raise TypeError(f"{op} op has {len(dims)} elements in {what} and the bound of "
                        f"dimension index_vector_dim={indices.ndim - 1} of indices is "
                        f"{indices.shape[-1]}. These two numbers must be equal ({what} "
                        f"{tuple(dims)} needs one entry per element of the index vector of "
                        f"the indices {indices.str_short()}).")


def _check_batching(name: str, operand: ShapedArray, indices: ShapedArray,
                    operand_dims: Sequence[int], index_dims: Sequence[int],
                    index_name: str) -> None:
    _check_dim_list(name, "operand_batching_dims", operand_dims, operand.ndim,
                    increasing=True, where=f"the operand {operand.str_short()}")
    _check_dim_list(name, index_name, index_dims, indices.ndim - 1, increasing=False,
                    where=f"the indices {indices.str_short()} but the last")
    if len(operand_dims) != len(index_dims):
        raise TypeError(f"{name}: operand_batching_dims {tuple(operand_dims)} and "
                        f"{index_name} {tuple(index_dims)} must have the same length.")
    for o, i in zip(operand_dims, index_dims):
        if operand.shape[o] != indices.shape[i]:
            raise TypeError(f"{name}: operand batching dimension {o} (size "
                            f"{operand.shape[o]}) and index batching dimension {i} (size "
                            f"{indices.shape[i]}) must have the same size.")


def gather_shape(operand: ShapedArray, indices: ShapedArray, dnums: GatherDimensionNumbers,
                 slice_sizes: Sequence[int]) -> tuple[int, ...]:
    """The output shape of a gather, after checking its dimension numbers."""
    name = "gather"
    _check_indices(name, indices)
    if not isinstance(dnums, GatherDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a lax.GatherDimensionNumbers, "
                        f"got {type(dnums).__name__}.")
    where = f"the operand {operand.str_short()}"
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim} "
                        f"(slice_sizes {tuple(slice_sizes)} for {where}).")
    for i, (size, dim) in enumerate(zip(slice_sizes, operand.shape)):
        if not 0 <= size <= dim:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                            f"within [0, {dim} + 1), got {size} (slice_sizes "
                            f"{tuple(slice_sizes)} for {where}).")
    _check_dim_list(name, "collapsed_slice_dims", dnums.collapsed_slice_dims, operand.ndim,
                    increasing=True, where=where)
    _check_batching(name, operand, indices, dnums.operand_batching_dims,
                    dnums.start_indices_batching_dims, "start_indices_batching_dims")
    dropped = set(dnums.collapsed_slice_dims) | set(dnums.operand_batching_dims)
    if len(dropped) != len(dnums.collapsed_slice_dims) + len(dnums.operand_batching_dims):
        raise TypeError(f"{name}: collapsed_slice_dims {dnums.collapsed_slice_dims} and "
                        f"operand_batching_dims {dnums.operand_batching_dims} must not share a "
                        "dimension.")
    for position, d in enumerate(dnums.collapsed_slice_dims + dnums.operand_batching_dims):
        if slice_sizes[d] > 1:
            raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {slice_sizes[d]} for index {d} at position {position} "
                            f"(collapsed and batching dimensions need slice sizes of at "
                            f"most 1, got slice_sizes {tuple(slice_sizes)}).")
    _check_dim_list(name, "start_index_map", dnums.start_index_map, operand.ndim,
                    increasing=False, where=where)
    _check_index_vector("Gather", "start_index_map", dnums.start_index_map, indices)
    if set(dnums.start_index_map) & set(dnums.operand_batching_dims):
        raise TypeError(f"{name}: start_index_map {dnums.start_index_map} must not name the "
                        f"operand_batching_dims {dnums.operand_batching_dims}.")
    window = [slice_sizes[d] for d in range(operand.ndim) if d not in dropped]
    rank = len(window) + indices.ndim - 1
    if len(dnums.offset_dims) != len(window):
        raise TypeError(f"All components of the offset index in a gather op must either be a "
                        f"offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, offset_dims="
                        f"{dnums.offset_dims}, collapsed_slice_dims="
                        f"{dnums.collapsed_slice_dims}, operand_batching_dims="
                        f"{dnums.operand_batching_dims} (offset_dims needs one entry per "
                        f"operand dimension that is neither collapsed nor batching).")
    _check_dim_list(name, "offset_dims", dnums.offset_dims, rank, increasing=True,
                    where="the output")
    batch, windows = iter(indices.shape[:-1]), iter(window)
    return tuple(next(windows) if d in dnums.offset_dims else next(batch) for d in range(rank))


def check_scatter(name: str, operand: ShapedArray, indices: ShapedArray,
                  updates: ShapedArray, dnums: ScatterDimensionNumbers) -> None:
    """Check a scatter's operands against its dimension numbers (XLA's rules)."""
    _check_indices(name, indices)
    if not isinstance(dnums, ScatterDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a lax.ScatterDimensionNumbers, "
                        f"got {type(dnums).__name__}.")
    if operand.dtype != updates.dtype:
        raise TypeError(f"lax.scatter requires arguments to have the same dtypes, got "
                        f"{np.dtype(operand.dtype).name}, {np.dtype(updates.dtype).name} "
                        f"({name}: convert the updates with lax.convert_element_type).")
    where = f"the operand {operand.str_short()}"
    expected_rank = len(dnums.update_window_dims) + indices.ndim - 1
    if updates.ndim != expected_rank:
        raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {updates.ndim} "
                        f"({name}: the updates {updates.str_short()} have the window "
                        f"dimensions {dnums.update_window_dims} and, elsewhere, the index "
                        f"dimensions {indices.shape[:-1]} of the indices "
                        f"{indices.str_short()}).")
    _check_dim_list(name, "update_window_dims", dnums.update_window_dims, updates.ndim,
                    increasing=True, where=f"the updates {updates.str_short()}")
    _check_dim_list(name, "inserted_window_dims", dnums.inserted_window_dims, operand.ndim,
                    increasing=True, where=where)
    _check_batching(name, operand, indices, dnums.operand_batching_dims,
                    dnums.scatter_indices_batching_dims, "scatter_indices_batching_dims")
    dropped = set(dnums.inserted_window_dims) | set(dnums.operand_batching_dims)
    if len(dropped) != len(dnums.inserted_window_dims) + len(dnums.operand_batching_dims):
        raise TypeError(f"{name}: inserted_window_dims {dnums.inserted_window_dims} and "
                        f"operand_batching_dims {dnums.operand_batching_dims} must not share a "
                        "dimension.")
    if len(dnums.update_window_dims) + len(dropped) != operand.ndim:
        raise TypeError(f"{name}: update_window_dims {dnums.update_window_dims}, "
                        f"inserted_window_dims {dnums.inserted_window_dims} and "
                        f"operand_batching_dims {dnums.operand_batching_dims} must together "
                        f"cover the {operand.ndim} dimensions of {where}.")
    sdod = dnums.scatter_dims_to_operand_dims
    _check_dim_list(name, "scatter_dims_to_operand_dims", sdod, operand.ndim,
                    increasing=False, where=where)
    _check_index_vector("Scatter", "scatter_dims_to_operand_dims", sdod, indices)
    if set(sdod) & set(dnums.operand_batching_dims):
        raise TypeError(f"{name}: scatter_dims_to_operand_dims {sdod} must not name the "
                        f"operand_batching_dims {dnums.operand_batching_dims}.")
    window_operand_dims = [d for d in range(operand.ndim) if d not in dropped]
    for u, o in zip(dnums.update_window_dims, window_operand_dims):
        if updates.shape[u] > operand.shape[o]:
            raise TypeError(f"Bounds of the window dimensions of updates must not exceed the "
                            f"bounds of the corresponding dimensions of operand. For "
                            f"dimension {u}, updates bound is {updates.shape[u]}, operand "
                            f"bound is {operand.shape[o]} ({name}).")
    scatter_dims = [d for d in range(updates.ndim) if d not in dnums.update_window_dims]
    for k, (d, bound) in enumerate(zip(scatter_dims, indices.shape[:-1])):
        if updates.shape[d] != bound:
            raise TypeError(f"Bounds of the scatter dimensions of updates must be the same as "
                            f"the bounds of the corresponding dimensions of scatter indices. "
                            f"For scatter dimension {k}, updates bound is {updates.shape[d]}, "
                            f"scatter_indices bound is {bound} ({name}).")


def gather_dnums_of_scatter(d: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    """The gather that reads what a scatter with these dimension numbers writes."""
    return GatherDimensionNumbers(d.update_window_dims, d.inserted_window_dims,
                                  d.scatter_dims_to_operand_dims, d.operand_batching_dims,
                                  d.scatter_indices_batching_dims)


def scatter_dnums_of_gather(d: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    """The scatter that writes where a gather with these dimension numbers reads."""
    return ScatterDimensionNumbers(d.offset_dims, d.collapsed_slice_dims, d.start_index_map,
                                   d.operand_batching_dims, d.start_indices_batching_dims)


def scatter_slice_sizes(operand_shape: Sequence[int], updates_shape: Sequence[int],
                        d: ScatterDimensionNumbers) -> tuple[int, ...]:
    """The gather slice sizes of a scatter's windows (1 where windows are inserted)."""
    dropped = set(d.inserted_window_dims) | set(d.operand_batching_dims)
    windows = iter(updates_shape[u] for u in d.update_window_dims)
    return tuple(1 if k in dropped else next(windows) for k in range(len(operand_shape)))


# ------------------------------------------------------------------- numpy semantics

def _window_positions(shape: Sequence[int], indices: np.ndarray, window_sizes: Sequence[int],
                      start_map: Sequence[int], batching: Sequence[int],
                      index_batching: Sequence[int]) -> tuple[list[np.ndarray], np.ndarray]:
    """Operand positions of every window element, laid out as (index batch..., window...).

    `window_sizes` has one entry per operand dimension (1 for collapsed ones). Returns one
    index array per operand dimension (clamped into range) and, per window, whether it was
    entirely inside the operand before clamping.
    """
    indices = np.asarray(indices).astype(np.int64)
    batch_shape, rank = indices.shape[:-1], len(shape)
    starts = np.zeros(batch_shape + (rank,), np.int64)
    for k, d in enumerate(start_map):
        starts[..., d] = indices[..., k]
    for operand_dim, index_dim in zip(batching, index_batching):
        line = np.arange(batch_shape[index_dim])
        starts[..., operand_dim] = line.reshape(
            [-1 if i == index_dim else 1 for i in range(len(batch_shape))])
    upper = np.array(shape, np.int64) - np.array(window_sizes, np.int64)
    inside = np.all((starts >= 0) & (starts <= upper), axis=-1)
    # Windows are clamped for addressing in every mode; `inside` tells the caller which to
    # fill or drop.
    starts = np.clip(starts, 0, np.maximum(upper, 0))
    nb, positions = len(batch_shape), []
    for d in range(rank):
        start = starts[..., d].reshape(batch_shape + (1,) * rank)
        offset = np.arange(window_sizes[d]).reshape(
            (1,) * nb + tuple(-1 if i == d else 1 for i in range(rank)))
        positions.append(start + offset)
    return positions, inside


def gather_numpy(operand: np.ndarray, indices: np.ndarray, dnums: GatherDimensionNumbers,
                 slice_sizes: Sequence[int], mode: GatherScatterMode,
                 fill_value: Any) -> np.ndarray:
    """A gather in numpy, with JAX's out-of-bounds semantics for `mode`."""
    operand = np.asarray(operand)
    out_shape = gather_shape(ShapedArray(operand.shape, operand.dtype),
                             ShapedArray(np.shape(indices), np.asarray(indices).dtype),
                             dnums, slice_sizes)
    dropped = set(dnums.collapsed_slice_dims) | set(dnums.operand_batching_dims)
    if operand.size == 0 or any(slice_sizes[d] == 0 for d in dropped):
        fill = 0 if mode is not GatherScatterMode.FILL_OR_DROP else fill_value
        return np.full(out_shape, fill, operand.dtype)
    positions, inside = _window_positions(
        operand.shape, indices, slice_sizes, dnums.start_index_map,
        dnums.operand_batching_dims, dnums.start_indices_batching_dims)
    gathered = operand[tuple(positions)]
    nb = np.ndim(indices) - 1
    if mode is GatherScatterMode.FILL_OR_DROP:
        keep = inside.reshape(inside.shape + (1,) * operand.ndim)
        gathered = np.where(keep, gathered, np.asarray(fill_value).astype(operand.dtype))
    # (batch..., one axis per operand dim) -> drop collapsed axes -> output order.
    kept = [d for d in range(operand.ndim) if d not in dropped]
    gathered = gathered.reshape(gathered.shape[:nb] + tuple(slice_sizes[d] for d in kept))
    gathered = np.moveaxis(gathered, list(range(nb, nb + len(kept))), list(dnums.offset_dims))
    return np.array(gathered.reshape(out_shape))


def scatter_targets(operand_shape: Sequence[int], indices: np.ndarray,
                    updates_shape: Sequence[int], dnums: ScatterDimensionNumbers,
                    mode: GatherScatterMode) -> tuple[np.ndarray, np.ndarray]:
    """For each update element (in C order), its flat operand position and whether it is
    applied (windows outside the operand are dropped, unless CLIP moves them inside)."""
    window_sizes = scatter_slice_sizes(operand_shape, updates_shape, dnums)
    count = int(np.prod(updates_shape, dtype=np.int64))
    if count == 0 or any(s == 0 for s in operand_shape):
        return np.zeros(count, np.int64), np.zeros(count, bool)
    positions, inside = _window_positions(
        operand_shape, indices, window_sizes, dnums.scatter_dims_to_operand_dims,
        dnums.operand_batching_dims, dnums.scatter_indices_batching_dims)
    if mode is GatherScatterMode.CLIP:
        inside = np.ones_like(inside)
    nb, rank = np.ndim(indices) - 1, len(operand_shape)
    full_shape = tuple(np.shape(indices)[:-1]) + tuple(window_sizes)
    flat = np.ravel_multi_index([np.broadcast_to(p, full_shape) for p in positions],
                                tuple(operand_shape))
    keep = np.broadcast_to(inside.reshape(inside.shape + (1,) * rank), full_shape)
    # (batch..., one axis per operand dim) -> drop inserted axes -> updates order.
    dropped = set(dnums.inserted_window_dims) | set(dnums.operand_batching_dims)
    kept = [d for d in range(rank) if d not in dropped]
    squeezed = full_shape[:nb] + tuple(window_sizes[d] for d in kept)
    src, dst = list(range(nb, nb + len(kept))), list(dnums.update_window_dims)
    flat = np.moveaxis(flat.reshape(squeezed), src, dst).reshape(-1)
    keep = np.moveaxis(keep.reshape(squeezed), src, dst).reshape(-1)
    return flat, keep


def occurrence_rank(targets: np.ndarray) -> np.ndarray:
    """For each entry, how many earlier entries have the same target."""
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    first = np.ones(len(targets), bool)
    first[1:] = ordered[1:] != ordered[:-1]
    positions = np.arange(len(targets))
    rank = np.empty(len(targets), np.int64)
    rank[order] = positions - np.maximum.accumulate(np.where(first, positions, 0))
    return rank


def scatter_numpy(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray,
                  dnums: ScatterDimensionNumbers, mode: GatherScatterMode,
                  combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """A scatter in numpy: `out[t] = combine(out[t], u)` for each kept update, in order, so
    that updates to one position apply one after another (the last `set` wins)."""
    out = np.array(operand, copy=True, order="C")  # C order: `flat` below is a view
    updates = np.asarray(updates)
    targets, keep = scatter_targets(out.shape, indices, updates.shape, dnums, mode)
    targets, values = targets[keep], updates.reshape(-1)[keep]
    if not len(targets):
        return out
    flat = out.reshape(-1)
    rank = occurrence_rank(targets)
    for r in range(int(rank.max()) + 1):
        chosen = rank == r
        where = targets[chosen]
        flat[where] = np.asarray(combine(flat[where], values[chosen])).astype(out.dtype)
    return out
