"""BCOO: batched coordinate-format sparse arrays (mirrors `jax.experimental.sparse.bcoo`).

The class is a pytree whose leaves are `data` and `indices`; its shape and the flags
`indices_sorted` / `unique_indices` ride in the tree's static part, so BCOO arrays pass
through `jit`, `vmap` and `grad` (with respect to `data`). The computations are in
`_bcoo_raw`, `_bcoo_ops` and `_bcoo_shape`; this module wraps them as JAX's functions,
methods and primitives.
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.experimental.sparse import _bcoo_ops as ops
from jaxlite.experimental.sparse import _bcoo_raw as raw
from jaxlite.experimental.sparse._base import JAXSparse, composed_primitive
from jaxlite.tree_util import register_pytree_node_class


class SparseInfo(NamedTuple):
    """The static part of a sparse array: its shape and what is known of its indices."""
    shape: tuple[int, ...]
    indices_sorted: bool = False
    unique_indices: bool = False


@register_pytree_node_class
class BCOO(JAXSparse):
    """A batched coordinate-format sparse array (mirrors `jax.experimental.sparse.BCOO`).

    `args` is `(data, indices)`: `indices` of shape `batch + (nse, n_sparse)`, `data` of
    shape `batch + (nse,) + dense`.
    """

    _buffer_names = ("data", "indices")

    def __init__(self, args: tuple[Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False):
        self.data, self.indices = map(jnp.asarray, args)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        super().__init__(args, shape=tuple(shape))
        raw.props_of(self.data, self.indices, self.shape)

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 2

    @property
    def n_sparse(self) -> int:
        return self.indices.shape[-1]

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    @property
    def nse(self) -> int:
        return self.indices.shape[-2]

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    def tree_flatten(self) -> tuple[tuple[Any, Any], dict[str, Any]]:
        return (self.data, self.indices), {"shape": self.shape,
                                           "indices_sorted": self.indices_sorted,
                                           "unique_indices": self.unique_indices}

    @classmethod
    def tree_unflatten(cls, aux_data: dict[str, Any], children: Any) -> "BCOO":
        obj = super().tree_unflatten(aux_data, children)
        data, indices = children
        if hasattr(data, "ndim") and hasattr(indices, "ndim") and indices.ndim >= 1:
            # Under vmap the buffers lose (inside) or gain (outside) leading batch axes:
            # the shape follows them, as the map is over the batch dimensions.
            extra = indices.shape[-1] + data.ndim - 1 - len(obj.shape)
            if extra > 0:
                obj.shape = tuple(data.shape[:extra]) + obj.shape
            elif extra < 0:
                obj.shape = obj.shape[-extra:]
        return obj

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> "BCOO":
        """A BCOO array of the nonzeros of `mat` (mirrors `BCOO.fromdense`)."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = None, n_dense: int = 0,
                          n_batch: int = 0) -> "BCOO":
        """A BCOO array of a scipy.sparse matrix (mirrors `BCOO.from_scipy_sparse`)."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
        mat = mat.tocoo()
        indices = jnp.asarray(np.column_stack((mat.row, mat.col))).astype(
            index_dtype or np.int32)
        return cls((jnp.asarray(mat.data), indices), shape=mat.shape)

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32",
               n_dense: int = 0, n_batch: int = 0, nse: int = 0) -> "BCOO":
        """An all-zero BCOO array with `nse` padding entries."""
        shape = tuple(shape)
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                             f"n_batch={n_batch}, nse={nse}")
        batch, sparse, dense = (shape[:n_batch], shape[n_batch:n_batch + n_sparse],
                                shape[n_batch + n_sparse:])
        data = jnp.zeros(batch + (nse,) + dense, dtype)
        indices = jnp.broadcast_to(jnp.asarray(np.array(sparse, dtype=np.int64), index_dtype),
                                   batch + (nse, n_sparse))
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None, index_dtype: Any = "int32",
             n_batch: int = 0, n_dense: int = 0) -> "BCOO":
        """The identity-like matrix with ones on diagonal `k`, as BCOO."""
        if n_batch or n_dense:
            return bcoo_update_layout(cls._eye(N, M, k, dtype=dtype, index_dtype=index_dtype),
                                      n_batch=n_batch, n_dense=n_dense)
        size = max(0, min(N + min(k, 0), M - max(k, 0)))
        diag = np.arange(size)
        indices = np.stack([diag - min(k, 0), diag + max(k, 0)], axis=1)
        data = jnp.ones((size,), dtype)
        return cls((data, jnp.asarray(indices).astype(index_dtype)), shape=(N, M),
                   indices_sorted=True, unique_indices=True)

    def todense(self) -> Any:
        """The dense array (mirrors `BCOO.todense`)."""
        return bcoo_todense(self)

    def update_layout(self, *, n_batch: int | None = None, n_dense: int | None = None,
                      on_inefficient: str = "error") -> "BCOO":
        """The array with other numbers of batch and dense dimensions."""
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense,
                                  on_inefficient=on_inefficient)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> "BCOO":
        """Duplicate entries summed (and, by default, zero entries removed)."""
        if remove_zeros:
            return bcoo_eliminate_zeros(self, nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> "BCOO":
        """Entries in lexicographic order of their indices."""
        return bcoo_sort_indices(self)

    def transpose(self, axes: Sequence[int] | None = None) -> "BCOO":
        """Axes permuted (mirrors `BCOO.transpose`)."""
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        return bcoo_transpose(self, permutation=axes)

    def astype(self, dtype: Any) -> "BCOO":
        """The array with its data converted to `dtype`."""
        return BCOO((self.data.astype(dtype), self.indices), shape=self.shape,
                     indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def _with_data(self, data: Any) -> "BCOO":
        return BCOO((data, self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)


# ------------------------------------------------------------------------- primitives

def _todense_decomposition(data: Any, indices: Any, *, spinfo: SparseInfo) -> Any:
    return raw.todense(data, indices, spinfo.shape)


def _fromdense_decomposition(mat: Any, *, nse: int, n_batch: int, n_dense: int,
                             index_dtype: Any) -> tuple[Any, Any]:
    return raw.fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                         index_dtype=index_dtype)


def _extract_decomposition(indices: Any, arr: Any, *, assume_unique: bool = True) -> Any:
    data = raw.extract(indices, jnp.asarray(arr))
    if assume_unique or indices.shape[-1] == 0:
        return data
    # A repeated index keeps its value at its first entry only.
    n_batch = indices.ndim - 2
    shape = jnp.shape(arr)
    first = _first_occurrence(indices, shape[n_batch:n_batch + indices.shape[-1]])
    return jnp.where(first.reshape(first.shape + (1,) * (data.ndim - first.ndim)), data, 0)


def _first_occurrence(indices: Any, block: Sequence[int]) -> Any:
    same = (indices[..., :, None, :] == indices[..., None, :, :]).all(-1)
    earlier = jnp.tril(jnp.ones(same.shape[-2:], bool), -1)
    return ~(same & earlier).any(-1)


def _sum_duplicates_decomposition(data: Any, indices: Any, *, spinfo: SparseInfo,
                                  nse: int | None) -> tuple[Any, Any]:
    return raw.sum_duplicates(data, indices, spinfo.shape, nse)


def _sort_indices_decomposition(data: Any, indices: Any, *, spinfo: SparseInfo
                                ) -> tuple[Any, Any]:
    return raw.sort_indices(data, indices, spinfo.shape)


def _transpose_decomposition(data: Any, indices: Any, *, permutation: Sequence[int],
                             spinfo: SparseInfo) -> tuple[Any, Any]:
    return ops.transpose(data, indices, spinfo.shape, permutation)[:2]


def _dot_general_decomposition(lhs_data: Any, lhs_indices: Any, rhs: Any, *,
                               dimension_numbers: Any, preferred_element_type: Any,
                               lhs_spinfo: SparseInfo) -> Any:
    return ops.sparse_dense_dot(lhs_data, lhs_indices, lhs_spinfo.shape, rhs,
                                dimension_numbers, preferred_element_type)


def _spdot_general_decomposition(lhs_data: Any, lhs_indices: Any, rhs_data: Any,
                                 rhs_indices: Any, *, lhs_spinfo: SparseInfo,
                                 rhs_spinfo: SparseInfo, dimension_numbers: Any,
                                 preferred_element_type: Any) -> tuple[Any, Any]:
    return ops.sparse_sparse_dot((lhs_data, lhs_indices, lhs_spinfo.shape),
                                 (rhs_data, rhs_indices, rhs_spinfo.shape),
                                 dimension_numbers, preferred_element_type)[:2]


def _dot_general_sampled_decomposition(A: Any, B: Any, indices: Any, *,
                                       dimension_numbers: Any) -> Any:
    return raw.extract(indices, _dense_dot(A, B, dimension_numbers))


def _dense_dot(lhs: Any, rhs: Any, dimension_numbers: Any) -> Any:
    dtype = jnp.result_type(lhs, rhs)
    return lax.dot_general(jnp.asarray(lhs, dtype), jnp.asarray(rhs, dtype), dimension_numbers)


bcoo_todense_p = composed_primitive("bcoo_todense", _todense_decomposition)
bcoo_fromdense_p = composed_primitive("bcoo_fromdense", _fromdense_decomposition, True)
bcoo_extract_p = composed_primitive("bcoo_extract", _extract_decomposition)
bcoo_sum_duplicates_p = composed_primitive("bcoo_sum_duplicates",
                                           _sum_duplicates_decomposition, True)
bcoo_sort_indices_p = composed_primitive("bcoo_sort_indices", _sort_indices_decomposition,
                                         True)
bcoo_transpose_p = composed_primitive("bcoo_transpose", _transpose_decomposition, True)
bcoo_dot_general_p = composed_primitive("bcoo_dot_general", _dot_general_decomposition)
bcoo_spdot_general_p = composed_primitive("bcoo_spdot_general",
                                          _spdot_general_decomposition, True)
bcoo_dot_general_sampled_p = composed_primitive("bcoo_dot_general_sampled",
                                                _dot_general_sampled_decomposition)


# ------------------------------------------------------------------- public functions

def _check_bcoo(mat: Any, what: str) -> None:
    if not isinstance(mat, BCOO):
        raise TypeError(f"{what} requires a BCOO array, got {type(mat).__name__}.")


def bcoo_todense(mat: BCOO) -> Any:
    """The dense array of a BCOO array (mirrors `jax.experimental.sparse.bcoo_todense`)."""
    _check_bcoo(mat, "bcoo_todense")
    return bcoo_todense_p.bind(mat.data, mat.indices, spinfo=mat._info)


def bcoo_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCOO:
    """A BCOO array of the nonzeros of `mat`, in row-major order, padded to `nse`
    (mirrors `jax.experimental.sparse.bcoo_fromdense`)."""
    mat = jnp.asarray(mat)
    if nse is None:
        counts = raw.stored_count(mat, n_batch, n_dense)
        nse = raw.concrete_or_error(operator.index, counts.max(initial=0),
                                    raw.TRACED_NSE_ERROR)
    nse = raw.concrete_or_error(operator.index, nse, raw.TRACED_NSE_ERROR)
    data, indices = bcoo_fromdense_p.bind(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                          index_dtype=np.dtype(index_dtype))
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_extract(sparr: BCOO, arr: Any, *, assume_unique: bool | None = None) -> BCOO:
    """A BCOO array with `sparr`'s indices and the values of `arr` there
    (mirrors `jax.experimental.sparse.bcoo_extract`)."""
    _check_bcoo(sparr, "bcoo_extract")
    arr = jnp.asarray(arr)
    if tuple(arr.shape) != tuple(sparr.shape):
        raise ValueError(f"shape mismatch: sparr.shape={sparr.shape}, arr.shape={arr.shape}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    data = bcoo_extract_p.bind(sparr.indices, arr, assume_unique=bool(assume_unique))
    return BCOO((data, sparr.indices), shape=sparr.shape,
                indices_sorted=sparr.indices_sorted, unique_indices=sparr.unique_indices)


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None) -> BCOO:
    """Entries with equal indices summed, indices sorted
    (mirrors `jax.experimental.sparse.bcoo_sum_duplicates`)."""
    _check_bcoo(mat, "bcoo_sum_duplicates")
    if nse is not None:
        nse = raw.concrete_or_error(operator.index, nse, "nse argument of bcoo_sum_duplicates.")
    data, indices = bcoo_sum_duplicates_p.bind(mat.data, mat.indices, spinfo=mat._info,
                                               nse=nse)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_eliminate_zeros(mat: BCOO, nse: int | None = None) -> BCOO:
    """Entries whose data are zero removed, duplicates summed."""
    indices = raw.eliminate_zeros(mat.data, mat.indices, mat.shape)
    return bcoo_sum_duplicates(BCOO((mat.data, indices), shape=mat.shape), nse=nse)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """Entries in lexicographic order of their indices
    (mirrors `jax.experimental.sparse.bcoo_sort_indices`)."""
    _check_bcoo(mat, "bcoo_sort_indices")
    data, indices = bcoo_sort_indices_p.bind(mat.data, mat.indices, spinfo=mat._info)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """Axes permuted (mirrors `jax.experimental.sparse.bcoo_transpose`)."""
    _check_bcoo(mat, "bcoo_transpose")
    permutation = tuple(int(a) for a in permutation)
    data, indices = bcoo_transpose_p.bind(mat.data, mat.indices, permutation=permutation,
                                          spinfo=mat._info)
    shape = tuple(mat.shape[a] for a in permutation)
    return BCOO((data, indices), shape=shape, unique_indices=mat.unique_indices)


def bcoo_dot_general(lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: None = None,
                     preferred_element_type: None = None, out_sharding: Any = None) -> Any:
    """lax.dot_general with BCOO operands: dense result if one operand is dense, BCOO if
    both are sparse (mirrors `jax.experimental.sparse.bcoo_dot_general`)."""
    dimension_numbers = tuple(tuple(tuple(int(d) for d in ax) for ax in pair)
                              for pair in dimension_numbers)
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        data, indices = bcoo_spdot_general_p.bind(
            lhs.data, lhs.indices, rhs.data, rhs.indices, lhs_spinfo=lhs._info,
            rhs_spinfo=rhs._info, dimension_numbers=dimension_numbers,
            preferred_element_type=preferred_element_type)
        shape = ops.dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)
        return BCOO((data, indices), shape=shape)
    if isinstance(lhs, BCOO):
        return bcoo_dot_general_p.bind(lhs.data, lhs.indices, jnp.asarray(rhs),
                                       dimension_numbers=dimension_numbers,
                                       preferred_element_type=preferred_element_type,
                                       lhs_spinfo=lhs._info)
    if isinstance(rhs, BCOO):
        return ops.dense_sparse_dot(jnp.asarray(lhs), rhs.data, rhs.indices, rhs.shape,
                                    dimension_numbers, preferred_element_type)
    return _dense_dot(lhs, rhs, dimension_numbers)


def bcoo_dot_general_sampled(A: Any, B: Any, indices: Any, *, dimension_numbers: Any) -> Any:
    """The data, at `indices`, of lax.dot_general(A, B)
    (mirrors `jax.experimental.sparse.bcoo_dot_general_sampled`)."""
    return bcoo_dot_general_sampled_p.bind(jnp.asarray(A), jnp.asarray(B),
                                           jnp.asarray(indices),
                                           dimension_numbers=dimension_numbers)


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """Sum over `axes` (mirrors `jax.experimental.sparse.bcoo_reduce_sum`)."""
    _check_bcoo(mat, "bcoo_reduce_sum")
    data, indices, shape = ops.reduce_sum(mat.data, mat.indices, mat.shape, axes)
    return BCOO((data, indices), shape=shape)


def bcoo_multiply_dense(sp_mat: BCOO, v: Any) -> Any:
    """The data of the elementwise product of `sp_mat` and dense `v` at `sp_mat`'s
    entries (mirrors `jax.experimental.sparse.bcoo_multiply_dense`)."""
    _check_bcoo(sp_mat, "bcoo_multiply_dense")
    return ops.multiply_dense(sp_mat.data, sp_mat.indices, sp_mat.shape, v)


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """The elementwise product of two BCOO arrays
    (mirrors `jax.experimental.sparse.bcoo_multiply_sparse`)."""
    data, indices, shape = ops.multiply_sparse((lhs.data, lhs.indices, lhs.shape),
                                               (rhs.data, rhs.indices, rhs.shape))
    return BCOO((data, indices), shape=shape)


def bcoo_update_layout(mat: BCOO, *, n_batch: int | None = None, n_dense: int | None = None,
                       on_inefficient: str | None = "error") -> BCOO:
    """The array with `n_batch` batch and `n_dense` dense dimensions
    (mirrors `jax.experimental.sparse.bcoo_update_layout`).

    Computed through the dense array, so the new nse is the largest number of stored
    elements per batch member; this needs concrete values (not under `jit`)."""
    _check_bcoo(mat, "bcoo_update_layout")
    n_batch = mat.n_batch if n_batch is None else n_batch
    n_dense = mat.n_dense if n_dense is None else n_dense
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(f"on_inefficient={on_inefficient!r}; expected one of "
                         "'error', 'warn', None.")
    return bcoo_fromdense(bcoo_todense(mat), n_batch=n_batch, n_dense=n_dense,
                          index_dtype=mat.indices.dtype)
