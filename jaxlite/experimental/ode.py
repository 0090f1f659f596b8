"""`jaxlite.experimental.ode` (mirrors `jax.experimental.ode`): `odeint`, an adaptive
Dormand–Prince (Runge–Kutta 5(4)) integrator, differentiable by the adjoint method.

The state is raveled into one vector. Between two requested times the solver takes steps
of the 5th-order method, accepting a step when the embedded 4th-order error estimate is
within tolerance and choosing the next step size from the error ratio; the solution at a
requested time is read off the 4th-order polynomial fitted to the last accepted step.

Gradients do not differentiate through the steps: `odeint` is a `custom_vjp` whose
backward pass integrates the adjoint system (the state, its cotangent, and the
cotangents of the time and of the extra arguments) backwards between consecutive times,
Pontryagin's method as in Chen et al. 2018, appendix C.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core.linear_util import transformation2, wrap_init
from jaxlite.core.util import safe_map, safe_zip
from jaxlite.extend.core import valid_jaxtype
from jaxlite.flatten_util import ravel_pytree
from jaxlite.lax.custom_derivative_helpers import closure_convert
from jaxlite.lax.custom_derivatives import custom_vjp
from jaxlite.numpy._promotion import promote_dtypes_inexact
from jaxlite.transforms.autodiff import vjp
from jaxlite.transforms.jit import jit
from jaxlite.transforms.vmap import vmap
from jaxlite.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

map = safe_map
zip = safe_zip

# The Dormand–Prince tableau: stage times, stage weights (row i builds stage i + 1), the
# 5th-order solution's weights and the difference from the embedded 4th-order one.
_STAGE_TIMES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1., 0)
_STAGE_WEIGHTS = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0))
_SOLUTION_WEIGHTS = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
_ERROR_WEIGHTS = (35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085,
                  125 / 192 - 451 / 720, -2187 / 6784 - -12231 / 42400,
                  11 / 84 - 649 / 6300, -1. / 60.)
# Weights of the stages for the solution at the middle of a step (Shampine's dense output).
_MIDPOINT_WEIGHTS = (6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
                     -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
                     -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def ravel_first_arg(f: Callable[..., Any], unravel: Callable[[Any], Any],
                    debug_info: Any = None) -> Callable[..., Any]:
    """`f(y, *args)` as a function of the raveled `y`, returning its raveled result
    (mirrors `jax.experimental.ode.ravel_first_arg`)."""
    return ravel_first_arg_(wrap_init(f, debug_info=debug_info), unravel).call_wrapped


@transformation2
def ravel_first_arg_(f: Callable[..., Any], unravel: Callable[[Any], Any], y_flat: Any,
                     *args: Any) -> Any:
    """The `linear_util` transformation behind `ravel_first_arg`."""
    return ravel_pytree(f(unravel(y_flat), *args))[0]


def runge_kutta_step(func: Callable[[Any, Any], Any], y0: Any, f0: Any, t0: Any,
                     dt: Any) -> tuple[Any, Any, Any, Any]:
    """One Dormand–Prince step from `(t0, y0)` with `f0 = func(y0, t0)`: the 5th-order
    solution, the derivative there, the error estimate and the seven stages `k` (mirrors
    `jax.experimental.ode.runge_kutta_step`)."""
    times = jnp.array(_STAGE_TIMES, dtype=dt.dtype)
    weights = jnp.array(_STAGE_WEIGHTS, dtype=f0.dtype)

    def stage(i: Any, k: Any) -> Any:
        y_i = y0 + dt.astype(f0.dtype) * jnp.dot(weights[i - 1, :], k)
        return k.at[i, :].set(func(y_i, t0 + dt * times[i - 1]))
    k = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, stage, k)
    step = dt.astype(f0.dtype)
    y1 = step * jnp.dot(jnp.array(_SOLUTION_WEIGHTS, dtype=f0.dtype), k) + y0
    y1_error = step * jnp.dot(jnp.array(_ERROR_WEIGHTS, dtype=f0.dtype), k)
    return y1, k[-1], y1_error, k


def fit_4th_order_polynomial(y0: Any, y1: Any, y_mid: Any, dy0: Any, dy1: Any,
                             dt: Any) -> tuple[Any, Any, Any, Any, Any]:
    """Coefficients (highest power first, in the step's relative time s in [0, 1]) of the
    quartic through `y0`, `y_mid`, `y1` with slopes `dy0`, `dy1` at the ends (mirrors
    `jax.experimental.ode.fit_4th_order_polynomial`)."""
    dt = dt.astype(y0.dtype)
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    return a, b, c, dt * dy0, y0


def interp_fit_dopri(y0: Any, y1: Any, k: Any, dt: Any) -> Any:
    """The interpolating quartic of a Dormand–Prince step, as a (5, n) array of
    coefficients (mirrors `jax.experimental.ode.interp_fit_dopri`)."""
    midpoint = jnp.array(_MIDPOINT_WEIGHTS, dtype=y0.dtype)
    y_mid = y0 + dt.astype(y0.dtype) * jnp.dot(midpoint, k)
    return jnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def initial_step_size(fun: Callable[[Any, Any], Any], t0: Any, y0: Any, order: int,
                      rtol: float, atol: float, f0: Any) -> Any:
    """A first step size from the scales of `y0`, `f0` and a trial Euler step (Hairer,
    Nørsett and Wanner, Solving ODEs I, II.4) (mirrors
    `jax.experimental.ode.initial_step_size`)."""
    y0, f0 = promote_dtypes_inexact(y0, f0)
    dtype = y0.dtype
    scale = (atol + jnp.abs(y0) * rtol).astype(dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1. / (order + 1.)))
    return jnp.minimum(100. * h0, h1)


def abs2(x: Any) -> Any:
    """|x|², without a square root for complex `x` (mirrors `jax.experimental.ode.abs2`)."""
    if jnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def mean_error_ratio(error_estimate: Any, rtol: float, atol: float, y0: Any, y1: Any) -> Any:
    """The root mean square of the error estimate relative to the tolerance (mirrors
    `jax.experimental.ode.mean_error_ratio`): a step is accepted when it is at most 1."""
    tolerance = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    ratio = error_estimate / tolerance.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(abs2(ratio)))


def optimal_step_size(last_step: Any, mean_error_ratio: Any, safety: float = 0.9,
                      ifactor: float = 10.0, dfactor: float = 0.2, order: float = 5.0) -> Any:
    """The next step size after a step with this error ratio: grown by at most `ifactor`,
    shrunk by at most `dfactor` and only after a rejected step (mirrors
    `jax.experimental.ode.optimal_step_size`)."""
    dfactor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor,
                         jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = jnp.inf, hmax: float = jnp.inf) -> Any:
    """Solve `dy/dt = func(y, t, *args)` from `y(t[0]) = y0`, returning `y` at each of the
    increasing times `t` (mirrors `jax.experimental.ode.odeint`).

    `y0` may be a pytree; the result has its structure with a leading axis of `len(t)`.
    `rtol`/`atol` are the local error tolerances, `mxstep` the most steps per interval
    (the solver stops early, without an error, beyond it) and `hmax` the largest step.
    Differentiable in `y0`, `t` and `args` by the adjoint method.
    """
    for arg in tree_leaves(args):
        if not valid_jaxtype(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


@functools.partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_wrapper(func: Callable[..., Any], rtol: float, atol: float, mxstep: float,
                    hmax: float, y0: Any, ts: Any, *args: Any) -> Any:
    y0, unravel = ravel_pytree(y0)
    func = ravel_first_arg(func, unravel)
    return vmap(unravel)(_odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args))


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func: Callable[..., Any], rtol: float, atol: float, mxstep: float, hmax: float,
            y0: Any, ts: Any, *args: Any) -> Any:
    """The solution on the raveled state at each of `ts`."""
    def derivative(y: Any, t: Any) -> Any:
        return func(y, t, *args)

    def advance_to(carry: list, target_t: Any) -> tuple[list, Any]:
        # Steps until the last accepted one passes target_t, then interpolates.
        def unfinished(state: list) -> Any:
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def attempt(state: list) -> list:
            i, y, f, t, dt, last_t, coeffs = state
            next_y, next_f, error, k = runge_kutta_step(derivative, y, f, t, dt)
            next_t = t + dt
            ratio = mean_error_ratio(error, rtol, atol, y, next_y)
            new_coeffs = interp_fit_dopri(y, next_y, k, dt)
            next_dt = jnp.clip(optimal_step_size(dt, ratio), min=0., max=hmax)
            accepted = [i + 1, next_y, next_f, next_t, next_dt, t, new_coeffs]
            rejected = [i + 1, y, f, t, next_dt, last_t, coeffs]
            return map(functools.partial(jnp.where, ratio <= 1.), accepted, rejected)
        _, *carry = lax.while_loop(unfinished, attempt, [0] + carry)
        _, _, t, _, last_t, coeffs = carry
        s = (target_t - last_t) / (t - last_t)
        return carry, _horner(coeffs, s.astype(coeffs.dtype))

    f0 = derivative(y0, ts[0])
    dt = jnp.clip(initial_step_size(derivative, ts[0], y0, 4, rtol, atol, f0), min=0.,
                  max=hmax)
    init = [y0, f0, ts[0], dt, ts[0], jnp.array([y0] * 5)]
    _, ys = lax.scan(advance_to, init, ts[1:])
    return jnp.concatenate((y0[None], ys))


def _horner(coeffs: Any, s: Any) -> Any:
    """The polynomials with coefficient rows `coeffs` (highest power first) at `s`."""
    value = jnp.zeros_like(coeffs[0])
    for row in range(coeffs.shape[0]):
        value = value * s + coeffs[row]
    return value


def _odeint_fwd(func: Callable[..., Any], rtol: float, atol: float, mxstep: float,
                hmax: float, y0: Any, ts: Any, *args: Any) -> tuple[Any, tuple]:
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_rev(func: Callable[..., Any], rtol: float, atol: float, mxstep: float,
                hmax: float, residuals: tuple, g: Any) -> tuple:
    ys, ts, args = residuals

    def adjoint_dynamics(state: tuple, minus_t: Any, *args: Any) -> tuple:
        # Runs in reversed time (-t), so every derivative changes sign.
        y, y_bar = state[0], state[1]
        y_dot, pullback = vjp(func, y, -minus_t, *args)
        return (-y_dot, *pullback(y_bar))

    def back_one_interval(carry: tuple, i: Any) -> tuple[tuple, Any]:
        y_bar, t0_bar, args_bar = carry
        # How the output at ts[i] moves with ts[i] (times are real even for complex y).
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        state = (ys[i], y_bar, t0_bar, args_bar)
        _, y_bar, t0_bar, args_bar = odeint(
            adjoint_dynamics, state, jnp.array([-ts[i], -ts[i - 1]]), *args, rtol=rtol,
            atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(operator.itemgetter(1),
                                           (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init = (g[-1], 0., tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), reversed_ts_bar = lax.scan(
        back_one_interval, init, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), reversed_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)
