"""`jaxlite.scipy.optimize`: unconstrained minimization (mirrors `jax.scipy.optimize`):
`minimize` with BFGS (`_bfgs`) or the experimental L-BFGS (`_lbfgs`), both with the
strong-Wolfe line search of `_line_search`, written with lax.while_loop so that they run
under jit and give JAX's iterates.
"""
from jaxlite.scipy.optimize._minimize import OptimizeResults, minimize  # noqa: F401

__all__ = ["OptimizeResults", "minimize"]
