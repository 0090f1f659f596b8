"""BCSR: batched compressed-sparse-row arrays (mirrors `jax.experimental.sparse.bcsr`).

`indices` (column of each entry) has shape `batch + (nse,)`, `indptr` shape
`batch + (rows + 1,)`, `data` shape `batch + (nse,) + dense`; padding entries lie past
`indptr[-1]` with column index equal to the column count. The operations convert to BCOO
(rows read off `indptr`) and back.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from jaxlite import numpy as jnp
from jaxlite.experimental.sparse import _bcoo_raw as raw
from jaxlite.experimental.sparse import bcoo_shape
from jaxlite.experimental.sparse._base import (JAXSparse, composed_primitive, nfold_vmap)
from jaxlite.experimental.sparse.bcoo import (BCOO, bcoo_dot_general, bcoo_sort_indices,
                                              bcoo_sum_duplicates)
from jaxlite.experimental.sparse.coo_csr import csr_rows
from jaxlite.tree_util import register_pytree_node_class


def _bcoo_indices(indices: Any, indptr: Any) -> Any:
    """BCOO indices (row, column) of BCSR buffers; padding rows are out of bounds."""
    n_batch = indices.ndim - 1
    batch = tuple(map(max, indices.shape[:n_batch], indptr.shape[:n_batch]))
    indices = jnp.broadcast_to(indices, batch + indices.shape[n_batch:])
    indptr = jnp.broadcast_to(indptr, batch + indptr.shape[n_batch:])

    def one(cols: Any, ptr: Any) -> Any:
        return jnp.stack([csr_rows(ptr, cols.shape[0]), cols.astype(ptr.dtype)], axis=-1)
    return nfold_vmap(one, n_batch)(indices, indptr)


def _from_bcoo_buffers(data: Any, indices: Any, shape: Sequence[int], n_batch: int
                       ) -> tuple[Any, Any, Any]:
    """BCSR buffers of sorted BCOO buffers with two sparse dimensions."""
    rows, cols = shape[n_batch], shape[n_batch + 1]

    def one(idx: Any) -> tuple[Any, Any]:
        inside = raw.in_bounds(idx, (rows, cols))
        counts = jnp.zeros(rows, idx.dtype).at[idx[:, 0]].add(inside.astype(idx.dtype),
                                                               mode="drop")
        indptr = jnp.concatenate([jnp.zeros(1, idx.dtype), jnp.cumsum(counts)])
        column = jnp.where(inside, idx[:, 1], jnp.asarray(cols, idx.dtype))
        return column, indptr.astype(idx.dtype)
    column, indptr = nfold_vmap(one, n_batch)(indices)
    return data, column, indptr


def _bcsr_fromdense(mat: Any, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
                    ) -> tuple[Any, Any, Any]:
    data, indices = raw.fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                  index_dtype=index_dtype)
    return _from_bcoo_buffers(data, indices, mat.shape, n_batch)


def _bcsr_todense(data: Any, indices: Any, indptr: Any, *, spinfo: Any) -> Any:
    return raw.todense(data, _bcoo_indices(indices, indptr), spinfo.shape)


def _bcsr_extract(indices: Any, indptr: Any, mat: Any) -> Any:
    return raw.extract(_bcoo_indices(indices, indptr), jnp.asarray(mat))


def _bcsr_dot_general(lhs_data: Any, lhs_indices: Any, lhs_indptr: Any, rhs: Any, *,
                      dimension_numbers: Any, preferred_element_type: Any, lhs_spinfo: Any
                      ) -> Any:
    lhs = BCOO((lhs_data, _bcoo_indices(lhs_indices, lhs_indptr)), shape=lhs_spinfo.shape)
    return bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                            preferred_element_type=preferred_element_type)


bcsr_fromdense_p = composed_primitive("bcsr_fromdense", _bcsr_fromdense, True)
bcsr_todense_p = composed_primitive("bcsr_todense", _bcsr_todense)
bcsr_extract_p = composed_primitive("bcsr_extract", _bcsr_extract)
bcsr_dot_general_p = composed_primitive("bcsr_dot_general", _bcsr_dot_general)


@register_pytree_node_class
class BCSR(JAXSparse):
    """A batched compressed-sparse-row array (mirrors `jax.experimental.sparse.BCSR`).

    `args` is `(data, indices, indptr)`."""

    _buffer_names = ("data", "indices", "indptr")

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False):
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices
        super().__init__(args, shape=shape)
        if self.n_dense < 0 or len(self.shape) < self.n_batch + 2:
            raise ValueError(f"Invalid BCSR buffers for shape {self.shape}: data "
                             f"{self.data.shape}, indices {self.indices.shape}, indptr "
                             f"{self.indptr.shape}")

    n_sparse = property(lambda self: 2)
    n_batch = property(lambda self: self.indices.ndim - 1)
    n_dense = property(lambda self: self.data.ndim - self.indices.ndim)
    nse = property(lambda self: self.indices.shape[-1])

    @property
    def _info(self) -> Any:
        return _Info(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def _sparse_shape(self) -> tuple[int, ...]:
        return self.shape[self.n_batch:self.n_batch + 2]

    def tree_flatten(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.data, self.indices, self.indptr), {
            "shape": self.shape, "indices_sorted": self.indices_sorted,
            "unique_indices": self.unique_indices}

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> "BCSR":
        """A BCSR array of the nonzeros of `mat` (mirrors `BCSR.fromdense`)."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> "BCSR":
        """The BCSR array of a BCOO array with two sparse dimensions."""
        if arr.n_sparse != 2:
            raise NotImplementedError(f"BSCR.from_bcoo requires n_sparse=2; got "
                                      f"arr.n_sparse={arr.n_sparse}")
        if not arr.indices_sorted:
            arr = bcoo_sort_indices(arr)
        return cls(_from_bcoo_buffers(arr.data, arr.indices, arr.shape, arr.n_batch),
                   shape=arr.shape, indices_sorted=True, unique_indices=arr.unique_indices)

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = None, n_dense: int = 0,
                          n_batch: int = 0) -> "BCSR":
        """The BCSR array of a scipy.sparse matrix."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCSR.fromscipy with nonzero n_dense/n_batch")
        mat = mat.tocsr()
        index_dtype = index_dtype or np.int32
        return cls((jnp.asarray(mat.data), jnp.asarray(mat.indices).astype(index_dtype),
                    jnp.asarray(mat.indptr).astype(index_dtype)), shape=mat.shape)

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32",
               n_dense: int = 0, n_batch: int = 0, nse: int = 0) -> "BCSR":
        empty = BCOO._empty(shape, dtype=dtype, index_dtype=index_dtype, n_dense=n_dense,
                            n_batch=n_batch, nse=nse)
        return cls.from_bcoo(empty)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None, index_dtype: Any = "int32",
             n_batch: int = 0, n_dense: int = 0) -> "BCSR":
        return cls.from_bcoo(BCOO._eye(N, M, k, dtype=dtype, index_dtype=index_dtype,
                                       n_batch=n_batch, n_dense=n_dense))

    def to_bcoo(self) -> BCOO:
        """The BCOO array with the same entries."""
        return BCOO((self.data, _bcoo_indices(self.indices, self.indptr)), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def todense(self) -> Any:
        return bcsr_todense(self)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> "BCSR":
        """Duplicate entries summed (and zero entries removed by default)."""
        return BCSR.from_bcoo(self.to_bcoo().sum_duplicates(nse=nse,
                                                            remove_zeros=remove_zeros))

    def transpose(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Tranpose is not implemented.")

    def __matmul__(self, other: Any) -> Any:
        return self.to_bcoo() @ other

    def __rmatmul__(self, other: Any) -> Any:
        return other @ self.to_bcoo()


class _Info(tuple):
    def __new__(cls, shape: tuple, indices_sorted: bool, unique_indices: bool) -> "_Info":
        return super().__new__(cls, (shape, indices_sorted, unique_indices))

    shape = property(lambda self: self[0])


def _check_bcsr(mat: Any, what: str) -> None:
    if not isinstance(mat, BCSR):
        raise TypeError(f"{what} requires a BCSR array, got {type(mat).__name__}.")


def bcsr_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCSR:
    """A BCSR array of the nonzeros of dense `mat`, padded to `nse`
    (mirrors `jax.experimental.sparse.bcsr_fromdense`)."""
    mat = jnp.asarray(mat)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    if nse is None:
        counts = raw.stored_count(mat, n_batch, n_dense)
        nse = counts.max(initial=0)
    nse = raw.concrete_or_error(operator.index, nse, raw.TRACED_NSE_ERROR)
    bufs = bcsr_fromdense_p.bind(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                 index_dtype=np.dtype(index_dtype))
    return BCSR(tuple(bufs), shape=mat.shape)


def bcsr_todense(mat: BCSR) -> Any:
    """The dense array of a BCSR array (mirrors `jax.experimental.sparse.bcsr_todense`)."""
    _check_bcsr(mat, "bcsr_todense")
    return bcsr_todense_p.bind(mat.data, mat.indices, mat.indptr, spinfo=mat._info)


def bcsr_extract(indices: Any, indptr: Any, mat: Any) -> Any:
    """The BCSR data at (indices, indptr) read from dense `mat`
    (mirrors `jax.experimental.sparse.bcsr_extract`)."""
    return bcsr_extract_p.bind(jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(mat))


def bcsr_dot_general(lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: None = None,
                     preferred_element_type: None = None, out_sharding: Any = None) -> Any:
    """lax.dot_general of a BCSR array and a dense array
    (mirrors `jax.experimental.sparse.bcsr_dot_general`)."""
    if isinstance(rhs, JAXSparse):
        raise NotImplementedError("bcsr_dot_general: the right operand must be dense.")
    if isinstance(lhs, BCSR):
        return bcsr_dot_general_p.bind(lhs.data, lhs.indices, lhs.indptr, jnp.asarray(rhs),
                                       dimension_numbers=dimension_numbers,
                                       preferred_element_type=preferred_element_type,
                                       lhs_spinfo=lhs._info)
    return bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                            preferred_element_type=preferred_element_type)


def bcsr_sum_duplicates(mat: BCSR, nse: int | None = None) -> BCSR:
    """Duplicate entries summed (mirrors `jax.experimental.sparse.bcsr_sum_duplicates`)."""
    _check_bcsr(mat, "bcsr_sum_duplicates")
    return BCSR.from_bcoo(bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_concatenate(operands: Sequence[BCSR], *, dimension: int) -> BCSR:
    """lax.concatenate of BCSR arrays (mirrors `jax.experimental.sparse.bcsr_concatenate`)."""
    for op in operands:
        _check_bcsr(op, "bcsr_concatenate")
    joined = bcoo_shape.bcoo_concatenate([op.to_bcoo() for op in operands],
                                         dimension=dimension)
    return BCSR.from_bcoo(joined)


def bcsr_broadcast_in_dim(mat: BCSR, *, shape: Sequence[int],
                          broadcast_dimensions: Sequence[int], sharding: Any = None) -> BCSR:
    """lax.broadcast_in_dim of a BCSR array
    (mirrors `jax.experimental.sparse.bcsr_broadcast_in_dim`)."""
    _check_bcsr(mat, "bcsr_broadcast_in_dim")
    out = bcoo_shape.bcoo_broadcast_in_dim(mat.to_bcoo(), shape=shape,
                                           broadcast_dimensions=broadcast_dimensions)
    if out.n_sparse != 2:
        raise ValueError("bcsr_broadcast_in_dim: the result must keep two sparse "
                         "dimensions (new dimensions become batch or dense ones).")
    return BCSR.from_bcoo(out)
