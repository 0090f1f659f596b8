"""Triangles and diagonals: tri/tril/triu, their index helpers, diag, fill_diagonal, vander.

Mirrors `jax.numpy.tri`, `tril`, `triu`, `tril_indices`, `triu_indices`, the `*_from`
variants, `diag_indices`, `diag_indices_from`, `mask_indices`, `diag`, `diagflat`,
`fill_diagonal` and `vander`. Masks come from two `broadcasted_iota`s compared, so that
they stage as a handful of equations under `jit`; index lists depend only on static shapes
and are computed on the host.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._creation import _default_dtype, asarray
from jaxlite.numpy._linalg_basic import diagonal
from jaxlite.numpy._promotion import (check_arraylike, concrete_int, ensure_array,
                                      host_to_array)
from jaxlite.numpy._shape import ravel

__all__ = [
    "tri", "tril", "triu", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "diag_indices", "diag_indices_from", "mask_indices", "diag",
    "diagflat", "fill_diagonal", "vander",
]

_INDEX = np.dtype(np.int32)


def _lower_mask(rows: int, cols: int, k: int) -> Any:
    """Boolean (rows, cols): True where column - row <= k."""
    row_ids = lax.broadcasted_iota(_INDEX, (rows, cols), 0)
    col_ids = lax.broadcasted_iota(_INDEX, (rows, cols), 1)
    return lax.le(lax.sub(col_ids, row_ids), np.asarray(k, _INDEX))


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Ones at and below diagonal `k`, zeros above (mirrors `jax.numpy.tri`); float32 by
    default."""
    rows = concrete_int(N, "tri: N")
    cols = rows if M is None else concrete_int(M, "tri: M")
    mask = _lower_mask(rows, cols, concrete_int(k, "tri: k"))
    return lax.convert_element_type(mask, _default_dtype(dtype, "tri"))


def _keep_triangle(fun_name: str, m: Any, k: int, lower: bool) -> Any:
    check_arraylike(fun_name, m)
    m = ensure_array(m)
    if m.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{fun_name} must be at least 2D; got shape "
                         f"{m.shape}.")
    k = concrete_int(k, f"{fun_name}: k")
    rows, cols = m.shape[-2:]
    # triu keeps column - row >= k, the complement of tril's column - row <= k - 1.
    mask = _lower_mask(rows, cols, k if lower else k - 1)
    if not lower:
        mask = lax.bitwise_not(mask)
    mask = lax.broadcast_in_dim(mask, m.shape, (m.ndim - 2, m.ndim - 1))
    return lax.select(mask, m, lax.full_like(m, 0))


def tril(m: Any, k: int = 0) -> Any:
    """`m` with the entries above diagonal `k` of its last two axes zeroed (mirrors
    `jax.numpy.tril`)."""
    return _keep_triangle("tril", m, k, lower=True)


def triu(m: Any, k: int = 0) -> Any:
    """`m` with the entries below diagonal `k` of its last two axes zeroed (mirrors
    `jax.numpy.triu`)."""
    return _keep_triangle("triu", m, k, lower=False)


def _index_arrays(host: tuple[np.ndarray, ...]) -> tuple[Any, ...]:
    # Index results are of the default int dtype (int64 under x64), as JAX's.
    return tuple(host_to_array(np.asarray(i, np.int64), dtypes.default_int_dtype())
                 for i in host)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle of an (n, m) array, diagonal `k`
    included, in row-major order (mirrors `jax.numpy.tril_indices`)."""
    n = concrete_int(n, "tril_indices: n")
    m = n if m is None else concrete_int(m, "tril_indices: m")
    return _index_arrays(np.nonzero(np.tri(n, m, concrete_int(k, "tril_indices: k"), bool)))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle of an (n, m) array, diagonal `k`
    included, in row-major order (mirrors `jax.numpy.triu_indices`)."""
    n = concrete_int(n, "triu_indices: n")
    m = n if m is None else concrete_int(m, "triu_indices: m")
    k = concrete_int(k, "triu_indices: k")
    return _index_arrays(np.nonzero(~np.tri(n, m, k - 1, bool)))


