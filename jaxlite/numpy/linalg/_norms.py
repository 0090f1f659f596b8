"""Vector and matrix norms: norm, vector_norm, matrix_norm (mirror `jax.numpy.linalg`'s).

`norm` follows numpy: one axis is a vector norm, two axes a matrix norm, and with no axis
the whole array is one vector (ord None) or one matrix. `vector_norm` is the array API's:
any set of axes is reduced as one vector, and, as in JAX, it keeps the input dtype where
the formula does (the 1- and inf-norms of an integer vector are integers).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.numpy import _math, _reductions, _ufuncs
from jaxlite.numpy._promotion import canonicalize_axis, check_arraylike, ensure_array
from jaxlite.numpy._shape import moveaxis, ravel
from jaxlite.numpy.linalg._decompositions import svdvals
from jaxlite.numpy.linalg._util import inexact_args

__all__ = ["norm", "vector_norm", "matrix_norm"]


def _squared_magnitude(x: Any) -> Any:
    return _math.real(_ufuncs.multiply(x, _math.conjugate(x)))


def _vector_norm(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """The `ord`-norm of `x` over `axis` (an int, a tuple, or None for all), x's dtype kept
    where the formula keeps it."""
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _math.sqrt(_reductions.sum(_squared_magnitude(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    if ord == np.inf:
        return _reductions.max(_math.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _reductions.min(_math.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return _reductions.sum(_ufuncs.not_equal(x, 0), axis=axis, keepdims=keepdims,
                               dtype=np.finfo(x.dtype).dtype)
    if ord == 1:
        return _reductions.sum(_math.abs(x), axis=axis, keepdims=keepdims)
    magnitude = _math.abs(x)
    # The exponents are constants of the magnitude's dtype, as in JAX (so an integer
    # input is powered by the integer parts of ord and 1 / ord).
    power = np.asarray(ord).astype(magnitude.dtype)
    root = np.asarray(1.0 / power).astype(magnitude.dtype)
    total = _reductions.sum(_ufuncs.power(magnitude, power), axis=axis, keepdims=keepdims)
    return _ufuncs.power(total, root)


def _keep_axes(out: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    return lax.expand_dims(out, tuple(sorted(axes))) if keepdims else out


def _matrix_norm(x: Any, ord: Any, rows: int, cols: int, keepdims: bool) -> Any:
    """The `ord`-norm of the matrices spanned by axes `rows` and `cols` of `x`."""
    if ord is None or ord == "fro":
        return _math.sqrt(_reductions.sum(_squared_magnitude(x), axis=(rows, cols),
                                          keepdims=keepdims))
    if isinstance(ord, str) and ord != "nuc":
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if ord in (1, -1, np.inf, -np.inf):
        # 1-norms take the largest column sum, inf-norms the largest row sum.
        summed, picked = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = _reductions.sum(_math.abs(x), axis=summed, keepdims=True)
        extremum = _reductions.max if ord > 0 else _reductions.min
        out = extremum(sums, axis=picked, keepdims=True)
        return out if keepdims else lax.squeeze(out, (rows, cols))
    if ord in (2, -2, "nuc"):
        values = svdvals(moveaxis(x, (rows, cols), (-2, -1)))
        if ord == "nuc":
            out = _reductions.sum(values, axis=-1)
        else:
            index = 0 if ord == 2 else values.shape[-1] - 1
            out = lax.index_in_dim(values, index, axis=values.ndim - 1, keepdims=False)
        return _keep_axes(out, (rows, cols), keepdims)
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def _norm_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if isinstance(axis, (tuple, list)):
        return tuple(canonicalize_axis(a, ndim) for a in axis)
    return (canonicalize_axis(axis, ndim),)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector or matrix norm (mirrors `jax.numpy.linalg.norm`).

    Parameters
    ----------
    x : the input, promoted to an inexact dtype; the result has its real dtype.
    ord : vector norms: None/2, inf, -inf, 0, 1, any other number p (sum |x|^p)^(1/p);
        matrix norms: None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf.
    axis : None (with ord None, all of x as one vector; else all axes, which must be one
        or two), one axis (a vector norm) or two axes (a matrix norm).
    keepdims : keep the reduced axes with size 1.
    """
    (x,) = inexact_args("jnp.linalg.norm", x)
    if axis is None:
        if ord is None:
            return _math.sqrt(_reductions.sum(_squared_magnitude(x), keepdims=keepdims))
        axis = tuple(range(x.ndim))
    axes = _norm_axes(axis, x.ndim)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes[0], axes[1], keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axes}. Pass one axis to "
                     "compute a vector-norm, or two axes to compute a matrix-norm.")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """The vector norm over `axis` (mirrors `jax.numpy.linalg.vector_norm`).

    Several axes are reduced together as one vector; None reduces all of them. Orders as
    in `norm`'s vector norms. As in JAX the input is not promoted: the 1-, inf- and
    -inf-norms of integers are integers, and ord=0 needs an inexact input.
    """
    check_arraylike("jnp.linalg.vector_norm", x)
    x = ensure_array(x)
    if axis is None:
        out = _vector_norm(ravel(x), ord, None, False)
        return lax.reshape(out, (1,) * x.ndim) if keepdims else out
    return _vector_norm(x, ord, axis, keepdims)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """The norm of each matrix in the last two axes (`jax.numpy.linalg.matrix_norm`)."""
    check_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


