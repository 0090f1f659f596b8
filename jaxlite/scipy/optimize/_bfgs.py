"""BFGS (mirrors JAX's `minimize_bfgs`, Nocedal and Wright, Algorithm 6.1): the inverse
Hessian estimate H starts at the identity; each step searches along p = -H g with the
strong-Wolfe line search, and with s = x_{k+1} - x_k, y = g_{k+1} - g_k, rho = 1 / (y.s),
updates H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T (kept when rho is not finite).
It stops when |g| (norm `norm`) < gtol, when the line search fails, or after `maxiter`
steps (default 200 per dimension). Status: 0 converged, 1 maxiter, 2 + the line search's
status when it failed.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.scipy.optimize._line_search import line_search, precise_dot
from jaxlite.transforms.autodiff import value_and_grad

__all__ = ["BFGSResults", "minimize_bfgs"]


class BFGSResults(NamedTuple):
    """The state of BFGS (JAX's _BFGSResults): its final value is the result."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _bfgs_step(fun: Callable, norm: Any, gtol: float, line_search_maxiter: int,
               state: BFGSResults) -> BFGSResults:
    p_k = -precise_dot(state.H_k, state.g_k)
    search = line_search(fun, state.x_k, p_k, old_fval=state.f_k,
                         old_old_fval=state.old_old_fval, gfk=state.g_k,
                         maxiter=line_search_maxiter)
    state = state._replace(nfev=state.nfev + search.nfev, ngev=state.ngev + search.ngev,
                           failed=search.failed, line_search_status=search.status)
    s_k = search.a_k * p_k
    y_k = search.g_k - state.g_k
    rho_k = jnp.reciprocal(precise_dot(y_k, s_k))
    d = s_k.shape[0]
    w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * (s_k[:, None] * y_k[None, :])
    h_next = (jnp.einsum("ij,jk,lk", w, state.H_k, w, precision=lax.Precision.HIGHEST)
              + rho_k * s_k[:, None] * s_k[None, :])
    h_next = jnp.where(jnp.isfinite(rho_k), h_next, state.H_k)
    return state._replace(converged=jnp.linalg.norm(search.g_k, ord=norm) < gtol,
                          k=state.k + 1, x_k=state.x_k + s_k, f_k=search.f_k,
                          g_k=search.g_k, H_k=h_next, old_old_fval=state.f_k)


def minimize_bfgs(fun: Callable, x0: Any, maxiter: int | None = None, norm: Any = np.inf,
                  gtol: float = 1e-5, line_search_maxiter: int = 10) -> BFGSResults:
    """Minimize fun from x0 (a vector) by BFGS; see the module docstring."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    f_0, g_0 = value_and_grad(fun)(x0)
    state = BFGSResults(converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0,
                        nfev=1, ngev=1, nhev=0, x_k=x0, f_k=f_0, g_k=g_0,
                        H_k=jnp.eye(x0.shape[0], dtype=x0.dtype),
                        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2, status=0,
                        line_search_status=0)
    state = lax.while_loop(
        lambda s: jnp.logical_not(s.converged) & jnp.logical_not(s.failed) & (s.k < maxiter),
        lambda s: _bfgs_step(fun, norm, gtol, line_search_maxiter, s), state)
    status = jnp.where(state.converged, 0,
                       jnp.where(state.k == maxiter, 1,
                                 jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)
