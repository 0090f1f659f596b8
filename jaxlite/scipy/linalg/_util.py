"""What the modules of `jaxlite.scipy.linalg` share: argument conversion and small matrix
helpers."""
from __future__ import annotations

from typing import Any

import jaxlite.numpy as jnp
from jaxlite.numpy._promotion import check_arraylike, ensure_array, promote_dtypes_inexact

__all__ = ["as_inexact", "as_arrays", "mT", "adjoint", "hdot"]


def as_inexact(*args: Any) -> list[Any]:
    """The arguments (arrays, scalars or nested lists) as arrays of their common inexact
    dtype (ints and bools become the default float), as JAX's
    promote_dtypes_inexact(jnp.asarray(...))."""
    return promote_dtypes_inexact(*(jnp.asarray(a) for a in args))


def as_arrays(fun_name: str, *args: Any) -> list[Any]:
    check_arraylike(fun_name, *args)
    return [ensure_array(a) for a in args]


def mT(x: Any) -> Any:
    """The matrices of x transposed."""
    return jnp.swapaxes(x, -1, -2)


def adjoint(x: Any) -> Any:
    """The conjugate transposes of the matrices of x."""
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def hdot(a: Any, b: Any) -> Any:
    """a @ b at the highest precision (JAX's _precise_dot)."""
    return jnp.matmul(a, b, precision="highest")
