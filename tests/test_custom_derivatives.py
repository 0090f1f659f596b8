"""Tests of `custom_jvp` and `custom_vjp`: the user's rules are really used, under grad, jvp,
vmap and jit, with nondiff_argnums, pytrees and None cotangents; and `check_grads`, which
must catch a wrong rule.

The rules below deliberately differ from the true derivative (by a known factor), so that a
test can tell the custom rule from differentiation of the function body.
"""
from __future__ import annotations

import functools
import gc

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.core.trace import Tracer
from jaxlite.test_util import check_grads

f32 = np.float32


def close(actual, expected, tol=1e-6):
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64),
                               rtol=tol, atol=tol)


@jax.custom_jvp
def cube(x):
    return lax.mul(x, lax.mul(x, x))


@cube.defjvp
def cube_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return cube(x), lax.mul(lax.mul(x, 100.0), t)  # true derivative: 3 x^2


@jax.custom_vjp
def scaled_mul(x, y):
    return lax.mul(x, y)


def scaled_mul_fwd(x, y):
    return scaled_mul(x, y), (x, y)


def scaled_mul_bwd(residuals, ct):
    x, y = residuals
    return lax.mul(ct, lax.mul(y, 10.0)), None  # true: (ct y, ct x); None: zero for y


scaled_mul.defvjp(scaled_mul_fwd, scaled_mul_bwd)


# ------------------------------------------------------------------------ custom_jvp

def test_custom_jvp_runs_the_function_eagerly():
    close(cube(2.0), 8.0)


@pytest.mark.parametrize("gradient", [
    jax.grad(cube), jax.jit(jax.grad(cube)), jax.grad(jax.jit(cube)),
    jax.grad(jax.checkpoint(cube))], ids=["grad", "jit_of_grad", "grad_of_jit", "checkpoint"])
def test_custom_jvp_rule_is_used(gradient):
    close(gradient(2.0), 200.0)


def test_custom_jvp_forward_mode_and_vmap():
    out, t = jax.jvp(cube, (2.0,), (0.5,))
    close(out, 8.0)
    close(t, 100.0)
    xs = np.arange(3.0, dtype=f32)
    close(jax.vmap(cube)(xs), xs ** 3)
    close(jax.vmap(jax.grad(cube))(xs), 100 * xs)
    close(jax.grad(lambda v: lax.reduce_sum(jax.vmap(cube)(v), (0,)))(xs), 100 * xs)


def test_custom_jvp_second_derivative_differentiates_the_rule():
    close(jax.grad(jax.grad(cube))(2.0), 100.0)


def test_custom_jvp_printed_as_one_equation():
    text = str(jax.make_jaxpr(cube)(2.0))
    assert "custom_jvp_call[" in text and "name=cube" in text and "jvp=cube_jvp" in text


def test_defjvps_one_rule_per_argument():
    @jax.custom_jvp
    def f(x, y):
        return lax.mul(x, y)
    f.defjvps(lambda t, ans, x, y: lax.mul(t, y),
              lambda t, ans, x, y: lax.mul(t, lax.mul(x, 2.0)))  # true: t x
    gx, gy = jax.grad(f, argnums=(0, 1))(2.0, 3.0)
    close(gx, 3.0)
    close(gy, 4.0)
    close(jax.jvp(f, (2.0, 3.0), (1.0, 1.0))[1], 7.0)


def test_custom_jvp_nondiff_argnums():
    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def scale(n, x):
        return lax.mul(x, float(n))

    @scale.defjvp
    def scale_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        return scale(n, x), lax.mul(t, float(n + 1))  # true: n
    close(jax.grad(scale, argnums=1)(3, 2.0), 4.0)
    close(jax.jit(jax.grad(scale, argnums=1), static_argnums=0)(3, 2.0), 4.0)
    close(jax.vmap(lambda x: scale(3, x))(np.arange(3.0, dtype=f32)), [0.0, 3.0, 6.0])
    close(jax.vmap(jax.grad(lambda x: scale(3, x)))(np.arange(3.0, dtype=f32)), [4.0] * 3)


