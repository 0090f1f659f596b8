"""Structural operations on BCOO arrays: reshape, slices, concatenation, broadcasting,
squeeze, reversal, layout changes and indexing (mirrors the corresponding functions of
`jax.experimental.sparse`). Entries that leave the array become padding (out-of-bounds
indices, data 0); when more entries remain than the result has elements, duplicates are
summed down to that many, as JAX does.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.experimental.sparse import _bcoo_raw as raw
from jaxlite.experimental.sparse.bcoo import BCOO, _check_bcoo, bcoo_transpose


def _split(seq: Sequence[Any], n_batch: int, n_sparse: int) -> tuple[list, list, list]:
    seq = list(seq)
    return seq[:n_batch], seq[n_batch:n_batch + n_sparse], seq[n_batch + n_sparse:]


def bcoo_reshape(mat: BCOO, *, new_sizes: Sequence[int],
                 dimensions: Sequence[int] | None = None, sharding: Any = None) -> BCOO:
    """lax.reshape of a BCOO array; batch, sparse and dense dimensions are reshaped each
    within their group (mirrors `jax.experimental.sparse.bcoo_reshape`)."""
    _check_bcoo(mat, "bcoo_reshape")
    new_sizes = tuple(int(s) for s in new_sizes)
    if math.prod(new_sizes) != math.prod(mat.shape):
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"for shape {mat.shape}.")
    if dimensions is not None and tuple(dimensions) != tuple(range(mat.ndim)):
        mat = bcoo_transpose(mat, permutation=dimensions)
    batch, sparse, _ = _split(mat.shape, mat.n_batch, mat.n_sparse)
    if (mat.indices.shape[:mat.n_batch] != tuple(batch)
            or mat.data.shape[:mat.n_batch] != tuple(batch)):
        raise NotImplementedError("reshape of arrays with broadcasted batch dimensions.")
    batch_size, sparse_size = math.prod(batch), math.prod(sparse)
    cumulative = np.cumprod(new_sizes)
    if batch_size != 1 and batch_size not in cumulative:
        raise ValueError("bcoo_reshape: new shape cannot mix batch and sparse dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with "
                         f"n_batch={mat.n_batch}")
    if sparse_size != 1 and batch_size * sparse_size not in cumulative:
        raise ValueError("bcoo_reshape: new shape cannot mix sparse and dense dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with "
                         f"n_dense={mat.n_dense}")
    i1 = int(cumulative.searchsorted(batch_size, side="right"))
    i2 = int(cumulative.searchsorted(batch_size * sparse_size, side="right"))
    new_batch, new_sparse, new_dense = new_sizes[:i1], new_sizes[i1:i2], new_sizes[i2:]
    data = mat.data.reshape(new_batch + (mat.nse,) + new_dense)
    indices = mat.indices.reshape(new_batch + (mat.nse, mat.n_sparse))
    if not new_sparse:
        indices = jnp.zeros(new_batch + (mat.nse, 0), indices.dtype)
    elif sparse:
        columns = tuple(indices[..., k] for k in range(mat.n_sparse))
        flat = jnp.ravel_multi_index(columns, tuple(sparse), mode="clip")
        outside = ~raw.in_bounds(indices, sparse)[..., None]
        new_columns = jnp.unravel_index(flat, new_sparse)
        indices = jnp.stack(new_columns, axis=-1).astype(indices.dtype)
        indices = jnp.where(outside, jnp.asarray(np.array(new_sparse), indices.dtype),
                            indices)
    else:
        indices = jnp.zeros(new_batch + (mat.nse, len(new_sparse)), indices.dtype)
    return BCOO((data, indices), shape=new_sizes)


def reshape_method(mat: BCOO, *args: Any, order: str = "C") -> BCOO:
    """`mat.reshape(*shape)` (C order only, as JAX's BCOO)."""
    if order != "C":
        raise NotImplementedError(f"reshape with order={order!r}")
    shape = args[0] if len(args) == 1 and np.ndim(args[0]) == 1 else args
    shape = [int(s) for s in shape]
    if shape.count(-1) == 1:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = mat.size // known if known else 0
    return bcoo_reshape(mat, new_sizes=tuple(shape))


def _sparse_window(data: Any, indices: Any, n_batch: int, n_dense: int, starts: Any,
                   sizes: Sequence[int], strides: Sequence[int]) -> tuple[Any, Any]:
    """Sparse indices moved into a window (start, size, stride) per sparse dimension;
    entries outside become padding."""
    dtype = indices.dtype
    starts = jnp.asarray(starts).astype(dtype)
    strides_ = jnp.asarray(np.array(strides), dtype)
    ends = starts + jnp.asarray(np.array(sizes), dtype) * strides_
    keep = ((indices >= starts) & (indices < ends)
            & ((indices - starts) % strides_ == 0)).all(-1, keepdims=True)
    indices = jnp.where(keep, (indices - starts) // strides_,
                        jnp.asarray(np.array(sizes), dtype))
    keep = keep[..., 0].reshape(keep.shape[:-1] + (1,) * n_dense)
    return jnp.where(keep, data, jnp.zeros((), data.dtype)), indices


def _fit_nse(data: Any, indices: Any, shape: tuple[int, ...], n_batch: int,
             n_sparse: int) -> BCOO:
    window = math.prod(shape[n_batch:n_batch + n_sparse])
    if n_sparse and indices.shape[-2] > window:
        data, indices = raw.sum_duplicates(data, indices, shape, window)
    return BCOO((data, indices), shape=shape)


def bcoo_slice(mat: BCOO, *, start_indices: Sequence[int], limit_indices: Sequence[int],
               strides: Sequence[int] | None = None) -> BCOO:
    """lax.slice of a BCOO array (mirrors `jax.experimental.sparse.bcoo_slice`)."""
    _check_bcoo(mat, "bcoo_slice")
    start_indices = [operator.index(i) for i in start_indices]
    limit_indices = [operator.index(i) for i in limit_indices]
    strides = [1] * mat.ndim if strides is None else [operator.index(s) for s in strides]
    if not (len(start_indices) == len(limit_indices) == len(strides) == mat.ndim):
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={mat.ndim}")
    if any(s <= 0 for s in strides):
        raise ValueError(f"strides must be a sequence of positive integers; got {strides}")
    if not all(0 <= a <= b <= n for a, b, n in zip(start_indices, limit_indices, mat.shape)):
        raise ValueError(f"bcoo_slice: invalid indices. Got start_indices={start_indices}, "
                         f"limit_indices={limit_indices} and shape={mat.shape}")
    nb, ns = mat.n_batch, mat.n_sparse
    data_sl, index_sl = [], []
    for i in range(nb):
        window = slice(start_indices[i], limit_indices[i], strides[i])
        data_sl.append(window if mat.data.shape[i] == mat.shape[i] else slice(None))
        index_sl.append(window if mat.indices.shape[i] == mat.shape[i] else slice(None))
    data_sl.append(slice(None))
    data_sl += [slice(a, b, s) for a, b, s in
                zip(start_indices[nb + ns:], limit_indices[nb + ns:], strides[nb + ns:])]
    data, indices = mat.data[tuple(data_sl)], mat.indices[tuple(index_sl)]
    shape = tuple((b - a + s - 1) // s for a, b, s in
                  zip(start_indices, limit_indices, strides))
    if ns:
        data, indices = _sparse_window(data, indices, nb, mat.n_dense,
                                       np.array(start_indices[nb:nb + ns]),
                                       shape[nb:nb + ns], strides[nb:nb + ns])
    return _fit_nse(data, indices, shape, nb, ns)


def bcoo_dynamic_slice(mat: BCOO, start_indices: Sequence[Any],
                       slice_sizes: Sequence[int]) -> BCOO:
    """lax.dynamic_slice of a BCOO array; starts are clamped into range as lax does
    (mirrors `jax.experimental.sparse.bcoo_dynamic_slice`)."""
    _check_bcoo(mat, "bcoo_dynamic_slice")
    slice_sizes = tuple(operator.index(s) for s in slice_sizes)
    if len(start_indices) != mat.ndim or len(slice_sizes) != mat.ndim:
        raise ValueError(f"bcoo_dynamic_slice: indices must have size mat.ndim={mat.ndim}")
    if not all(0 <= s <= n for s, n in zip(slice_sizes, mat.shape)):
        raise TypeError("slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {slice_sizes} for operand shape {mat.shape}")
    starts = [jnp.clip(jnp.asarray(s).astype(np.int32), 0, n - k)
              for s, n, k in zip(start_indices, mat.shape, slice_sizes)]
    nb, ns = mat.n_batch, mat.n_sparse
    zero = jnp.zeros((), np.int32)

    def batch_part(x: Any, tail_starts: list, tail_sizes: tuple) -> Any:
        heads = [(starts[i], slice_sizes[i]) if x.shape[i] == mat.shape[i] else (zero, 1)
                 for i in range(nb)]
        return lax.dynamic_slice(x, [h[0] for h in heads] + tail_starts,
                                 tuple(h[1] for h in heads) + tail_sizes)
    data = batch_part(mat.data, [zero] + starts[nb + ns:],
                      (mat.nse,) + slice_sizes[nb + ns:])
    indices = batch_part(mat.indices, [zero, zero], (mat.nse, ns))
    if ns:
        data, indices = _sparse_window(data, indices, nb, mat.n_dense,
                                       jnp.stack(starts[nb:nb + ns]),
                                       slice_sizes[nb:nb + ns], [1] * ns)
    return _fit_nse(data, indices, slice_sizes, nb, ns)


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """lax.concatenate of BCOO arrays along a batch or sparse dimension
    (mirrors `jax.experimental.sparse.bcoo_concatenate`)."""
    operands = list(operands)
    for op in operands:
        _check_bcoo(op, "bcoo_concatenate")
    first = operands[0]
    if len({(op.n_batch, op.n_sparse, op.n_dense) for op in operands}) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nbatch, "
                         "nsparse and ndense dimensions.")
    dimension = operator.index(dimension) % first.ndim
    shapes = [list(op.shape) for op in operands]
    if any(s[:dimension] + s[dimension + 1:] != shapes[0][:dimension] + shapes[0][dimension + 1:]
           for s in shapes):
        raise TypeError(f"Cannot concatenate arrays with shapes {[tuple(s) for s in shapes]}"
                        f" along dimension {dimension}.")
    out_shape = list(first.shape)
    out_shape[dimension] = sum(op.shape[dimension] for op in operands)
    nb = first.n_batch
    if dimension < nb:
        nse = max(op.nse for op in operands)
        parts = [_padded(op, nse) for op in operands]
        data = jnp.concatenate([p[0] for p in parts], axis=dimension)
        indices = jnp.concatenate([p[1] for p in parts], axis=dimension)
    elif dimension < nb + first.n_sparse:
        col, offset, datas, index_parts = dimension - nb, 0, [], []
        for op in operands:
            batch = op.shape[:nb]
            d, i = jnp.broadcast_to(op.data, batch + op.data.shape[nb:]), \
                jnp.broadcast_to(op.indices, batch + op.indices.shape[nb:])
            inside = raw.in_bounds(i, op.shape[nb:nb + op.n_sparse])[..., None]
            moved = i.at[..., col].add(offset)
            fill = jnp.asarray(np.array(out_shape[nb:nb + op.n_sparse]), i.dtype)
            index_parts.append(jnp.where(inside, moved, fill))
            datas.append(d)
            offset += op.shape[dimension]
        data = jnp.concatenate(datas, axis=nb)
        indices = jnp.concatenate(index_parts, axis=nb)
    else:
        raise NotImplementedError("bcoo_concatenate: concatenation of dense dimensions "
                                  "not implemented")
    return BCOO((data, indices), shape=tuple(out_shape))


