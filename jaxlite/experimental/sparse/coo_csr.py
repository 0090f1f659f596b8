"""Unbatched 2-D sparse matrices: COO, CSR and CSC (mirrors `jax.experimental.sparse.coo`
and `jax.experimental.sparse.csr`).

Padding as JAX's: COO and CSR pad with index 0 and data 0 (CSR's padding lies past
`indptr[-1]`, so no row owns it; COO's adds zero to entry (0, 0)).
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from jaxlite import numpy as jnp
from jaxlite.experimental.sparse import _bcoo_raw as raw
from jaxlite.experimental.sparse._base import JAXSparse, composed_primitive
from jaxlite.tree_util import register_pytree_node_class


def _nse_of(mat: Any, nse: Any) -> int:
    if nse is None:
        nse = (mat != 0).sum()
    return raw.concrete_or_error(operator.index, nse, raw.TRACED_NSE_ERROR)


def _check_2d(mat: Any, what: str) -> None:
    if mat.ndim != 2:
        raise ValueError(f"{what}: expected a 2-dimensional array, got shape {mat.shape}.")


# ------------------------------------------------------------------------------- COO

def _coo_fromdense(mat: Any, *, nse: int, index_dtype: Any) -> tuple[Any, Any, Any]:
    row, col = jnp.nonzero(mat, size=nse)
    data = mat[row, col]
    true_nse = (mat != 0).sum()
    data = jnp.where(jnp.arange(nse) < true_nse, data, jnp.zeros((), data.dtype))
    return data, row.astype(index_dtype), col.astype(index_dtype)


def _coo_todense(data: Any, row: Any, col: Any, *, spinfo: Any) -> Any:
    return jnp.zeros(spinfo.shape, data.dtype).at[row, col].add(data, mode="drop")


def _coo_product(data: Any, row: Any, col: Any, B: Any, *, spinfo: Any,
                 transpose: bool) -> Any:
    """COO times a dense vector or matrix (of the transpose if `transpose`)."""
    rows, cols = (col, row) if transpose else (row, col)
    n_out = spinfo.shape[1] if transpose else spinfo.shape[0]
    dtype = jnp.result_type(data, B)
    picked = B.astype(dtype).at[cols].get(mode="fill", fill_value=0)
    products = data.astype(dtype).reshape((-1,) + (1,) * (B.ndim - 1)) * picked
    return jnp.zeros((n_out,) + B.shape[1:], dtype).at[rows].add(products, mode="drop")


coo_fromdense_p = composed_primitive("coo_fromdense", _coo_fromdense, True)
coo_todense_p = composed_primitive("coo_todense", _coo_todense)
coo_matvec_p = composed_primitive("coo_matvec", _coo_product)
coo_matmat_p = composed_primitive("coo_matmat", _coo_product)


@register_pytree_node_class
class COO(JAXSparse):
    """A 2-D coordinate-format sparse matrix (mirrors `jax.experimental.sparse.COO`)."""

    _buffer_names = ("data", "row", "col")

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int],
                 rows_sorted: bool = False, cols_sorted: bool = False):
        self.data, self.row, self.col = map(jnp.asarray, args)
        self.rows_sorted, self.cols_sorted = rows_sorted, cols_sorted
        super().__init__(args, shape=shape)

    @property
    def nse(self) -> int:
        return self.data.size

    @property
    def _info(self) -> Any:
        return _CooInfo(self.shape, self.rows_sorted, self.cols_sorted)

    def tree_flatten(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.data, self.row, self.col), {"shape": self.shape,
                                                 "rows_sorted": self.rows_sorted,
                                                 "cols_sorted": self.cols_sorted}

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32
                  ) -> "COO":
        """A COO matrix of the nonzeros of `mat` (mirrors `COO.fromdense`)."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32"
               ) -> "COO":
        if len(shape) != 2:
            raise ValueError(f"COO must have ndim=2; got shape={shape}")
        data, index = jnp.empty(0, dtype), jnp.empty(0, index_dtype)
        return cls((data, index, index), shape=shape, rows_sorted=True, cols_sorted=True)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None, index_dtype: Any = "int32"
             ) -> "COO":
        size = max(0, min(N + min(k, 0), M - max(k, 0)))
        diag = np.arange(size)
        return cls((jnp.ones(size, dtype), jnp.asarray(diag - min(k, 0), index_dtype),
                    jnp.asarray(diag + max(k, 0), index_dtype)), shape=(N, M),
                   rows_sorted=True, cols_sorted=True)

    def todense(self) -> Any:
        return coo_todense(self)

    def transpose(self, axes: Any = None) -> "COO":
        if axes not in (None, (1, 0), [1, 0]):
            raise NotImplementedError(f"axes={axes} not supported for COO.transpose")
        return COO((self.data, self.col, self.row), shape=self.shape[::-1],
                   rows_sorted=self.cols_sorted, cols_sorted=self.rows_sorted)

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        if other.ndim == 1:
            return coo_matvec(self, other)
        if other.ndim == 2:
            return coo_matmat(self, other)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")


