"""`x.at[idx]`: functional indexed updates (mirrors JAX's `_IndexUpdateHelper` and
`_IndexUpdateRef`).

`x.at[idx].set(y)` is the pure form of `x[idx] = y`; `add`, `subtract`, `multiply` (`mul`),
`divide`, `power`, `min`, `max` combine instead of replacing, `apply(f)` applies a unary
function, and `get()` reads as `x[idx]` does, with gather options. The index is analysed as
for `x[idx]` (`_indexing.gather_plan`), and the update is one scatter of `lax`. As in JAX,
repeated indices all apply (numpy applies only the last); `set` keeps the last update; the
default `mode` drops out-of-bounds updates (FILL_OR_DROP); the values are promoted with `x`,
combined, and the result is cast back to `x`'s dtype (with a FutureWarning when the values
do not cast safely); `divide` and `power` scatter-multiply the divisors (exponents) into ones
and then divide (raise) `x` by the result, so repeated indices multiply them.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
from jaxlite.errors import warn_at_user
from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.numpy import _indexing, _ufuncs
from jaxlite.numpy._creation import array
from jaxlite.numpy._promotion import ensure_array, promote_dtypes

__all__: list[str] = []

Scatter = Callable[..., Any]


def _values_like(x: Any, values: Any) -> Any:
    if isinstance(values, (list, tuple)):
        return array(values)  # a sequence may hold traced values, as JAX accepts
    if (isinstance(values, int) and not isinstance(values, bool)
            and dtypes.is_integer(x.dtype)):
        info = np.iinfo(x.dtype)
        if info.min <= values <= info.max:
            return np.asarray(values, x.dtype)
    return values


_NUMERIC_SCATTERS = {lax.scatter_add: "add", lax.scatter_mul: "mul", lax.scatter_sub: "sub"}


def _scatter_update(x: Any, index: Any, values: Any, scatter: Scatter, name: str, *,
                    indices_are_sorted: bool, unique_indices: bool, mode: Any,
                    wrap_negative_indices: bool) -> Any:
    """`x[index] op= values` as one scatter (see the module docstring)."""
    x = ensure_array(x)
    values = _values_like(x, values)
    dtype, weak = x.dtype, get_aval(x).weak_type
    if dtypes.result_type(x, values) != dtype:
        warn_at_user(f"scatter inputs have incompatible types: cannot safely cast value from "
                      f"dtype={dtypes.dtype(values)} to dtype={dtype}. In future JAX releases "
                      "this will result in an error.", FutureWarning)
    operand, entries, added = _indexing.parse_index(x, index)
    shape = get_aval(operand).shape
    plan_shape = _indexing.indexed_shape(shape, entries)
    if not int(np.prod(plan_shape)) or _indexing.indexed_axes_empty(shape, entries):
        _indexing.check_empty_axes(shape, entries, reads=False)   # scalars: IndexError
        if dtype == np.bool_ and scatter in _NUMERIC_SCATTERS and int(np.prod(plan_shape)):
            # JAX's combiner (lax.add, lax.mul) rejects bool even when nothing is written
            # (but JAX skips the scatter when the selection is empty).
            op = _NUMERIC_SCATTERS[scatter]
            raise TypeError(f"{op} does not accept dtype bool at position 0. Accepted dtypes "
                            "at position 0 are subtypes of integer, floating, complexfloating.")
        return x
    plan = _indexing.gather_plan(shape, entries, wrap_negative_indices)
    operand, updates = promote_dtypes(operand, values)
    update_shape = tuple(np.shape(updates))
    try:
        fits = np.broadcast_shapes(update_shape, plan.final_shape) == plan.final_shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"x.at[idx].{name}: values of shape {update_shape} cannot be "
                         f"broadcast to the indexed shape {plan.final_shape}.")
    if update_shape != plan.final_shape:
        lead = len(plan.final_shape) - len(update_shape)
        updates = lax.broadcast_in_dim(updates, plan.final_shape,
                                       tuple(range(lead, len(plan.final_shape))))
    updates = lax.reshape(updates, plan.gather_shape)
    d = plan.dnums
    dnums = lax.ScatterDimensionNumbers(d.offset_dims, d.collapsed_slice_dims,
                                        d.start_index_map)
    out = scatter(operand, plan.indices, updates, dnums,
                  indices_are_sorted=indices_are_sorted or plan.basic,
                  unique_indices=unique_indices or plan.basic, mode=mode)
    if added:
        out = lax.squeeze(out, added)
    return lax._convert_element_type(out, dtype, weak_type=weak)


class _IndexUpdateHelper:
    """The `at` property of arrays: `x.at[idx]` gives an `_IndexUpdateRef` (mirrors JAX).

    ==============================  ================================
    x = x.at[idx].set(y)            x[idx] = y
    x = x.at[idx].add(y)            x[idx] += y
    x = x.at[idx].subtract(y)       x[idx] -= y
    x = x.at[idx].multiply(y)       x[idx] *= y
    x = x.at[idx].divide(y)         x[idx] /= y
    x = x.at[idx].power(y)          x[idx] **= y
    x = x.at[idx].min(y)            x[idx] = minimum(x[idx], y)
    x = x.at[idx].max(y)            x[idx] = maximum(x[idx], y)
    x = x.at[idx].apply(ufunc)      ufunc.at(x, idx)
    x = x.at[idx].get()             x = x[idx]
    ==============================  ================================

    `mode` is "promise_in_bounds", "clip", "drop" or "fill" (see `lax.GatherScatterMode`);
    updates default to dropping out-of-bounds indices, `get` to clamping them.
    """

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """`x.at[idx]`: the methods return updated copies of `x` (mirrors JAX)."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any) -> None:
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None, out_sharding: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        """`x[idx]`, with gather options: `mode="fill"` returns `fill_value` (NaN by
        default) for out-of-bounds indices."""
        _check_sharding(out_sharding)
        return _indexing.getitem(self.array, self.index, mode=mode, fill_value=fill_value,
                                 indices_are_sorted=indices_are_sorted,
                                 unique_indices=unique_indices,
                                 wrap_negative_indices=wrap_negative_indices)

    def _update(self, values: Any, scatter: Scatter, name: str, options: dict) -> Any:
        _check_sharding(options.pop("out_sharding", None))
        return _scatter_update(self.array, self.index, values, scatter, name, **options)

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None, out_sharding: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        """The pure form of `x[idx] = values`."""
        return self._update(values, lax.scatter, "set", _options(locals()))

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None,
              wrap_negative_indices: bool = True) -> Any:
        """The pure form of `func.at(x, idx)`: `func` applied once per occurrence of each
        index. As in JAX, not differentiable."""
        options = _options(locals(), ("func",))

        def scatter(x: Any, indices: Any, updates: Any, dnums: Any, **options: Any) -> Any:
            return lax.scatter_apply(x, indices, func, dnums, update_shape=np.shape(updates),
                                     **options)
        return self._update(np.zeros((), self.array.dtype), scatter, "apply", options)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None, out_sharding: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        """The pure form of `x[idx] += values`."""
        return self._update(values, lax.scatter_add, "add", _options(locals()))

    def subtract(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None, out_sharding: Any = None,
                 wrap_negative_indices: bool = True) -> Any:
        """The pure form of `x[idx] -= values`."""
        return self._update(values, lax.scatter_sub, "subtract", _options(locals()))

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None, out_sharding: Any = None,
                 wrap_negative_indices: bool = True) -> Any:
        """The pure form of `x[idx] *= values`."""
        return self._update(values, lax.scatter_mul, "multiply", _options(locals()))

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None, out_sharding: Any = None,
               wrap_negative_indices: bool = True) -> Any:
        """The pure form of `x[idx] /= values`."""
        options = _options(locals())
        _check_sharding(options.pop("out_sharding"))
        ones = lax.full_like(self.array, 1)
        divisors = _scatter_update(ones, self.index, values, lax.scatter_mul, "divide",
                                   **options)
        return _ufuncs.divide(self.array, divisors)

    def power(self, values: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None, out_sharding: Any = None,
              wrap_negative_indices: bool = True) -> Any:
        """The pure form of `x[idx] **= values`."""
        options = _options(locals())
        _check_sharding(options.pop("out_sharding"))
        ones = lax.full_like(self.array, 1)
        exponents = _scatter_update(ones, self.index, values, lax.scatter_mul, "power",
                                    **options)
        return _ufuncs.power(self.array, exponents)

    def min(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None, out_sharding: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        """The pure form of `x[idx] = minimum(x[idx], values)`."""
        return self._update(values, lax.scatter_min, "min", _options(locals()))

    def max(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None, out_sharding: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        """The pure form of `x[idx] = maximum(x[idx], values)`."""
        return self._update(values, lax.scatter_max, "max", _options(locals()))


def _options(names: dict, drop: tuple[str, ...] = ()) -> dict:
    """The keyword options of an `_IndexUpdateRef` method, from its `locals()`."""
    return {k: v for k, v in names.items() if k not in ("self", "values") + drop}


def _check_sharding(out_sharding: Any) -> None:
    if out_sharding is not None:
        raise NotImplementedError("x.at[...]: out_sharding is not supported by jaxlite (it "
                                  "has one device); leave it None.")


def at_property(x: Any) -> _IndexUpdateHelper:
    """The `at` property of arrays and tracers."""
    return _IndexUpdateHelper(x)