def test_custom_jvp_on_pytrees_and_keyword_arguments():
    @jax.custom_jvp
    def f(p, scale=1.0):
        return {"out": lax.mul(p["a"], scale)}

    @f.defjvp
    def f_jvp(primals, tangents):
        (p, scale), (tp, _) = primals, tangents
        return f(p, scale), {"out": lax.mul(tp["a"], 7.0)}
    g = jax.grad(lambda p: f(p, scale=2.0)["out"])({"a": 1.0})
    close(g["a"], 7.0)


def test_custom_jvp_rule_with_wrong_structure_is_an_error():
    @jax.custom_jvp
    def f(x):
        return x

    @f.defjvp
    def f_jvp(primals, tangents):
        return (primals[0], primals[0]), tangents
    with pytest.raises(TypeError, match="same container"):
        jax.jvp(f, (1.0,), (1.0,))


def test_custom_jvp_without_rule_is_an_error():
    f = jax.custom_jvp(lambda x: x)
    with pytest.raises(AttributeError, match="No JVP defined"):
        f(1.0)


# ------------------------------------------------------------------------ custom_vjp

def test_custom_vjp_rule_is_used_and_none_means_zero():
    close(scaled_mul(2.0, 3.0), 6.0)
    gx, gy = jax.grad(scaled_mul, argnums=(0, 1))(2.0, 3.0)
    close(gx, 30.0)
    close(gy, 0.0)
    out, pullback = jax.vjp(scaled_mul, 2.0, 3.0)
    close(out, 6.0)
    close(pullback(2.0)[0], 60.0)


@pytest.mark.parametrize("transform", [
    lambda g: jax.jit(jax.grad(g)), lambda g: jax.grad(jax.jit(g))],
    ids=["jit_of_grad", "grad_of_jit"])
def test_custom_vjp_under_jit(transform):
    close(transform(scaled_mul)(2.0, 3.0), 30.0)


def test_custom_vjp_under_vmap():
    xs = np.arange(3.0, dtype=f32)
    ys = np.array([1.0, 2.0, 3.0], f32)
    close(jax.vmap(scaled_mul)(xs, ys), xs * ys)
    close(jax.vmap(jax.grad(scaled_mul))(xs, ys), 10 * ys)
    close(jax.grad(lambda v: lax.reduce_sum(jax.vmap(scaled_mul)(v, ys), (0,)))(xs), 10 * ys)
    close(jax.jacrev(lambda v: jax.vmap(scaled_mul)(v, ys))(xs), np.diag(10 * ys))


def test_forward_mode_of_custom_vjp_is_a_type_error():
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jvp(scaled_mul, (2.0, 3.0), (1.0, 1.0))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jacfwd(scaled_mul)(2.0, 3.0)
    out, f_jvp = jax.linearize(scaled_mul, 2.0, 3.0)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        f_jvp(1.0, 1.0)


def test_custom_vjp_nondiff_argnums_and_pytrees():
    @functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
    def scale(x, n):
        return lax.mul(x, float(n))
    scale.defvjp(lambda x, n: (scale(x, n), None),
                 lambda n, res, ct: (lax.mul(ct, float(2 * n)),))  # true: n
    close(jax.grad(scale)(2.0, 3), 6.0)

    @jax.custom_vjp
    def tree_fn(d):
        return {"s": lax.add(d["a"], d["b"])}
    tree_fn.defvjp(lambda d: (tree_fn(d), None),
                   lambda res, ct: ({"a": ct["s"], "b": lax.mul(ct["s"], 2.0)},))
    g = jax.grad(lambda d: tree_fn(d)["s"])({"a": 1.0, "b": 2.0})
    close(g["a"], 1.0)
    close(g["b"], 2.0)


