"""The computations behind BCOO, on its buffers (`data`, `indices`) and its shape.

Layout (as JAX's): `indices` has shape `batch + (nse, n_sparse)` and `data` has shape
`batch + (nse,) + dense`; a batch axis of size 1 in either broadcasts. Padding entries have
every index equal to the dimension's size (out of bounds) and data 0; todense drops
out-of-bounds entries, extract reads 0 for them.
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core.trace_state import concrete_or_error
from jaxlite.experimental.sparse._base import broadcast_batch, nfold_vmap

TRACED_NSE_ERROR = ("The error arose for the nse argument of bcoo_fromdense. In order for "
                    "BCOO.fromdense() to be used in traced/compiled code, you must pass a "
                    "concrete value to the nse (number of stored elements) argument.")


class Props(NamedTuple):
    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int


def props_of(data: Any, indices: Any, shape: Sequence[int]) -> Props:
    """The layout of a BCOO array, after checking that its buffers agree with `shape`."""
    if indices.ndim < 2:
        raise ValueError(f"BCOO indices must have at least 2 dimensions; got {indices.shape}")
    n_batch, (nse, n_sparse) = indices.ndim - 2, indices.shape[-2:]
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0 or data.ndim != n_batch + 1 + n_dense:
        raise ValueError(f"Invalid BCOO buffers for shape {tuple(shape)}: data "
                         f"{data.shape}, indices {indices.shape}")
    for i in range(n_batch):
        if {data.shape[i], indices.shape[i]} - {1, shape[i]}:
            raise ValueError(f"BCOO batch dimension {i}: data {data.shape} and indices "
                             f"{indices.shape} do not match shape {tuple(shape)}")
    if data.shape[n_batch] != nse or data.shape[n_batch + 1:] != tuple(shape[len(shape)
                                                                             - n_dense:]):
        raise ValueError(f"BCOO data shape {data.shape} does not match indices "
                         f"{indices.shape} and shape {tuple(shape)}")
    return Props(n_batch, n_sparse, n_dense, nse)


def _columns(indices: Any, n_sparse: int) -> tuple[Any, ...]:
    return tuple(indices[:, k] for k in range(n_sparse))


def todense(data: Any, indices: Any, shape: Sequence[int]) -> Any:
    """The dense array a BCOO array stands for (duplicates add)."""
    p = props_of(data, indices, shape)
    data, indices = broadcast_batch(data, indices, shape[:p.n_batch])
    block = tuple(shape[p.n_batch:])

    def one(d: Any, i: Any) -> Any:
        if p.n_sparse == 0:
            return d.sum(0, dtype=d.dtype)
        return jnp.zeros(block, d.dtype).at[_columns(i, p.n_sparse)].add(d, mode="drop")
    return nfold_vmap(one, p.n_batch)(data, indices)


def extract(indices: Any, arr: Any) -> Any:
    """The data of a BCOO array with `indices` read from the dense `arr` (0 out of bounds)."""
    n_batch, (nse, n_sparse) = indices.ndim - 2, indices.shape[-2:]
    indices = jnp.broadcast_to(indices, arr.shape[:n_batch] + indices.shape[n_batch:])

    def one(i: Any, a: Any) -> Any:
        if n_sparse == 0:
            return jnp.broadcast_to(a[None], (nse,) + a.shape)
        return a.at[_columns(i, n_sparse)].get(mode="fill", fill_value=0)
    return nfold_vmap(one, n_batch)(indices, arr)


def stored_count(mat: Any, n_batch: int, n_dense: int) -> Any:
    """The number of nonzero entries (dense blocks) per batch member."""
    mask = mat != 0
    if n_dense:
        mask = mask.any(tuple(range(mask.ndim - n_dense, mask.ndim)))
    return mask.sum(tuple(range(n_batch, mask.ndim)))


def fromdense(mat: Any, *, nse: Any, n_batch: int, n_dense: int, index_dtype: Any
              ) -> tuple[Any, Any]:
    """`(data, indices)` of the nonzeros of `mat`, in row-major order, padded to `nse`."""
    mat = jnp.asarray(mat)
    n_sparse = mat.ndim - n_batch - n_dense
    if n_sparse < 0 or n_batch < 0 or n_dense < 0:
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for an array of "
                         f"shape {mat.shape}")
    if nse is None:
        counts = stored_count(mat, n_batch, n_dense)
        nse = concrete_or_error(operator.index, counts.max(initial=0), TRACED_NSE_ERROR)
    nse = concrete_or_error(operator.index, nse, TRACED_NSE_ERROR)
    mask = mat != 0
    if n_dense:
        mask = mask.any(tuple(range(mask.ndim - n_dense, mask.ndim)))

    def nonzero(m: Any) -> Any:
        if n_sparse == 0:
            return jnp.zeros((nse, 0), index_dtype)
        found = jnp.nonzero(m, size=nse, fill_value=m.shape)
        return jnp.stack(found, axis=1).astype(index_dtype)
    indices = nfold_vmap(nonzero, n_batch)(mask)
    data = extract(indices, mat)
    true_nse = mask.sum(tuple(range(n_batch, mask.ndim)))[..., None]
    stored = lax.broadcasted_iota(true_nse.dtype, (1,) * n_batch + (nse,), n_batch) < true_nse
    stored = stored.reshape(stored.shape + (1,) * n_dense)
    return jnp.where(stored, data, jnp.zeros((), data.dtype)), indices


def _sort_rows(indices: Any) -> tuple[Any, Any]:
    """The rows of `indices` (N, n_sparse) in lexicographic order, and the permutation."""
    n_sparse = indices.shape[-1]
    perm = lax.iota(np.int32, indices.shape[0])
    *cols, perm = lax.sort((*_columns(indices, n_sparse), perm), num_keys=n_sparse)
    return jnp.stack(cols, axis=1), perm


def _unique_rows(indices: Any, block: Sequence[int]) -> tuple[Any, Any, Any]:
    """Sorted unique rows (out-of-bounds rows become `block`, sorted last), padded to N with
    `block`; the inverse map; and the number of unique in-bounds rows."""
    n = indices.shape[0]
    fill = jnp.asarray(np.array(block), indices.dtype)[None, :]
    if n == 0:
        return indices, jnp.zeros((0,), np.int32), jnp.zeros((), np.int32)
    indices = jnp.where((indices >= fill).any(-1, keepdims=True), fill, indices)
    rows, perm = _sort_rows(indices)
    is_new = jnp.concatenate([jnp.ones((1,), bool), (rows[1:] != rows[:-1]).any(-1)])
    group = jnp.cumsum(is_new, dtype=np.int32) - 1
    inverse = jnp.zeros((n,), np.int32).at[perm].set(group)
    unique = jnp.broadcast_to(fill, (n, len(block))).at[group].set(rows)
    has_fill = (indices == fill).all(-1).any()
    return unique, inverse, group[-1] + 1 - has_fill.astype(np.int32)


def pad_indices(indices: Any, nse: int, block: Sequence[int]) -> Any:
    """`indices` cut or padded (with out-of-bounds rows) to `nse` entries."""
    have = indices.shape[-2]
    if nse <= have:
        return indices[..., :nse, :]
    fill = jnp.broadcast_to(jnp.asarray(np.array(block), indices.dtype),
                            indices.shape[:-2] + (nse - have, indices.shape[-1]))
    return jnp.concatenate([indices, fill], axis=indices.ndim - 2)


def sum_duplicates(data: Any, indices: Any, shape: Sequence[int], nse: Any
                   ) -> tuple[Any, Any]:
    """Entries with equal indices summed; indices sorted, out-of-bounds entries last."""
    p = props_of(data, indices, shape)
    block = tuple(shape[p.n_batch:p.n_batch + p.n_sparse])
    if p.n_sparse == 0:
        nse = 1 if nse is None else nse
        data = data.sum(p.n_batch, keepdims=True, dtype=data.dtype)
        return pad_data(data, nse, p.n_batch), jnp.zeros(indices.shape[:-2] + (nse, 0),
                                                         indices.dtype)
    unique, inverse, counts = nfold_vmap(lambda i: _unique_rows(i, block), p.n_batch)(indices)
    if nse is None:
        nse = concrete_or_error(
            operator.index, counts.max(initial=0),
            "bcoo_sum_duplicates: nse must be specified when using the function within "
            "jit, vmap, and other transformations requiring abstract evaluation.")
    unique = pad_indices(unique, nse, block)
    batch = tuple(map(max, data.shape[:p.n_batch], indices.shape[:p.n_batch]))
    out = jnp.zeros(batch + (nse,) + data.shape[p.n_batch + 1:], data.dtype)
    data, inverse = broadcast_batch(data, inverse[..., None], batch)
    add = nfold_vmap(lambda o, m, d: o.at[m[:, 0]].add(d, mode="drop"), p.n_batch)
    return add(out, inverse, data), unique


def pad_data(data: Any, nse: int, n_batch: int) -> Any:
    """`data` cut or padded with zeros to `nse` entries along its axis `n_batch`."""
    have = data.shape[n_batch]
    if nse <= have:
        return lax.slice_in_dim(data, 0, nse, axis=n_batch)
    widths = [(0, 0)] * data.ndim
    widths[n_batch] = (0, nse - have)
    return jnp.pad(data, widths)


def sort_indices(data: Any, indices: Any, shape: Sequence[int]) -> tuple[Any, Any]:
    """Entries in lexicographic order of their indices (duplicates kept)."""
    p = props_of(data, indices, shape)
    if p.n_sparse == 0 or p.nse == 0:
        return data, indices
    batch = tuple(map(max, data.shape[:p.n_batch], indices.shape[:p.n_batch]))
    data, indices = broadcast_batch(data, indices, batch)

    def one(d: Any, i: Any) -> tuple[Any, Any]:
        rows, perm = _sort_rows(i)
        return d[perm], rows
    return nfold_vmap(one, p.n_batch)(data, indices)


def eliminate_zeros(data: Any, indices: Any, shape: Sequence[int]) -> Any:
    """`indices` with the entries whose data are all zero moved out of bounds."""
    p = props_of(data, indices, shape)
    zero = (data == 0).all(tuple(range(p.n_batch + 1, data.ndim)))
    shared = tuple(i for i, s in enumerate(indices.shape[:p.n_batch]) if s == 1)
    zero = zero.all(shared, keepdims=True)
    fill = jnp.asarray(np.array(shape[p.n_batch:p.n_batch + p.n_sparse]), indices.dtype)
    return jnp.where(zero[..., None], fill, indices)


def in_bounds(indices: Any, block: Sequence[int]) -> Any:
    """Whether each entry's indices lie inside `block` (the sparse dimensions)."""
    return (indices < jnp.asarray(np.array(block, dtype=np.int64), indices.dtype)).all(-1)
