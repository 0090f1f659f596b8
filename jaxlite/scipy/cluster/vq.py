"""`jaxlite.scipy.cluster.vq`: vector quantization (mirrors `jax.scipy.cluster.vq`)."""
from __future__ import annotations

from typing import Any

import jaxlite.numpy as jnp
from jaxlite.numpy._promotion import check_arraylike, ensure_array, promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """For each observation (a row of obs), the index of the nearest code (a row of
    code_book) in Euclidean distance and that distance (mirrors
    `jax.scipy.cluster.vq.vq`); 1-d arrays are observations of one feature.
    `check_finite` is unused, as in JAX."""
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs, code_book = promote_dtypes_inexact(ensure_array(obs), ensure_array(code_book))
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[..., None], code_book[..., None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    distances = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(distances, axis=-1)
    return code, jnp.take_along_axis(distances, code[:, None], axis=-1)[:, 0]