def _matrix_shape(fun_name: str, arr: Any) -> tuple[int, int]:
    shape = tuple(np.shape(arr)) if not hasattr(arr, "shape") else tuple(arr.shape)
    if len(shape) != 2:
        raise ValueError(f"{fun_name}: only 2-D inputs are accepted, got shape {shape}.")
    return shape[0], shape[1]


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """`tril_indices` for the shape of the 2-d `arr` (mirrors `jax.numpy.tril_indices_from`)."""
    rows, cols = _matrix_shape("tril_indices_from", arr)
    return tril_indices(rows, k, cols)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """`triu_indices` for the shape of the 2-d `arr` (mirrors `jax.numpy.triu_indices_from`)."""
    rows, cols = _matrix_shape("triu_indices_from", arr)
    return triu_indices(rows, k, cols)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """`ndim` copies of `arange(n)`: the indices of the main diagonal of an n x ... x n
    array (mirrors `jax.numpy.diag_indices`)."""
    n = concrete_int(n, "diag_indices: n")
    ndim = concrete_int(ndim, "diag_indices: ndim")
    if n < 0 or ndim < 0:
        raise ValueError(f"diag_indices: n and ndim must be non-negative, got n={n}, "
                         f"ndim={ndim}.")
    return (lax.iota(dtypes.default_int_dtype(), n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """`diag_indices` for an array whose axes all have one length, at least 2 of them
    (mirrors `jax.numpy.diag_indices_from`)."""
    check_arraylike("diag_indices_from", arr)
    shape = np.shape(arr)
    if len(shape) < 2:
        raise ValueError("diag_indices_from: the input must be at least 2-d, got shape "
                         f"{shape}.")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length; got shape "
                         f"{shape}.")
    return diag_indices(shape[0], len(shape))


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """Indices where `mask_func(ones((n, n)), k)` is nonzero (mirrors
    `jax.numpy.mask_indices`); `size` pads or truncates the result to a static length,
    padding with zeros."""
    n = concrete_int(n, "mask_indices: n")
    mask = np.asarray(mask_func(np.ones((n, n), np.int32), k)) != 0
    rows, cols = np.nonzero(mask)
    if size is not None:
        size = concrete_int(size, "mask_indices: size")
        rows = np.resize(np.pad(rows, (0, max(0, size - rows.size))), size)
        cols = np.resize(np.pad(cols, (0, max(0, size - cols.size))), size)
    return _index_arrays((rows, cols))


def _diagonal_matrix(v: Any, k: int) -> Any:
    """The square matrix with the 1-d `v` on diagonal `k`."""
    n = v.shape[0] + abs(k)
    rows = lax.broadcasted_iota(_INDEX, (n, n), 0)
    cols = lax.broadcasted_iota(_INDEX, (n, n), 1)
    on_diagonal = lax.eq(lax.sub(cols, rows), np.asarray(k, _INDEX))
    # Entry (i, i + k) holds v[min(i, j)], which is v[i] for k >= 0 and v[j] for k < 0.
    position = 0 if k >= 0 else 1
    padded = lax.pad(v, np.zeros((), v.dtype), [(0, abs(k), 0)])
    spread = lax.broadcast_in_dim(padded, (n, n), (position,))
    return lax.select(on_diagonal, spread, lax.full_like(spread, 0))


def diag(v: Any, k: int = 0) -> Any:
    """The diagonal `k` of a 2-d `v`, or the square matrix with a 1-d `v` on diagonal `k`
    (mirrors `jax.numpy.diag`)."""
    check_arraylike("diag", v)
    v = ensure_array(v)
    k = concrete_int(k, "diag: k")
    if v.ndim == 1:
        return _diagonal_matrix(v, k)
    if v.ndim == 2:
        return diagonal(v, offset=k)
    raise ValueError(f"diag input must be 1d or 2d; got shape {v.shape}.")


def diagflat(v: Any, k: int = 0) -> Any:
    """The square matrix with the flattened `v` on diagonal `k` (mirrors
    `jax.numpy.diagflat`)."""
    check_arraylike("diagflat", v)
    return _diagonal_matrix(ravel(v), concrete_int(k, "diagflat: k"))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """A copy of `a` with its main diagonal set to `val` (mirrors `jax.numpy.fill_diagonal`).

    `val` is flattened and repeated (or cut) to the diagonal's length. As in JAX, arrays are
    immutable, so `inplace=False` is required, and `wrap=True` is not supported.
    """
    if inplace:
        raise NotImplementedError("fill_diagonal: JAX arrays are immutable; pass "
                                  "inplace=False and use the returned array.")
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not implemented; pass "
                                  "wrap=False.")
    check_arraylike("fill_diagonal", a, val)
    a = ensure_array(a)
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d, got shape {a.shape}.")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("fill_diagonal: all dimensions of input must be of equal length, "
                         f"got shape {a.shape}.")
    n = min(a.shape)
    values = ravel(asarray(val))
    if values.shape[0] == 0:
        raise ValueError("fill_diagonal: val must not be empty.")
    if n == 0:
        return a
    # Cycle the values along the diagonal, as numpy's flat assignment does.
    cycled = values[lax.rem(lax.iota(_INDEX, n), np.asarray(values.shape[0], _INDEX))]
    index = (lax.iota(_INDEX, n),) * a.ndim
    return a.at[index].set(cycled)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of the 1-d `x`: columns are powers of `x`, highest first
    unless `increasing` (mirrors `jax.numpy.vander`)."""
    check_arraylike("vander", x)
    x = ensure_array(x)
    if x.ndim != 1:
        raise ValueError(f"x must be a one-dimensional array; got shape {x.shape}.")
    columns = x.shape[0] if N is None else concrete_int(N, "vander: N")
    if columns < 0:
        raise ValueError(f"N must be nonnegative; got N={columns}.")
    exponents = range(columns) if increasing else range(columns - 1, -1, -1)
    # Integer powers by repeated products match numpy's exactly (no pow rounding).
    cols = [lax.integer_pow(x, p) if p else lax.full_like(x, 1) for p in exponents]
    if not cols:
        return lax.full_like(x, 0, shape=(x.shape[0], 0))
    return lax.concatenate([lax.expand_dims(c, (1,)) for c in cols], 1)
