"""jax.custom_derivatives beyond the basics: symbolic zeros, perturbation flags,
nondiff_argnames, custom_gradient, closure_convert, linear_call and the helpers.

What the rules see and the values of the shared cases (extend_cases.py) are compared with
JAX 0.10.2's, recorded by tests/extend/record_jax_extend.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.custom_derivatives import (CustomVJPPrimal, SymbolicZero, closure_convert,
                                        custom_gradient, custom_vjp_primal_tree_values,
                                        linear_call, zero_from_primal)

import recorded



def _kind(t):
    return "SymbolicZero" if isinstance(t, SymbolicZero) else "array"


def test_custom_jvp_symbolic_zeros_as_in_jax():
    recorded.check("symbolic_zero_jvp")


def test_custom_jvp_without_symbolic_zeros_instantiates():
    seen = []

    @jax.custom_jvp
    def f(x, y):
        return x * y

    @f.defjvp
    def f_jvp(primals, tangents):
        seen.append([type(t).__name__ for t in tangents])
        return f(*primals), tangents[0] * primals[1] + primals[0] * tangents[1]
    assert float(jax.grad(f)(2., 3.)) == 3.0
    assert all("SymbolicZero" not in kinds for kinds in seen)


def test_symbolic_zeros_under_vmap_of_jvp():
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        t = jnp.zeros_like(x) if isinstance(tx, SymbolicZero) else jnp.cos(x) * y * tx
        if not isinstance(ty, SymbolicZero):
            t = t + jnp.sin(x) * ty
        return f(x, y), t
    f.defjvp(f_jvp, symbolic_zeros=True)
    xs = np.float32([0.1, 0.5, 1.0])
    t = jax.vmap(lambda x: jax.jvp(lambda x: f(x, 2.), (x,), (1.,))[1])(xs)
    np.testing.assert_allclose(t, np.cos(xs) * 2, rtol=1e-6)
    g = jax.vmap(jax.grad(lambda x, y: f(x, y), argnums=1), in_axes=(0, None))(xs, 2.)
    np.testing.assert_allclose(g, np.sin(xs), rtol=1e-6)


def test_custom_vjp_symbolic_zeros_and_perturbed_flags_as_in_jax():
    recorded.check("symbolic_zero_vjp")


def test_custom_vjp_bwd_sees_symbolic_zero_cotangents():
    kinds = []

    @jax.custom_vjp
    def f(x):
        return x * 2, x * 3

    def f_fwd(x):
        return f(x.value), None

    def f_bwd(_, cts):
        kinds.append([_kind(c) for c in cts])
        a, b = [jnp.zeros(()) if isinstance(c, SymbolicZero) else c for c in cts]
        return (a * 2 + b * 3,)
    f.defvjp(f_fwd, f_bwd, symbolic_zeros=True)
    assert float(jax.grad(lambda x: f(x)[1])(1.)) == 3.0
    assert kinds == [["SymbolicZero", "array"]]


def test_bwd_may_return_none_for_a_whole_subtree():
    @jax.custom_vjp
    def f(x, pair):
        return x * pair[0] + pair[1]
    f.defvjp(lambda x, pair: (f(x, pair), pair[0]), lambda a, ct: (ct * a, None))
    gx, gpair = jax.grad(f, argnums=(0, 1))(2., (3., 4.))
    assert float(gx) == 3.0 and [float(v) for v in gpair] == [0.0, 0.0]


def test_nondiff_argnames():
    def f(x, scale, power=2):
        return scale * x ** power
    f_nd = jax.custom_vjp(f, nondiff_argnames=("scale",))
    f_nd.defvjp(lambda x, scale, power=2: (f_nd(x, scale, power), x),
                lambda scale, x, ct: (ct * scale * 10., None))
    assert float(jax.grad(lambda x: f_nd(x, scale=3.))(2.)) == 30.0

    def h(x, label):
        return x * len(label)
    h_nd = jax.custom_jvp(h, nondiff_argnames=("label",))
    h_nd.defjvp(lambda label, p, t: (h_nd(p[0], label), t[0] * 100.))
    assert float(jax.grad(lambda x: h_nd(x, label="abc"))(1.)) == 100.0


def test_keyword_only_parameters_are_refused_as_in_jax():
    @jax.custom_vjp
    def f(x, scale, *, power=2):
        return scale * x ** power
    f.defvjp(lambda x, scale, power=2: (f(x, scale, power=power), x), lambda x, ct: (ct, ct))
    with pytest.raises(TypeError, match="could not be resolved to positions: power"):
        jax.grad(lambda x: f(x, 3.))(2.)


def test_zero_from_primal_and_primal_tree_values():
    zeros = zero_from_primal({"a": jnp.ones(3), "n": 1})
    np.testing.assert_array_equal(zeros["a"], np.zeros(3))
    assert zeros["n"].dtype == jax.float0
    symbolic = zero_from_primal(jnp.ones(3), symbolic_zeros=True)
    assert isinstance(symbolic, SymbolicZero) and symbolic.shape == (3,)
    assert repr(symbolic) == "SymbolicZero" and symbolic.dtype == np.float32
    tree = custom_vjp_primal_tree_values([CustomVJPPrimal(1., True), (CustomVJPPrimal(2, False),)])
    assert tree == [1., (2,)]
    with pytest.raises(TypeError, match="unexpected leaf type"):
        custom_vjp_primal_tree_values([CustomVJPPrimal(1., True), 2.])


def test_custom_gradient():
    @custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * x,)
    assert float(f(3.)) == 9.0 and float(jax.grad(f)(3.)) == 3.0
    np.testing.assert_allclose(jax.vmap(jax.grad(f))(jnp.arange(3.)), [0., 1., 2.])
    assert float(jax.jit(jax.grad(f))(3.)) == 3.0

    @custom_gradient
    def g(x, y):
        return x * y, lambda ct: (ct * 10., ct * 20.)
    assert [float(v) for v in jax.grad(g, argnums=(0, 1))(2., 3.)] == [10.0, 20.0]

    @custom_gradient
    def h(x):
        return jnp.sin(x), lambda ct: ct * jnp.cos(x) * 2
    np.testing.assert_allclose(jax.grad(h)(1.), 2 * np.cos(1.), rtol=1e-6)


def test_closure_convert_hoists_only_what_may_be_differentiated():
    counts = []

    def outer(a):
        def inner(x):
            return jnp.sin(a * x) + np.float32(1.)
        converted, consts = closure_convert(inner, 1.)
        counts.append(len(consts))
        return converted(2., *consts)
    np.testing.assert_allclose(outer(3.), np.sin(6.) + 1, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(outer)(3.), 2 * np.cos(6.), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(outer)(3.), np.sin(6.) + 1, rtol=1e-6)
    assert counts == [0, 1, 1]


def test_linear_call():
    recorded.check("linear_call")

    def f(x, denom):
        return x + linear_call(lambda r, x: x / r, lambda r, t: t / r, denom, x)
    assert float(jax.jit(jax.grad(f))(6., 2.)) == 1.5
    # Beyond JAX (which has no batching rule for it): per-example gradients.
    np.testing.assert_allclose(
        jax.vmap(jax.grad(f))(np.float32([1., 2., 3.]), np.float32([1., 2., 4.])),
        [2., 1.5, 1.25])
    with pytest.raises(TypeError, match="residual"):
        jax.grad(f, argnums=1)(6., 2.)


def test_jvp_rule_applying_a_custom_jvp_function_to_tangents():
    """lineax's pattern: the jvp rule of one custom_jvp function calls another on the
    tangents, so reverse mode must transpose that call."""
    @jax.custom_jvp
    def double(x):
        return 2 * x
    double.defjvp(lambda p, t: (double(p[0]), double(t[0])))

    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), double(jnp.cos(p[0]) * t[0])))
    np.testing.assert_allclose(jax.grad(f)(1.), 2 * np.cos(1.), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(1.), 2 * np.cos(1.), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(f))(np.float32([0., 1.])),
                               2 * np.cos([0., 1.]), rtol=1e-6)


def test_a_jaxpr_can_be_a_static_argument():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 3)(1.)
    run = jax.jit(lambda x, jaxpr: jax.core.eval_jaxpr(jaxpr, [], x)[0], static_argnums=1)
    np.testing.assert_allclose(run(1., closed.jaxpr), np.sin(1.) * 3, rtol=1e-6)
    assert closed.jaxpr == closed.jaxpr and closed.jaxpr != jax.make_jaxpr(jnp.sin)(1.).jaxpr
