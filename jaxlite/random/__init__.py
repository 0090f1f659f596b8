"""`jaxlite.random`: counter-based pseudo-random numbers (mirrors `jax.random`).

Keys are explicit values: `PRNGKey(seed)` (raw uint32[2] data) or `key(seed)` (a typed key
of the extended dtype `key<fry>`, see `_prng`). `split` and `fold_in` derive new keys;
samplers take a key and compute JAX's algorithms on the bits of the same Threefry-2x32 hash
used the same way (JAX's default, partitionable scheme), with JAX's key splits. Reusing a
key gives the same values again.

Agreement with JAX 0.10.2 for the same key, shape and dtype: keys, bits and every integer or
boolean result (randint, bernoulli, categorical, permutation, choice, poisson, binomial,
geometric, rademacher, multinomial) are JAX's; float32 uniform, normal, truncated_normal,
exponential, gumbel, logistic, laplace, rayleigh, wald and triangular (and the initializers
built on them) are JAX's bit for bit, eagerly and under jit; the others go through exp,
pow, tan, an approximate rsqrt, reductions or LAPACK as XLA computes them on the CPU, and
agree to a few ulps, as do float64 values.

The Threefry-2x32 hash is the primitive `threefry2x32` (`_threefry`); the gamma sampler is
the primitive `random_gamma` (`_gamma_sampler`), differentiable with respect to its shape
parameter. The samplers' `out_sharding` is accepted for JAX's signatures; with one device
there is nothing to shard.
"""
from jaxlite.random._binomial import binomial, multinomial  # noqa: F401
from jaxlite.random._continuous import (cauchy, exponential, gumbel, laplace,  # noqa: F401
                                        logistic, multivariate_normal, normal, orthogonal,
                                        truncated_normal, uniform)
from jaxlite.random._derived import (ball, double_sided_maxwell, generalized_normal,  # noqa: F401
                                     geometric, lognormal, maxwell, pareto, rademacher,
                                     rayleigh, triangular, wald, weibull_min)
from jaxlite.random._discrete import (bernoulli, categorical, choice, permutation,  # noqa: F401
                                      poisson, randint)
from jaxlite.random._gamma import beta, chisquare, dirichlet, f, gamma, loggamma, t  # noqa: F401
from jaxlite.random._gamma_sampler import random_gamma_p  # noqa: F401
from jaxlite.random._keys import (PRNGKey, PRNGKeyArray, bits, clone, fold_in,  # noqa: F401
                                  key, key_data, key_dtype, key_impl, split, wrap_key_data)
from jaxlite.random import _rbg  # noqa: F401,E402  (registers the "rbg" implementations)

__all__ = [
    "PRNGKey", "PRNGKeyArray", "ball", "bernoulli", "beta", "binomial", "bits", "categorical",
    "cauchy", "chisquare", "choice", "clone", "dirichlet", "double_sided_maxwell",
    "exponential", "f", "fold_in", "gamma", "generalized_normal", "geometric", "gumbel", "key",
    "key_data", "key_dtype", "key_impl", "laplace", "loggamma", "logistic", "lognormal",
    "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal", "pareto",
    "permutation", "poisson", "rademacher", "randint", "random_gamma_p", "rayleigh", "split",
    "t", "triangular", "truncated_normal", "uniform", "wald", "weibull_min", "wrap_key_data",
]
