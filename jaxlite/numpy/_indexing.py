"""numpy indexing `x[idx]`, and the index analysis that `x.at[idx]` shares.

Mirrors numpy's indexing as `jax.numpy` implements it. Basic indices (integers, slices with
any step, `None`, `...`) become one `lax.slice`, a `lax.rev` for negative steps and a
`lax.reshape`. Traced integer scalars become a `lax.dynamic_slice`. Advanced indices
(integer arrays, boolean masks, lists) become one `lax.gather`: boolean masks are turned
into integer arrays with `nonzero` (so they must be concrete: under `jit` they raise
`NonConcreteBooleanIndexError`, as in JAX), and the result dimensions follow numpy's rule:
the broadcast shape of the advanced indices replaces them in place when they are adjacent,
and goes first when they are separated by a slice, an ellipsis or `None`.

`gather_plan` describes any index as one gather (or scatter): unit-step slices are windows,
other slices index dimensions (an iota), and integers and arrays index vectors. Negative
indices count from the end. Out-of-bounds array indices follow the gather mode: `x[idx]`
uses PROMISE_IN_BOUNDS, which clamps, as in JAX.

Differences from JAX: an out-of-bounds static Python integer raises IndexError, as in numpy
(JAX clamps it like an array index).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.core.shape_poly import is_symbolic_dim, slice_indices
from jaxlite.core.sharding_rules import check_static_index
from jaxlite.core.trace import Tracer
from jaxlite.errors import NonConcreteBooleanIndexError
from jaxlite.numpy._creation import asarray
from jaxlite.numpy._promotion import ensure_array, host_to_array, is_jax_array

# Installed as Array and tracer methods by _operators; not part of the jnp namespace.
__all__: list[str] = []

NEW, SLICE, INT, DYNAMIC, ARRAY = "new", "slice", "int", "dynamic", "array"
_PROMISE = lax.GatherScatterMode.PROMISE_IN_BOUNDS


@dataclass
class Entry:
    """One index entry after parsing: `new` (None), `slice` (a static slice), `int` (a static
    integer), `dynamic` (an integer 0-d array) or `array` (an integer array)."""

    kind: str
    value: Any = None


@dataclass
class GatherPlan:
    """An index as one gather: `indices` (index batch dims + index vector), the dimension
    numbers and slice sizes, the gather's output shape and the final shape (with the new
    axes of `None`); `basic` is True when no integer array takes part."""

    indices: Any
    dnums: lax.GatherDimensionNumbers
    slice_sizes: tuple[int, ...]
    gather_shape: tuple[int, ...]
    final_shape: tuple[int, ...]
    basic: bool


# -------------------------------------------------------------------------- parsing

def _concrete(x: Any) -> np.ndarray | None:
    if isinstance(x, Tracer):
        return x.concrete_value()
    return np.asarray(x)


def _bool_entries(mask: Any, aval_text: str) -> list[Entry]:
    value = _concrete(mask)
    if value is None:
        raise NonConcreteBooleanIndexError(
            f"Array boolean indices must be concrete; got {aval_text}\n\nUse jnp.where(mask, "
            "x, fill) to select without changing the shape, or take the mask out of jit.")
    if value.ndim == 0:
        return [Entry("scalar_bool", bool(value))]
    return [Entry(ARRAY, np.asarray(i)) for i in np.nonzero(value)]


def _entry_kinds(entry: Any) -> list[Entry]:
    """The parsed entries one raw index entry stands for (a mask stands for several)."""
    if entry is None:
        return [Entry(NEW)]
    if entry is Ellipsis:
        return [Entry("ellipsis")]
    if isinstance(entry, slice):
        return [Entry(SLICE, entry)]
    if isinstance(entry, (bool, np.bool_)):
        return [Entry("scalar_bool", bool(entry))]
    if isinstance(entry, (int, np.integer)):
        return [Entry(INT, operator.index(entry))]
    if isinstance(entry, str):
        raise TypeError(f"jaxlite does not support string indexing; got idx={entry!r}")
    if isinstance(entry, (list, tuple)):
        try:
            entry = np.asarray(entry)
        except TypeError:  # a list holding traced values
            entry = asarray(entry)
        if isinstance(entry, np.ndarray) and entry.size == 0:
            entry = entry.astype(np.int32)  # numpy reads an empty list as integer indices
        if isinstance(entry, np.ndarray) and entry.dtype == object:
            raise TypeError(f"Unsupported index {entry!r}: lists must hold integers or "
                            "booleans.")
    if isinstance(entry, np.ndarray) or is_jax_array(entry):
        dtype = np.dtype(entry.dtype)
        if dtype == np.bool_:
            aval = getattr(entry, "aval", None)
            return _bool_entries(entry, aval.str_short() if aval is not None
                                 else f"bool{list(entry.shape)}")
        if not dtypes.is_integer(dtype):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with "
                            f"type {dtype.name}")
        if np.ndim(entry) == 0:
            return [Entry(INT, int(entry)) if isinstance(entry, np.ndarray)
                    else Entry(DYNAMIC, entry)]
        return [Entry(ARRAY, entry)]
    if isinstance(entry, (float, np.floating, complex)):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{type(entry).__name__}")
    raise TypeError(f"Unsupported index {entry!r} of type {type(entry).__name__}; expected an "
                    "integer, a slice, None, Ellipsis or an integer or boolean array.")


def _raw_entries(index: Any) -> list[Any]:
    if isinstance(index, tuple):
        return list(index)
    if isinstance(index, list):
        nested = any(isinstance(e, (list, tuple, slice, np.ndarray)) or e is None
                     or e is Ellipsis or (is_jax_array(e) and np.ndim(e) > 0) for e in index)
        hint = "`arr[tuple(seq)]`" if nested else "`arr[array(seq)]`"
        raise TypeError(f"Using a non-tuple sequence for multidimensional indexing is not "
                        f"allowed; use {hint} instead of `arr[seq]`.")
    return [index]


def parse_index(x: Any, index: Any) -> tuple[Any, list[Entry], tuple[int, ...]]:
    """`x` (with a size-1 axis added per scalar boolean) and the index as one parsed entry
    per dimension or new axis, the ellipsis expanded; also the axes added to `x`."""
    entries = [e for raw in _raw_entries(index) for e in _entry_kinds(raw)]
    ellipses = sum(1 for e in entries if e.kind == "ellipsis")
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for e in entries if e.kind not in (NEW, "ellipsis", "scalar_bool"))
    ndim = np.ndim(x)
    if used > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {used} were "
                         "indexed")
    fill = [Entry(SLICE, slice(None)) for _ in range(ndim - used)]
    if ellipses:
        at = next(i for i, e in enumerate(entries) if e.kind == "ellipsis")
        entries[at:at + 1] = fill
    else:
        entries += fill
    # A scalar boolean indexes a new axis of size 1 with [0] (True) or [] (False).
    added, out, axis = [], [], 0
    for e in entries:
        if e.kind == "scalar_bool":
            added.append(axis)
            e = Entry(ARRAY, np.zeros(1 if e.value else 0, np.int32))
        out.append(e)
        axis += e.kind != NEW
    if added:
        x = lax.expand_dims(ensure_array(x), added)
    return x, out, tuple(added)


def _static_bound(value: Any, position: int, entry: slice) -> int | None:
    if value is None:
        return None
    if isinstance(value, Tracer) and value.concrete_value() is None:
        raise IndexError(f"Slice entries must be static integers. Got {entry} at position "
                         f"{position}")
    return value if is_symbolic_dim(value) else operator.index(value)


def slice_bounds(entry: slice, size: int, position: int = 0) -> tuple[int, int, int]:
    """(start, step, count) of a slice over an axis of `size`."""
    start, stop, step = (_static_bound(v, position, entry)
                         for v in (entry.start, entry.stop, entry.step))
    if step == 0:
        raise ValueError("slice step cannot be zero")
    return slice_indices(start, stop, step, size)


# ------------------------------------------------------------------ basic and dynamic

def _basic(x: Any, entries: Sequence[Entry]) -> Any:
    """Static slices, static integers and new axes: slice, reverse, reshape."""
    starts, limits, strides, reversed_axes, out_shape = [], [], [], [], []
    axis = 0
    for position, entry in enumerate(entries):
        if entry.kind == NEW:
            out_shape.append(1)
            continue
        size = x.shape[axis]
        if entry.kind == SLICE:
            start, step, count = slice_bounds(entry.value, size, position)
            if count == 0:
                low, high, stride = 0, 0, 1
            elif step > 0:
                low, high, stride = start, start + (count - 1) * step + 1, step
            else:
                low, high, stride = start + (count - 1) * step, start + 1, -step
                if count > 1:
                    reversed_axes.append(axis)
            out_shape.append(count)
        else:
            low = _checked_int(entry.value, axis, size) % size
            high, stride = low + 1, 1
        starts.append(low)
        limits.append(high)
        strides.append(stride)
        axis += 1
    check_static_index(x, starts, limits)
    out = x
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        out = lax.slice(out, starts, limits, None if set(strides) <= {1} else strides)
    if reversed_axes:
        out = lax.rev(out, reversed_axes)
    return lax.reshape(out, tuple(out_shape))


def _clamped_static_ints(entries: list[Entry], shape: Sequence[int]) -> list[Entry]:
    """The static integer entries clamped into their axes, as JAX's default gather mode
    clamps (negative ones count from the end first); an empty axis raises IndexError."""
    out, axis = [], 0
    advanced = any(e.kind == ARRAY for e in entries)
    for e in entries:
        if e.kind == INT:
            size = shape[axis]
            if size == 0 and advanced:  # an int among index arrays is one of them (see
                out.append(e)           # check_empty_axes)
                axis += 1
                continue
            if size == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            value = e.value + size if e.value < 0 else e.value
            e = Entry(INT, min(max(value, 0), size - 1))
        out.append(e)
        axis += e.kind != NEW
    return out


def _checked_int(value: int, axis: int, size: int) -> int:
    if not -size <= value < size:
        raise IndexError(f"index {value} is out of bounds for axis {axis} with size {size}")
    return value


def _dynamic(x: Any, entries: list[Entry], wrap: bool) -> tuple[Any, list[Entry]]:
    """Apply the dynamic scalar entries with one dynamic_slice (each becomes a static 0)."""
    starts: list[Any] = []
    sizes, out, axis = [], [], 0
    for entry in entries:
        if entry.kind == NEW:
            out.append(entry)
            continue
        dynamic = entry.kind == DYNAMIC
        if dynamic and x.shape[axis] == 0:
            raise IndexError(f"index is out of bounds for axis {axis} with size 0")
        starts.append(entry.value if dynamic else 0)
        sizes.append(1 if dynamic else x.shape[axis])
        out.append(Entry(INT, 0) if dynamic else entry)
        axis += 1
    if len(starts) > 1:
        # As JAX: with several starts, each is first converted to the shape's index type, so
        # an int8 -1 counts from the end of a long axis and an int64 2**32 + 3 wraps to 3
        # (a single start keeps its own type: int8 -1 on 200 elements clamps to 0).
        wide = any(not is_symbolic_dim(d) and d >= 2**31 for d in x.shape)
        index_dtype = dtypes.canonicalize_dtype(np.int64 if wide else np.int32)
        starts = [s if isinstance(s, int) else lax.convert_element_type(s, index_dtype)
                  for s in starts]
    return lax.dynamic_slice(x, starts, sizes, allow_negative_indices=wrap), out


# ------------------------------------------------------------------------ gather plans

def _index_dtype(entries: Sequence[Entry], shape: Sequence[int]) -> np.dtype:
    # From the shape alone, as JAX: an int64 index into a small array becomes int32 (its
    # high bits dropped, after negatives count from the end), so 2**63 - 1 reads index 0.
    wide = any(not is_symbolic_dim(d) and d >= 2**31 for d in shape)
    return dtypes.canonicalize_dtype(np.int64 if wide else np.int32)


def _index_values(value: Any, size: int, wrap: bool, dtype: np.dtype) -> Any:
    """An integer index (array or scalar) in `dtype`, negative entries counted from the end
    when `wrap`; concrete values are wrapped on the host.

    As in JAX, a signed index counts from the end with the axis size in the index's own
    dtype, so an axis too long for that dtype (an int8 index into 200 entries) raises
    numpy's OverflowError rather than wrapping silently."""
    index_dtype = np.dtype(getattr(value, "dtype", np.int64))
    if (wrap and index_dtype.kind == "i"
            and size > np.iinfo(dtypes.canonicalize_dtype(index_dtype)).max):
        raise OverflowError(f"Python integer {size} out of bounds for "
                            f"{np.dtype(dtypes.canonicalize_dtype(index_dtype)).name}")
    if not isinstance(value, Tracer):
        host = np.asarray(value).astype(np.int64)
        if wrap:
            host = np.where(host < 0, host + size, host)
        return host_to_array(host, dtype)
    if wrap and not dtypes.is_unsigned(value.dtype):
        # Negatives count from the end in the index's own dtype, then the index type is
        # converted (JAX's order: it matters when the conversion drops high bits).
        own = value.dtype
        value = lax.select(lax.lt(value, np.zeros((), own)),
                           lax.add(value, np.asarray(size, own)), value)
    return lax.convert_element_type(value, dtype)


