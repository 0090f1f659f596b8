"""BCOO gather and convolution (mirrors `jax.experimental.sparse.bcoo_gather` and
`bcoo_conv_general_dilated`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.experimental.sparse.bcoo import BCOO, _check_bcoo, bcoo_transpose
from jaxlite.experimental.sparse.bcoo_shape import (bcoo_dynamic_slice, bcoo_reshape,
                                                    bcoo_squeeze)
from jaxlite.transforms.tracing import ShapeDtypeStruct, eval_shape
from jaxlite.transforms.vmap import vmap

def bcoo_gather(operand: BCOO, start_indices: Any, dimension_numbers: Any, slice_sizes: Any,
                *, unique_indices: bool = False, indices_are_sorted: bool = False,
                mode: Any = None, fill_value: Any = None) -> BCOO:
    """lax.gather of a BCOO array: one clamped dynamic slice per start index, stacked
    along a new leading batch dimension (mirrors `jax.experimental.sparse.bcoo_gather`)."""
    _check_bcoo(operand, "bcoo_gather")
    start_indices = jnp.asarray(start_indices)
    out = eval_shape(lambda o, i: lax.gather(o, i, dimension_numbers, tuple(slice_sizes),
                                             mode=mode, fill_value=fill_value),
                     ShapeDtypeStruct(operand.shape, operand.dtype),
                     ShapeDtypeStruct(start_indices.shape, start_indices.dtype))
    if operand.n_batch:
        raise NotImplementedError("bcoo_gather of an operand with batch dimensions.")
    collapsed = tuple(dimension_numbers.collapsed_slice_dims)
    index_map = tuple(dimension_numbers.start_index_map)
    sizes = list(operand.shape)
    for j in index_map:
        sizes[j] = slice_sizes[j]
    kept_shape = tuple(s for d, s in enumerate(sizes) if d not in collapsed)
    flat = start_indices.reshape(-1, start_indices.shape[-1])

    def one(row: Any) -> tuple[Any, Any]:
        starts = [jnp.zeros((), row.dtype)] * operand.ndim
        for i, j in enumerate(index_map):
            starts[j] = row[i]
        piece = bcoo_squeeze(bcoo_dynamic_slice(operand, starts, sizes), dimensions=collapsed)
        return piece.data, piece.indices
    data, indices = vmap(one)(flat)
    stacked = BCOO((data, indices), shape=(flat.shape[0],) + kept_shape)
    result = bcoo_reshape(stacked, new_sizes=start_indices.shape[:-1] + kept_shape)
    offset = tuple(dimension_numbers.offset_dims)
    batch_positions = [d for d in range(len(out.shape)) if d not in offset]
    order = batch_positions + list(offset)
    if order != list(range(len(order))):
        result = bcoo_transpose(result, permutation=tuple(np.argsort(order)))
    return result

def bcoo_conv_general_dilated(lhs: Any, rhs: Any, *, window_strides: Any, padding: Any,
                              lhs_dilation: Any = None, rhs_dilation: Any = None,
                              dimension_numbers: Any = None, feature_group_count: int = 1,
                              batch_group_count: int = 1, precision: Any = None,
                              preferred_element_type: Any = None,
                              out_sharding: Any = None) -> BCOO:
    """Not provided by jaxlite: JAX computes this convolution sparsely and returns a BCOO
    array with a layout of its own (mirrors the name
    `jax.experimental.sparse.bcoo_conv_general_dilated`)."""
    raise NotImplementedError(
        "bcoo_conv_general_dilated is not implemented in jaxlite; use "
        "lax.conv_general_dilated on sparse.todense(lhs) and sparse.todense(rhs) (a dense "
        "result with the same values).")

