"""`jax.extend.linear_util`: wrapped functions with stacked transformations (JAX's API,
implemented in `jaxlite.core.linear_util`)."""
from jaxlite.core.linear_util import (StoreException, WrappedFun, cache, merge_linear_aux,
                                      transformation, transformation2,
                                      transformation_with_aux, transformation_with_aux2,
                                      wrap_init)

__all__ = ["StoreException", "WrappedFun", "cache", "merge_linear_aux", "transformation",
           "transformation2", "transformation_with_aux", "transformation_with_aux2",
           "wrap_init"]
