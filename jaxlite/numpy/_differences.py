"""Finite differences and friends: diff, ediff1d, gradient, trapezoid, unwrap, interp.

Mirrors the corresponding `jax.numpy` functions. They are built from static slices of
the input along one axis, so they work under every transformation. As in JAX, `gradient`
supports only first-order edges (`edge_order` is rejected) and `interp` also accepts
'extrapolate' for `left` and `right`.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (broadcast_to_shape, canonicalize_axes,
                                      canonicalize_axis, check_arraylike, convert,
                                      ensure_array, promote_dtypes, promote_dtypes_inexact)
from jaxlite.numpy._shape import ravel
from jaxlite.numpy._sorting import searchsorted, stable_sort

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "unwrap", "interp"]


def _part(x: Any, start: int, stop: int, axis: int) -> Any:
    """`x[start:stop]` along `axis` (negative stop counts from the end)."""
    n = x.shape[axis]
    return lax.slice_in_dim(x, start, stop if stop > 0 else n + stop, 1, axis)


def _edge(value: Any, like: Any, axis: int, fun_name: str) -> Any:
    """`prepend`/`append`: a scalar becomes one slice along `axis`, arrays stay."""
    check_arraylike(fun_name, value)
    value = ensure_array(value)
    if value.ndim == 0:
        shape = like.shape[:axis] + (1,) + like.shape[axis + 1:]
        return broadcast_to_shape(value, shape)
    return value


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The `n`-th discrete difference along `axis` (mirrors `jax.numpy.diff`).

    Booleans differ by "not equal". `prepend` and `append` are joined to `a` first.
    """
    check_arraylike("diff", a)
    a = ensure_array(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"jnp.diff: order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError("jnp.diff requires input that is at least one dimensional; got a "
                         "scalar.")
    axis = canonicalize_axis(axis, a.ndim)
    parts = [a]
    if prepend is not None:
        parts.insert(0, _edge(prepend, a, axis, "diff"))
    if append is not None:
        parts.append(_edge(append, a, axis, "diff"))
    if len(parts) > 1:
        parts = promote_dtypes(*parts)
        a = lax.concatenate(parts, axis)
    for _ in range(n):
        if a.shape[axis] == 0:
            break
        later, earlier = _part(a, 1, a.shape[axis], axis), _part(a, 0, -1, axis)
        a = lax.ne(later, earlier) if a.dtype == np.bool_ else lax.sub(later, earlier)
    return a


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of the flattened array, with optional values around them
    (mirrors `jax.numpy.ediff1d`); the extras take ary's dtype."""
    check_arraylike("ediff1d", ary)
    flat = ravel(ensure_array(ary))
    result = diff(flat) if flat.shape[0] else flat
    parts = [result]
    if to_begin is not None:
        check_arraylike("ediff1d", to_begin)
        parts.insert(0, convert(ravel(ensure_array(to_begin)), flat.dtype))
    if to_end is not None:
        check_arraylike("ediff1d", to_end)
        parts.append(convert(ravel(ensure_array(to_end)), flat.dtype))
    return lax.concatenate(parts, 0) if len(parts) > 1 else result


def _spacings(varargs: tuple, axes: tuple[int, ...]) -> list[Any]:
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"jnp.gradient: give one spacing, or one per axis ({len(axes)}); got "
                        f"{len(varargs)}.")
    return list(varargs)


