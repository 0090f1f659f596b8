"""The strong-Wolfe line search of BFGS and L-BFGS (mirrors JAX's
`jax.scipy.optimize.line_search`, itself scipy's `scalar_search_wolfe2`: Nocedal and
Wright, Numerical Optimization, Algorithms 3.5 and 3.6), written without Python branches
on values so that it runs under jit: every step computes both candidate zooms and
selects.

phi(a) = f(x + a p). Bracketing tries a_1 = min(1, 2.02 (phi(0) - f_prev) / phi'(0))
(or 1) and doubles: a step that breaks sufficient decrease (Wolfe 1), or does not
decrease phi, brackets a minimum between the previous step and it; a step that meets the
curvature condition (Wolfe 2) is accepted; a step with phi' >= 0 brackets one between it
and the previous step. The zoom shrinks a bracket [a_lo, a_hi] by the minimizer of the
cubic through a_lo, a_hi and the previous a_hi (kept 20% of the bracket away from its
ends), else of the quadratic through a_lo, a_hi (10%), else by bisection; it fails when
the bracket is narrower than 1e-5 (1e-10 in 64 bits; measured as a_hi - a_lo, so a
bracket given reversed fails after one step, as in JAX) or after 30 steps.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.numpy._promotion import promote_dtypes_inexact
from jaxlite.transforms.autodiff import value_and_grad

__all__ = ["LineSearchResults", "line_search"]

CUBIC_MARGIN = 0.2  # scipy's delta1
QUADRATIC_MARGIN = 0.1  # scipy's delta2
MAX_ZOOM_STEPS = 30


def precise_dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _cubic_minimizer(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimizer of the cubic with value fa and slope fpa at a, through (b, fb) and
    (c, fc)."""
    dtype = jnp.result_type(a, fa, fpa, b, fb, c, fc)
    db, dc = b - a, c - a
    denominator = (db * dc) ** 2 * (db - dc)
    coefficients = jnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    residuals = jnp.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    cubic, quadratic = precise_dot(coefficients, residuals) / denominator
    radical = quadratic * quadratic - 3.0 * cubic * fpa
    return a + (-quadratic + jnp.sqrt(radical)) / (3.0 * cubic)


def _quadratic_minimizer(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """The minimizer of the quadratic with value fa and slope fpa at a, through (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * curvature)


def _where(flag: Any, new: dict[str, Any], state: NamedTuple) -> dict[str, Any]:
    """The fields of `new`, where `flag` holds, else the state's."""
    return {key: jnp.where(flag, value, getattr(state, key)) for key, value in new.items()}


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom_step(phi_grad: Callable, wolfe_one: Callable, wolfe_two: Callable,
               state: _ZoomState) -> _ZoomState:
    width = state.a_hi - state.a_lo
    low, high = jnp.minimum(state.a_hi, state.a_lo), jnp.maximum(state.a_hi, state.a_lo)
    threshold = jnp.where(np.finfo(width.dtype).bits < 64, 1e-5, 1e-10)
    state = state._replace(failed=state.failed | (width <= threshold))
    cubic = _cubic_minimizer(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                             state.phi_hi, state.a_rec, state.phi_rec)
    use_cubic = ((state.j > 0) & (cubic > low + CUBIC_MARGIN * width)
                 & (cubic < high - CUBIC_MARGIN * width))
    quadratic = _quadratic_minimizer(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                                     state.phi_hi)
    use_quadratic = ((~use_cubic) & (quadratic > low + QUADRATIC_MARGIN * width)
                     & (quadratic < high - QUADRATIC_MARGIN * width))
    a_j = jnp.where(use_cubic, cubic, state.a_rec)
    a_j = jnp.where(use_quadratic, quadratic, a_j)
    a_j = jnp.where((~use_cubic) & (~use_quadratic), (state.a_lo + state.a_hi) / 2.0, a_j)

    phi_j, dphi_j, g_j = phi_grad(a_j)
    phi_j = phi_j.astype(state.phi_lo.dtype)
    dphi_j = dphi_j.astype(state.dphi_lo.dtype)
    g_j = g_j.astype(state.g_star.dtype)
    state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

    hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
    star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
    hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & (~hi_to_j) & (~star_to_j)
    lo_to_j = (~hi_to_j) & (~star_to_j)
    state = state._replace(**_where(hi_to_j, dict(
        a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi, phi_rec=state.phi_hi),
        state))
    state = state._replace(done=star_to_j | state.done, **_where(star_to_j, dict(
        a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), state))
    state = state._replace(**_where(hi_to_lo, dict(
        a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo, a_rec=state.a_hi,
        phi_rec=state.phi_hi), state))
    state = state._replace(**_where(lo_to_j & ~hi_to_lo, dict(
        a_rec=state.a_lo, phi_rec=state.phi_lo), state))
    state = state._replace(**_where(lo_to_j, dict(
        a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), state))
    state = state._replace(j=state.j + 1)
    return state._replace(failed=state.failed | (state.j >= MAX_ZOOM_STEPS))


def _zoom(phi_grad: Callable, wolfe_one: Callable, wolfe_two: Callable, a_lo: Any,
          phi_lo: Any, dphi_lo: Any, a_hi: Any, phi_hi: Any, dphi_hi: Any, g_0: Any,
          skip: Any) -> _ZoomState:
    """Shrink the bracket (a_lo, a_hi) to a step meeting both Wolfe conditions; does
    nothing where `skip`."""
    state = _ZoomState(done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo,
                       dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
                       a_rec=(a_lo + a_hi) / 2.0, phi_rec=(phi_lo + phi_hi) / 2.0,
                       a_star=1.0, phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0, nfev=0,
                       ngev=0)
    return lax.while_loop(lambda s: (~s.done) & (~skip) & (~s.failed),
                          lambda s: _zoom_step(phi_grad, wolfe_one, wolfe_two, s), state)


class _SearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class LineSearchResults(NamedTuple):
    """failed, nit, nfev, ngev, k, a_k (the step), f_k and g_k (value and gradient at
    x + a_k p), status (0 passed, 1 zoom failed, 3 too many iterations)."""
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


STAR_KEYS = ("a_star", "phi_star", "dphi_star", "g_star")


def _search_step(phi_grad: Callable, wolfe_one: Callable, wolfe_two: Callable,
                 start: Any, g_0: Any, state: _SearchState) -> _SearchState:
    a_i = jnp.where(state.i == 1, start, state.a_i1 * 2.0)
    phi_i, dphi_i, g_i = phi_grad(a_i)
    state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
    to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
    to_i = wolfe_two(dphi_i) & (~to_zoom1)
    to_zoom2 = (dphi_i >= 0.0) & (~to_zoom1) & (~to_i)
    zoom1 = _zoom(phi_grad, wolfe_one, wolfe_two, state.a_i1, state.phi_i1, state.dphi_i1,
                  a_i, phi_i, dphi_i, g_0, ~to_zoom1)
    state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
    zoom2 = _zoom(phi_grad, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, state.a_i1,
                  state.phi_i1, state.dphi_i1, g_0, ~to_zoom2)
    state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)
    state = state._replace(done=to_zoom1 | state.done,
                           failed=(to_zoom1 & zoom1.failed) | state.failed,
                           **_where(to_zoom1, {k: getattr(zoom1, k) for k in STAR_KEYS},
                                    state))
    state = state._replace(done=to_i | state.done, **_where(to_i, dict(
        a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i), state))
    state = state._replace(done=to_zoom2 | state.done,
                           failed=(to_zoom2 & zoom2.failed) | state.failed,
                           **_where(to_zoom2, {k: getattr(zoom2, k) for k in STAR_KEYS},
                                    state))
    return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)


