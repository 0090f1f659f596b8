"""Python operators and array methods of BCOO arrays (`@`, `*`, `+`, `-`, `/`, `sum`,
`reshape`, indexing, elementwise functions that keep zeros).

JAX defines these by `sparsify`-ing the jax.numpy function; here each is written for the
cases JAX supports, with JAX's results (same layouts, nse and flags), and JAX's
NotImplementedError for the rest.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite import numpy as jnp
from jaxlite.experimental.sparse import bcoo_shape as shape_ops
from jaxlite.experimental.sparse.bcoo import (BCOO, bcoo_dot_general, bcoo_multiply_dense,
                                              bcoo_multiply_sparse, bcoo_reduce_sum,
                                              bcoo_todense)


def _is_scalar(x: Any) -> bool:
    return np.ndim(x) == 0 and not isinstance(x, BCOO)


def matmul(lhs: Any, rhs: Any) -> Any:
    """`lhs @ rhs` with numpy's matmul rules, one or both operands BCOO."""
    if _is_scalar(lhs) or _is_scalar(rhs):
        raise ValueError("matmul: operands must not be scalars.")
    l_nd, r_nd = np.ndim(lhs) if not isinstance(lhs, BCOO) else lhs.ndim, \
        np.ndim(rhs) if not isinstance(rhs, BCOO) else rhs.ndim
    if isinstance(lhs, BCOO) and l_nd > 2 or isinstance(rhs, BCOO) and r_nd > 2:
        if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
            raise NotImplementedError("matmul of two sparse arrays with more than two "
                                      "dimensions.")
        return jnp.matmul(todense_any(lhs), todense_any(rhs))
    l_axis, r_axis = l_nd - 1, (0 if r_nd == 1 else r_nd - 2)
    out = bcoo_dot_general(lhs, rhs, dimension_numbers=(((l_axis,), (r_axis,)), ((), ())))
    if isinstance(lhs, BCOO) and not isinstance(rhs, BCOO) and l_nd == 2 and r_nd > 2:
        out = jnp.moveaxis(out, 0, -2)  # (n, batch..., k) -> (batch..., n, k)
    return out


def todense_any(x: Any) -> Any:
    return bcoo_todense(x) if isinstance(x, BCOO) else jnp.asarray(x)


def multiply(lhs: Any, rhs: Any) -> Any:
    """`lhs * rhs`: sparse times scalar or dense keeps the sparsity (BCOO result)."""
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        return bcoo_multiply_sparse(lhs, rhs)
    sparse, other = (lhs, rhs) if isinstance(lhs, BCOO) else (rhs, lhs)
    return sparse._with_data(bcoo_multiply_dense(sparse, other))


def divide(lhs: BCOO, rhs: Any) -> BCOO:
    """`sparse / dense`: the data divided by the dense values at the stored entries."""
    if isinstance(rhs, BCOO):
        raise NotImplementedError("Division by a sparse array is not implemented.")
    if _is_scalar(rhs):
        return lhs._with_data(lhs.data / rhs)
    picked = bcoo_multiply_dense(lhs._with_data(jnp.ones_like(lhs.data)), rhs)
    return lhs._with_data(lhs.data / picked)


