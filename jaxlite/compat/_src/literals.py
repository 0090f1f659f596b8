"""`jax._src.literals` under the hook. Needed by equinox (and jaxtyping for JAX 0.7.2),
which counts JAX's typed literal scalars among array types. jaxlite's counterpart is the
weak-typed scalar that literals in traced functions hold."""
from jaxlite.interpreters.staging import _WeakScalar as TypedNdArray

__all__ = ["TypedNdArray"]