@dataclass
class _Layout:
    """Where an index puts things. `items` lists the result dimensions in numpy's order:
    ("adv",) for the broadcast advanced indices (shape `batch`), ("window", axis, count) for
    unit-step slices, ("iota", axis, count, start, step) for other slices, ("new",) for None.
    `components` has one (operand axis, kind, payload) per index vector entry."""

    items: list[tuple]
    batch: tuple[int, ...]
    components: list[tuple[int, str, Any]]
    slice_sizes: list[int]

    def shape(self, with_new: bool) -> tuple[int, ...]:
        out: list[int] = []
        for item in self.items:
            if item[0] == "new":
                out += [1] if with_new else []
            else:
                out += list(self.batch) if item[0] == "adv" else [item[2]]
        return tuple(out)


def _layout(shape: Sequence[int], entries: Sequence[Entry]) -> _Layout:
    advanced = [i for i, e in enumerate(entries) if e.kind in (INT, DYNAMIC, ARRAY)]
    arrays = [np.shape(e.value) for e in entries if e.kind == ARRAY]
    batch = tuple(np.broadcast_shapes(*arrays)) if arrays else ()
    items: list[tuple] = []
    components: list[tuple[int, str, Any]] = []
    sizes, axis = list(shape), 0
    for position, entry in enumerate(entries):
        if entry.kind == NEW:
            items.append(("new",))
            continue
        if entry.kind == SLICE:
            start, step, count = slice_bounds(entry.value, shape[axis], position)
            if step == 1 or count <= 1:
                items.append(("window", axis, count))
                sizes[axis] = count
                if start and count:
                    components.append((axis, "const", start))
            else:
                items.append(("iota", axis, count, start, step))
                sizes[axis] = 1
                components.append((axis, "iota", None))
        else:
            if position == advanced[0]:
                items.append(("adv",))
            sizes[axis] = 1
            components.append((axis, "adv", entry.value))
        axis += 1
    if advanced and advanced != list(range(advanced[0], advanced[-1] + 1)):
        # Advanced indices separated by a slice or None: their dimensions go first.
        items.insert(0, items.pop(items.index(("adv",))))
    return _Layout(items, batch, components, sizes)