def _gradient_along(f: Any, spacing: Any, axis: int) -> Any:
    n = f.shape[axis]
    if n < 2:
        raise ValueError("jnp.gradient: each differentiated axis needs at least 2 entries, "
                         f"got shape {f.shape}.")
    first = lax.sub(_part(f, 1, 2, axis), _part(f, 0, 1, axis))
    last = lax.sub(_part(f, n - 1, n, axis), _part(f, n - 2, n - 1, axis))
    if np.ndim(spacing) == 0:
        h = convert(spacing, f.dtype)
        interior = lax.div(lax.sub(_part(f, 2, n, axis), _part(f, 0, -2, axis)),
                           lax.mul(h, convert(2, f.dtype)))
        edges = (lax.div(first, h), lax.div(last, h))
    else:
        x = convert(spacing, f.dtype)
        if x.shape != (n,):
            raise ValueError(f"jnp.gradient: coordinates along axis {axis} must have shape "
                             f"({n},), got {x.shape}.")
        dx = lax.sub(x[1:], x[:-1])
        along = (lambda v: lax.broadcast_in_dim(v, f.shape[:axis] + v.shape
                                                + f.shape[axis + 1:], (axis,)))
        d1, d2 = along(dx[:-1]), along(dx[1:])
        total = lax.add(d1, d2)
        # The second-order accurate weights for uneven steps (numpy's formula).
        wa = lax.neg(lax.div(d2, lax.mul(d1, total)))
        wb = lax.div(lax.sub(d2, d1), lax.mul(d1, d2))
        wc = lax.div(d1, lax.mul(d2, total))
        interior = lax.add(lax.add(lax.mul(wa, _part(f, 0, -2, axis)),
                                   lax.mul(wb, _part(f, 1, -1, axis))),
                           lax.mul(wc, _part(f, 2, n, axis)))
        edges = (lax.div(first, along(dx[:1])), lax.div(last, along(dx[-1:])))
    return lax.concatenate([edges[0], interior, edges[1]], axis)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int | None = None) -> Any:
    """The gradient of sampled values `f`: central differences inside, one-sided at the
    edges (mirrors `jax.numpy.gradient`).

    `varargs` are the spacings: none (unit steps), one scalar for all axes, or one per
    axis, each a scalar or the 1-d coordinates. Several axes give a list of arrays.
    """
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    check_arraylike("gradient", f)
    f, = promote_dtypes_inexact(f)
    axes = canonicalize_axes(axis, f.ndim)
    spacings = _spacings(varargs, axes)
    out = [_gradient_along(f, h, ax) for h, ax in zip(spacings, axes)]
    return out[0] if len(out) == 1 else out


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of the samples `y` along `axis` by the trapezoid rule
    (mirrors `jax.numpy.trapezoid`); `x` gives the sample points, else steps of `dx`."""
    check_arraylike("trapezoid", y)
    if x is None:
        y, = promote_dtypes_inexact(y)
        axis = canonicalize_axis(axis, y.ndim)
        steps = convert(dx, y.dtype, dtypes.is_weakly_typed(dx))
    else:
        check_arraylike("trapezoid", x)
        y, x = promote_dtypes_inexact(y, x)
        axis = canonicalize_axis(axis, y.ndim)
        if x.ndim == 1:
            x = lax.broadcast_in_dim(x, y.shape[:axis] + x.shape + y.shape[axis + 1:],
                                     (axis,))
        steps = diff(x, axis=axis)
    n = y.shape[axis]
    if n == 0:
        return lax.reduce_sum(y, (axis,))
    mid = lax.add(_part(y, 1, n, axis), _part(y, 0, -1, axis))
    if np.ndim(steps) == 0:
        total = lax.reduce_sum(mid, (axis,))
        return lax.mul(lax.mul(total, lax.full_like(total, 0.5)), steps)
    areas = lax.mul(steps, mid)
    total = lax.reduce_sum(areas, (axis,))
    return lax.mul(total, lax.full_like(total, 0.5))


def _floor_mod(x: Any, period: Any) -> Any:
    r = lax.rem(x, period)
    fix = lax.bitwise_and(lax.ne(r, lax.full_like(r, 0)),
                          lax.ne(lax.lt(r, lax.full_like(r, 0)),
                                 lax.lt(period, lax.full_like(period, 0))))
    return lax.select(fix, lax.add(r, period), r)


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """Remove jumps larger than `discont` along `axis` by adding multiples of `period`
    (mirrors `jax.numpy.unwrap`; the default `discont` is period / 2)."""
    check_arraylike("unwrap", p)
    # The result has the dtype of p promoted with period (an int period keeps ints),
    # while the arithmetic runs in floating point.
    result_dtype = dtypes.result_type(p, period)
    p, = promote_dtypes_inexact(p)
    axis = canonicalize_axis(axis, p.ndim)
    if p.shape[axis] < 2:
        return convert(p, result_dtype)
    dd = diff(p, axis=axis)
    period = lax.full_like(dd, period)
    half = lax.div(period, lax.full_like(dd, 2))
    limit = half if discont is None else lax.max(lax.full_like(dd, discont), half)
    wrapped = lax.sub(_floor_mod(lax.add(dd, half), period), half)
    boundary = lax.bitwise_and(lax.eq(wrapped, lax.neg(half)), lax.gt(dd, lax.full_like(dd, 0)))
    wrapped = lax.select(boundary, half, wrapped)
    correction = lax.sub(wrapped, dd)
    correction = lax.select(lax.lt(lax.abs(dd), limit), lax.full_like(dd, 0), correction)
    offsets = lax.cumsum(correction, axis)
    rest = lax.add(_part(p, 1, p.shape[axis], axis), offsets)
    return convert(lax.concatenate([_part(p, 0, 1, axis), rest], axis), result_dtype)


def _interp_edge(value: Any, default: Any, slope_value: Any, dtype: np.dtype) -> Any:
    if value is None:
        return default
    if isinstance(value, str):
        if value != "extrapolate":
            raise ValueError(f"jnp.interp: left and right must be values, None or "
                             f"'extrapolate', got {value!r}.")
        return slope_value
    check_arraylike("interp", value)
    return convert(value, dtype)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolation of the points (xp, fp) at `x`
    (mirrors `jax.numpy.interp`).

    `xp` must increase. Outside it the result is `left`/`right` (fp's end values by
    default, or 'extrapolate'); with `period`, the coordinates wrap around.
    """
    check_arraylike("interp", x, xp, fp)
    x, xp = promote_dtypes_inexact(x, xp)
    fp, = promote_dtypes_inexact(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape or xp.shape[0] == 0:
        raise ValueError(f"jnp.interp: xp and fp must be 1-d, non-empty and of one length, "
                         f"got shapes {xp.shape} and {fp.shape}.")
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("jnp.interp: left and right have no meaning with period.")
        period = lax.abs(convert(period, x.dtype))
        x = _floor_mod(x, lax.full_like(x, period))
        xp = _floor_mod(xp, lax.full_like(xp, period))
        xp, fp = stable_sort((xp, fp), 0)
        xp = lax.concatenate([lax.sub(xp[-1:], lax.reshape(period, (1,))), xp,
                              lax.add(xp[:1], lax.reshape(period, (1,)))], 0)
        fp = lax.concatenate([fp[-1:], fp, fp[:1]], 0)
    if xp.shape[0] == 1:
        # One point: a zero-width segment, so that left and right still apply.
        xp, fp = lax.concatenate([xp, xp], 0), lax.concatenate([fp, fp], 0)
    n = xp.shape[0]
    after = searchsorted(xp, x, side="right")
    i = lax.clamp(convert(1, after.dtype), after, convert(n - 1, after.dtype))
    x0, x1 = xp[lax.sub(i, lax.full_like(i, 1))], xp[i]
    f0, f1 = fp[lax.sub(i, lax.full_like(i, 1))], fp[i]
    dx = lax.sub(x1, x0)
    flat = lax.eq(dx, lax.full_like(dx, 0))
    joined = dtypes.result_type(x.dtype, fp.dtype)
    # A zero-width segment divides by 1 instead: its value is f0 anyway, and 0/0 in the
    # branch select drops would still turn its derivative into NaN.
    safe_dx = lax.select(flat, lax.full_like(dx, 1), dx)
    t = convert(lax.div(lax.sub(x, x0), safe_dx), joined)
    f0, f1 = convert(f0, joined), convert(f1, joined)
    value = lax.add(f0, lax.mul(t, lax.sub(f1, f0)))
    value = lax.select(flat, f0, value)
    if period is not None:
        return value
    low = _interp_edge(left, convert(fp[0], value.dtype), value, value.dtype)
    high = _interp_edge(right, convert(fp[-1], value.dtype), value, value.dtype)
    value = lax.select(lax.lt(x, xp[0]), _spread(low, value), value)
    return lax.select(lax.gt(x, xp[-1]), _spread(high, value), value)


def _spread(value: Any, like: Any) -> Any:
    value = convert(value, like.dtype)
    return value if value.shape == like.shape else broadcast_to_shape(value, like.shape)
