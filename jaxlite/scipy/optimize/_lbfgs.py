"""L-BFGS (mirrors JAX's experimental `_minimize_lbfgs`, Nocedal and Wright, Algorithm
7.4 and 7.5): the search direction -H g comes from the two-loop recursion over the last
`maxcor` pairs (s, y) with H_0 = gamma I, gamma = s.y / y.y of the newest pair, then the
strong-Wolfe line search (first trial step 1). It stops when |g| < gtol (converged) or
when a step decreases f by less than ftol, the gradient, function or iteration budgets
run out, or the line search fails (failed; status 4, 3, 2, 1, 5).
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.scipy.optimize._line_search import line_search, precise_dot
from jaxlite.transforms.autodiff import value_and_grad

__all__ = ["LBFGSResults", "minimize_lbfgs"]


class LBFGSResults(NamedTuple):
    """The state of L-BFGS (JAX's LBFGSResults): its final value is the result."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _two_loop_recursion(state: LBFGSResults) -> Any:
    """-H g for the L-BFGS inverse Hessian estimate H of the stored pairs (newest last)."""
    dtype = state.rho_history.dtype
    size = state.rho_history.shape[0]
    used = jnp.where(state.k < size, state.k, size)

    def newest_first(j: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        q, alphas = carry
        i = size - 1 - j
        alpha = state.rho_history[i] * precise_dot(jnp.conj(state.s_history[i]),
                                                   q).real.astype(dtype)
        return q - alpha * jnp.conj(state.y_history[i]), alphas.at[i].set(alpha)

    q, alphas = lax.fori_loop(0, used, newest_first,
                              (-jnp.conj(state.g_k), jnp.zeros_like(state.rho_history)))
    q = state.gamma * q

    def oldest_first(j: Any, q: Any) -> Any:
        i = size - used + j
        beta = state.rho_history[i] * precise_dot(state.y_history[i], q).real.astype(dtype)
        return q + (alphas[i] - beta) * state.s_history[i]
    return lax.fori_loop(0, used, oldest_first, q)


def _push(history: Any, new: Any) -> Any:
    """The history with its oldest entry dropped and `new` appended."""
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


def _lbfgs_step(fun: Callable, limits: dict[str, Any], state: LBFGSResults) -> LBFGSResults:
    p_k = _two_loop_recursion(state)
    search = line_search(f=fun, xk=state.x_k, pk=p_k, old_fval=state.f_k, gfk=state.g_k,
                         maxiter=limits["maxls"])
    s_k = jnp.asarray(search.a_k).astype(p_k.dtype) * p_k
    y_k = search.g_k - state.g_k
    rho_inverse = jnp.real(precise_dot(y_k, s_k))
    rho_k = jnp.reciprocal(rho_inverse).astype(y_k.dtype)
    gamma = rho_inverse / jnp.real(precise_dot(jnp.conj(y_k), y_k))
    status = jnp.array(0)
    status = jnp.where(state.f_k - search.f_k < limits["ftol"], 4, status)
    status = jnp.where(state.ngev >= limits["maxgrad"], 3, status)
    status = jnp.where(state.nfev >= limits["maxfun"], 2, status)
    status = jnp.where(state.k >= limits["maxiter"], 1, status)
    status = jnp.where(search.failed, 5, status)
    converged = jnp.linalg.norm(search.g_k, ord=limits["norm"]) < limits["gtol"]
    return state._replace(
        converged=converged, failed=(status > 0) & (~converged), k=state.k + 1,
        nfev=state.nfev + search.nfev, ngev=state.ngev + search.ngev,
        x_k=(state.x_k + s_k).astype(state.x_k.dtype),
        f_k=search.f_k.astype(state.f_k.dtype), g_k=search.g_k.astype(state.g_k.dtype),
        s_history=_push(state.s_history, s_k), y_history=_push(state.y_history, y_k),
        rho_history=_push(state.rho_history, rho_k), gamma=gamma.astype(state.g_k.dtype),
        status=jnp.where(converged, 0, status), ls_status=search.status)


def minimize_lbfgs(fun: Callable, x0: Any, maxiter: float | None = None, norm: Any = np.inf,
                   maxcor: int = 10, ftol: float = 2.220446049250313e-09, gtol: float = 1e-05,
                   maxfun: float | None = None, maxgrad: float | None = None,
                   maxls: int = 20) -> LBFGSResults:
    """Minimize fun from x0 (a vector) by L-BFGS; see the module docstring."""
    d = len(x0)
    dtype = jnp.asarray(x0).dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    limits = dict(maxiter=np.inf if maxiter is None else maxiter,
                  maxfun=np.inf if maxfun is None else maxfun,
                  maxgrad=np.inf if maxgrad is None else maxgrad,
                  norm=norm, ftol=ftol, gtol=gtol, maxls=maxls)
    f_0, g_0 = value_and_grad(fun)(x0)
    state = LBFGSResults(converged=jnp.array(False), failed=jnp.array(False), k=0, nfev=1,
                         ngev=1, x_k=x0, f_k=f_0, g_k=g_0,
                         s_history=jnp.zeros((maxcor, d), dtype=dtype),
                         y_history=jnp.zeros((maxcor, d), dtype=dtype),
                         rho_history=jnp.zeros((maxcor,), dtype=dtype), gamma=1.0, status=0,
                         ls_status=0)
    return lax.while_loop(lambda s: (~s.converged) & (~s.failed),
                          lambda s: _lbfgs_step(fun, limits, s), state)