def _padded(op: BCOO, nse: int) -> tuple[Any, Any]:
    batch = op.shape[:op.n_batch]
    data = jnp.broadcast_to(op.data, batch + op.data.shape[op.n_batch:])
    indices = jnp.broadcast_to(op.indices, batch + op.indices.shape[op.n_batch:])
    block = op.shape[op.n_batch:op.n_batch + op.n_sparse]
    return raw.pad_data(data, nse, op.n_batch), raw.pad_indices(indices, nse, block)


def bcoo_broadcast_in_dim(mat: BCOO, *, shape: Sequence[int],
                          broadcast_dimensions: Sequence[int], sharding: Any = None) -> BCOO:
    """lax.broadcast_in_dim of a BCOO array; new dimensions join the batch or dense group
    they border, or are sparse dimensions of length 1
    (mirrors `jax.experimental.sparse.bcoo_broadcast_in_dim`)."""
    _check_bcoo(mat, "bcoo_broadcast_in_dim")
    shape, dims = tuple(int(s) for s in shape), tuple(int(d) for d in broadcast_dimensions)
    if len(mat.shape) != len(dims):
        raise ValueError(f"spinfo.shape={mat.shape} and broadcast_dimensions={dims} must "
                         "have the same length")
    batch_dims, sparse_dims, dense_dims = _split(dims, mat.n_batch, mat.n_sparse)
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_nb = min(dims[mat.n_batch:], default=len(shape))
    new_nd = mat.n_dense and len(shape) - min(dims[-mat.n_dense:])
    new_ns = len(shape) - new_nb - new_nd
    if (math.prod(mat.shape[mat.n_batch:mat.n_batch + mat.n_sparse])
            != math.prod(shape[new_nb:new_nb + new_ns])):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    data, indices = mat.data, mat.indices
    if (new_nb, new_nd) != (mat.n_batch, mat.n_dense):
        data = lax.broadcast_in_dim(
            data, (*shape[:new_nb], mat.nse, *shape[new_nb + new_ns:]),
            (*batch_dims, new_nb, *(d + 1 - new_ns for d in dense_dims)))
        indices = lax.broadcast_in_dim(indices, (*shape[:new_nb], mat.nse, mat.n_sparse),
                                       (*batch_dims, new_nb, new_nb + 1))
    if new_ns != mat.n_sparse:
        columns = np.array([d - new_nb for d in sparse_dims], dtype=np.int32)
        indices = jnp.zeros(indices.shape[:-1] + (new_ns,), indices.dtype
                            ).at[..., columns].set(indices)
    return BCOO((data, indices), shape=shape)


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """lax.squeeze of a BCOO array (mirrors `jax.experimental.sparse.bcoo_squeeze`)."""
    _check_bcoo(arr, "bcoo_squeeze")
    dimensions = tuple(operator.index(d) % arr.ndim for d in dimensions)
    if any(arr.shape[d] != 1 for d in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={arr.shape} and dimensions={dimensions}")
    batch = tuple(d for d in dimensions if d < arr.n_batch)
    keep = np.array([k for k in range(arr.n_sparse) if k + arr.n_batch not in dimensions],
                    dtype=np.int32)
    dense = tuple(d - arr.n_sparse + 1 for d in dimensions
                  if d >= arr.n_batch + arr.n_sparse)
    data = lax.squeeze(arr.data, batch + dense)
    indices = lax.squeeze(arr.indices[..., keep], batch)
    shape = tuple(s for i, s in enumerate(arr.shape) if i not in dimensions)
    return BCOO((data, indices), shape=shape, indices_sorted=arr.indices_sorted,
                unique_indices=arr.unique_indices)


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """lax.rev of a BCOO array (mirrors `jax.experimental.sparse.bcoo_rev`)."""
    _check_bcoo(operand, "bcoo_rev")
    dimensions = [operator.index(d) for d in dimensions]
    batch, sparse, dense = [], [], []
    for d in dimensions:
        (batch if d < operand.n_batch else
         sparse if d < operand.n_batch + operand.n_sparse else dense).append(d)
    data, indices = operand.data, operand.indices
    if batch:
        indices = lax.rev(indices, batch)
    if batch or dense:
        data = lax.rev(data, batch + [d + 1 - operand.n_sparse for d in dense])
    if sparse:
        block = np.array(operand.shape[operand.n_batch:operand.n_batch + operand.n_sparse])
        flip = np.zeros(len(block), bool)
        flip[[d - operand.n_batch for d in sparse]] = True
        sizes = jnp.asarray(block, indices.dtype)
        flipped = jnp.where(jnp.asarray(flip), sizes - 1 - indices, indices)
        indices = jnp.where(flipped < 0, sizes, flipped)
    return BCOO((data, indices), shape=operand.shape)


def getitem(mat: BCOO, item: Any) -> BCOO:
    """`mat[item]` for integers, slices with positive steps and Ellipsis: a slice, then a
    squeeze of the integer-indexed dimensions (JAX's results, layouts and nse)."""
    items = list(item) if isinstance(item, tuple) else [item]
    if items.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (mat.ndim - len(items) + 1)
    if len(items) > mat.ndim:
        raise IndexError(f"Too many indices: {mat.ndim}-dimensional array indexed with "
                         f"{len(items)} regular indices.")
    items += [slice(None)] * (mat.ndim - len(items))
    starts, limits, strides, squeezed = [], [], [], []
    for axis, (index, size) in enumerate(zip(items, mat.shape)):
        if isinstance(index, slice):
            start, stop, step = index.indices(size)
            if step <= 0:
                raise NotImplementedError("sparse indexing with a negative step")
            stop = max(stop, start)
            starts.append(start), limits.append(stop), strides.append(step)
            continue
        try:
            position = operator.index(index)
        except TypeError:
            raise NotImplementedError(
                f"sparse indexing with {type(index).__name__} indices; jaxlite's BCOO "
                "supports integers, slices and Ellipsis.") from None
        if not -size <= position < size:
            raise IndexError(f"index {position} is out of bounds for axis {axis} with "
                             f"size {size}")
        position %= size
        starts.append(position), limits.append(position + 1), strides.append(1)
        squeezed.append(axis)
    out = bcoo_slice(mat, start_indices=starts, limit_indices=limits, strides=strides)
    return bcoo_squeeze(out, dimensions=squeezed) if squeezed else out
