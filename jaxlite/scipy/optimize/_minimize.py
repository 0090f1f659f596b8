"""minimize and OptimizeResults (mirror `jax.scipy.optimize`)."""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import jaxlite.numpy as jnp
from jaxlite.scipy.optimize._bfgs import minimize_bfgs
from jaxlite.scipy.optimize._lbfgs import minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of `minimize` (mirrors `jax.scipy.optimize.OptimizeResults`).

    x: the solution; success: whether it converged without a failed line search; status:
    the solver's code (BFGS: 0 converged, 1 max iterations, 2 + the line search's status
    when it failed; L-BFGS: 0, or 1 to 5 as its module says); fun, jac: the objective and
    its gradient at x; hess_inv: BFGS's inverse Hessian estimate (None for L-BFGS); nfev,
    njev: evaluations of the objective and of its gradient; nit: iterations.
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun: Callable, x0: Any, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimize fun(x, *args) over vectors x from x0 (mirrors
    `jax.scipy.optimize.minimize`).

    method: 'BFGS', or 'l-bfgs-experimental-do-not-rely-on-this' (any case). options are
    passed to the solver: BFGS takes maxiter, norm, gtol, line_search_maxiter; L-BFGS
    maxiter, norm, maxcor, ftol, gtol, maxfun, maxgrad, maxls. `tol` is unused, as in JAX.
    Works under jit (fun must be a jaxlite function of x).
    """
    options = {} if options is None else options
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got "
                        f"{args}")

    def objective(x: Any) -> Any:
        return fun(x, *args)

    if method.lower() == "bfgs":
        results = minimize_bfgs(objective, x0, **options)
        return OptimizeResults(x=results.x_k,
                               success=results.converged & jnp.logical_not(results.failed),
                               status=results.status, fun=results.f_k, jac=results.g_k,
                               hess_inv=results.H_k, nfev=results.nfev, njev=results.ngev,
                               nit=results.k)
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        results = minimize_lbfgs(objective, x0, **options)
        return OptimizeResults(x=results.x_k,
                               success=results.converged & jnp.logical_not(results.failed),
                               status=results.status, fun=results.f_k, jac=results.g_k,
                               hess_inv=None, nfev=results.nfev, njev=results.ngev,
                               nit=results.k)
    raise ValueError(f"Method {method} not recognized")
