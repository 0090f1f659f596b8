"""`jaxlite.random`: counter-based pseudo-random numbers (mirrors `jax.random`).

Keys are explicit values: `PRNGKey(seed)` (raw uint32[2] data) or `key(seed)` (a typed key
of dtype `key<fry>`). `split` and `fold_in` derive new keys; samplers take a key and return
the same values as JAX's for the same key, shape and dtype, since the bits come from the
same Threefry-2x32 hash used the same way (JAX's default, partitionable scheme). Reusing a
key gives the same values again.

The Threefry-2x32 hash is the primitive `threefry2x32` (`jaxlite.random._threefry`), with an
eager numpy rule, batching, and a lowering to uint32 HLO arithmetic.
"""
from jaxlite.random._continuous import (cauchy, exponential, gumbel, laplace,  # noqa: F401
                                        logistic, multivariate_normal, normal, orthogonal,
                                        truncated_normal, uniform)
from jaxlite.random._discrete import (bernoulli, categorical, choice, permutation,  # noqa: F401
                                      poisson, randint)
from jaxlite.random._gamma import beta, dirichlet, gamma, loggamma, t  # noqa: F401
from jaxlite.random._keys import (PRNGKey, PRNGKeyArray, bits, clone, fold_in,  # noqa: F401
                                  key, key_data, key_dtype, key_impl, split, wrap_key_data)

__all__ = [
    "PRNGKey", "PRNGKeyArray", "bernoulli", "beta", "bits", "categorical", "cauchy", "choice",
    "clone", "dirichlet", "exponential", "fold_in", "gamma", "gumbel", "key", "key_data",
    "key_dtype", "key_impl", "laplace", "loggamma", "logistic", "multivariate_normal",
    "normal", "orthogonal", "permutation", "poisson", "randint", "split", "t",
    "truncated_normal", "uniform", "wrap_key_data",
]
