"""RegularGridInterpolator (mirrors `jax.scipy.interpolate.RegularGridInterpolator`):
linear or nearest-neighbour interpolation on a rectilinear grid, as scipy's, with JAX's
limits: bounds_error=True is refused (no value-dependent errors under jit) and points
outside the grid get fill_value (NaN by default; None extrapolates). The interpolator is
a pytree (its grid, values and fill value are the leaves), so it can be passed to jitted
functions.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import jaxlite.numpy as jnp
from jaxlite.numpy._promotion import check_arraylike, promote_dtypes_inexact
from jaxlite.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


def _points_array(points: Any, ndim: int) -> Any:
    """The sample points as an (..., ndim) array: from a tuple of coordinate arrays
    (broadcast together) or an array whose last axis holds the coordinates."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        parts = jnp.broadcast_arrays(*points)
        for other in parts[1:]:
            if other.shape != parts[0].shape:
                raise ValueError("coordinate arrays do not have the same shape")
        stacked = jnp.empty(parts[0].shape + (len(points),), dtype=float)
        for j, part in enumerate(parts):
            stacked = stacked.at[..., j].set(part)
        return stacked
    check_arraylike("_ndim_coords_from_arrays", points)
    points = jnp.asarray(points)
    return points.reshape(-1, ndim) if points.ndim == 1 else points


class RegularGridInterpolator:
    """Interpolation on the grid `points` (one increasing 1-d array per dimension) of
    `values` (their product's shape, plus trailing value dimensions) (mirrors
    `jax.scipy.interpolate.RegularGridInterpolator`). method 'linear' or 'nearest'."""

    def __init__(self, points: Any, values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = np.nan) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        (values,) = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not jnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """The interpolated values at the points xi (..., ndim)."""
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        shape = xi.shape
        indices, distances, outside = self._find_indices(xi.reshape(-1, shape[-1]).T)
        if method == "linear":
            result = self._evaluate_linear(indices, distances)
        else:
            result = self._evaluate_nearest(indices, distances)
        if self.fill_value is not None:
            broadcast = result.shape[:1] + (1,) * (result.ndim - 1)
            result = jnp.where(outside.reshape(broadcast), self.fill_value, result)
        return result.reshape(shape[:-1] + self.values.shape[ndim:])

    def _evaluate_linear(self, indices: list[Any], distances: list[Any]) -> Any:
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        total = jnp.asarray(0.0)
        for corner in itertools.product(*[[i, i + 1] for i in indices]):
            weight = jnp.asarray(1.0)
            for corner_index, index, distance in zip(corner, indices, distances):
                weight *= jnp.where(corner_index == index, 1 - distance, distance)
            total += self.values[corner] * weight[trailing]
        return total

    def _evaluate_nearest(self, indices: list[Any], distances: list[Any]) -> Any:
        nearest = [jnp.where(d <= 0.5, i, i + 1) for i, d in zip(indices, distances)]
        return self.values[tuple(nearest)]

    def _find_indices(self, xi: Any) -> tuple[list[Any], list[Any], Any]:
        """Per dimension: the cell of each point (clamped to the grid), its relative
        position in the cell; and which points lie outside the grid."""
        indices, distances = [], []
        outside = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.searchsorted(g, x) - 1
            i = jnp.where(i < 0, 0, i)
            i = jnp.where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, distances, outside


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(*children[:2], *aux, *children[2:]))
