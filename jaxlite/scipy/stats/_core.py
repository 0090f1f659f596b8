"""Summary statistics: mode, rankdata, sem (mirror `jax.scipy.stats.mode`, `rankdata`,
`sem`)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (canonicalize_axis, check_arraylike,
                                      promote_args_inexact)

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
    """The most common value along an axis and how often it occurs."""

    mode: Any
    count: Any


def _check_nan_policy(nan_policy: str, name: str) -> None:
    if nan_policy not in ["propagate", "omit", "raise"]:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not "
                                  "implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains "
            "nans. Please check if nans exist in `x` outside of the `" + name + "` function.")


def _equal_to_previous(s: Any) -> Any:
    """Along the last axis of sorted s: whether each entry equals the one before (nans
    count as equal, as jnp.unique's equal_nan does)."""
    same = (s[..., 1:] == s[..., :-1]) | (jnp.isnan(s[..., 1:]) & jnp.isnan(s[..., :-1]))
    return jnp.concatenate([jnp.zeros(s.shape[:-1] + (1,), bool), same], axis=-1)


def _mode_last_axis(x: Any) -> tuple[Any, Any]:
    """The smallest most frequent value along the last axis, and its count."""
    n = x.shape[-1]
    s = jnp.sort(x, axis=-1)
    positions = jnp.broadcast_to(jnp.arange(n), s.shape)
    repeat = _equal_to_previous(s)
    run_start = lax.cummax(jnp.where(repeat, 0, positions), axis=s.ndim - 1)
    run_length = positions - run_start + 1  # within the run so far; the last is its length
    best = jnp.argmax(run_length, axis=-1)
    counts = jnp.max(run_length, axis=-1)
    last_of_best = best[..., None]
    value = jnp.take_along_axis(s, last_of_best, axis=-1)[..., 0]
    return value, counts.astype(dtypes.default_int_dtype())


def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most common value along `axis` (the smallest among ties) and its count.

    Mirrors `jax.scipy.stats.mode`; axis=None flattens; an empty axis gives nan and 0.
    """
    check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy(nan_policy, "mode")
    if axis is None:
        out_shape = tuple(1 for _ in x.shape) if keepdims else ()
        x, axis = jnp.ravel(x), 0
    else:
        axis = canonicalize_axis(axis, x.ndim)
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape)) if keepdims \
            else tuple(s for i, s in enumerate(x.shape) if i != axis)
    moved = jnp.moveaxis(x, axis, -1)
    if moved.shape[-1] == 0:
        values = jnp.full(moved.shape[:-1], np.nan, dtypes.default_float_dtype())
        counts = jnp.zeros(moved.shape[:-1], dtypes.default_float_dtype())
    else:
        values, counts = _mode_last_axis(moved)
    return ModeResult(values.reshape(out_shape), counts.reshape(out_shape))


def _ranks(a: Any, method: str) -> Any:
    out_dtype = dtypes.default_float_dtype()
    n = a.size
    order = jnp.argsort(a, stable=True)
    sorted_a = a[order]
    inverse = jnp.zeros(n, order.dtype).at[order].set(jnp.arange(n, dtype=order.dtype))
    if method == "ordinal":
        return (inverse + 1).astype(out_dtype)
    new_value = jnp.concatenate([jnp.array([True]), sorted_a[1:] != sorted_a[:-1]])
    dense = jnp.cumsum(new_value)[inverse]
    if method == "dense":
        return dense.astype(out_dtype)
    # Where each run of equal values starts in sorted order, then n as the end of the last.
    starts = jnp.nonzero(new_value, size=n + 1, fill_value=n)[0].astype(out_dtype)
    if method == "max":
        return starts[dense]
    if method == "min":
        return starts[dense - 1] + 1
    return .5 * (starts[dense] + starts[dense - 1] + 1)


def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """Ranks from 1, ties by `method` ('average', 'min', 'max', 'dense', 'ordinal'); all nan
    when the data hold a nan (mirrors `jax.scipy.stats.rankdata`)."""
    check_arraylike("rankdata", a)
    _check_nan_policy(nan_policy, "rankdata")
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(rankdata, axis, a, method)
    a = jnp.ravel(a)
    ranks = _ranks(a, method)
    return jnp.where(jnp.any(jnp.isnan(a)), np.nan, ranks).astype(dtypes.default_float_dtype())


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean, std(ddof) / sqrt(n) (mirrors `jax.scipy.stats.sem`;
    nan_policy 'omit' ignores nans)."""
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
        return (jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
                / jnp.sqrt(count).astype(b.dtype))
    raise ValueError(f"{nan_policy} is not supported")
