"""`jaxlite.scipy.sparse`: (mirrors `jax.scipy.sparse`) only its `linalg` submodule, the
iterative solvers."""
from jaxlite.scipy.sparse import linalg  # noqa: F401

__all__ = ["linalg"]
