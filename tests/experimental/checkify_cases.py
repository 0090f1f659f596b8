"""checkify programs run the same way on JAX (to record) and on jaxlite (to test).

`run_all(api)` takes a namespace with `jax`, `jnp`, `lax` and `checkify` and returns, per
case, the error message and the output (as nested lists), or the exception's type name and
message. `record_jax_experimental.py` writes JAX's answers; `test_checkify.py` compares.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from case_util import plain


def _run(fn: Callable[[], Any]) -> dict:
    try:
        err, out = fn()
        return {"message": err.get(), "out": plain(out)}
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return {"raises": type(e).__name__, "text": str(e)}


def _cases(api: Any) -> dict[str, Callable[[], Any]]:
    jax, jnp, lax, C = api.jax, api.jnp, api.lax, api.checkify
    f32 = jnp.float32
    cases: dict[str, Callable[[], Any]] = {}

    def f_cond(x):
        def big(y):
            C.check(y < 10, "too big {}", y)
            return jnp.log(y)
        return lax.cond(x > 0, big, jnp.sqrt, x)
    for v in (5.0, 20.0, -1.0):
        cases[f"cond {v}"] = lambda v=v: C.checkify(f_cond, errors=C.all_checks)(f32(v))
        cases[f"jit cond {v}"] = lambda v=v: jax.jit(C.checkify(f_cond, errors=C.all_checks))(
            f32(v))

    def f_while(x):
        def cond(c):
            C.check(c[1] < 100.0, "cond saw {v}", v=c[1])
            return c[0] < 5

        def body(c):
            C.check(c[0] < 4, "body step {}", c[0])
            return c[0] + 1, c[1] * 3.0
        return lax.while_loop(cond, body, (0, x))
    for v in (1.0, 200.0):
        cases[f"while {v}"] = lambda v=v: C.checkify(f_while)(f32(v))
        cases[f"jit while {v}"] = lambda v=v: jax.jit(C.checkify(f_while))(f32(v))
    cases["vmap while"] = lambda: jax.vmap(C.checkify(f_while))(jnp.array([1.0, 10.0, 200.0]))

    def finishing_at_different_steps(x):
        # A finished member would take log(0) if its body ran again.
        return lax.while_loop(lambda c: c < 10.0, lambda c: c + 1 + 0 * jnp.log(10.5 - c), x)
    two = jnp.array([1.0, 9.5])
    cases["checkify of vmap of while"] = lambda: C.checkify(
        jax.vmap(finishing_at_different_steps), errors=C.nan_checks)(two)
    cases["checkify of jvp of vmap of while"] = lambda: C.checkify(
        lambda x: jax.jvp(jax.vmap(finishing_at_different_steps), (x,), (x,)),
        errors=C.nan_checks)(two)
    cases["checkify of vmap of while, unbatched predicate"] = lambda: C.checkify(jax.vmap(
        lambda y: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.log(c[1])),
                                 (0, y))[1]), errors=C.nan_checks)(jnp.array([1.0, 200.0]))

    def f_scan(xs):
        def body(c, x):
            C.check(x > 0, "x {} at carry {}", x, c)
            return c + x, jnp.log(x)
        return lax.scan(body, 0.0, xs)
    all_checks = C.all_checks
    cases["scan ok"] = lambda: C.checkify(f_scan, errors=all_checks)(jnp.array([1.0, 2.0, 3.0]))
    cases["scan bad"] = lambda: C.checkify(f_scan, errors=all_checks)(jnp.array([1.0, -2.0, 3.0]))
    cases["scan nan only"] = lambda: C.checkify(f_scan, errors=C.nan_checks)(
        jnp.array([1.0, -2.0, 3.0]))
    cases["jit scan"] = lambda: jax.jit(C.checkify(f_scan, errors=all_checks))(
        jnp.array([1.0, 2.0, 0.0]))
    cases["vmap scan"] = lambda: jax.vmap(C.checkify(f_scan, errors=all_checks))(
        jnp.array([[1.0, 2.0], [1.0, -2.0], [0.0, 1.0]]))
    cases["fori float div"] = lambda: C.checkify(
        lambda x: lax.fori_loop(0, 4, lambda i, v: v / (i - 2), x), errors=C.div_checks)(f32(1))
    cases["fori int div"] = lambda: C.checkify(
        lambda x: lax.fori_loop(0, 4, lambda i, v: v // (i - 2), x), errors=C.div_checks)(
        jnp.int32(7))
    cases["map"] = lambda: C.checkify(
        lambda xs: lax.map(lambda x: (C.check(x != 2, "map {}", x), x * 2)[1], xs))(
        jnp.arange(4.0))

    def switch(i, x):
        return lax.switch(i, [jnp.log, lambda y: (C.check(y > 5, "br1 {}", y), y)[1],
                              lambda y: y / 0.0], x)
    for i in (1, 2):
        cases[f"switch {i}"] = lambda i=i: C.checkify(switch, errors=all_checks)(
            jnp.int32(i), f32(2))

    @jax.jit
    def inner(x):
        C.check(jnp.all(x > 0), "inner {}", x)
        return jnp.sin(x)
    cases["nested jit check"] = lambda: C.checkify(lambda x: inner(x) * 2, errors=all_checks)(
        jnp.array([1.0, -1.0]))
    cases["nested jit nan"] = lambda: C.checkify(lambda x: inner(x) * 2, errors=all_checks)(
        jnp.array([1.0, np.inf]))

    @jax.custom_jvp
    def cj(x):
        C.check(x > 0, "cj {}", x)
        return jnp.log(x)
    cj.defjvp(lambda p, t: (cj(p[0]), t[0] / p[0]))
    cases["custom_jvp"] = lambda: C.checkify(cj, errors=all_checks)(f32(-1))
    cases["checkify of grad custom_jvp"] = lambda: C.checkify(jax.grad(cj), errors=all_checks)(
        f32(-1))
    cases["grad of checkify custom_jvp"] = lambda: (
        C.checkify(cj)(f32(-1))[0], jax.grad(lambda x: C.checkify(cj)(x)[1])(f32(2)))

    @jax.custom_vjp
    def cv(x):
        C.check(x > 0, "cv {}", x)
        return jnp.sqrt(x)
    cv.defvjp(lambda x: (cv(x), x), lambda r, g: (g / r,))
    cases["custom_vjp"] = lambda: C.checkify(cv, errors=all_checks)(f32(-1))
    cases["checkify of grad custom_vjp"] = lambda: C.checkify(jax.grad(cv), errors=all_checks)(
        f32(4))
    cases["grad of checkify custom_vjp"] = lambda: (
        C.checkify(cv)(f32(-4))[0], jax.grad(lambda x: C.checkify(cv)(x)[1])(f32(4)))
    remat = jax.checkpoint(lambda x: (C.check(x > 0, "remat {}", x), jnp.sin(x))[1])
    cases["checkpoint"] = lambda: C.checkify(remat)(f32(-1))
    cases["grad checkpoint"] = lambda: C.checkify(jax.grad(remat))(f32(-1))

    x3 = jnp.arange(3.0)
    index = C.index_checks
    take = lambda x, i: x[i]  # noqa: E731
    cases["index oob"] = lambda: C.checkify(take, errors=index)(x3, jnp.int32(3))
    cases["index negative oob"] = lambda: C.checkify(take, errors=index)(x3, jnp.int32(-4))
    cases["index negative ok"] = lambda: C.checkify(take, errors=index)(x3, jnp.int32(-3))
    cases["gather"] = lambda: C.checkify(take, errors=index)(x3, jnp.array([0, 7, 1]))
    cases["gather 2d"] = lambda: C.checkify(lambda x, i: x[i, 1], errors=index)(
        jnp.ones((3, 4)), jnp.array([0, 2, 9]))
    cases["scatter set"] = lambda: C.checkify(lambda x, i: x.at[i].set(1.0), errors=index)(
        x3, jnp.array([0, 5]))
    cases["scatter add"] = lambda: C.checkify(lambda x, i: x.at[i].add(1.0), errors=index)(
        x3, jnp.int32(4))
    cases["dynamic_slice"] = lambda: C.checkify(
        lambda x, i: lax.dynamic_slice(x, (i,), (2,)), errors=index)(x3, jnp.int32(2))
    cases["dynamic_update_slice"] = lambda: C.checkify(
        lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)), errors=index)(
        x3, jnp.int32(2))
    cases["dynamic_index_in_dim"] = lambda: C.checkify(
        lambda x, i: lax.dynamic_index_in_dim(x, i, keepdims=False), errors=index)(
        x3, jnp.int32(5))

    nan = C.nan_checks
    inf = np.inf
    cases["div float"] = lambda: C.checkify(lambda x: 1.0 / x, errors=C.div_checks)(f32(0))
    cases["floordiv int"] = lambda: C.checkify(lambda x, y: x // y, errors=C.div_checks)(
        jnp.arange(3), jnp.array([1, 0, 2]))
    cases["mod int"] = lambda: C.checkify(lambda x, y: x % y, errors=all_checks)(
        jnp.arange(3), jnp.array([1, 0, 2]))
    cases["nan add"] = lambda: C.checkify(lambda x: x + -x, errors=nan)(f32(inf))
    cases["nan matmul"] = lambda: C.checkify(lambda a: a @ a, errors=nan)(
        jnp.array([[inf, 0.0], [1.0, 1.0]]))
    cases["nan sum"] = lambda: C.checkify(jnp.sum, errors=nan)(jnp.array([inf, -inf]))
    cases["nan mean"] = lambda: C.checkify(jnp.mean, errors=nan)(jnp.array([inf, -inf]))
    cases["nan pow"] = lambda: C.checkify(lambda a: a ** 0.5, errors=nan)(f32(-1))
    cases["nan arcsin"] = lambda: C.checkify(jnp.arcsin, errors=nan)(f32(2))
    cases["nan softmax"] = lambda: C.checkify(jax.nn.softmax, errors=nan)(jnp.array([inf, 1.0]))
    cases["nan input"] = lambda: C.checkify(jnp.sin, errors=nan)(f32(np.nan))
    cases["nan sqrt grad"] = lambda: C.checkify(jax.grad(jnp.sqrt), errors=nan)(f32(0))

    def log_then_check(x):
        y = jnp.log(x)
        C.check(x > 0, "neg")
        return y
    cases["first failure wins"] = lambda: C.checkify(log_then_check, errors=all_checks)(f32(-1))
    cases["second check"] = lambda: C.checkify(
        lambda x: (C.check(x > 0, "first"), C.check(x > 1, "second {}", x), x)[2])(f32(0.5))
    cases["debug_check"] = lambda: C.checkify(
        lambda x: (C.debug_check(x > 0, "dbg"), x)[1])(f32(-1))
    cases["keyword pred and msg"] = lambda: C.checkify(
        lambda x: (C.check(pred=x > 0, msg="kw {a}", a=x), x)[1])(f32(-1))
    cases["pytree format argument"] = lambda: C.checkify(
        lambda x: (C.check(x[0] > 0, "tree {t}", t={"a": x}), x)[1])(jnp.array([-1.0, 2.0]))
    cases["vmap check"] = lambda: jax.vmap(C.checkify(
        lambda x: (C.check(x > 0, "v {}", x), x)[1]))(jnp.array([1.0, -1.0, -2.0]))
    cases["vmap nan"] = lambda: jax.vmap(C.checkify(jnp.log, errors=nan))(
        jnp.array([1.0, -1.0, 2.0]))
    cases["checkify of vmap"] = lambda: C.checkify(jax.vmap(
        lambda x: (C.check(x > 0, "v {}", x), x)[1]))(jnp.array([1.0, -1.0, -2.0]))
    cases["checkify of grad"] = lambda: C.checkify(jax.grad(
        lambda x: (C.check(x > 0, "g {}", x), jnp.log(x))[1]), errors=all_checks)(f32(-1))
    cases["pytree output"] = lambda: C.checkify(lambda x: {"a": x, "b": [x * 2, x]})(f32(1))
    return cases


def _inner_error(api: Any) -> Any:
    C, f32 = api.checkify, api.jnp.float32
    return C.checkify(lambda x: (C.check(x > 0, "inner neg"), x)[1])(f32(-1))[0]


def _raising_cases(api: Any) -> dict[str, Callable[[], Any]]:
    jax, jnp, C = api.jax, api.jnp, api.checkify
    f32 = jnp.float32
    return {
        "eager check": lambda: C.check(f32(-1) > 0, "eager {}", f32(-1)),
        "eager debug_check": lambda: C.debug_check(f32(-1) > 0, "never"),
        "jit check": lambda: jax.jit(lambda x: (C.check(x > 0, "x"), x)[1])(f32(-1)),
        "jit debug_check": lambda: jax.jit(lambda x: (C.debug_check(x > 0, "x"), x * 2)[1])(
            f32(-1)),
        "vmap check": lambda: jax.vmap(lambda x: (C.check(x > 0, "v {}", x), x)[1])(
            jnp.array([1.0, -1.0, -2.0])),
        "grad check": lambda: jax.grad(lambda x: (C.check(x > 0, "g {}", x), x * x)[1])(
            f32(-1)),
        "check_error": lambda: C.check_error(_inner_error(api)),
        "throw": lambda: _inner_error(api).throw(),
        "check_error of an int": lambda: C.check_error(3),
        "array pred": lambda: C.check(jnp.array([True, False]), "m"),
        "numpy bool pred": lambda: C.check(np.bool_(False), "m"),
        "python format argument": lambda: C.check(True, "m {}", 3),
    }


def _raised(fn: Callable[[], Any]) -> dict:
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return {"raises": type(e).__name__, "text": str(e)}
    return {"returns": plain(result)}


def run_all(api: Any) -> dict:
    """Every case's answer, by name."""
    C = api.checkify
    answers = {name: _run(fn) for name, fn in _cases(api).items()}
    answers.update({f"raises: {name}": _raised(fn)
                    for name, fn in _raising_cases(api).items()})
    answers["check_error under checkify"] = _run(
        lambda: C.checkify(C.check_error)(_inner_error(api)))
    return answers
