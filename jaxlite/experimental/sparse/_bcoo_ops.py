"""BCOO contractions and reductions on the buffers: dot_general with dense and sparse
operands, reduce_sum, transpose and elementwise products.

Contractions of an unbatched BCOO array without dense dimensions gather the dense operand's
slices at the stored indices and scatter-add the products; other layouts go through the
dense array (the same values, without the memory saving).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.experimental.sparse import _bcoo_raw as raw
from jaxlite.experimental.sparse._base import broadcast_batch


def parse_dimension_numbers(dimension_numbers: Any) -> tuple[tuple[int, ...], ...]:
    """`((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))` as tuples of ints."""
    (lc, rc), (lb, rb) = dimension_numbers
    return tuple(map(int, lc)), tuple(map(int, rc)), tuple(map(int, lb)), tuple(map(int, rb))


def dot_general_shape(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                      dimension_numbers: Any) -> tuple[int, ...]:
    """The output shape of lax.dot_general, with its TypeError for mismatched dimensions."""
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    if [lhs_shape[d] for d in lc] != [rhs_shape[d] for d in rc]:
        raise TypeError("dot_general requires contracting dimensions to have the same "
                        f"shape, got {[lhs_shape[d] for d in lc]} and "
                        f"{[rhs_shape[d] for d in rc]}.")
    if [lhs_shape[d] for d in lb] != [rhs_shape[d] for d in rb]:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions "
                        f"to have the same shape, got {[lhs_shape[d] for d in lb]} and "
                        f"{[rhs_shape[d] for d in rb]}.")
    free_l = [s for i, s in enumerate(lhs_shape) if i not in lc + lb]
    free_r = [s for i, s in enumerate(rhs_shape) if i not in rc + rb]
    return tuple([lhs_shape[d] for d in lb] + free_l + free_r)


def _result_dtype(a: Any, b: Any, preferred: Any) -> Any:
    return np.dtype(preferred) if preferred is not None else jnp.result_type(a, b)


def sparse_dense_dot(data: Any, indices: Any, shape: Sequence[int], rhs: Any,
                     dimension_numbers: Any, preferred_element_type: Any = None) -> Any:
    """lax.dot_general(todense(lhs), rhs, dimension_numbers) for a BCOO lhs."""
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    dot_general_shape(shape, rhs.shape, dimension_numbers)
    p = raw.props_of(data, indices, shape)
    dtype = _result_dtype(data, rhs, preferred_element_type)
    if p.n_batch or p.n_dense or lb:
        dense = raw.todense(data, indices, shape).astype(dtype)
        return lax.dot_general(dense, rhs.astype(dtype), dimension_numbers)
    free = [d for d in range(len(shape)) if d not in lc]
    rhs_free = [d for d in range(rhs.ndim) if d not in rc]
    valid = raw.in_bounds(indices, shape)
    data = jnp.where(valid, data, 0).astype(dtype)
    # rhs with its contracting dimensions first, read at each entry's contracting indices.
    moved = jnp.transpose(rhs.astype(dtype), rc + tuple(rhs_free))
    picked = moved.at[tuple(indices[:, d] for d in lc)].get(mode="fill", fill_value=0)
    products = data.reshape(data.shape + (1,) * len(rhs_free)) * picked
    out_shape = tuple(shape[d] for d in free) + tuple(rhs.shape[d] for d in rhs_free)
    if not free:
        return products.sum(0, dtype=dtype)
    out = jnp.zeros(out_shape, dtype)
    return out.at[tuple(indices[:, d] for d in free)].add(products, mode="drop")


def dense_sparse_dot(lhs: Any, data: Any, indices: Any, shape: Sequence[int],
                     dimension_numbers: Any, preferred_element_type: Any = None) -> Any:
    """lax.dot_general(lhs, todense(rhs), dimension_numbers) for a BCOO rhs."""
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    out = sparse_dense_dot(data, indices, shape, lhs, ((rc, lc), (rb, lb)),
                           preferred_element_type)
    # out: batch, rhs free, lhs free  ->  batch, lhs free, rhs free
    n_b = len(lb)
    n_rfree = len(shape) - len(rc) - len(rb)
    n_lfree = lhs.ndim - len(lc) - len(lb)
    perm = (tuple(range(n_b)) + tuple(range(n_b + n_rfree, n_b + n_rfree + n_lfree))
            + tuple(range(n_b, n_b + n_rfree)))
    return jnp.transpose(out, perm)


def sparse_sparse_dot(lhs: tuple[Any, Any, Sequence[int]], rhs: tuple[Any, Any, Sequence[int]],
                      dimension_numbers: Any, preferred_element_type: Any = None
                      ) -> tuple[Any, Any, tuple[int, ...]]:
    """The BCOO product of two unbatched BCOO arrays without dense dimensions: one entry
    per pair of entries (nse = lhs.nse * rhs.nse), zero where the contracting indices
    differ."""
    (ld, li, ls), (rd, ri, rs) = lhs, rhs
    lc, rc, lb, rb = parse_dimension_numbers(dimension_numbers)
    out_shape = dot_general_shape(ls, rs, dimension_numbers)
    lp, rp = raw.props_of(ld, li, ls), raw.props_of(rd, ri, rs)
    if lp.n_batch or rp.n_batch or lp.n_dense or rp.n_dense or lb:
        raise NotImplementedError(
            "bcoo_dot_general of two sparse arrays: jaxlite supports unbatched operands "
            "without dense dimensions and no batch dimensions in dimension_numbers; use "
            "bcoo_update_layout or todense() for the others.")
    dtype = _result_dtype(ld, rd, preferred_element_type)
    lfree = [d for d in range(len(ls)) if d not in lc]
    rfree = [d for d in range(len(rs)) if d not in rc]
    overlap = (li[:, None][..., list(lc)] == ri[None, :][..., list(rc)]).all(-1)
    valid = raw.in_bounds(li, ls)[:, None] & raw.in_bounds(ri, rs)[None, :]
    products = ld.astype(dtype)[:, None] * rd.astype(dtype)[None, :]
    out_data = jnp.where(overlap & valid, products, jnp.zeros((), dtype)).ravel()
    index_dtype = jnp.result_type(li, ri)
    left = jnp.broadcast_to(li[:, None][..., lfree], (lp.nse, rp.nse, len(lfree)))
    right = jnp.broadcast_to(ri[None, :][..., rfree], (lp.nse, rp.nse, len(rfree)))
    out_indices = jnp.concatenate([left.astype(index_dtype), right.astype(index_dtype)],
                                  axis=-1).reshape(lp.nse * rp.nse, len(lfree) + len(rfree))
    # As JAX: the pairs' duplicates summed into at most one entry per output element.
    out_nse = ((lp.nse if len(lfree) else 1) * (rp.nse if len(rfree) else 1))
    out_nse = min(out_nse, math.prod(out_shape))
    out_data, out_indices = raw.sum_duplicates(out_data, out_indices, out_shape, out_nse)
    return out_data, out_indices, out_shape


def reduce_sum(data: Any, indices: Any, shape: Sequence[int], axes: Sequence[int]
               ) -> tuple[Any, Any, tuple[int, ...]]:
    """Sum over `axes`: dense axes sum the data, sparse axes drop their index column (the
    duplicates that result add when densified), batch axes fold into the entries."""
    p = raw.props_of(data, indices, shape)
    axes = sorted({int(a) % len(shape) if len(shape) else int(a) for a in axes})
    dense_axes = tuple(a - p.n_sparse + 1 for a in axes if a >= p.n_batch + p.n_sparse)
    data = data.sum(dense_axes, dtype=data.dtype) if dense_axes else data
    if p.n_sparse:
        valid = raw.in_bounds(indices, shape[p.n_batch:p.n_batch + p.n_sparse])
        valid = valid.reshape(valid.shape + (1,) * (data.ndim - valid.ndim))
        data = jnp.where(valid, data, jnp.zeros((), data.dtype))
    keep = [k for k in range(p.n_sparse) if k + p.n_batch not in axes]
    indices = indices[..., np.array(keep, dtype=np.int32)] if keep else \
        jnp.zeros(indices.shape[:-1] + (0,), indices.dtype)
    batch_axes = [a for a in axes if a < p.n_batch]
    for ax in batch_axes:  # a broadcast batch axis stands for shape[ax] equal members
        if data.shape[ax] == 1 and indices.shape[ax] == 1:
            data = data * jnp.asarray(shape[ax], data.dtype)
        elif data.shape[ax] == 1:
            data = jnp.broadcast_to(data, data.shape[:ax] + (shape[ax],) + data.shape[ax + 1:])
        elif indices.shape[ax] == 1:
            data = data.sum(ax, keepdims=True, dtype=data.dtype)
    kept = [d for d in range(p.n_batch) if d not in batch_axes]
    new_nse = p.nse * math.prod(data.shape[a] for a in batch_axes)

    def fold(x: Any) -> Any:
        order = kept + batch_axes + list(range(p.n_batch, x.ndim))
        moved = jnp.transpose(x, order)
        return moved.reshape(tuple(x.shape[d] for d in kept) + (new_nse,)
                             + x.shape[p.n_batch + 1:])
    if batch_axes:
        data, indices = fold(data), fold(indices)
    out_shape = tuple(s for i, s in enumerate(shape) if i not in axes)
    return data, indices, out_shape


def transpose(data: Any, indices: Any, shape: Sequence[int], permutation: Sequence[int]
              ) -> tuple[Any, Any, tuple[int, ...]]:
    """Axes permuted; batch, sparse and dense axes must each stay in their group."""
    p = raw.props_of(data, indices, shape)
    permutation = tuple(int(a) for a in permutation)
    if sorted(permutation) != list(range(len(shape))):
        raise ValueError(f"bcoo_transpose: permutation {permutation} is not a permutation "
                         f"of the array's {len(shape)} axes.")
    batch_perm = permutation[:p.n_batch]
    sparse_perm = [a - p.n_batch for a in permutation[p.n_batch:p.n_batch + p.n_sparse]]
    dense_perm = [a - p.n_batch - p.n_sparse
                  for a in permutation[p.n_batch + p.n_sparse:]]
    if (sorted(batch_perm) != list(range(p.n_batch))
            or sorted(sparse_perm) != list(range(p.n_sparse))):
        raise NotImplementedError(
            "bcoo_transpose: permutation must not mix batch, sparse and dense dimensions; "
            f"got permutation={permutation} for n_batch={p.n_batch}, "
            f"n_dense={p.n_dense} (use bcoo_update_layout first).")
    indices = indices[..., np.array(sparse_perm, dtype=np.int32)] if p.n_sparse else indices
    indices = jnp.transpose(indices, batch_perm + (p.n_batch, p.n_batch + 1))
    data = jnp.transpose(data, batch_perm + (p.n_batch,)
                         + tuple(d + p.n_batch + 1 for d in dense_perm))
    return data, indices, tuple(shape[a] for a in permutation)


def multiply_dense(data: Any, indices: Any, shape: Sequence[int], v: Any) -> Any:
    """The data of (sparse * dense v), v broadcast against the sparse shape."""
    p = raw.props_of(data, indices, shape)
    v = jnp.asarray(v)
    if v.ndim == 0:
        return data * v
    out_shape = tuple(np.broadcast_shapes(tuple(shape), v.shape))
    if out_shape != tuple(shape):
        raise NotImplementedError(
            f"bcoo_multiply_dense: the dense operand of shape {v.shape} would broadcast the "
            f"sparse array of shape {tuple(shape)}; jaxlite requires the sparse shape to be "
            "the result shape.")
    v = jnp.broadcast_to(v, shape)
    picked = raw.extract(jnp.broadcast_to(indices, data.shape[:p.n_batch]
                                          + indices.shape[p.n_batch:])
                         if p.n_batch else indices, v)
    return data * picked


def multiply_sparse(lhs: tuple[Any, Any, Sequence[int]], rhs: tuple[Any, Any, Sequence[int]]
                    ) -> tuple[Any, Any, tuple[int, ...]]:
    """The elementwise product of two unbatched BCOO arrays without dense dimensions: one
    entry per pair of entries with equal indices (nse = lhs.nse * rhs.nse)."""
    (ld, li, ls), (rd, ri, rs) = lhs, rhs
    if tuple(ls) != tuple(rs):
        raise NotImplementedError(f"bcoo_multiply_sparse: shapes {tuple(ls)} and "
                                  f"{tuple(rs)} differ (broadcasting is not supported).")
    return _multiply_pairs(ld, li, rd, ri, tuple(ls))


def _multiply_pairs(ld: Any, li: Any, rd: Any, ri: Any, shape: tuple[int, ...]
                    ) -> tuple[Any, Any, tuple[int, ...]]:
    lp, rp = raw.props_of(ld, li, shape), raw.props_of(rd, ri, shape)
    if lp.n_batch or rp.n_batch or lp.n_dense or rp.n_dense:
        raise NotImplementedError("bcoo_multiply_sparse: jaxlite supports unbatched operands "
                                  "without dense dimensions.")
    nse = lp.nse * rp.nse
    dims = np.array([i for i, s in enumerate(shape) if s != 1], dtype=np.int32)
    same = (li[:, None][..., dims] == ri[None, :][..., dims]).all(-1)
    # The matching pairs in row-major order, then pairs of padding (out of bounds).
    i_lhs, i_rhs = jnp.nonzero(same, size=nse, fill_value=(lp.nse, rp.nse))
    data = (ld.at[i_lhs].get(mode="fill", fill_value=0)
            * rd.at[i_rhs].get(mode="fill", fill_value=0))
    top = max(shape, default=0)
    index = jnp.maximum(li.at[i_lhs].get(mode="fill", fill_value=top),
                        ri.at[i_rhs].get(mode="fill", fill_value=top))
    return data, index, shape