def gather_plan(shape: Sequence[int], entries: Sequence[Entry], wrap: bool) -> GatherPlan:
    """The whole index as one gather over an operand of `shape` (see the module docstring).

    The index batch dimensions are the result dimensions of the advanced indices and of the
    slices that are not unit-step, in result order; unit-step slices are windows.
    """
    layout = _layout(shape, entries)
    dtype = _index_dtype(entries, shape)
    index_shape: list[int] = []
    adv_at, iota_at = 0, {}
    for item in layout.items:
        if item[0] == "adv":
            adv_at = len(index_shape)
            index_shape += layout.batch
        elif item[0] == "iota":
            iota_at[item[1]] = (len(index_shape), item[3], item[4])
            index_shape.append(item[2])
    dims = tuple(range(len(index_shape)))
    columns = []
    for axis, kind, payload in layout.components:
        if kind == "adv":
            value = _index_values(payload, shape[axis], wrap, dtype)
            lead = adv_at + len(layout.batch) - np.ndim(value)
            column = lax.broadcast_in_dim(value, tuple(index_shape),
                                          tuple(range(lead, lead + np.ndim(value))))
        elif kind == "iota":
            at, start, step = iota_at[axis]
            column = lax.add(lax.mul(lax.broadcasted_iota(dtype, index_shape, at),
                                     np.asarray(step, dtype)), np.asarray(start, dtype))
        else:
            column = lax.full(index_shape, payload, dtype)
        columns.append(lax.broadcast_in_dim(column, tuple(index_shape) + (1,), dims))
    indices = (lax.concatenate(columns, len(index_shape)) if columns
               else lax.full(tuple(index_shape) + (0,), 0, dtype))
    offset_dims, at = [], 0
    for item in layout.items:
        if item[0] == "window":
            offset_dims.append(at)
        if item[0] != "new":
            at += len(layout.batch) if item[0] == "adv" else 1
    collapsed = tuple(sorted(axis for axis, kind, _ in layout.components if kind != "const"))
    start_map = tuple(axis for axis, _, _ in layout.components)
    dnums = lax.GatherDimensionNumbers(tuple(offset_dims), collapsed, start_map)
    return GatherPlan(indices, dnums, tuple(layout.slice_sizes), layout.shape(False),
                      layout.shape(True), basic=not any(e.kind == ARRAY for e in entries))