class _CooInfo(tuple):
    def __new__(cls, shape: tuple, rows_sorted: bool, cols_sorted: bool) -> "_CooInfo":
        return super().__new__(cls, (shape, rows_sorted, cols_sorted))

    shape = property(lambda self: self[0])


def coo_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
    """A COO matrix of the nonzeros of dense `mat`, row by row, padded to `nse`
    (mirrors `jax.experimental.sparse.coo_fromdense`)."""
    mat = jnp.asarray(mat)
    _check_2d(mat, "coo_fromdense")
    nse = _nse_of(mat, nse)
    bufs = coo_fromdense_p.bind(mat, nse=nse, index_dtype=np.dtype(index_dtype))
    return COO(tuple(bufs), shape=mat.shape, rows_sorted=True)


def coo_todense(mat: COO) -> Any:
    """The dense matrix of a COO matrix (mirrors `jax.experimental.sparse.coo_todense`)."""
    return coo_todense_p.bind(mat.data, mat.row, mat.col, spinfo=mat._info)


def _product_check(mat: Any, B: Any, transpose: bool, ndim: int, what: str) -> Any:
    B = jnp.asarray(B)
    if B.ndim != ndim:
        raise ValueError(f"{what}: expected a {ndim}-dimensional operand, got {B.shape}.")
    if B.shape[0] != mat.shape[0 if transpose else 1]:
        raise ValueError(f"{what}: shapes {mat.shape} (transpose={transpose}) and "
                         f"{B.shape} do not match.")
    return B


def coo_matvec(mat: COO, v: Any, transpose: bool = False) -> Any:
    """COO matrix times a dense vector (mirrors `jax.experimental.sparse.coo_matvec`)."""
    v = _product_check(mat, v, transpose, 1, "coo_matvec")
    return coo_matvec_p.bind(mat.data, mat.row, mat.col, v, spinfo=mat._info,
                             transpose=bool(transpose))


def coo_matmat(mat: COO, B: Any, *, transpose: bool = False) -> Any:
    """COO matrix times a dense matrix (mirrors `jax.experimental.sparse.coo_matmat`)."""
    B = _product_check(mat, B, transpose, 2, "coo_matmat")
    return coo_matmat_p.bind(mat.data, mat.row, mat.col, B, spinfo=mat._info,
                             transpose=bool(transpose))


# ------------------------------------------------------------------------- CSR, CSC

def csr_rows(indptr: Any, nse: int) -> Any:
    """The row of each of `nse` entries; entries past indptr[-1] get the row count."""
    return jnp.searchsorted(indptr[1:], jnp.arange(nse, dtype=indptr.dtype),
                            side="right").astype(indptr.dtype)


def _csr_fromdense(mat: Any, *, nse: int, index_dtype: Any) -> tuple[Any, Any, Any]:
    data, row, col = _coo_fromdense(mat, nse=nse, index_dtype=index_dtype)
    counts = (mat != 0).sum(1).astype(index_dtype)
    indptr = jnp.concatenate([jnp.zeros(1, index_dtype), jnp.cumsum(counts)])
    return data, col, indptr.astype(index_dtype)


def _csr_todense(data: Any, indices: Any, indptr: Any, *, shape: tuple) -> Any:
    rows = csr_rows(indptr, data.shape[0])
    return jnp.zeros(shape, data.dtype).at[rows, indices].add(data, mode="drop")


def _csr_product(data: Any, indices: Any, indptr: Any, B: Any, *, shape: tuple,
                 transpose: bool) -> Any:
    rows = csr_rows(indptr, data.shape[0])
    return _coo_product(data, rows, indices, B, spinfo=_CooInfo(shape, True, False),
                        transpose=transpose)


csr_fromdense_p = composed_primitive("csr_fromdense", _csr_fromdense, True)
csr_todense_p = composed_primitive("csr_todense", _csr_todense)
csr_matvec_p = composed_primitive("csr_matvec", _csr_product)
csr_matmat_p = composed_primitive("csr_matmat", _csr_product)


