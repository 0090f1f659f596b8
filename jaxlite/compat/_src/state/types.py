"""`jax._src.state.types` under the hook. Needed by flax.nnx (variablelib), which tests
whether a value's type is a ref's."""
from jaxlite.ref import AbstractRef

__all__ = ["AbstractRef"]
