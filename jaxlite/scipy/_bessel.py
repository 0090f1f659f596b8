"""Bessel functions: i0e, i1e, i0, i1 (modified, orders 0 and 1) and bessel_jn (first kind,
orders 0 .. v).

`i0e`/`i1e` are `lax.bessel_i0e`/`lax.bessel_i1e` (as in JAX) and `i0`/`i1` multiply them by
exp(|x|). `bessel_jn(z, v=v)` stacks J_0(z) ... J_v(z) along a new leading axis; each
J_k is a primitive computed by a float64 kernel (scipy.special.jv) with the derivative
J_k' = (J_(k-1) - J_(k+1)) / 2. JAX runs a backward recurrence from order n_iter
instead, which is nan at z = 0 (where J_0 = 1, J_k = 0) and loses all digits once |z|
approaches n_iter (z = 60 with the default 50); jaxlite gives scipy's values there and
accepts n_iter without using it. At z = +-inf and nan every order is nan.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np
import scipy.special as sp

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.core.trace_state import concrete_or_error
from jaxlite.lax.special_kernel import kernel_jvp, kernel_primitive
from jaxlite.numpy._promotion import promote_dtypes_inexact

__all__ = ["i0e", "i1e", "i0", "i1", "bessel_jn"]


def i0e(x: Any) -> Any:
    """exp(-|x|) I0(x) for a float array `x` (the lax part of `jax.scipy.special.i0e`)."""
    return lax.bessel_i0e(x)


def i1e(x: Any) -> Any:
    """exp(-|x|) I1(x) for a float array `x` (the lax part of `jax.scipy.special.i1e`)."""
    return lax.bessel_i1e(x)


def i0(x: Any) -> Any:
    """I0(x) = exp(|x|) i0e(x) for a float array `x` (the lax part of `special.i0`)."""
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1(x: Any) -> Any:
    """I1(x) = exp(|x|) i1e(x) for a float array `x` (the lax part of `special.i1`)."""
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


def _jv_kernel(order: np.ndarray, z: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(z), sp.jv(order, np.where(np.isfinite(z), z, 0.0)), np.nan)


bessel_jv_p = kernel_primitive("bessel_jv", _jv_kernel, num_args=2)


def _order_not_differentiable(t: Any, order: Any, z: Any) -> Any:
    raise TypeError("bessel_jn is not differentiable with respect to its order v.")


def _jv_dz(t: Any, order: Any, z: Any) -> Any:
    one = lax.full_like(order, 1)
    below = bessel_jv_p.bind(lax.sub(order, one), z)
    above = bessel_jv_p.bind(lax.add(order, one), z)
    return lax.mul(t, lax.mul(lax.full_like(z, 0.5), lax.sub(below, above)))


kernel_jvp(bessel_jv_p, _order_not_differentiable, _jv_dz)


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """J_0(z) ... J_v(z), Bessel functions of the first kind, stacked along a new leading
    axis (mirrors `jax.scipy.special.bessel_jn`; values are exact to the dtype rather than
    from JAX's n_iter-term recurrence)."""
    (z,) = promote_dtypes_inexact(jnp.asarray(z))
    if np.dtype(z.dtype) == np.complex128:
        raise ValueError("complex input not supported.")
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        # JAX's check catches only complex128; other complex dtypes fail in its recurrence.
        raise TypeError(f"rem does not accept dtype {np.dtype(z.dtype)} at position 0. "
                        "Accepted dtypes at position 0 are subtypes of integer, floating. "
                        "(bessel_jn does not support complex inputs.)")
    v = concrete_or_error(operator.index, v, "Argument v of bessel_jn.")
    concrete_or_error(int, n_iter, "Argument n_iter of bessel_jn.")
    orders = [bessel_jv_p.bind(lax.full_like(z, k), z) for k in range(v + 1)]
    return lax.convert_element_type(jnp.stack(orders), z.dtype)  # strong, as JAX's