class _CompressedMatrix(JAXSparse):
    _buffer_names = ("data", "indices", "indptr")

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int]):
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        super().__init__(args, shape=shape)

    @property
    def nse(self) -> int:
        return self.data.size

    def tree_flatten(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.data, self.indices, self.indptr), {"shape": self.shape}


@register_pytree_node_class
class CSR(_CompressedMatrix):
    """A 2-D compressed-sparse-row matrix (mirrors `jax.experimental.sparse.CSR`)."""

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32
                  ) -> "CSR":
        """A CSR matrix of the nonzeros of `mat` (mirrors `CSR.fromdense`)."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32"
               ) -> "CSR":
        if len(shape) != 2:
            raise ValueError(f"CSR must have ndim=2; got shape={shape}")
        return cls((jnp.empty(0, dtype), jnp.empty(0, index_dtype),
                    jnp.zeros(shape[0] + 1, index_dtype)), shape=shape)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None, index_dtype: Any = "int32"
             ) -> "CSR":
        coo = COO._eye(N, M, k, dtype=dtype, index_dtype=index_dtype)
        counts = np.bincount(np.asarray(coo.row), minlength=N)
        indptr = jnp.asarray(np.concatenate([[0], np.cumsum(counts)]), index_dtype)
        return cls((coo.data, coo.col, indptr), shape=(N, M))

    def todense(self) -> Any:
        return csr_todense(self)

    def transpose(self, axes: Any = None) -> "CSC":
        if axes not in (None, (1, 0), [1, 0]):
            raise NotImplementedError(f"axes={axes} not supported for CSR.transpose")
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        if other.ndim == 1:
            return csr_matvec(self, other)
        if other.ndim == 2:
            return csr_matmat(self, other)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")


@register_pytree_node_class
class CSC(_CompressedMatrix):
    """A 2-D compressed-sparse-column matrix (mirrors `jax.experimental.sparse.CSC`):
    the CSR buffers of its transpose."""

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32
                  ) -> "CSC":
        """A CSC matrix of the nonzeros of `mat`, column by column."""
        return csr_fromdense(jnp.asarray(mat).T, nse=nse, index_dtype=index_dtype).T

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32"
               ) -> "CSC":
        return CSR._empty(tuple(shape)[::-1], dtype=dtype, index_dtype=index_dtype).T

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None, index_dtype: Any = "int32"
             ) -> "CSC":
        return CSR._eye(M, N, -k, dtype=dtype, index_dtype=index_dtype).T

    def todense(self) -> Any:
        return self.T.todense().T

    def transpose(self, axes: Any = None) -> CSR:
        if axes not in (None, (1, 0), [1, 0]):
            raise NotImplementedError(f"axes={axes} not supported for CSC.transpose")
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        if other.ndim == 1:
            return csr_matvec(self.T, other, transpose=True)
        if other.ndim == 2:
            return csr_matmat(self.T, other, transpose=True)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")


def csr_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSR:
    """A CSR matrix of the nonzeros of dense `mat`, padded to `nse`
    (mirrors `jax.experimental.sparse.csr_fromdense`)."""
    mat = jnp.asarray(mat)
    _check_2d(mat, "csr_fromdense")
    nse = _nse_of(mat, nse)
    bufs = csr_fromdense_p.bind(mat, nse=nse, index_dtype=np.dtype(index_dtype))
    return CSR(tuple(bufs), shape=mat.shape)


def csr_todense(mat: CSR) -> Any:
    """The dense matrix of a CSR matrix (mirrors `jax.experimental.sparse.csr_todense`)."""
    return csr_todense_p.bind(mat.data, mat.indices, mat.indptr, shape=mat.shape)


def csr_matvec(mat: CSR, v: Any, transpose: bool = False) -> Any:
    """CSR matrix times a dense vector (mirrors `jax.experimental.sparse.csr_matvec`)."""
    v = _product_check(mat, v, transpose, 1, "csr_matvec")
    return csr_matvec_p.bind(mat.data, mat.indices, mat.indptr, v, shape=mat.shape,
                             transpose=bool(transpose))


def csr_matmat(mat: CSR, B: Any, *, transpose: bool = False) -> Any:
    """CSR matrix times a dense matrix (mirrors `jax.experimental.sparse.csr_matmat`)."""
    B = _product_check(mat, B, transpose, 2, "csr_matmat")
    return csr_matmat_p.bind(mat.data, mat.indices, mat.indptr, B, shape=mat.shape,
                             transpose=bool(transpose))
