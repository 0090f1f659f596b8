"""`jaxlite.scipy.ndimage`: map_coordinates (mirrors `jax.scipy.ndimage`).

Interpolation of order 0 (nearest: coordinates rounded half away from zero) or 1
(multilinear: the 2^d neighbours weighted by distance), with scipy's boundary modes for
indices outside the array: 'constant' (cval), 'nearest' (clamped), 'wrap' (periodic),
'mirror' (reflected about the edge samples) and 'reflect' (about the edges between
samples). Integer inputs give rounded integer results.
"""
from __future__ import annotations

import functools
import itertools
import operator
from typing import Any, Callable, Sequence

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.core import dtypes

__all__ = ["map_coordinates"]


def _mirror(index: Any, size: int) -> Any:
    period = size - 1  # a triangle wave of half-period size - 1
    return jnp.abs((index + period) % (2 * period) - period)


def _reflect(index: Any, size: int) -> Any:
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


INDEX_FIXERS: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round(a: Any) -> Any:
    """Round half away from zero (integers unchanged)."""
    return a if dtypes.is_integer(a.dtype) else lax.round(a)


def _nearest(coordinate: Any) -> list[tuple[Any, Any]]:
    return [(_round(coordinate).astype(np.int32), coordinate.dtype.type(1))]


def _linear(coordinate: Any) -> list[tuple[Any, Any]]:
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int,
                    mode: str = "constant", cval: Any = 0.0) -> Any:
    """The values of `input` interpolated at `coordinates` (one array of positions per
    dimension of input, all of one shape) (mirrors `jax.scipy.ndimage.map_coordinates`;
    order 0 or 1 only, as in JAX)."""
    image = jnp.asarray(input)
    points = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, image.dtype)
    if len(coordinates) != image.ndim:
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {image.ndim}")
    fix = INDEX_FIXERS.get(mode)
    if fix is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. Currently "
            f"supported modes are {set(INDEX_FIXERS)}.")
    if order == 0:
        nodes_of = _nearest
    elif order == 1:
        nodes_of = _linear
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires "
                                  "order<=1")
    per_dimension = []
    for coordinate, size in zip(points, image.shape):
        per_dimension.append([
            (fix(index, size), (0 <= index) & (index < size) if mode == "constant" else True,
             weight) for index, weight in nodes_of(coordinate)])
    terms = []
    for corner in itertools.product(*per_dimension):
        indices, valid, weights = zip(*corner)
        value = image[indices]
        if not all(v is True for v in valid):
            value = jnp.where(functools.reduce(operator.and_, valid), value, cval)
        terms.append(functools.reduce(operator.mul, weights) * value)
    result = sum(terms[1:], terms[0])
    if dtypes.is_integer(image.dtype):
        result = _round(result)
    return result.astype(image.dtype)
