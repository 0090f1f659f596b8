"""Index tricks: the objects `mgrid`, `ogrid`, `r_`, `c_`, and numpy's `s_`, `index_exp`.

Mirrors `jax.numpy.mgrid`, `ogrid`, `r_` and `c_`, which read slice notation:
`mgrid[0:3, 0:1:5j]` is a dense grid (a complex step means "this many points, end
included"), `ogrid` a sparse one, `r_[1:4, 0, [5, 6]]` joins slices, scalars and arrays
along an axis, with numpy's optional leading directive string ("axis,ndmin,trans1d", or
"r" / "c" for a row or column result); `c_` is `r_` with the directive "-1,2,0". As in JAX,
`s_` and `index_exp` are numpy's own objects, since they build indices, not arrays.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.numpy._creation import arange, array, linspace
from jaxlite.numpy._grids import meshgrid
from jaxlite.numpy._promotion import promote_dtypes
from jaxlite.numpy._shape import concatenate, stack, transpose

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp"]

s_ = np.s_
index_exp = np.index_exp


def _slice_values(item: slice, fun_name: str) -> Any:
    """The 1-d array that a slice of `mgrid`/`r_` stands for."""
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    stop = item.stop
    if stop is None:
        raise ValueError(f"{fun_name}: a slice needs a stop value, got {item}.")
    if isinstance(step, complex) or np.iscomplexobj(step):
        # A complex step is a sample count with the end included, as in linspace.
        return linspace(start, stop, int(abs(step)), endpoint=True)
    return arange(start, stop, step)


class _Grid:
    """`mgrid` (dense) and `ogrid` (sparse): coordinate grids from slice notation."""

    def __init__(self, sparse: bool, name: str) -> None:
        self.sparse = sparse
        self.name = name

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _slice_values(key, self.name)
        if not isinstance(key, tuple) or not all(isinstance(k, slice) for k in key):
            raise TypeError(f"jnp.{self.name}[...] takes slices, like {self.name}[0:3, "
                            f"0:1:5j]; got {key!r}.")
        axes = promote_dtypes(*[_slice_values(k, self.name) for k in key])
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return grids
        return stack(grids, 0) if grids else array([], dtype=np.int32)

    def __repr__(self) -> str:
        return f"jaxlite.numpy.{self.name}"


def _parse_directive(text: str, defaults: tuple[int, int, int],
                     fun_name: str) -> tuple[int, int, int, str | None]:
    """(axis, ndmin, trans1d, matrix) from a leading string of `r_` / `c_`."""
    if text in ("r", "c"):
        return defaults[0], defaults[1], defaults[2], text
    parts = text.split(",")
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"{fun_name}: directive {text!r} must be 'r', 'c' or "
                         "'axis[,ndmin[,trans1d]]'.")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise ValueError(f"{fun_name}: could not read the directive {text!r}; expected "
                         "integers 'axis[,ndmin[,trans1d]]'.") from None
    axis, ndmin, trans1d = values + list(defaults[len(values):])
    return axis, ndmin, trans1d, None


def _with_ndmin(item: Any, ndmin: int, trans1d: int) -> Any:
    """`item` with at least `ndmin` axes; its own axes go where `trans1d` says."""
    value = array(item, ndmin=ndmin)
    item_ndim = np.ndim(item)
    if trans1d == -1 or item_ndim >= ndmin:
        return value
    added = ndmin - item_ndim
    first = trans1d + added + 1 if trans1d < 0 else trans1d
    order = list(range(ndmin))
    return transpose(value, order[:first] + order[added:] + order[first:added])


class _Concatenator:
    """`r_` and `c_`: join slices, scalars and arrays along an axis."""

    def __init__(self, name: str, defaults: tuple[int, int, int]) -> None:
        self.name = name
        self.defaults = defaults

    def __getitem__(self, key: Any) -> Any:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.defaults
        matrix = None
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d, matrix = _parse_directive(items.pop(0), self.defaults,
                                                             self.name)
        if not items:
            raise IndexError(f"jnp.{self.name}[...] needs at least one item to join.")
        pieces = []
        for item in items:
            if isinstance(item, str):
                raise ValueError(f"jnp.{self.name}: a directive string may only come "
                                 f"first; got {item!r} later.")
            if isinstance(item, slice):
                item = _slice_values(item, self.name)
            elif dtypes.is_python_scalar(item):
                item = array(item)  # weak, so that it takes the dtype of the others
            pieces.append(_with_ndmin(item, ndmin, trans1d))
        out = concatenate(pieces, axis)
        if matrix is not None and out.ndim == 1:
            # numpy's matrix directives: a 1-d result becomes a row, or a column for "c".
            out = array(out, ndmin=2)
            out = transpose(out) if matrix == "c" else out
        return out

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"jaxlite.numpy.{self.name}"


mgrid = _Grid(sparse=False, name="mgrid")
ogrid = _Grid(sparse=True, name="ogrid")
r_ = _Concatenator("r_", (0, 1, -1))
c_ = _Concatenator("c_", (-1, 2, 0))
