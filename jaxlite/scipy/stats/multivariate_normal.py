"""The multivariate normal distribution (mirrors `jax.scipy.stats.multivariate_normal`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.numpy._promotion import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """The log density over the last axis of x (a scalar mean: univariate; a scalar cov:
    isotropic; else the full covariance through its Cholesky factor). Batch dimensions
    broadcast."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if not mean.shape:
        return (-1 / 2 * jnp.square(x - mean) / cov
                - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    y = x - mean
    if not np.shape(cov):
        return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = lax.linalg.cholesky(cov)
    shape = jnp.broadcast_shapes(factor.shape[:-2], y.shape[:-1])
    factor = jnp.broadcast_to(factor, shape + (n, n))
    y = jnp.broadcast_to(y, shape + (n,))
    # Solve L w = y: w = L^-1 y, so that |w|^2 = y^T cov^-1 y.
    w = lax.linalg.triangular_solve(factor, y[..., None], left_side=True, lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(factor, axis1=-1, axis2=-2)), -1)
    return (-1 / 2 * jnp.einsum("...i,...i->...", w, w) - n / 2 * jnp.log(2 * np.pi)
            - log_det)


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The density (mirrors `jax.scipy.stats.multivariate_normal.pdf`)."""
    return lax.exp(logpdf(x, mean, cov))
