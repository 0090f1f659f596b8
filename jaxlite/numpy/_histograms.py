"""Counting into bins: bincount, histogram, histogram_bin_edges, histogram2d, histogramdd.

Mirrors `jax.numpy`'s histogram functions. Bins are found with `searchsorted` on the
edges and counted with a scatter-add that drops what falls outside, so that everything has
a static shape and works under `jit` (bincount needs `length=` there). As in numpy, each
bin holds its left edge, and the last bin its right edge too. Dtypes follow JAX:
`histogram` counts in a's floating dtype (or the weights'), `histogramdd` in integers
unless weighted.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.numpy._creation import linspace
from jaxlite.numpy._placement import accepts_placement
from jaxlite.core import dtypes
from jaxlite.errors import ConcretizationTypeError
from jaxlite.numpy._nonzero import concrete_or_none, per_dimension
from jaxlite.numpy._promotion import (check_arraylike, convert, ensure_array,
                                      promote_dtypes_inexact)
from jaxlite.numpy._shape import ravel
from jaxlite.numpy._sorting import searchsorted

__all__ = ["bincount", "histogram", "histogram_bin_edges", "histogram2d", "histogramdd"]


def _bincount_length(x: Any, minlength: int, length: Any) -> int:
    if length is not None:
        return operator.index(length)
    known = concrete_or_none(x)
    if known is None:
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: "
            "jnp.bincount: the number of bins depends on the values of x, which are traced "
            f"here ({x.aval.str_short()}). Pass a static length= to use bincount under jit "
            "or other transformations; larger values are then dropped.")
    return max(minlength, int(known.max()) + 1 if known.size else 0)


@accepts_placement("out_sharding")
def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None
             ) -> Any:
    """How many times each nonnegative integer occurs in the 1-d `x` (`jnp.bincount`).

    With `weights`, their sums instead of counts. The result has `length` entries (needed
    under jit), else max(x) + 1 but at least `minlength`. As in JAX, negative values
    count as 0 and values past the end are dropped.
    """
    check_arraylike("bincount", x)
    x = ensure_array(x)
    if not dtypes.is_integer(x.dtype) and x.dtype != np.bool_:
        raise TypeError(f"jnp.bincount: x must be an integer array, got {x.dtype}.")
    if x.ndim != 1:
        raise ValueError(f"jnp.bincount: x must be 1-d, got shape {x.shape}.")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"jnp.bincount: minlength must be nonnegative, got {minlength}.")
    size = _bincount_length(x, minlength, length)
    if weights is None:
        weights = lax.full(x.shape, 1, dtypes.default_int_dtype())
    else:
        check_arraylike("bincount", weights)
        weights = ensure_array(weights)
        weights = convert(weights, dtypes.canonicalize_dtype(
            dtypes.to_numeric_dtype(weights.dtype)))
    index = lax.max(convert(x, dtypes.default_int_dtype()),
                    lax.full(x.shape, 0, dtypes.default_int_dtype()))
    zeros = lax.full((size,), 0, weights.dtype)
    return zeros.at[index].add(weights, mode="drop")


def _edges(fun_name: str, a: Any, bins: Any, range_: Any) -> Any:
    """The bin edges for the flattened samples `a` (inexact): given, or evenly spaced."""
    if not isinstance(bins, (int, np.integer)):
        check_arraylike(fun_name, bins)
        edges = convert(bins, a.dtype)
        if edges.ndim != 1:
            raise ValueError(f"jnp.{fun_name}: bins must be an integer or a 1-d array of "
                             f"edges, got shape {edges.shape}.")
        return edges
    count = operator.index(bins)
    if count < 1:
        raise ValueError(f"jnp.{fun_name}: the number of bins must be positive, got "
                         f"{count}.")
    if range_ is None:
        if a.size == 0:
            low, high = convert(0, a.dtype), convert(1, a.dtype)
        else:
            low, high = lax.reduce_min(a, (0,)), lax.reduce_max(a, (0,))
    else:
        if len(range_) != 2:
            raise ValueError(f"jnp.{fun_name}: range must be a pair (low, high), got "
                             f"{range_!r}.")
        low, high = convert(range_[0], a.dtype), convert(range_[1], a.dtype)
    # An empty range is widened by half a unit on both sides, as numpy does.
    flat = lax.eq(low, high)
    half = convert(0.5, a.dtype)
    low = lax.select(flat, lax.sub(low, half), low)
    high = lax.select(flat, lax.add(high, half), high)
    # JAX's edges are linspace's samples, whose roundings place values on the edges.
    return linspace(low, high, count + 1, dtype=a.dtype)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                        weights: Any = None) -> Any:
    """The edges `histogram` would use (mirrors `jax.numpy.histogram_bin_edges`)."""
    check_arraylike("histogram_bin_edges", a)
    a, = promote_dtypes_inexact(ravel(ensure_array(a)))
    return _edges("histogram_bin_edges", a, bins, range)


def _bin_index(x: Any, edges: Any) -> tuple[Any, Any]:
    """Each sample's bin, and whether it lies inside the edges at all."""
    nbins = edges.shape[0] - 1
    right = searchsorted(edges, x, side="right")
    index = lax.sub(right, lax.full_like(right, 1))
    on_last = lax.eq(x, lax.broadcast_in_dim(edges[-1], x.shape, ()))
    index = lax.select(on_last, lax.full_like(index, nbins - 1), index)
    inside = lax.bitwise_and(lax.ge(index, lax.full_like(index, 0)),
                             lax.lt(index, lax.full_like(index, nbins)))
    return index, inside


