"""Gaussian kernel density estimation (mirrors `jax.scipy.stats.gaussian_kde`).

The estimate is sum_i w_i N(x; x_i, C) with C the weighted covariance of the data times
factor^2 (Scott's rule n_eff^(-1/(d+4)) by default, or Silverman's, a scalar, or a
callable of the estimator). Points are whitened by the Cholesky factor of C^-1 so that
each kernel is a squared distance; log densities sum in log space. The estimator is a
pytree (its arrays are the leaves), so it passes through jit and vmap.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite import numpy as jnp
from jaxlite import random
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import check_arraylike, promote_dtypes_inexact
from jaxlite.scipy import linalg, special
from jaxlite.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 (JAX's name)
    """A Gaussian kernel density estimate of `dataset` (d, n) (or (n,) for d = 1)."""

    __slots__ = ("neff", "dataset", "weights", "covariance", "inv_cov")

    def __init__(self, dataset: Any, bw_method: None | str | Any | Callable[[Any], Any] = None,
                 weights: Any = None) -> None:
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if dtypes.issubdtype(dataset.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights ** 2))
        factor = self._bandwidth_factor("scott" if bw_method is None else bw_method, neff, d)
        data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False,
                                                 aweights=weights))
        self._set("covariance", data_covariance * factor ** 2)
        self._set("inv_cov", jnp.linalg.inv(data_covariance) / factor ** 2)

    def _bandwidth_factor(self, bw_method: Any, neff: Any, d: int) -> Any:
        if isinstance(bw_method, str) and bw_method == "scott":
            return jnp.power(neff, -1. / (d + 4))
        if isinstance(bw_method, str) and bw_method == "silverman":
            return jnp.power(neff * (d + 2) / 4.0, -1. / (d + 4))
        if jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            return bw_method
        if callable(bw_method):
            return bw_method(self)
        raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                         "callable.")

    def _set(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}' of a frozen gaussian_kde")

    def tree_flatten(self) -> tuple[tuple, None]:
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> "gaussian_kde":
        kde = cls.__new__(cls)
        for name, value in zip(cls.__slots__, children):
            kde._set(name, value)
        return kde

    @property
    def d(self) -> int:
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        """The number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points: Any) -> Any:
        """The estimated density at `points` (d, m)."""
        check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        return _kernel_sum(False, self.dataset.T, self.weights, points.T, self.inv_cov)

    def __call__(self, points: Any) -> Any:
        return self.evaluate(points)

    def pdf(self, x: Any) -> Any:
        """The estimated density (same as `evaluate`)."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """The log of the estimated density, summed in log space."""
        check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        return _kernel_sum(True, self.dataset.T, self.weights, x.T, self.inv_cov)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the estimate times the Gaussian N(mean, cov)."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return _gaussian_overlap(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The estimate's mass between the scalars `low` and `high` (1-D data only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other: "gaussian_kde") -> Any:
        """The integral of the product of this estimate and `other`."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        small, large = (self, other) if self.n < other.n else (other, self)
        overlaps = jnp.stack([_gaussian_overlap(chol, norm, large.dataset, large.weights,
                                                small.dataset[:, i])
                              for i in range(small.n)])
        return jnp.sum(overlaps * small.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """Draws from the estimate, of shape (d, *shape)."""
        index_key, noise_key = random.split(key)
        index = random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(noise_key, jnp.zeros(self.d, self.covariance.dtype),
                                           self.covariance, shape=shape,
                                           dtype=self.dataset.dtype).T
        return self.dataset[:, index] + noise

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """Not supported (as in JAX): use `integrate_box_1d`."""
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """Not supported (as in JAX): the estimator is immutable."""
        raise NotImplementedError(
            "dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Any:
        points = jnp.asarray(points)
        if dtypes.issubdtype(points.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _gaussian_overlap(chol: Any, norm: Any, target: Any, weights: Any, mean: Any) -> Any:
    difference = target - mean[:, None]
    solved = linalg.cho_solve(chol, difference)
    return norm * jnp.sum(jnp.exp(-0.5 * jnp.sum(difference * solved, axis=0)) * weights)


def _kernel_sum(in_log: bool, points: Any, weights: Any, xi: Any, precision: Any) -> Any:
    """sum_i w_i N(xi; points_i, precision^-1) for each row of xi (its log if in_log)."""
    points, weights, xi, precision = promote_dtypes_inexact(points, weights, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points, xi = jnp.dot(points, whitening), jnp.dot(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)
    squared = jnp.sum(jnp.square(xi[:, None, :] - points[None, :, :]), axis=-1)
    log_kernel = log_norm - 0.5 * squared  # (m, n)
    if in_log:
        return special.logsumexp(jnp.log(weights)[None, :] + log_kernel, axis=1)
    return jnp.sum(weights[None, :] * jnp.exp(log_kernel), axis=1)
