"""`jaxlite.scipy.stats`: statistical distributions and summaries (mirrors `jax.scipy.stats`).

One module per distribution with JAX's functions (pdf/logpdf, cdf/logcdf, sf/logsf,
ppf/isf, pmf/logpmf, entropy as JAX has them), written with lax, jaxlite.numpy and
jaxlite.scipy.special; `gaussian_kde`, `mode`, `rankdata` and `sem`.
"""
from jaxlite.scipy.stats import (bernoulli, beta, betabinom, binom, cauchy, chi2,  # noqa: F401
                                 dirichlet, expon, gamma, gennorm, geom, gumbel_l, gumbel_r,
                                 laplace, logistic, multinomial, multivariate_normal, nbinom,
                                 norm, pareto, poisson, t, truncnorm, uniform, vonmises,
                                 wrapcauchy)
from jaxlite.scipy.stats._core import mode, rankdata, sem  # noqa: F401
from jaxlite.scipy.stats.kde import gaussian_kde  # noqa: F401

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
           "logistic", "mode", "multinomial", "multivariate_normal", "nbinom", "norm",
           "pareto", "poisson", "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises",
           "wrapcauchy"]