def test_custom_vjp_printed_as_one_equation():
    text = str(jax.make_jaxpr(scaled_mul)(2.0, 3.0))
    assert "custom_vjp_call[" in text
    assert "fwd=scaled_mul_fwd" in text and "bwd=scaled_mul_bwd" in text


def test_custom_vjp_bwd_with_wrong_arity_is_an_error():
    @jax.custom_vjp
    def f(x, y):
        return lax.mul(x, y)
    f.defvjp(lambda x, y: (f(x, y), None), lambda res, ct: (ct,))
    with pytest.raises(TypeError, match="one cotangent per"):
        jax.grad(f)(1.0, 2.0)


def test_custom_vjp_closing_over_a_differentiated_value_is_an_error():
    def outer(y):
        @jax.custom_vjp
        def f(x):
            return lax.mul(x, y)
        f.defvjp(lambda x: (f(x), None), lambda res, ct: (ct,))
        return f(2.0)
    with pytest.raises(TypeError, match="closes over a value that is being differentiated"):
        jax.grad(outer)(3.0)


def test_custom_jvp_rule_closing_over_a_mapped_value_under_grad_of_vmap():
    def make(y):
        @jax.custom_jvp
        def f(x):
            return lax.mul(x, y)

        @f.defjvp
        def f_jvp(primals, tangents):
            return f(primals[0]), lax.mul(tangents[0], lax.mul(y, 10.0))  # true: t y
        return f
    ys = np.array([1.0, 2.0, 3.0], f32)
    close(jax.vmap(lambda y: make(y)(2.0))(ys), 2 * ys)
    close(jax.vmap(lambda y: jax.grad(make(y))(2.0))(ys), 10 * ys)
    # The rule runs when grad reaches it, after vmap has batched the call: it still sees y.
    total = lambda x: lax.reduce_sum(jax.vmap(lambda y: make(y)(x))(ys), (0,))  # noqa: E731
    close(jax.grad(total)(2.0), 60.0)
    close(jax.jit(jax.grad(total))(2.0), 60.0)


# ------------------------------------------------------------------------ check_grads

def test_check_grads_passes_for_smooth_functions():
    x = np.array([0.3, -0.5, 1.2], f32)
    check_grads(lambda v: lax.mul(lax.sin(v), lax.exp(v)), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda a, b: lax.reduce_sum(lax.mul(a, lax.tanh(b)), (0,)),
                (x, x[::-1].copy()), order=2)


def test_check_grads_uses_the_computation_dtype_of_python_and_float64_arguments():
    # With x64 off these compute in float32 with float32's tolerance (2e-3) and JAX's step
    # (1e-4); as under JAX 0.10.2 (/tmp/jaxvenv/bin/python, jax.test_util.check_grads on the
    # same calls) the scalar passes and the float64 array fails its second-order reverse
    # check, whose float32 finite differences are too coarse.
    f = lambda v: lax.exp(lax.sin(lax.mul(v, v)))  # noqa: E731
    check_grads(f, (0.7,), order=2)
    with pytest.raises(AssertionError, match="VJP of VJP cotangent projection"):
        check_grads(f, (np.array([0.7, 1.3, -2.1]),), order=2)
    with jax.enable_x64():
        check_grads(f, (np.array([0.7, 1.3, -2.1]),), order=3)


def test_check_grads_reverse_mode_of_custom_vjp():
    @jax.custom_vjp
    def f(x):
        return lax.sin(x)
    f.defvjp(lambda x: (f(x), lax.cos(x)), lambda c, ct: (lax.mul(ct, c),))
    check_grads(f, (np.array([0.3, 0.7], f32),), order=1, modes=("rev",))

    @jax.custom_vjp
    def wrong(x):
        return lax.sin(x)
    wrong.defvjp(lambda x: (wrong(x), lax.cos(x)), lambda c, ct: (lax.mul(ct, lax.neg(c)),))
    with pytest.raises(AssertionError, match="not the transpose"):
        check_grads(wrong, (np.array([0.3, 0.7], f32),), order=1, modes=("rev",))