def _weighted(fun_name: str, weights: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    if weights is None:
        return lax.full(shape, 1, dtype)
    check_arraylike(fun_name, weights)
    weights = ensure_array(weights)
    if weights.shape != shape:
        raise ValueError(f"jnp.{fun_name}: weights must have the samples' shape {shape}, "
                         f"got {weights.shape}.")
    return weights


def _density(counts: Any, widths: Any) -> Any:
    total = lax.reduce_sum(counts, tuple(range(counts.ndim)))
    return lax.div(counts, lax.mul(widths, lax.broadcast_in_dim(total, widths.shape, ())))


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,  # noqa: A002
              density: bool | None = None) -> tuple[Any, Any]:
    """Counts of the flattened `a` in each bin, and the bin edges (`jnp.histogram`).

    `bins` is a count of equal bins over `range` (the data's range by default) or the
    edges themselves. `weights` sum instead of counting; `density` normalizes the result
    to integrate to one.
    """
    check_arraylike("histogram", a)
    a = ravel(ensure_array(a))
    if weights is not None:
        check_arraylike("histogram", weights)
        a, weights = promote_dtypes_inexact(a, ravel(ensure_array(weights)))
    else:
        a, = promote_dtypes_inexact(a)
    edges = _edges("histogram", a, bins, range)
    weights = _weighted("histogram", weights, a.shape, a.dtype)
    index, inside = _bin_index(a, edges)
    weights = lax.select(inside, weights, lax.full_like(weights, 0))
    counts = lax.full((edges.shape[0] - 1,), 0, weights.dtype).at[index].add(weights,
                                                                            mode="drop")
    if density:
        counts = _density(counts, lax.sub(edges[1:], edges[:-1]))
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                weights: Any = None, density: bool | None = None) -> tuple[Any, list[Any]]:
    """Counts of the (N, D) samples in a D-dimensional grid of bins, and the edges of each
    dimension (mirrors `jax.numpy.histogramdd`)."""
    check_arraylike("histogramdd", sample)
    sample, = promote_dtypes_inexact(sample)
    if sample.ndim != 2:
        raise ValueError(f"jnp.histogramdd: sample must be (N, D), got shape {sample.shape}.")
    n, d = sample.shape
    ranges = [None] * d if range is None else list(range)
    # An array of edges is shared by every dimension; a list gives one entry each.
    bins_per_dim = (per_dimension("histogramdd", "bins", bins, d)
                    if isinstance(bins, (int, np.integer, list, tuple)) else [bins] * d)
    edges = [_edges("histogramdd", sample[:, k], b, r)
             for k, (b, r) in enumerate(zip(bins_per_dim, ranges))]
    grid = tuple(e.shape[0] - 1 for e in edges)
    flat = lax.full((n,), 0, dtypes.default_int_dtype())
    inside = lax.full((n,), True, np.bool_)
    for k, e in enumerate(edges):
        index, within = _bin_index(sample[:, k], e)
        flat = lax.add(lax.mul(flat, lax.full_like(flat, grid[k])), index)
        inside = lax.bitwise_and(inside, within)
    counts_dtype = dtypes.default_int_dtype() if weights is None else None
    weights = _weighted("histogramdd", weights, (n,), counts_dtype)
    weights = lax.select(inside, weights, lax.full_like(weights, 0))
    counts = lax.full((int(np.prod(grid)),), 0, weights.dtype).at[flat].add(weights,
                                                                            mode="drop")
    counts = lax.reshape(counts, grid)
    if density:
        counts = convert(counts, sample.dtype) if counts_dtype is not None else counts
        widths = _outer_widths([lax.sub(e[1:], e[:-1]) for e in edges])
        counts = _density(counts, convert(widths, counts.dtype))
    return counts, edges


def _outer_widths(widths: Sequence[Any]) -> Any:
    """The volume of every cell of the grid: the outer product of the bin widths."""
    shape = tuple(w.shape[0] for w in widths)
    volume = lax.broadcast_in_dim(widths[0], shape, (0,))
    for k, w in enumerate(widths[1:], start=1):
        volume = lax.mul(volume, lax.broadcast_in_dim(w, shape, (k,)))
    return volume


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                weights: Any = None, density: bool | None = None) -> tuple[Any, Any, Any]:
    """Counts of the points (x, y) in a 2-d grid of bins, and the x and y edges
    (mirrors `jax.numpy.histogram2d`)."""
    check_arraylike("histogram2d", x, y)
    x, y = promote_dtypes_inexact(x, y)
    if isinstance(bins, (list, tuple)) and len(bins) != 2:
        bins = [bins, bins]
    elif not isinstance(bins, (list, tuple, int, np.integer)) and np.ndim(bins) == 1:
        bins = [bins, bins]
    sample = lax.concatenate([lax.expand_dims(ravel(x), (1,)), lax.expand_dims(ravel(y), (1,))],
                             1)
    counts, edges = histogramdd(sample, bins, range, weights, density)
    return counts, edges[0], edges[1]
