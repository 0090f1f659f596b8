"""Products of `jaxlite.numpy.linalg`: cross, outer, multi_dot, matrix_power, and the
array-API spellings of jnp's matmul, tensordot, vecdot, trace, diagonal, matrix_transpose.

Mirrors the same names of `jax.numpy.linalg`; the contractions themselves are those of
`jaxlite.numpy._linalg_basic`, which this module only wraps with the array API's
positional-only, keyword-only signatures.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import jaxlite.lax as lax
from jaxlite.numpy import _linalg_basic as basic
from jaxlite.numpy._promotion import (canonicalize_axis, check_arraylike, ensure_array,
                                      promote_args, promote_dtypes)
from jaxlite.numpy._shape import matrix_transpose as _matrix_transpose, moveaxis
from jaxlite.numpy.linalg._solve import inv
from jaxlite.numpy.linalg._util import batched_eye, check_square

__all__ = ["cross", "outer", "matmul", "tensordot", "vecdot", "trace", "diagonal",
           "matrix_transpose", "multi_dot", "matrix_power"]


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Cross products of 3-vectors along `axis` (mirrors `jax.numpy.linalg.cross`).

    The other axes broadcast; the result keeps the vectors along `axis`.
    """
    check_arraylike("jnp.linalg.cross", x1, x2)
    x1, x2 = ensure_array(x1), ensure_array(x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("jnp.linalg.cross: both inputs need at least one dimension, got "
                         f"shapes {x1.shape} and {x2.shape}")
    size1 = x1.shape[canonicalize_axis(axis, x1.ndim)]
    size2 = x2.shape[canonicalize_axis(axis, x2.ndim)]
    if size1 != 3 or size2 != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have x1.shape[axis]={size1} and x2.shape[axis]={size2}")
    a, b = promote_args("jnp.linalg.cross", moveaxis(x1, axis, -1), moveaxis(x2, axis, -1))

    def part(x: Any, i: int) -> Any:
        return lax.squeeze(lax.slice_in_dim(x, i, i + 1, axis=x.ndim - 1), (x.ndim - 1,))

    def minor(i: int, j: int) -> Any:
        return lax.sub(lax.mul(part(a, i), part(b, j)), lax.mul(part(a, j), part(b, i)))
    out = _stack_last([minor(1, 2), minor(2, 0), minor(0, 1)])
    return moveaxis(out, -1, axis)


def _stack_last(parts: Sequence[Any]) -> Any:
    """Stack equal-shaped arrays along a new last axis."""
    expanded = [lax.expand_dims(p, (p.ndim,)) for p in parts]
    return lax.concatenate(expanded, expanded[0].ndim - 1)


def outer(x1: Any, x2: Any, /) -> Any:
    """Outer product of two vectors (mirrors `jax.numpy.linalg.outer`)."""
    check_arraylike("jnp.linalg.outer", x1, x2)
    x1, x2 = ensure_array(x1), ensure_array(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} x2.ndim={x2.ndim}")
    return basic.outer(x1, x2)


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Matrix product with broadcast batch axes (mirrors `jax.numpy.linalg.matmul`)."""
    return basic.matmul(x1, x2, precision=precision,
                        preferred_element_type=preferred_element_type)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """Tensor contraction over `axes` (mirrors `jax.numpy.linalg.tensordot`).

    `out_sharding` is accepted for JAX's signature; jaxlite has one device.
    """
    return basic.tensordot(x1, x2, axes, precision=precision,
                           preferred_element_type=preferred_element_type)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Conjugated dot product along `axis` (mirrors `jax.numpy.linalg.vecdot`)."""
    return basic.vecdot(x1, x2, axis=axis, precision=precision,
                        preferred_element_type=preferred_element_type)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Traces of the matrices in the last two axes (mirrors `jax.numpy.linalg.trace`)."""
    check_arraylike("jnp.linalg.trace", x)
    return basic.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """Diagonals of the matrices in the last two axes (`jax.numpy.linalg.diagonal`)."""
    check_arraylike("jnp.linalg.diagonal", x)
    return basic.diagonal(x, offset, axis1=-2, axis2=-1)


def matrix_transpose(x: Any, /) -> Any:
    """Transpose of each matrix in the last two axes (`jax.numpy.linalg.matrix_transpose`)."""
    check_arraylike("jnp.linalg.matrix_transpose", x)
    x = ensure_array(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={x.ndim}")
    return _matrix_transpose(x)


def _chain_order(dims: Sequence[int]) -> list[list[int]]:
    """split[i][j]: where the cheapest product of matrices i..j splits (matrix-chain DP).

    Matrix i has shape (dims[i], dims[i + 1]); the cost of a product is its multiply count.
    """
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            options = [(cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                       for k in range(i, j)]
            cost[i][j], split[i][j] = min(options)
    return split


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """Product of a chain of matrices in the cheapest order (`jax.numpy.linalg.multi_dot`).

    The first and last arrays may be vectors (a row and a column); all others must be
    matrices. The order is chosen by dynamic programming over the multiply counts.
    """
    check_arraylike("jnp.linalg.multi_dot", *arrays)
    arrays = [ensure_array(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}")
    inner_ok = all(a.ndim == 2 for a in arrays[1:-1])
    if not inner_ok or arrays[0].ndim not in (1, 2) or arrays[-1].ndim not in (1, 2):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {[a.shape for a in arrays]}")
    first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
    mats = list(promote_dtypes(*arrays))
    if first_vec:
        mats[0] = lax.expand_dims(mats[0], (0,))
    if last_vec:
        mats[-1] = lax.expand_dims(mats[-1], (1,))
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    split = _chain_order(dims)

    def product(i: int, j: int) -> Any:
        if i == j:
            return mats[i]
        k = split[i][j]
        return basic.matmul(product(i, k), product(k + 1, j), precision=precision)
    out = product(0, len(mats) - 1)
    if first_vec:
        out = lax.squeeze(out, (0,))
    if last_vec:
        out = lax.squeeze(out, (out.ndim - 1,))
    return out


def matrix_power(a: Any, n: int) -> Any:
    """`a` multiplied by itself `n` times (mirrors `jax.numpy.linalg.matrix_power`).

    By repeated squaring; n == 0 gives identities of a's dtype and n < 0 powers the
    inverse (an inexact dtype).
    """
    check_arraylike("jnp.linalg.matrix_power", a)
    a = ensure_array(a)
    check_square("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError as error:
        raise TypeError(f"exponent must be an integer, got {n!r}") from error
    if n == 0:
        return batched_eye(a.shape, a.dtype)
    if n < 0:
        a, n = inv(a), -n
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else basic.matmul(result, power)
        n >>= 1
        if n:
            power = basic.matmul(power, power)
    return result