def test_check_grads_fails_for_a_wrong_custom_jvp():
    @jax.custom_jvp
    def f(x):
        return lax.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), lax.mul(t, lax.mul(lax.cos(x), 1.5))  # off by a factor 1.5
    with pytest.raises(AssertionError):
        check_grads(f, (np.array([0.3, 0.7], f32),), order=2, modes=("fwd", "rev"))


# ------------------------------------------------- custom_vjp inside control flow (issue 10)

@jax.custom_vjp
def _straight_through_round(x):
    return jnp.round(x)


_straight_through_round.defvjp(lambda x: (jnp.round(x), None), lambda _, g: (g,))


def _scan_loss(w, xs):
    def body(h, x):
        h = jnp.tanh(_straight_through_round(w * h + x) * 0.3 + h)
        return h, h
    return jnp.sum(jax.lax.scan(body, jnp.zeros(3), xs)[1] ** 2)


def _while_loss(w, x):
    return jax.lax.fori_loop(0, 3, lambda i, v: _straight_through_round(v * w) + v, x).sum()


def _cond_loss(w, x):
    return jax.lax.cond(x.sum() > 0, lambda v: _straight_through_round(v * w).sum(),
                        lambda v: (v * w).sum(), x)


# Values from JAX 0.10.2 for the same functions and arguments.
@pytest.mark.parametrize("loss,args,expected", [
    (_scan_loss, (1.3, jnp.arange(12.0).reshape(4, 3) / 4), 0.37660652),
    (_while_loss, (1.7, jnp.arange(3.0)), 64.47),
    (_cond_loss, (1.7, jnp.arange(3.0)), 3.0),
])
def test_grad_through_control_flow_calling_custom_vjp(loss, args, expected):
    for grad in (jax.grad(loss), jax.jit(jax.grad(loss))):
        np.testing.assert_allclose(grad(*args), expected, rtol=2e-6)
    batched = jax.vmap(jax.grad(loss), (0, None))(jnp.array([args[0], args[0]]), args[1])
    np.testing.assert_allclose(batched, [expected, expected], rtol=2e-6)


def test_forward_mode_of_custom_vjp_still_refused():
    message = "can't apply forward-mode autodiff"
    with pytest.raises(TypeError, match=message):
        jax.jvp(_straight_through_round, (1.5,), (1.0,))
    with pytest.raises(TypeError, match=message):
        jax.jit(lambda x: jax.jvp(_straight_through_round, (x,), (1.0,)))(1.5)
    with pytest.raises(TypeError, match=message):
        jax.jvp(lambda w: _scan_loss(w, jnp.ones((2, 3))), (1.3,), (1.0,))


def _live_tracers() -> int:
    gc.collect()
    return sum(isinstance(o, Tracer) for o in gc.get_objects())


def test_custom_vjp_under_vmap_keeps_no_tracer_alive():
    # The bwd rule's closure held the batched arguments; equations (and eager caches of
    # their params) then kept the finished trace's tracers alive.
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)
    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda res, g: (res * g,))
    before = _live_tracers()
    for run in (lambda: jax.vmap(f)(jnp.arange(3.0)),
                lambda: jax.vmap(jax.grad(f))(jnp.arange(3.0)),
                lambda: jax.jit(jax.vmap(f))(jnp.arange(3.0))):
        run()
        assert _live_tracers() <= before


def test_closure_converted_function_holds_no_tracer():
    seen = []

    def outer(y):
        converted, hoisted = jax.closure_convert(lambda x: x * y, 1.0)
        seen.append(converted)
        return converted(1.0, *hoisted)
    jax.grad(outer)(2.0)
    cells = [c.cell_contents for c in seen[0].__closure__ or ()]
    assert not any(isinstance(c, Tracer) for c in cells)
    assert not any(isinstance(v, Tracer) for c in cells if isinstance(c, (list, tuple))
                   for v in c)
