"""odeint problems run the same way on JAX (to record) and on jaxlite (to test).

`run_all(api)` takes a namespace with `jax`, `jnp` and `ode` (the module) and returns, per
case, the solution and gradients as nested lists of floats (complex numbers as [re, im]),
or the exception's type name and message. Cases ending in "64" run with 64-bit enabled.
"""
from __future__ import annotations

from typing import Any, Callable

from case_util import run_cases


def forced_decay(y, t, k):
    return -k * y + (y[::-1] * 0.1 + 1.0) * (t * t * 0.1 + 0.5)


def lotka_volterra(state, t, a, b):
    x, y = state["x"], state["y"]
    return {"x": a * x - b * x * y, "y": -y + b * x * y}


def pendulum(state, t, params):
    theta, omega = state
    damping, gravity = params
    return omega, -damping * omega - gravity * (theta - theta ** 3 / 6)


def _cases(api: Any) -> dict[str, Callable[[], Any]]:
    jax, jnp, ode = api.jax, api.jnp, api.ode
    odeint = ode.odeint
    cases: dict[str, Callable[[], Any]] = {}
    for bits, dtype in (("32", jnp.float32), ("64", jnp.float64)):
        def decay(bits=bits, dtype=dtype):
            y0, t = jnp.array([1.0, 2.0], dtype), jnp.linspace(0.0, 3.0, 5, dtype=dtype)
            k = jnp.asarray(0.5, dtype)

            def loss(y0, k, t):
                return jnp.sum(odeint(forced_decay, y0, t, k) ** 2)
            return (odeint(forced_decay, y0, t, k),
                    jax.grad(loss, argnums=(0, 1, 2))(y0, k, t))
        cases["forced decay " + bits] = decay

        def lv(dtype=dtype):
            state = {"x": jnp.asarray(1.0, dtype), "y": jnp.asarray(0.5, dtype)}
            t = jnp.linspace(0.0, 5.0, 4, dtype=dtype)

            def loss(a, b):
                out = odeint(lotka_volterra, state, t, a, b, rtol=1e-6, atol=1e-6)
                return out["x"][-1] + 2 * out["y"][-1]
            a, b = jnp.asarray(1.1, dtype), jnp.asarray(0.4, dtype)
            value = odeint(lotka_volterra, state, t, a, b, rtol=1e-6, atol=1e-6)
            if dtype == jnp.float32:
                return value  # (gradients are compiled programs: float64 only, to save time)
            return value, jax.grad(loss, argnums=(0, 1))(a, b)
        cases["lotka volterra " + bits] = lv

        def pend(dtype=dtype):
            state = (jnp.asarray(1.0, dtype), jnp.asarray(0.0, dtype))
            params = (jnp.asarray(0.3, dtype), jnp.asarray(9.8, dtype))
            t = jnp.linspace(0.0, 2.0, 6, dtype=dtype)
            value = odeint(pendulum, state, t, params, hmax=0.05)
            if dtype == jnp.float32:
                return value
            return value, jax.grad(lambda p: odeint(pendulum, state, t, p)[0][-1])(params)
        cases["pendulum hmax " + bits] = pend

    def truncated():
        # Stopped after 3 steps per interval: the answer extrapolates the last step's
        # polynomial, which amplifies rounding differences (so only in float64).
        state = (jnp.asarray(1.0), jnp.asarray(0.0))
        return odeint(pendulum, state, jnp.linspace(0.0, 2.0, 6), (0.3, 9.8), mxstep=3)
    cases["pendulum mxstep 64"] = truncated

    def rotation():
        t = jnp.linspace(0.0, 2.0, 3)
        return odeint(lambda y, t, w: 1j * w * y, jnp.array([1.0 + 0.5j]), t, 1.5)
    cases["complex rotation 64"] = rotation

    def closure():
        w = jnp.array([0.3, -0.2], jnp.float32)
        t = jnp.linspace(0.0, 1.0, 3, dtype=jnp.float32)

        def loss(w):
            return jnp.sum(odeint(lambda y, t: -y * w + t, jnp.ones(2, jnp.float32), t))
        return jax.jit(loss)(w), jax.grad(loss)(w)
    cases["closure gradient jit 32"] = closure

    def batched():
        t = jnp.linspace(0.0, 1.0, 3, dtype=jnp.float32)
        y0s = jnp.array([[1.0, 0.0], [0.5, 2.0], [-1.0, 1.0]], jnp.float32)
        return jax.vmap(lambda y0: odeint(forced_decay, y0, t, 0.7))(y0s)
    cases["vmap over y0 32"] = batched

    def helpers():
        # In float64: the error estimate of a good step is near float32's rounding.
        y0 = jnp.array([1.0, -2.0])
        f0 = forced_decay(y0, 0.0, 0.5)
        func = lambda y, t: forced_decay(y, t, 0.5)  # noqa: E731
        dt = ode.initial_step_size(func, jnp.float64(0.0), y0, 4, 1e-6, 1e-6, f0)
        y1, f1, error, k = ode.runge_kutta_step(func, y0, f0, jnp.float64(0.0), dt * 10)
        ratio = ode.mean_error_ratio(error, 1e-6, 1e-6, y0, y1)
        return (dt, y1, f1, error, k, ratio, ode.optimal_step_size(dt, ratio),
                ode.optimal_step_size(dt, jnp.float64(4.0)),
                ode.interp_fit_dopri(y0, y1, k, dt), ode.abs2(jnp.array([3 + 4j])))
    cases["helpers 64"] = helpers
    cases["error: integer times"] = lambda: odeint(forced_decay, jnp.ones(2), jnp.arange(3), 0.5)
    cases["error: string argument"] = lambda: odeint(
        forced_decay, jnp.ones(2), jnp.linspace(0.0, 1.0, 3), "k")
    return cases


def run_all(api: Any) -> dict:
    return run_cases(_cases(api), api.jax)