def indexed_axes_empty(shape: Sequence[int], entries: Sequence[Entry]) -> bool:
    """Whether an axis indexed by an integer or array has size 0 (no gather can read it)."""
    axes = [e for e in entries if e.kind != NEW]
    return any(e.kind in (INT, DYNAMIC, ARRAY) and shape[i] == 0 for i, e in enumerate(axes))


# --------------------------------------------------------------------------- getitem

def _presliced(x: Any, entries: list[Entry]) -> tuple[Any, list[Entry]]:
    """Apply the static slices with lax.slice / rev; they become full slices."""
    kept = [e if e.kind == SLICE else Entry(SLICE, slice(None))
            for e in entries if e.kind != NEW]
    x = _basic(x, kept)
    return x, [Entry(SLICE, slice(None)) if e.kind == SLICE else e for e in entries]


def getitem(x: Any, index: Any, *, mode: Any = None, fill_value: Any = None,
            indices_are_sorted: bool = False, unique_indices: bool = False,
            wrap_negative_indices: bool = True) -> Any:
    """`x[index]` (the `__getitem__` of arrays and tracers, and `x.at[index].get()`).

    With the default `mode` out-of-bounds indices are clamped, static integers too (as JAX
    does, where numpy raises: JAX's control example reads `Q[T + 1]` of a length-T+1 axis);
    only an integer into an empty axis raises IndexError. An explicit `mode` (as
    `x.at[...].get` takes it) applies to every integer index.
    """
    x = ensure_array(x)
    x, entries, _ = parse_index(x, index)
    parsed = _PROMISE if mode is None else lax.GatherScatterMode.from_any(mode)
    if mode is None:
        entries = _clamped_static_ints(entries, x.shape)
    else:
        entries = [Entry(DYNAMIC, np.asarray(e.value, np.int32)) if e.kind == INT else e
                   for e in entries]
    has_arrays = any(e.kind == ARRAY for e in entries)
    has_dynamic = any(e.kind == DYNAMIC for e in entries)
    if not has_arrays and (not has_dynamic or parsed is not lax.GatherScatterMode.FILL_OR_DROP):
        if has_dynamic:
            x, entries = _dynamic(x, entries, wrap_negative_indices)
        return _basic(x, entries)
    x, entries = _presliced(x, entries)
    if indexed_axes_empty(x.shape, entries):
        plan_shape = indexed_shape(x.shape, entries)
        check_empty_axes(x.shape, entries, int(np.prod(plan_shape)) > 0)
        return lax.full_like(x, 0, shape=plan_shape)
    plan = gather_plan(x.shape, entries, wrap_negative_indices)
    if not int(np.prod(plan.gather_shape)):
        return lax.full_like(x, 0, shape=plan.final_shape)
    out = lax.gather(x, plan.indices, plan.dnums, plan.slice_sizes,
                     indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                     mode=parsed, fill_value=fill_value)
    return lax.reshape(out, plan.final_shape)


