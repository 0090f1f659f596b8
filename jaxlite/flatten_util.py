"""Flatten a pytree of arrays into one vector and back (mirrors `jax.flatten_util`)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Concatenate every leaf of `pytree`, raveled, into one 1-D array (mirrors
    `jax.flatten_util.ravel_pytree`).

    The vector's dtype is the promotion of the leaves' dtypes (float32 for an empty tree).
    Returns the vector and `unravel`, which splits a vector of the same size back into the
    tree, each leaf in its own shape and dtype. Works under `jit`, `grad` and `vmap`.
    """
    leaves, treedef = tree_flatten(pytree)
    arrays = [jnp.asarray(leaf) for leaf in leaves]
    shapes = [np.shape(a) for a in arrays]
    leaf_dtypes = [a.dtype for a in arrays]
    sizes = [int(np.prod(s)) for s in shapes]
    if not arrays:
        flat = jnp.zeros((0,), jnp.float32)
        to_dtype = flat.dtype
    else:
        to_dtype = dtypes.result_type(*leaf_dtypes)
        flat = jnp.concatenate([jnp.ravel(a).astype(to_dtype) for a in arrays])

    def unravel(vector: Any) -> Any:
        vector = jnp.asarray(vector)
        total = sum(sizes)
        if vector.shape[:1] != (total,):
            raise ValueError(f"Sum of sizes {total} must be equal to dimension 0 of the "
                             f"operand shape {list(vector.shape)}: unravel takes a vector of "
                             f"the raveled tree's size {total}.")
        mixed = len(set(leaf_dtypes)) > 1
        if mixed and vector.dtype != to_dtype:
            raise TypeError(f"unravel function given array of dtype {vector.dtype}, but "
                            f"expected dtype {to_dtype}")
        pieces, start = [], 0
        for shape, size, dtype in zip(shapes, sizes, leaf_dtypes):
            piece = jnp.reshape(vector[start:start + size], shape)
            # Leaves of one common dtype come back in the vector's dtype, as JAX's do.
            pieces.append(_cast_back(piece, dtype) if mixed else piece)
            start += size
        return tree_unflatten(treedef, pieces)

    return flat, unravel


def _cast_back(piece: Any, dtype: np.dtype) -> Any:
    # complex -> real keeps the real part (the raveled imaginary part was zero).
    if dtypes.issubdtype(piece.dtype, np.complexfloating) and not dtypes.issubdtype(
            dtype, np.complexfloating):
        piece = lax.real(piece)
    return lax.convert_element_type(piece, dtype)
