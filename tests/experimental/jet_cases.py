"""jet programs run the same way on JAX (to record) and on jaxlite (to test).

`run_all(api)` takes a namespace with `jax`, `jnp`, `lax` and `jet` (the module) and
returns, per case, the primal output and its series as nested lists of floats, or the
exception's type name. Cases ending in "64" run with 64-bit enabled.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from case_util import run_cases


def _unary(api: Any) -> dict[str, Callable[[Any], Any]]:
    jax, jnp, lax = api.jax, api.jnp, api.lax
    return {
        "sin": jnp.sin, "cos": jnp.cos, "exp": jnp.exp, "log": jnp.log, "tanh": jnp.tanh,
        "sinh": jnp.sinh, "cosh": jnp.cosh, "logistic": jax.nn.sigmoid, "sqrt": jnp.sqrt,
        "rsqrt": lax.rsqrt, "expm1": jnp.expm1, "log1p": jnp.log1p, "square": lax.square,
        "cube": lambda x: x ** 3, "inverse square": lambda x: x ** -2,
        "power 2.5": lambda x: x ** 2.5, "erf": lax.erf, "erfc": lax.erfc,
        "erf_inv": lambda x: lax.erf_inv(x / 4), "asinh": jnp.arcsinh,
        "acosh": lambda x: jnp.arccosh(x + 1.5), "atanh": lambda x: jnp.arctanh(x / 3),
        "abs": lambda x: jnp.abs(x - 0.6), "reciprocal": lambda x: 1 / x,
        "atan2": lambda x: jnp.arctan2(x, x * x + 1), "rem": lambda x: lax.rem(x * 3, 1.3),
        # (JAX's min and clamp rules fail on scalar bounds: full arrays here)
        "clamp": lambda x: lax.clamp(jnp.full_like(x, 0.2), x * x, jnp.full_like(x, 0.5)),
        "max": lambda x: jnp.maximum(x, 0.5), "min": lambda x: jnp.minimum(x * 2, x * 0 + 1),
        "where": lambda x: jnp.where(x > 0.5, x, -x), "gelu": jax.nn.gelu, "composite":
            lambda x: jnp.sin(jnp.exp(x) * jnp.log(x + 2)) / (1 + x * x),
        "zero power": lambda x: x ** 0, "sign times": lambda x: jnp.sign(x - 0.3) * x,
    }


def _cases(api: Any) -> dict[str, Callable[[], Any]]:
    jax, jnp, lax, jet = api.jax, api.jnp, api.lax, api.jet.jet
    cases: dict[str, Callable[[], Any]] = {}
    x32 = np.array([0.3, 0.7, 1.1], np.float32)
    terms32 = [np.array([1.0, -0.5, 0.25], np.float32), np.array([0.2, 0.1, -0.3], np.float32),
               np.array([0.5, 0.0, 0.1], np.float32)]
    for name, fn in _unary(api).items():
        cases[name + " 32"] = lambda fn=fn: jet(fn, (x32,), (terms32,))
        cases[name + " 64"] = lambda fn=fn: jet(
            fn, (x32.astype(np.float64),), ([t.astype(np.float64) for t in terms32],))
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 5
    b = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7 - 0.5
    da, db = [np.ones_like(a) * 0.3, a * 0.1], [np.ones_like(b) * -0.2, b * 0.5]
    cases["matmul tanh 32"] = lambda: jet(lambda a, b: jnp.tanh(a @ b), (a, b), (da, db))
    cases["reductions 32"] = lambda: jet(
        lambda a: (jnp.sum(a ** 2, axis=0), jnp.max(a, axis=1), jnp.min(a), jnp.mean(a)),
        (a,), ([a * 0 + 1, a],))
    cases["tie in max 32"] = lambda: jet(lambda a: jnp.max(a), (np.float32([1.0, 2.0, 2.0]),),
                                         ([np.float32([1.0, 4.0, 6.0])],))
    cases["structural 32"] = lambda: jet(
        lambda a: jnp.concatenate([a.T.reshape(-1), a[:, 1], jnp.flip(a[0])]) * 2,
        (a,), ([a + 1, a * a],))
    i = jnp.int32(1)
    cases["indexing 32"] = lambda: jet(
        lambda a: a[i] + a.at[0, 1].add(3.0)[1] + jnp.sum(lax.dynamic_slice(a, (0, i), (2, 2)))
        + lax.dynamic_update_slice(a, a[:1, :2] * 3, (i, i))[1], (a,), ([a, a * 2],))
    cases["cumulative 32"] = lambda: jet(
        lambda v: (jnp.cumsum(v), jnp.cumprod(v), lax.cummax(v)),
        (np.float32([0.5, 1.5, 1.2, 2.0]),),
        ([np.float32([1.0, -1.0, 0.5, 0.2]), np.float32([0.1, 0.2, 0.3, 0.4])],))
    cases["two inputs pytree out 32"] = lambda: jet(
        lambda x, y: {"p": x * y, "q": [x / y, jnp.exp(x - y)]}, (0.5, 1.5),
        ([1.0, 0.5, 0.25], [0.0, 1.0, -1.0]))
    cases["scalar python inputs 32"] = lambda: jet(lambda x: jnp.sin(x ** 3), (0.5,),
                                                   ((0.75, 3.0),))
    cases["jit inside 32"] = lambda: jet(jax.jit(lambda x: jnp.exp(jnp.sin(x)) * x), (x32,),
                                         (terms32,))
    cases["jit outside 32"] = lambda: jax.jit(
        lambda x, t: jet(lambda y: jnp.log1p(y * y), (x,), ((t, t * t),)))(x32, terms32[0])
    cases["vmap outside 32"] = lambda: jax.vmap(
        lambda x, t: jet(jnp.tanh, (x,), ((t, t),)))(x32, terms32[1])
    cases["grad of jet 32"] = lambda: jax.grad(
        lambda x: jet(jnp.sin, (x,), ((1.0, 0.0, 0.0),))[1][2])(0.4)
    cases["jet of grad 32"] = lambda: jet(jax.grad(lambda x: jnp.sin(x) * x), (0.4,),
                                          ((1.0, 0.0, 0.0),))
    cases["factorial unscaled 32"] = lambda: api.jet.jet2(jnp.exp, (0.5,), ((1.0, 0.0, 0.0),))
    cases["constant output 32"] = lambda: jet(lambda x: jnp.ones(2), (x32,), (terms32,))
    cases["integer ops 32"] = lambda: jet(lambda x: (x > 0.5) * x + jnp.floor(x * 4),
                                          (x32,), (terms32,))
    cases["fact 32"] = lambda: [api.jet.fact(n) for n in range(6)]
    cases["error: inconsistent orders"] = lambda: jet(lambda x, y: x * y, (1.0, 2.0),
                                                      ([1.0], [1.0, 2.0]))
    cases["error: tuple primal"] = lambda: jet(lambda x: x, ((1.0, 2.0),), ([1.0],))
    cases["error: no rule (while)"] = lambda: jet(
        lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c * 2, x), (1.0,), ([1.0],))
    return cases


def run_all(api: Any) -> dict:
    return run_cases(_cases(api), api.jax)
