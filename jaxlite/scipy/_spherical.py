"""Spherical harmonics Y_n^m(theta, phi) (mirrors `jax.scipy.special.sph_harm_y`).

    Y_n^m(theta, phi) = Pbar_n^|m|(cos theta) e^(i |m| phi),  Y_n^-|m| = (-1)^m conj(Y_n^|m|)

with Pbar the associated Legendre function normalized to unit L2 norm on the sphere,
Condon-Shortley phase included (scipy's convention: theta is the polar angle, phi the
azimuth). Pbar is built per element by the stable three-term recurrence in the degree,
from the sectoral value

    Pbar_m^m(x) = (-1)^m sqrt((2m + 1) / (4 pi)) sqrt((2m)!) / (2^m m!) (1 - x^2)^(m/2),

stepping l = m, m + 1, ... up to each element's n (n_max steps in all, n_max static), with
Pbar_(l+1) = a_(l+1) (x Pbar_l - Pbar_(l-1) / a_l), a_l = sqrt((4l^2 - 1) / (l^2 - m^2)).
It is zero for |m| > n. Derivatives in theta and phi come from the composition.
Arguments broadcast against each other (JAX needs 1-D n and m and a theta of their length
or a scalar); the result is complex in the default precision or that of theta and phi.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.core.trace_state import concrete_or_error

__all__ = ["sph_harm_y"]


def _sectoral(m: Any, x: Any) -> Any:
    """Pbar_m^m(x) for a float array m of whole numbers >= 0."""
    log_scale = (0.5 * lax.lgamma(2 * m + 1) - m * np.log(2.0) - lax.lgamma(m + 1))
    sine = lax.sqrt(jnp.maximum(1 - x * x, 0))
    sign = jnp.where(jnp.remainder(m, 2) == 1, -1.0, 1.0).astype(x.dtype)
    return sign * lax.sqrt((2 * m + 1) / (4 * np.pi)) * lax.exp(log_scale) * sine ** m


def _legendre(n: Any, m: Any, x: Any, n_max: int) -> Any:
    """Pbar_n^m(x), elementwise, for whole n, m with 0 <= m, n <= n_max."""
    previous = jnp.zeros_like(x)
    current = _sectoral(m, x)
    for step in range(n_max):
        degree = m + step  # the degree of `current`
        active = degree < n
        following = degree + 1
        a_next = lax.sqrt((4 * following ** 2 - 1) / jnp.maximum(following ** 2 - m ** 2, 1))
        a_now = lax.sqrt(jnp.maximum(degree ** 2 - m ** 2, 0)
                         / jnp.maximum(4 * degree ** 2 - 1, 1))
        nxt = a_next * (x * current - a_now * previous)
        previous, current = (jnp.where(active, current, previous),
                             jnp.where(active, nxt, current))
    return jnp.where(m <= n, current, 0)


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """Spherical harmonics of degree n and order m at polar angle theta and azimuth phi.

    Mirrors `jax.scipy.special.sph_harm_y`; n_max (the largest n, static) defaults to
    max(n), which must then be concrete; diff_n is not supported.
    """
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if n_max is None:
        n_max = np.max(n)
    n_max = concrete_or_error(
        int, n_max, "The `n_max` argument of `jnp.scipy.special.sph_harm` must be "
        "statically specified to use `sph_harm` within JAX transformations.")
    theta, phi = jnp.asarray(theta), jnp.asarray(phi)
    dtype = dtypes.result_type(theta.dtype, phi.dtype, dtypes.default_float_dtype())
    theta, phi = theta.astype(dtype), phi.astype(dtype)
    n = jnp.asarray(n).astype(dtype)
    order = jnp.abs(jnp.asarray(m)).astype(dtype)
    n, order, theta, phi, negative = jnp.broadcast_arrays(n, order, theta, phi,
                                                         jnp.asarray(m) < 0)
    legendre = _legendre(n, order, jnp.cos(theta), n_max)
    angle = order * phi
    harmonic = lax.complex(legendre * jnp.cos(angle), legendre * jnp.sin(angle))
    flipped = jnp.where(jnp.remainder(order, 2) == 1, -1.0, 1.0).astype(dtype) \
        * jnp.conjugate(harmonic)
    return jnp.where(negative, flipped, harmonic)
