"""Format-independent functions: `todense`, `empty`, `eye` and `random_bcoo`
(mirrors `jax.experimental.sparse.api` and `.random`)."""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite import numpy as jnp
from jaxlite import random
from jaxlite.experimental.sparse._base import JAXSparse, composed_primitive
from jaxlite.experimental.sparse.bcoo import BCOO
from jaxlite.experimental.sparse.bcsr import BCSR
from jaxlite.experimental.sparse.coo_csr import COO, CSC, CSR
from jaxlite.transforms.vmap import vmap
from jaxlite.tree_util import tree_flatten, tree_unflatten

_FORMATS = {"bcoo": BCOO, "bcsr": BCSR, "coo": COO, "csr": CSR, "csc": CSC}


def _todense_buffers(*buffers: Any, treedef: Any) -> Any:
    return tree_unflatten(treedef, buffers).todense()


todense_p = composed_primitive("todense", _todense_buffers)


def todense(arr: JAXSparse | Any) -> Any:
    """The dense array of a sparse array of any format; a dense array is returned as it
    is (mirrors `jax.experimental.sparse.todense`)."""
    if isinstance(arr, JAXSparse):
        buffers, treedef = tree_flatten(arr)
        return todense_p.bind(*buffers, treedef=treedef)
    return arr


def _format(sparse_format: str) -> type:
    if sparse_format not in _FORMATS:
        raise ValueError(f"sparse_format={sparse_format!r} not recognized; "
                         f"must be one of {list(_FORMATS.keys())}")
    return _FORMATS[sparse_format]


def empty(shape: Sequence[int], dtype: Any = None, index_dtype: Any = "int32",
          sparse_format: str = "bcoo", **kwds: Any) -> JAXSparse:
    """An all-zero sparse array (mirrors `jax.experimental.sparse.empty`)."""
    return _format(sparse_format)._empty(shape, dtype=dtype, index_dtype=index_dtype, **kwds)


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None,
        index_dtype: Any = "int32", sparse_format: str = "bcoo", **kwds: Any) -> JAXSparse:
    """A sparse matrix with ones on diagonal `k` (mirrors `jax.experimental.sparse.eye`)."""
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    return _format(sparse_format)._eye(N, M, k, dtype=dtype, index_dtype=index_dtype, **kwds)


def random_bcoo(key: Any, shape: Sequence[int], *, dtype: Any = np.float64,
                indices_dtype: Any = None, nse: float | int = 0.2, n_batch: int = 0,
                n_dense: int = 0, unique_indices: bool = True, sorted_indices: bool = False,
                generator: Callable[..., Any] = random.uniform, **kwds: Any) -> BCOO:
    """A BCOO array with random indices (chosen with `random.choice`) and data from
    `generator` (mirrors `jax.experimental.sparse.random_bcoo`; the same key gives
    JAX's array)."""
    shape = tuple(map(operator.index, shape))
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}")
    n_sparse = len(shape) - n_batch - n_dense
    batch, sparse, dense = (shape[:n_batch], shape[n_batch:n_batch + n_sparse],
                            shape[n_batch + n_sparse:])
    sparse_size = math.prod(sparse)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * sparse_size))
    nse = operator.index(nse)
    index_dtype = np.dtype(indices_dtype if indices_dtype is not None
                           else jnp.asarray(0).dtype)  # the default integer type
    if sparse_size > np.iinfo(index_dtype).max:
        raise ValueError(f"indices_dtype={index_dtype} does not have enough range to "
                         f"generate sparse indices of size {sparse_size}.")

    def one_member(k: Any) -> Any:
        if not sparse:
            return jnp.zeros((nse, n_sparse), index_dtype)
        flat = random.choice(k, sparse_size, shape=(nse,),
                             replace=not unique_indices).astype(index_dtype)
        return jnp.stack(jnp.unravel_index(flat, sparse), axis=1)
    keys = random.split(key, math.prod(batch) + 1)
    data = generator(keys[0], shape=batch + (nse,) + dense, dtype=dtype, **kwds)
    indices = vmap(one_member)(keys[1:]).reshape(batch + (nse, n_sparse))
    mat = BCOO((data, indices), shape=shape)
    return mat.sort_indices() if sorted_indices else mat
