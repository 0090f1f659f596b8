"""`jax.experimental.sparse.linalg`: a sparse direct solve and LOBPCG eigenpairs.

`spsolve` solves `A x = b` for a square CSR matrix. It is the primitive `spsolve_p`, as in
JAX: on a CPU, JAX calls `scipy.sparse.linalg.spsolve` from the compiled program, and so
does jaxlite (through `pure_callback`), so the answers are scipy's. Its derivatives are
JAX's: a tangent of `b` is solved for, a tangent of the matrix's values gives
`-A⁻¹ (dA x)`, and the transpose (for reverse mode) solves with the transposed matrix.
Like JAX's, it has no batching rule. `lobpcg_standard` is in `_lobpcg.py`.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.experimental.sparse import csr_matvec_p
from jaxlite.experimental.sparse._lobpcg import lobpcg_standard
from jaxlite.extend.core import Primitive
from jaxlite.interpreters import ad, mlir
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.lax.callbacks import HostCallback, pure_callback_p

__all__ = ["lobpcg_standard", "spsolve", "spsolve_p"]


def _host_solve(data: Any, indices: Any, indptr: Any, b: Any) -> np.ndarray:
    """The solve itself, on numpy arrays: scipy's sparse LU, in b's dtype."""
    b = np.asarray(b)
    matrix = scipy.sparse.csr_matrix((np.asarray(data), np.asarray(indices),
                                      np.asarray(indptr)), shape=(b.size, b.size))
    return np.asarray(scipy.sparse.linalg.spsolve(matrix, b)).astype(b.dtype)


def _spsolve_abstract_eval(data: Any, indices: Any, indptr: Any, b: Any, *, tol: Any,
                           reorder: Any) -> Any:
    if data.dtype != b.dtype:
        raise ValueError(f"data types do not match: data.dtype={data.dtype} "
                         f"b.dtype={b.dtype}")
    if not (jnp.issubdtype(indices.dtype, jnp.integer)
            and jnp.issubdtype(indptr.dtype, jnp.integer)):
        raise ValueError(f"index arrays must be integer typed; got "
                         f"indices.dtype={indices.dtype} indptr.dtype={indptr.dtype}")
    if not data.ndim == indices.ndim == indptr.ndim == b.ndim == 1:
        raise ValueError(f"Arrays must be one-dimensional. Got data.shape={data.shape} "
                         f"indices.shape={indices.shape} indptr.shape={indptr.shape} "
                         f"b.shape={b.shape}")
    if indptr.shape[0] != b.shape[0] + 1 or data.shape != indices.shape:
        raise ValueError(f"Invalid CSR buffer sizes: data.shape={data.shape} "
                         f"indices.shape={indices.shape} indptr.shape={indptr.shape}")
    if reorder not in (0, 1, 2, 3):
        raise ValueError(f"reorder={reorder} not valid, must be one of [1, 2, 3, 4]")
    float(tol)  # JAX's check that tol is a number
    return b


def _spsolve_impl(data: Any, indices: Any, indptr: Any, b: Any, *, tol: Any,
                  reorder: Any) -> Any:
    _spsolve_abstract_eval(*map(get_aval, (data, indices, indptr, b)), tol=tol,
                           reorder=reorder)
    return jnp.asarray(_host_solve(data, indices, indptr, b))


# One callback for every program: a compiled program names its host callback by a key
# that lives as long as the callback object, so this one lives as long as the module.
_SOLVE_ON_HOST = HostCallback(_host_solve, "jax.experimental.sparse.linalg.spsolve")


def _spsolve_in_program(data: Any, indices: Any, indptr: Any, b: Any, *, tol: Any,
                        reorder: Any) -> Any:
    """What a compiled program runs: a host call to the solve."""
    out, = pure_callback_p.bind(data, indices, indptr, b, callback=_SOLVE_ON_HOST,
                                result_avals=(ShapedArray(b.shape, b.dtype),),
                                sharding=None, vmap_method=None)
    return out


spsolve_p = Primitive("spsolve")
spsolve_p.def_impl(_spsolve_impl)
spsolve_p.def_abstract_eval(_spsolve_abstract_eval)
mlir.register_lowering(spsolve_p, mlir.lower_fun(_spsolve_in_program, multiple_results=False))


def spsolve(data: Any, indices: Any, indptr: Any, b: Any, tol: float = 1e-6,
            reorder: int = 1) -> Any:
    """Solve `A x = b` for the square CSR matrix `A = (data, indices, indptr)` (mirrors
    `jax.experimental.sparse.linalg.spsolve`). `tol` and `reorder` (the fill-reducing
    ordering of JAX's GPU QR solver) are checked and otherwise unused on the CPU."""
    return spsolve_p.bind(data, indices, indptr, b, tol=tol, reorder=reorder)


def _jvp_of_values(data_dot: Any, data: Any, indices: Any, indptr: Any, b: Any,
                   **params: Any) -> Any:
    x = spsolve(data, indices, indptr, b, **params)
    dA_x = csr_matvec_p.bind(data_dot, indices, indptr, x,
                             shape=(indptr.shape[0] - 1, b.shape[0]), transpose=False)
    return -spsolve(data, indices, indptr, dA_x, **params)


def _jvp_of_rhs(b_dot: Any, data: Any, indices: Any, indptr: Any, b: Any,
                **params: Any) -> Any:
    return spsolve(data, indices, indptr, b_dot, **params)


def _csr_transpose(data: Any, indices: Any, indptr: Any) -> tuple[Any, Any, Any]:
    """The CSR arrays of the transposed (square) matrix, built with traceable ops."""
    n = indptr.shape[0] - 1
    starts = jnp.zeros_like(indices).at[indptr].add(1)
    rows = jnp.cumsum(starts) - 1  # the row of each stored entry
    new_rows, new_cols, new_data = lax.sort((indices, rows, data), num_keys=2)
    counts = jnp.bincount(new_rows, length=n)
    new_indptr = jnp.zeros_like(indptr).at[1:].set(jnp.cumsum(counts).astype(indptr.dtype))
    return new_data, new_cols, new_indptr


def _spsolve_transpose(ct: Any, data: Any, indices: Any, indptr: Any, b: Any,
                       **params: Any) -> Any:
    if ad.is_undefined_primal(indices) or ad.is_undefined_primal(indptr):
        raise ValueError("spsolve: the index arrays of the matrix cannot be differentiated")
    if not ad.is_undefined_primal(b):
        raise NotImplementedError("spsolve transpose with respect to data")
    data_t, indices_t, indptr_t = _csr_transpose(data, indices, indptr)
    return None, None, None, spsolve(data_t, indices_t, indptr_t, ct, **params)


ad.defjvp(spsolve_p, _jvp_of_values, None, None, _jvp_of_rhs)
ad.primitive_transposes[spsolve_p] = _spsolve_transpose
