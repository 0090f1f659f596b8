"""`jaxlite.scipy.sparse.linalg`: iterative solvers of linear systems given by a matrix or a
function (mirrors `jax.scipy.sparse.linalg`): cg and bicgstab (`_cg`), gmres (`_gmres`).

Operators and right-hand sides may be pytrees of arrays. The solvers run in lax loops (so
under jit), and are wrapped in `jaxlite.lax.custom_linear_solve`, as in JAX: derivatives
come from solving with the operator (and its transpose), never by differentiating the
iterations. They return (x, info) with info None (cg, bicgstab) or 0/-1 (gmres: -1 where
x holds NaNs), as JAX does.
"""
from jaxlite.scipy.sparse.linalg._cg import bicgstab, cg  # noqa: F401
from jaxlite.scipy.sparse.linalg._gmres import gmres  # noqa: F401

__all__ = ["bicgstab", "cg", "gmres"]