def line_search(f: Callable, xk: Any, pk: Any, old_fval: Any = None, old_old_fval: Any = None,
                gfk: Any = None, c1: float = 1e-4, c2: float = 0.9,
                maxiter: int = 20) -> LineSearchResults:
    """A step along pk from xk meeting the strong Wolfe conditions with constants c1, c2
    (mirrors JAX's `jax.scipy.optimize.line_search`); `old_fval` and `gfk` (f and its
    gradient at xk) save an evaluation; `old_old_fval` (f at the previous iterate) sets
    the first trial step."""
    xk, pk = promote_dtypes_inexact(xk, pk)

    def phi_grad(t: Any) -> tuple[Any, Any, Any]:
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, jnp.real(precise_dot(g, pk)), g

    evaluated = old_fval is None or gfk is None
    if evaluated:
        phi_0, dphi_0, gfk = phi_grad(0)
    else:
        phi_0, dphi_0 = old_fval, jnp.real(precise_dot(gfk, pk))
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = jnp.where(candidate > 1, 1.0, candidate)
    else:
        start = 1

    def wolfe_one(a: Any, phi: Any) -> Any:  # sufficient decrease broken
        return phi > phi_0 + c1 * a * dphi_0

    def wolfe_two(dphi: Any) -> Any:  # strong curvature condition met
        return jnp.abs(dphi) <= -c2 * dphi_0

    count = 1 if evaluated else 0
    state = _SearchState(done=jnp.array(False), failed=jnp.array(False), i=1, a_i1=0.0,
                         phi_i1=phi_0, dphi_i1=dphi_0, nfev=count, ngev=count, a_star=0.0,
                         phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)
    state = lax.while_loop(
        lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed),
        lambda s: _search_step(phi_grad, wolfe_one, wolfe_two, start, gfk, s), state)
    status = jnp.where(state.failed, jnp.array(1),
                       jnp.where(state.i > maxiter, jnp.array(3), jnp.array(0)))
    alpha = jnp.asarray(state.a_star)
    alpha = jnp.where((np.finfo(alpha.dtype).bits != 64) & (jnp.abs(alpha) < 1e-8),
                      jnp.sign(alpha) * 1e-8, alpha)
    return LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1,
                             nfev=state.nfev, ngev=state.ngev, k=state.i, a_k=alpha,
                             f_k=state.phi_star, g_k=state.g_star, status=status)

