"""Functions of the error-function family: erfcx, dawsn, wofz, fresnel, owens_t.

Each is a primitive computed by a float64 kernel (scipy.special's function; see
`jaxlite.lax.special_kernel`), with its derivative in closed form:

    erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi)         dawsn'(x) = 1 - 2 x dawsn(x)
    w'(z) = -2 z w(z) + 2i/sqrt(pi)               S'(x) = sin(pi x^2/2), C'(x) = cos(pi x^2/2)
    dT/dh = -exp(-h^2/2) erf(a h/sqrt 2) / (2 sqrt(2 pi)),
    dT/da = exp(-(1 + a^2) h^2/2) / (2 pi (1 + a^2))    (Owen's T(h, a)).

Values are scipy's, correctly rounded to the dtype (JAX uses rational approximations and
quadrature), with JAX's values where an argument is infinite: wofz is nan + nanj there,
owens_t(0, +-inf) is nan. In the far tail (values below 1e-100) scipy's owens_t, and so
jaxlite's, loses relative accuracy (3e-3 at h = 30), as JAX's does.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as sp

from jaxlite import lax
from jaxlite.core import dtypes
from jaxlite.lax._declare import COMPLEX, FLOATING
from jaxlite.lax.special_kernel import kernel_jvp, kernel_primitive
from jaxlite.numpy._promotion import promote_args_inexact

__all__ = ["erfcx", "dawsn", "wofz", "fresnel", "owens_t", "promote_args_complex",
           "reject_complex", "strong"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def reject_complex(name: str, x: Any, message: str | None = None) -> None:
    """JAX's ValueError for the real-only functions of jax.scipy.special."""
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(message or f"{name} does not support complex-valued inputs.")


def strong(x: Any) -> Any:
    """x without its weak type: JAX's versions of these functions return strongly typed
    arrays even for Python scalars (they mix in numpy constants)."""
    return lax.convert_element_type(x, x.dtype)


def promote_args_complex(name: str, *args: Any) -> list[Any]:
    """Promote to a common inexact dtype, then to its complex counterpart (as JAX's
    `promote_args_complex`: float32 -> complex64, float64 -> complex128)."""
    promoted = promote_args_inexact(name, *args)
    return [x if dtypes.issubdtype(x.dtype, np.complexfloating)
            else lax.convert_element_type(x, dtypes.to_complex_dtype(x.dtype))
            for x in promoted]


def _const(x: Any, value: Any) -> Any:
    return lax.full((), value, x.dtype)


# ------------------------------------------------------------------------- primitives

erfcx_p = kernel_primitive("erfcx", sp.erfcx)
dawsn_p = kernel_primitive("dawsn", sp.dawsn)
def _wofz_kernel(z: np.ndarray) -> np.ndarray:
    # JAX's rational approximation is nan wherever a part of z is infinite.
    infinite = np.isinf(z.real) | np.isinf(z.imag)
    return np.where(infinite, complex(np.nan, np.nan), sp.wofz(np.where(infinite, 0, z)))


def _owens_t_kernel(h: np.ndarray, a: np.ndarray) -> np.ndarray:
    # JAX's quadrature is nan at h = 0 with an infinite a (T(0, +-inf) = +-1/4).
    return np.where((h == 0) & np.isinf(a), np.nan, sp.owens_t(h, a))


wofz_p = kernel_primitive("wofz", _wofz_kernel, kinds=(COMPLEX,))
fresnel_s_p = kernel_primitive("fresnel_s", lambda x: sp.fresnel(x)[0])
fresnel_c_p = kernel_primitive("fresnel_c", lambda x: sp.fresnel(x)[1])
owens_t_p = kernel_primitive("owens_t", _owens_t_kernel, num_args=2, kinds=(FLOATING,))

kernel_jvp(erfcx_p, lambda t, y, x: lax.mul(t, lax.sub(lax.mul(lax.mul(_const(x, 2), x), y),
                                                       _const(x, _TWO_OVER_SQRT_PI))),
           with_output=True)
kernel_jvp(dawsn_p, lambda t, y, x: lax.mul(t, lax.sub(_const(x, 1),
                                                       lax.mul(lax.mul(_const(x, 2), x), y))),
           with_output=True)
kernel_jvp(wofz_p, lambda t, y, z: lax.mul(t, lax.add(lax.mul(lax.mul(_const(z, -2), z), y),
                                                      _const(z, 1j * _TWO_OVER_SQRT_PI))),
           with_output=True)


def _half_pi_square(x: Any) -> Any:
    return lax.mul(_const(x, math.pi / 2), lax.square(x))


kernel_jvp(fresnel_s_p, lambda t, x: lax.mul(t, lax.sin(_half_pi_square(x))))
kernel_jvp(fresnel_c_p, lambda t, x: lax.mul(t, lax.cos(_half_pi_square(x))))


def _owens_t_dh(t: Any, h: Any, a: Any) -> Any:
    gauss = lax.exp(lax.mul(_const(h, -0.5), lax.square(h)))
    inner = lax.erf(lax.div(lax.mul(a, h), _const(h, math.sqrt(2))))
    return lax.mul(t, lax.div(lax.neg(lax.mul(gauss, inner)),
                              _const(h, 2 * math.sqrt(2 * math.pi))))


def _owens_t_da(t: Any, h: Any, a: Any) -> Any:
    one_plus = lax.add(_const(a, 1), lax.square(a))
    gauss = lax.exp(lax.mul(lax.mul(_const(h, -0.5), one_plus), lax.square(h)))
    return lax.mul(t, lax.div(gauss, lax.mul(_const(a, 2 * math.pi), one_plus)))


kernel_jvp(owens_t_p, _owens_t_dh, _owens_t_da)


# ---------------------------------------------------------------------------- functions

def wofz(z: Any) -> Any:
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz) (mirrors `jax.scipy.special.wofz`).

    Real arguments are promoted to complex.
    """
    (z,) = promote_args_complex("wofz", z)
    return wofz_p.bind(z)


def erfcx(x: Any) -> Any:
    """The scaled complementary error function exp(x^2) erfc(x).

    Mirrors `jax.scipy.special.erfcx`; for complex x it is w(ix).
    """
    (x,) = promote_args_inexact("erfcx", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return wofz_p.bind(lax.complex(lax.neg(lax.imag(x)), lax.real(x)))
    return strong(erfcx_p.bind(x))


def dawsn(x: Any) -> Any:
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt (`jax.scipy.special.dawsn`)."""
    (x,) = promote_args_inexact("dawsn", x)
    reject_complex("dawsn", x)
    return strong(dawsn_p.bind(x))


def fresnel(x: Any) -> tuple[Any, Any]:
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt.

    Mirrors `jax.scipy.special.fresnel` (real arguments).
    """
    (x,) = promote_args_inexact("fresnel", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    return strong(fresnel_s_p.bind(x)), strong(fresnel_c_p.bind(x))


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function (mirrors `jax.scipy.special.owens_t`).

    As in JAX, the result is at least float64 when 64-bit mode is on (JAX's quadrature
    weights are float64 constants).
    """
    h, a = promote_args_inexact("owens_t", h, a)
    dtype = dtypes.result_type(h.dtype, dtypes.canonicalize_dtype(np.float64))
    h, a = lax.convert_element_type(h, dtype), lax.convert_element_type(a, dtype)
    return owens_t_p.bind(h, a)