def add(lhs: Any, rhs: Any, negate_rhs: bool = False) -> Any:
    """`lhs + rhs` (or `lhs - rhs`) of two BCOO arrays: their entries concatenated."""
    if not (isinstance(lhs, BCOO) and isinstance(rhs, BCOO)):
        if negate_rhs:
            raise NotImplementedError("Subtraction between sparse and dense array.")
        dense = rhs if isinstance(lhs, BCOO) else lhs
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented "
            "when the output shape is larger than Y.shape. This is to prevent silent "
            f"densification of a large sparse array (dense operand of shape "
            f"{np.shape(dense)}); use X.todense() + Y.")
    if lhs.shape != rhs.shape:
        raise NotImplementedError(f"Addition of sparse arrays of shapes {lhs.shape} and "
                                  f"{rhs.shape} (broadcasting) is not implemented.")
    if (lhs.n_batch, lhs.n_dense) != (rhs.n_batch, rhs.n_dense):
        raise NotImplementedError("Addition between sparse matrices with different "
                                  "batch or dense dimensions.")
    rhs_data = -rhs.data if negate_rhs else rhs.data
    dtype = jnp.result_type(lhs.data, rhs_data)
    batch = tuple(map(max, lhs.data.shape[:lhs.n_batch], rhs.data.shape[:rhs.n_batch],
                      lhs.indices.shape[:lhs.n_batch], rhs.indices.shape[:rhs.n_batch]))

    def grown(x: Any, n_batch: int) -> Any:
        return jnp.broadcast_to(x, batch + x.shape[n_batch:])
    axis = lhs.n_batch
    data = jnp.concatenate([grown(lhs.data, axis).astype(dtype),
                            grown(rhs_data, axis).astype(dtype)], axis=axis)
    index_dtype = jnp.result_type(lhs.indices, rhs.indices)
    indices = jnp.concatenate([grown(lhs.indices, axis).astype(index_dtype),
                               grown(rhs.indices, axis).astype(index_dtype)], axis=axis)
    return BCOO((data, indices), shape=lhs.shape)


def reduce_sum(mat: BCOO, axis: Any = None, dtype: Any = None, out: None = None,
               keepdims: bool = False, **kwargs: Any) -> Any:
    """`mat.sum(axis)`: BCOO for a partial sum, a dense scalar for the total."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to sum is not supported.")
    axes = tuple(range(mat.ndim)) if axis is None else (
        (axis,) if np.ndim(axis) == 0 else tuple(axis))
    axes = tuple(int(a) % mat.ndim for a in axes)
    result = bcoo_reduce_sum(mat.astype(dtype) if dtype is not None else mat, axes=axes)
    if keepdims:
        result = shape_ops.bcoo_reshape(
            result, new_sizes=tuple(1 if i in axes else s for i, s in enumerate(mat.shape)))
    if result.ndim == 0:
        return bcoo_todense(result)
    return result


def _zero_preserving(fun: Callable[[Any], Any]) -> Callable[[BCOO], BCOO]:
    def method(self: BCOO) -> BCOO:
        return self._with_data(fun(self.data))
    return method


def _power(self: BCOO, exponent: Any) -> BCOO:
    if not _is_scalar(exponent) or not np.asarray(exponent) > 0:
        raise NotImplementedError("sparse power: the exponent must be a positive scalar "
                                  "(so that zeros stay zero).")
    return self._with_data(self.data ** exponent)


def attach_methods(cls: type) -> None:
    """Give BCOO its operators and array methods."""
    cls.__matmul__ = lambda self, other: matmul(self, other)
    cls.__rmatmul__ = lambda self, other: matmul(other, self)
    cls.__mul__ = lambda self, other: multiply(self, other)
    cls.__rmul__ = lambda self, other: multiply(other, self)
    cls.__truediv__ = lambda self, other: divide(self, other)
    cls.__add__ = lambda self, other: add(self, other)
    cls.__radd__ = lambda self, other: add(other, self)
    cls.__sub__ = lambda self, other: add(self, other, negate_rhs=True)
    cls.__rsub__ = lambda self, other: add(other, self, negate_rhs=True)
    cls.__neg__ = _zero_preserving(lambda d: -d)
    cls.__pos__ = _zero_preserving(lambda d: d)
    cls.__abs__ = _zero_preserving(jnp.abs)
    cls.__pow__ = _power
    cls.sum = reduce_sum
    cls.reshape = lambda self, *args, **kwargs: shape_ops.reshape_method(self, *args,
                                                                           **kwargs)
    cls.__getitem__ = lambda self, item: shape_ops.getitem(self, item)


attach_methods(BCOO)