def check_empty_axes(shape: Sequence[int], entries: Sequence[Entry], reads: bool) -> None:
    """JAX's errors for indices into an axis of size 0: a scalar index raises IndexError; an
    index array raises the TypeError of a gather's slice size, unless nothing is read."""
    axes = [e for e in entries if e.kind != NEW]
    # Among index arrays, integers and 0-d arrays are advanced indices too (a gather).
    scalars = () if any(e.kind == ARRAY for e in axes) else (INT, DYNAMIC)
    for i, e in enumerate(axes):
        if shape[i] == 0 and e.kind in scalars:
            raise IndexError(f"index is out of bounds for axis {i} with size 0")
    for i, e in enumerate(axes):
        if shape[i] == 0 and e.kind in (ARRAY, INT, DYNAMIC) and reads:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                            "within [0, 0 + 1), got 1. (An index array reads an axis of "
                            "size 0.)")


def indexed_shape(shape: Sequence[int], entries: Sequence[Entry]) -> tuple[int, ...]:
    """The shape of `x[index]` for parsed entries over an operand of `shape`."""
    return _layout(shape, entries).shape(True)


def iterate(x: Any) -> Iterator[Any]:
    """Iterate over the first axis (the `__iter__` of arrays and tracers)."""
    x = ensure_array(x)
    if x.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return (getitem(x, i) for i in range(x.shape[0]))
