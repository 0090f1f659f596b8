"""Spaced samples and coordinate grids: logspace, geomspace, meshgrid, indices, ix_,
fromfunction.

Mirrors the `jax.numpy` functions of those names. `logspace` and `geomspace` are
`linspace` in the exponent; grids are `broadcasted_iota`s or broadcasts of 1-d arrays.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._creation import astype, linspace
from jaxlite.numpy._math import abs as _abs, log10
from jaxlite.numpy._promotion import (canonicalize_axis, canonicalize_shape, check_arraylike,
                                      ensure_array, promote_dtypes_inexact, user_dtype)
from jaxlite.numpy._shape import broadcast_arrays, expand_dims
from jaxlite.numpy._ufuncs import power, true_divide

__all__ = ["logspace", "geomspace", "meshgrid", "indices", "ix_", "fromfunction"]


def _spacing_dtypes(fun_name: str, dtype: Any, *args: Any) -> tuple[np.dtype, np.dtype]:
    """(result dtype, dtype to compute in): integers are computed in floats, then cut."""
    if dtype is None:
        target = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtypes.result_type(*args)))
    else:
        target = user_dtype(dtype, fun_name)
    compute = target if dtypes.is_inexact(target) else dtypes.canonicalize_dtype(
        dtypes.to_inexact_dtype(dtypes.result_type(*args)))
    return target, compute


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """`num` samples from base**start to base**stop, evenly spaced in the exponent
    (mirrors `jax.numpy.logspace`); integer dtypes truncate, as in JAX."""
    check_arraylike("logspace", start, stop, base)
    target, compute = _spacing_dtypes("logspace", dtype, start, stop)
    exponents = linspace(start, stop, num, endpoint=endpoint, dtype=compute, axis=axis)
    base = ensure_array(base)
    if base.ndim:
        # An array of bases broadcasts like start and stop, without the samples' axis.
        base = expand_dims(base, canonicalize_axis(axis, exponents.ndim))
    return astype(power(base, exponents), target)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """`num` samples from `start` to `stop` in geometric progression (mirrors
    `jax.numpy.geomspace`). Both ends share the sign (or complex phase) of `start`; a
    zero end, or ends of opposite signs, give NaN, as in JAX."""
    check_arraylike("geomspace", start, stop)
    target, compute = _spacing_dtypes("geomspace", dtype, start, stop)
    start, stop = promote_dtypes_inexact(start, stop)
    # the phase is applied per sample, so it needs the shape start and stop broadcast to
    start, stop = broadcast_arrays(astype(start, compute), astype(stop, compute))
    phase = true_divide(start, _abs(start)) if dtypes.is_complex(compute) else lax.sign(start)
    exponents = linspace(log10(true_divide(start, phase)), log10(true_divide(stop, phase)),
                         num, endpoint=endpoint, dtype=compute, axis=axis)
    out_axis = canonicalize_axis(axis, exponents.ndim)
    phase = lax.expand_dims(phase, (out_axis,)) if np.ndim(phase) else phase
    samples = power(np.asarray(10.0, compute), exponents) * phase
    return astype(samples, target)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Any]:
    """Coordinate arrays from 1-d coordinate vectors (mirrors `jax.numpy.meshgrid`).

    With `indexing='xy'` the first two output axes are swapped (Cartesian order); with
    `sparse=True` each output keeps size 1 along the other axes.
    """
    check_arraylike("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}.")
    arrays = [ensure_array(x) for x in xi]
    if any(x.ndim != 1 for x in arrays):
        raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{[x.shape for x in arrays]}.")
    shape = [x.shape[0] for x in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(arrays):
        axis = i
        if indexing == "xy" and len(arrays) > 1 and i < 2:
            axis = 1 - i
        target = tuple(n if d == axis else 1 for d, n in enumerate(shape)) if sparse \
            else tuple(shape)
        out.append(lax.broadcast_in_dim(x, target, (axis,)))
    return out


def indices(dimensions: Sequence[int], dtype: Any = None,
            sparse: bool = False) -> Any:
    """The coordinates of every position in an array of shape `dimensions`: one grid of
    the default int dtype per axis, stacked, or a tuple of broadcastable ones when `sparse`
    (mirrors `jax.numpy.indices`)."""
    shape = canonicalize_shape(tuple(dimensions), "indices")
    target = dtypes.default_int_dtype() if dtype is None else user_dtype(dtype, "indices")
    grids = []
    for axis, n in enumerate(shape):
        grid_shape = tuple(n if d == axis else 1 for d in range(len(shape))) if sparse \
            else shape
        grids.append(lax.broadcasted_iota(target, grid_shape, axis))
    if sparse:
        return tuple(grids)
    if not grids:
        return lax.full((0,), 0, target)
    return lax.concatenate([lax.expand_dims(g, (0,)) for g in grids], 0)


def ix_(*args: Any) -> tuple[Any, ...]:
    """Index arrays that select the cross product of 1-d integer sequences: the i-th is
    reshaped to lie along axis i (mirrors `jax.numpy.ix_`)."""
    check_arraylike("ix_", *args)
    out = []
    for i, a in enumerate(args):
        a = ensure_array(a)
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{a.shape}.")
        if a.dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not "
                                      "implemented; convert them with jnp.nonzero first.")
        shape = tuple(a.shape[0] if d == i else 1 for d in range(len(args)))
        out.append(lax.reshape(a, shape))
    return tuple(out)


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """`function` called once on the coordinate grids of `shape` in `dtype` (mirrors
    `jax.numpy.fromfunction`).

    Differences from JAX: JAX maps `function` over scalar coordinates with vmap; jaxlite
    passes whole grids, which gives the same result for functions written with array
    operations (the usual case).
    """
    shape = canonicalize_shape(shape, "fromfunction")
    grids = indices(shape, dtype=user_dtype(dtype, "fromfunction"), sparse=False)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)
