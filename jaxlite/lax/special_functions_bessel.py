"""Exponentially scaled modified Bessel functions of orders 0 and 1.

Mirrors `jax.lax.bessel_i0e` (exp(-|x|) I0(x)) and `jax.lax.bessel_i1e` (exp(-|x|) I1(x)),
computed by float64 kernels (scipy.special's i0e and i1e; see `special_kernel.py`), with
JAX's derivatives: i0e' = i1e - sign(x) i0e and i1e' = i0e - (sign(x) + 1/x) i1e, which is
1/2 at x = 0.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sp

from jaxlite.core.avals import get_aval
from jaxlite.interpreters import ad
from jaxlite.lax.arithmetic import (_const, add, div, elementwise_operands, full_like, mul,
                                    sign, sub)
from jaxlite.lax.comparisons import gt
from jaxlite.lax.math_functions import abs as lax_abs
from jaxlite.lax.selection import select
from jaxlite.lax.special_kernel import kernel_primitive

__all__ = ["bessel_i0e", "bessel_i0e_p", "bessel_i1e", "bessel_i1e_p"]

bessel_i0e_p = kernel_primitive("bessel_i0e", sp.i0e)
bessel_i1e_p = kernel_primitive("bessel_i1e", sp.i1e)


def _i1e_derivative(t: Any, y: Any, x: Any) -> Any:
    eps = float(np.finfo(get_aval(x).dtype).eps)
    not_tiny = gt(lax_abs(x), _const(x, eps))
    safe_x = select(not_tiny, x, full_like(x, eps))
    slope = sub(bessel_i0e_p.bind(safe_x),
                mul(y, add(sign(safe_x), div(_const(x, 1), safe_x))))
    return mul(t, select(not_tiny, slope, full_like(x, 0.5)))


ad.defjvp2(bessel_i0e_p, lambda t, y, x: mul(t, sub(bessel_i1e_p.bind(x), mul(sign(x), y))))
ad.defjvp2(bessel_i1e_p, _i1e_derivative)


def bessel_i0e(x: Any) -> Any:
    """exp(-|x|) I0(x), elementwise (mirrors `jax.lax.bessel_i0e`)."""
    return bessel_i0e_p.bind(*elementwise_operands("bessel_i0e", x))


def bessel_i1e(x: Any) -> Any:
    """exp(-|x|) I1(x), elementwise (mirrors `jax.lax.bessel_i1e`)."""
    return bessel_i1e_p.bind(*elementwise_operands("bessel_i1e", x))
