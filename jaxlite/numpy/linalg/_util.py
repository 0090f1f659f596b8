"""What the functions of `jaxlite.numpy.linalg` share.

Argument checks with JAX's wording, promotion to an inexact dtype, small matrix helpers
(conjugate transpose, batched identities) and `custom_jvp`, a derivative rule for a library
function through `jaxlite.custom_jvp` (declared in the lax layer, so libraries can use it).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.lax.custom_derivatives import custom_jvp as lax_custom_jvp
from jaxlite.numpy._promotion import check_arraylike, ensure_array, promote_dtypes_inexact


def inexact_args(fun_name: str, *args: Any) -> list[Any]:
    """The arguments as arrays of their common inexact dtype (ints and bools become floats)."""
    check_arraylike(fun_name, *args)
    return promote_dtypes_inexact(*(ensure_array(a) for a in args))


def check_square(fun_name: str, a: Any) -> None:
    """Raise unless `a` is a stack of square matrices."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to {fun_name}() must have shape [..., n, n], got "
                         f"{a.shape}.")


def check_matrix(fun_name: str, a: Any, error: type = TypeError) -> None:
    """Raise unless `a` is a stack of matrices (at least two axes): JAX's TypeError of the
    decompositions, or `error`."""
    if a.ndim < 2:
        raise error(f"Input 0 to {fun_name} must have rank at least 2, but got "
                    f"shape={a.shape} (a stack of matrices [..., m, n]).")


def real_dtype(dtype: Any) -> np.dtype:
    """The real dtype of the same precision (complex64 -> float32)."""
    return np.dtype(np.finfo(dtype).dtype)


def eps(dtype: Any) -> float:
    return float(np.finfo(dtype).eps)


def swap_last(x: Any) -> Any:
    """The transpose of each matrix of the stack `x`."""
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return lax.transpose(x, perm)


def adjoint(x: Any) -> Any:
    """The conjugate transpose of each matrix of the stack `x`."""
    x = swap_last(x)
    return lax.conj(x) if dtypes.is_complex(x.dtype) else x


def batched_eye(shape: tuple[int, ...], dtype: Any) -> Any:
    """Identity matrices of `shape[-2:]` (rectangular allowed) stacked to `shape`."""
    rows = lax.broadcasted_iota(np.dtype(np.int32), shape, len(shape) - 2)
    cols = lax.broadcasted_iota(np.dtype(np.int32), shape, len(shape) - 1)
    return lax.convert_element_type(lax.eq(rows, cols), dtype)


def matmul(a: Any, b: Any) -> Any:
    """Batched matrix product of stacks with the same batch shape (one dot_general)."""
    batch = tuple(range(a.ndim - 2))
    dims = (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch))
    return lax.dot_general(a, b, dims, precision=lax.Precision.HIGHEST,
                           preferred_element_type=a.dtype)


def diag_of(x: Any) -> Any:
    """The main diagonals of a stack of square matrices, as the last axis."""
    n = x.shape[-1]
    lead = x.shape[:-2]
    flat = lax.reshape(x, lead + (n * n,))
    if n == 0:
        return lax.reshape(flat, lead + (0,))
    return lax.slice(flat, (0,) * (len(lead) + 1), lead + (n * n,),
                     (1,) * len(lead) + (n + 1,))


def trace_of(x: Any) -> Any:
    """The traces of a stack of square matrices."""
    return lax.reduce_sum(diag_of(x), (x.ndim - 2,))


def custom_jvp(fun: Callable[..., Any],
               rule: Callable[[tuple, tuple], tuple[Any, Any]]) -> Callable[..., Any]:
    """`fun` with the derivative `rule(primals, tangents) -> (out, tangent_out)`, as
    `jaxlite.custom_jvp(fun)` with `defjvp(rule)` (what JAX does for its linear algebra)."""
    wrapped = lax_custom_jvp(fun)
    wrapped.defjvp(rule)
    return wrapped
