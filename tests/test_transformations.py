"""Tests of the differentiation and batching transformations: grad, value_and_grad, jvp,
linearize, vjp, jacfwd, jacrev, hessian, vmap and stop_gradient (jit and checkpoint under them: tests/test_jit.py;
check_grads: tests/test_custom_derivatives.py).

Expected values are closed-form derivatives or numpy computations; expected dtypes, weak
types and error types were checked against jax 0.10.2 by running the same calls there.
The functions are written with `jaxlite.lax` so that they do not depend on the numpy layer.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jaxlite as jax
from jaxlite import lax

f32 = np.float32
Point = collections.namedtuple("Point", "x y")


def cube(x):
    return lax.mul(x, lax.mul(x, x))


def total(x):
    return lax.reduce_sum(x, tuple(range(np.ndim(x))))


def sq_norm(x):
    return total(lax.mul(x, x))


def close(actual, expected, tol=1e-5):
    np.testing.assert_allclose(np.asarray(actual, np.complex128),
                               np.asarray(expected, np.complex128), rtol=tol, atol=tol)


def numeric_jacobian(f, x, eps=1e-3):
    """Central differences in float64 of f: R^n-shaped -> R^m-shaped, shape out + in."""
    x = np.asarray(x, np.float64)
    out_shape = np.shape(f(x.astype(f32)))
    jac = np.zeros(out_shape + x.shape)
    for idx in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[idx] = eps
        plus = np.asarray(f((x + step).astype(f32)), np.float64)
        minus = np.asarray(f((x - step).astype(f32)), np.float64)
        jac[(Ellipsis,) + idx] = (plus - minus) / (2 * eps)
    return jac


# ------------------------------------------------------------------------------- grad

def test_grad_of_polynomial_and_its_value():
    value, g = jax.value_and_grad(cube)(2.0)
    close(value, 8.0)
    close(g, 12.0)
    assert isinstance(g, jax.Array)


def test_grad_keeps_weak_type_of_python_scalar_inputs():
    assert jax.grad(cube)(2.0).weak_type
    assert jax.grad(lambda x: x)(2.0).weak_type
    assert not jax.grad(cube)(f32(2.0)).weak_type
    assert isinstance(jax.grad(lambda x: x)(f32(2.0)), jax.Array)


@pytest.mark.parametrize("argnums, expected", [(0, 3.0), (1, 2.0), (-1, 2.0),
                                               ((0, 1), (3.0, 2.0)), ((1,), (2.0,))])
def test_grad_argnums(argnums, expected):
    g = jax.grad(lambda x, y: lax.mul(x, y), argnums=argnums)(2.0, 3.0)
    if isinstance(argnums, tuple):
        assert isinstance(g, tuple) and len(g) == len(expected)
        for a, e in zip(g, expected):
            close(a, e)
    else:
        close(g, expected)


def test_grad_argnums_out_of_range():
    with pytest.raises(TypeError, match="argnums=2 requires at least 3 positional"):
        jax.grad(lambda x, y: lax.mul(x, y), argnums=2)(2.0, 3.0)


def test_grad_has_aux():
    g, aux = jax.grad(lambda x: (cube(x), {"double": lax.mul(x, 2.0)}), has_aux=True)(3.0)
    close(g, 27.0)
    close(aux["double"], 6.0)
    (value, aux), g = jax.value_and_grad(lambda x: (cube(x), 7), has_aux=True)(3.0)
    close(value, 27.0)
    assert aux == 7
    close(g, 27.0)


def test_grad_has_aux_requires_a_pair():
    # JAX 0.10.2's phrase; the value is described as an array, not as a tracer
    with pytest.raises(TypeError, match="expected function with aux output to return a "
                       "two-element tuple, but got a single array of shape"):
        jax.grad(cube, has_aux=True)(1.0)


def test_grad_rejects_integer_inputs_unless_allow_int():
    with pytest.raises(TypeError, match="allow_int"):
        jax.grad(lambda x: lax.convert_element_type(x, f32))(2)
    g = jax.grad(lambda x: lax.convert_element_type(x, f32), allow_int=True)(2)
    assert g.dtype == jax.float0 and g.shape == ()


@pytest.mark.parametrize("fun, phrase", [
    (lambda x: x, "scalar-output"),
    (lambda x: lax.convert_element_type(total(x), np.int32), "real-valued outputs"),
    (lambda x: (total(x), total(x)), "scalar-output"),
])
def test_grad_rejects_non_scalar_or_integer_output(fun, phrase):
    with pytest.raises(TypeError, match=phrase):
        jax.grad(fun)(np.ones(3, f32))


def test_grad_of_pytree_arguments():
    params = {"w": np.array([1.0, 2.0], f32), "b": (f32(3.0), Point(f32(1.0), f32(2.0)))}

    def loss(p):
        b, pt = p["b"]
        return lax.add(sq_norm(p["w"]), lax.mul(b, lax.mul(pt.x, pt.y)))
    g = jax.grad(loss)(params)
    assert jax.tree_structure(g) == jax.tree_structure(params)
    close(g["w"], [2.0, 4.0])
    close(g["b"][0], 2.0)
    assert isinstance(g["b"][1], Point)
    close(g["b"][1].x, 6.0)
    close(g["b"][1].y, 3.0)


def test_grad_passes_keyword_arguments_through():
    g = jax.grad(lambda x, *, scale: lax.mul(x, scale))(2.0, scale=5.0)
    close(g, 5.0)


def test_nested_grad_has_no_perturbation_confusion():
    g = jax.grad(lambda x: lax.mul(x, jax.grad(lambda y: lax.mul(x, y))(1.0)))(2.0)
    close(g, 4.0)
    out, t = jax.jvp(lambda x: lax.mul(x, jax.jvp(lambda y: lax.mul(x, y), (1.0,), (1.0,))[1]),
                     (2.0,), (1.0,))
    close(out, 4.0)
    close(t, 4.0)


def test_third_derivative_of_sin():
    for x in (0.0, 0.5, 1.0):
        close(jax.grad(jax.grad(jax.grad(lax.sin)))(x), -np.cos(x))


def test_grad_through_closure_over_outer_tracer():
    def outer(x):
        inner = lambda y: lax.mul(lax.sin(lax.mul(x, y)), x)  # noqa: E731
        return jax.grad(inner)(2.0)  # d/dy = x^2 cos(xy)
    # d/dx (x^2 cos(2x)) = 2x cos(2x) - 2 x^2 sin(2x)
    x = 0.7
    close(jax.grad(outer)(x), 2 * x * np.cos(2 * x) - 2 * x * x * np.sin(2 * x))


@given(st.floats(-3, 3))
def test_grad_of_sin_times_exp_matches_closed_form(x):
    g = jax.grad(lambda v: lax.mul(lax.sin(v), lax.exp(v)))(f32(x))
    expected = np.exp(x) * (np.sin(x) + np.cos(x))
    close(g, expected, tol=1e-4 * max(1.0, abs(expected)))


def test_stop_gradient():
    close(jax.grad(lambda x: lax.mul(x, lax.stop_gradient(x)))(3.0), 3.0)
    d = jax.grad(lambda p: lax.mul(p["a"], lax.stop_gradient(p)["a"]))({"a": 3.0})
    close(d["a"], 3.0)
    close(jax.vmap(lax.stop_gradient)(np.arange(3.0, dtype=f32)), [0.0, 1.0, 2.0])


# ------------------------------------------------------------------ jvp, linearize, vjp

def test_jvp_of_polynomial():
    out, t = jax.jvp(cube, (3.0,), (2.0,))
    close(out, 27.0)
    close(t, 54.0)


def test_jvp_on_pytrees_and_int_inputs():
    def f(p, n):
        return {"y": lax.mul(p.x, lax.convert_element_type(n, f32))}
    out, t = jax.jvp(f, (Point(f32(2.0), f32(0.0)), 3),
                     (Point(f32(1.0), f32(0.0)), np.zeros((), jax.float0)))
    close(out["y"], 6.0)
    close(t["y"], 3.0)


def test_jvp_argument_checks():
    with pytest.raises(TypeError, match="tuples or lists"):
        jax.jvp(cube, 1.0, 1.0)
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jax.jvp(cube, (1.0,), (np.ones(2, f32),))
    with pytest.raises(TypeError, match="float0"):
        jax.jvp(lambda n: n, (1,), (1,))
    with pytest.raises(TypeError, match="same tree structure"):
        jax.jvp(lambda a, b: a, (1.0, 2.0), ((1.0, 2.0),))


def test_linearize_reuses_the_primal_computation():
    calls = []

    def f(x):
        calls.append(1)
        return lax.mul(lax.sin(x), x)
    out, f_jvp = jax.linearize(f, 0.5)
    close(out, np.sin(0.5) * 0.5)
    assert len(calls) == 1
    for t in (1.0, 2.0, -3.0):
        close(f_jvp(t), t * (np.cos(0.5) * 0.5 + np.sin(0.5)))
    assert len(calls) == 1
    with pytest.raises(ValueError, match="inconsistent with the original primal"):
        f_jvp(np.ones(2, f32))


def test_vjp_pullback_and_structure_checks():
    out, pullback = jax.vjp(lambda x, y: (lax.mul(x, y), lax.add(x, y)), 2.0, 3.0)
    close(out[0], 6.0)
    close(out[1], 5.0)
    gx, gy = pullback((1.0, 10.0))
    close(gx, 13.0)
    close(gy, 12.0)
    with pytest.raises(ValueError, match="tree structure"):
        pullback(1.0)
    with pytest.raises(ValueError, match="expected f32\\[\\]"):
        pullback((np.ones(2, f32), 1.0))
    _, pullback = jax.vjp(lambda x: x, np.ones(3, f32))
    with pytest.raises(ValueError, match="got i32\\[3\\]"):
        pullback(np.ones(3, np.int32))


def test_vjp_of_integer_primal_gives_float0_cotangent():
    out, pullback = jax.vjp(lambda x, n: lax.mul(x, lax.convert_element_type(n, f32)), 2.0, 3)
    gx, gn = pullback(1.0)
    close(gx, 3.0)
    assert gn.dtype == jax.float0 and gn.shape == ()


def test_vjp_has_aux():
    out, pullback, aux = jax.vjp(lambda x: (cube(x), 5), 2.0, has_aux=True)
    assert aux == 5
    close(pullback(1.0)[0], 12.0)


def test_vjp_function_is_a_pytree_of_residuals_as_in_jax():
    # JAX 0.10.2: jax.vjp(jnp.sin, x)[1] has x's cosine as its one leaf, and jit of a
    # function taking it gives [1., 0.5403023, -0.41614684]
    x = np.arange(3.0, dtype=f32)
    _, pullback = jax.vjp(jax.numpy.sin, x)
    leaves = jax.tree_util.tree_leaves(pullback)
    assert len(leaves) == 1
    np.testing.assert_allclose(np.asarray(leaves[0]), np.cos(x), rtol=1e-6)
    (g,) = jax.jit(lambda pb, ct: pb(ct))(pullback, np.ones(3, f32))
    np.testing.assert_allclose(np.asarray(g), np.cos(x), rtol=1e-6)
    # returned from a jitted function, and mapped over cotangents
    _, pullback = jax.jit(lambda x: jax.vjp(jax.numpy.sin, x))(x)
    (batched,) = jax.vmap(lambda pb, ct: pb(ct), in_axes=(None, 0))(pullback, np.eye(3, dtype=f32))
    np.testing.assert_allclose(np.asarray(batched), np.diag(np.cos(x)), rtol=1e-6)
    rebuilt = jax.tree_util.tree_map(lambda r: r * 2, pullback)
    np.testing.assert_allclose(np.asarray(rebuilt(np.ones(3, f32))[0]), 2 * np.cos(x), rtol=1e-6)


# ----------------------------------------------------------------- jacobians, hessian

def _matvec(a, x):
    return lax.dot_general(a, x, (((1,), (0,)), ((), ())))


@pytest.mark.parametrize("jac", [jax.jacfwd, jax.jacrev])
def test_jacobian_of_non_square_map(jac):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3)).astype(f32)
    x = rng.standard_normal(3).astype(f32)
    f = lambda v: lax.sin(_matvec(a, v))  # noqa: E731
    expected = np.cos(a @ x)[:, None] * a
    close(jac(f)(x), expected, tol=1e-5)
    close(jac(f)(x), numeric_jacobian(f, x), tol=2e-3)


@pytest.mark.parametrize("jac", [jax.jacfwd, jax.jacrev])
def test_jacobian_of_pytrees(jac):
    def f(p):
        return (lax.mul(p["a"], p["b"]), {"s": total(lax.mul(p["a"], p["a"]))})
    a = np.array([1.0, 2.0], f32)
    b = np.array([3.0, 4.0, 5.0], f32)[:2]
    j = jac(f)({"a": a, "b": b})
    close(j[0]["a"], np.diag(b))
    close(j[0]["b"], np.diag(a))
    close(j[1]["s"]["a"], 2 * a)
    close(j[1]["s"]["b"], np.zeros(2))


@pytest.mark.parametrize("jac", [jax.jacfwd, jax.jacrev])
def test_jacobian_argnums_and_matrix_input(jac):
    x = np.arange(6.0, dtype=f32).reshape(2, 3)
    y = np.array([1.0, -1.0, 2.0], f32)
    jx, jy = jac(_matvec, argnums=(0, 1))(x, y)
    assert jx.shape == (2, 2, 3) and jy.shape == (2, 3)
    expected = np.zeros((2, 2, 3))
    expected[0, 0] = y
    expected[1, 1] = y
    close(jx, expected)
    close(jy, x)


def test_jacobian_has_aux_and_int_rejection():
    j, aux = jax.jacrev(lambda x: (lax.mul(x, x), 4), has_aux=True)(np.arange(2.0, dtype=f32))
    close(j, np.diag([0.0, 2.0]))
    assert aux == 4
    with pytest.raises(TypeError, match="jacrev requires real- or complex"):
        jax.jacrev(lambda x: x)(np.arange(2))
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        jax.jacfwd(lambda x: x)(np.arange(2))


def test_jacobians_pass_keyword_arguments_through():
    x = np.ones(2, f32)
    f = lambda v, k=1.0: lax.mul(v, k)  # noqa: E731
    close(jax.jacfwd(f)(x, k=3.0), 3 * np.eye(2))
    close(jax.jacrev(f)(x, k=3.0), 3 * np.eye(2))
    close(jax.hessian(lambda v, k=1.0: total(lax.mul(lax.mul(v, v), k)))(x, k=3.0),
          6 * np.eye(2))


def test_complex_differentiation_needs_holomorphic():
    z = np.array([1 + 1j, 2j], np.complex64)
    square = lambda v: lax.mul(v, v)  # noqa: E731
    close(jax.grad(square, holomorphic=True)(np.complex64(1 + 1j)), 2 + 2j)
    for jac in (jax.jacfwd, jax.jacrev):
        close(jac(square, holomorphic=True)(z), np.diag(2 * z))
        with pytest.raises(TypeError, match="holomorphic=True"):
            jac(square)(z)
    with pytest.raises(TypeError, match="requires inputs with complex dtype"):
        jax.grad(square, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="real-valued outputs"):
        jax.grad(square)(np.complex64(1 + 1j))
    # The gradient of a real function of z = x + iy is df/dx - i df/dy, as in JAX.
    close(jax.grad(lambda v: lax.real(square(v)))(np.complex64(1 + 1j)), 2 + 2j)
    close(jax.grad(lambda v: lax.imag(square(v)))(np.complex64(1 + 1j)), 2 - 2j)


def test_hessian_of_matrix_input_matches_finite_differences():
    x = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], f32)
    f = lambda m: total(lax.mul(lax.sin(m), m))  # noqa: E731
    h = jax.hessian(f)(x)
    assert h.shape == (2, 3, 2, 3)
    close(h, jax.jacfwd(jax.jacrev(f))(x))
    close(h, numeric_jacobian(jax.grad(f), x), tol=2e-3)
    expected = np.zeros((2, 3, 2, 3))
    for idx in np.ndindex(2, 3):
        expected[idx + idx] = 2 * np.cos(x[idx]) - x[idx] * np.sin(x[idx])
    close(h, expected)


def test_hessian_equals_jacfwd_of_jacrev_and_closed_form():
    def f(p):
        return total(lax.mul(lax.mul(p["x"], p["x"]), lax.sin(p["y"])))
    p = {"x": np.array([1.0, 2.0], f32), "y": np.array([0.3, 0.4], f32)}
    h = jax.hessian(f)(p)
    h2 = jax.jacfwd(jax.jacrev(f))(p)
    for k1 in p:
        for k2 in p:
            close(h[k1][k2], h2[k1][k2])
    x, y = p["x"].astype(np.float64), p["y"].astype(np.float64)
    close(h["x"]["x"], np.diag(2 * np.sin(y)))
    close(h["x"]["y"], np.diag(2 * x * np.cos(y)))
    close(h["y"]["y"], np.diag(-x * x * np.sin(y)))


# ---------------------------------------------------------------------------- vmap

def _loop(f, *args, axis=0):
    return np.stack([np.asarray(f(*[np.take(a, i, axis) for a in args]))
                     for i in range(np.shape(args[0])[axis])])


def test_vmap_matches_a_loop():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 2, 3)).astype(f32)
    x = rng.standard_normal((4, 3)).astype(f32)
    f = lambda m, v: lax.sin(_matvec(m, v))  # noqa: E731
    close(jax.vmap(f)(a, x), _loop(f, a, x))


@pytest.mark.parametrize("in_axes, shape", [(0, (3, 2)), (1, (2, 3)), (-1, (2, 3)),
                                            (-2, (3, 2))])
def test_vmap_in_axes_int_and_negative(in_axes, shape):
    x = np.arange(6.0, dtype=f32).reshape(shape)
    out = jax.vmap(total, in_axes=in_axes)(x)
    close(out, np.sum(x, axis=tuple(a for a in range(2) if a != in_axes % 2)))


def test_vmap_in_axes_none_tuple_and_dict_prefixes():
    x = np.arange(6.0, dtype=f32).reshape(2, 3)
    out = jax.vmap(lambda a, b: lax.mul(a, b), in_axes=(1, None))(x, f32(2.0))
    close(out, 2 * x.T)
    out = jax.vmap(lambda d: lax.add(d["a"], d["b"]),
                   in_axes=({"a": 0, "b": None},))({"a": np.arange(3.0, dtype=f32), "b": 1.0})
    close(out, [1.0, 2.0, 3.0])
    out = jax.vmap(lambda t: lax.add(t[0], t[1]), in_axes=((0, 1),))((x, x.T))
    close(out, 2 * x)
    out = jax.vmap(lambda a, b: lax.add(a, b), in_axes=[0, None])(np.ones(2, f32), 1.0)
    close(out, [2.0, 2.0])


@given(st.data())
def test_vmap_axes_against_moveaxis(data):
    ndim = data.draw(st.integers(1, 3), label="ndim")
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    in_axis = data.draw(st.integers(-ndim, ndim - 1), label="in_axis")
    out_axis = data.draw(st.integers(-ndim, ndim - 1), label="out_axis")
    x = np.arange(np.prod(shape), dtype=f32).reshape(shape)
    out = jax.vmap(lambda r: lax.sin(lax.mul(r, 2.0)), in_axes=in_axis, out_axes=out_axis)(x)
    expected = np.moveaxis(np.moveaxis(np.sin(2 * x), in_axis, 0), 0, out_axis)
    close(out, expected)


def test_vmap_out_axes():
    x = np.arange(6.0, dtype=f32).reshape(2, 3)
    close(jax.vmap(lambda r: lax.mul(r, 2.0), out_axes=1)(x), 2 * x.T)
    close(jax.vmap(lambda r: lax.mul(r, 2.0), out_axes=-1)(x), 2 * x.T)
    out = jax.vmap(lambda r: {"a": r, "b": lax.mul(r, 2.0)}, out_axes={"a": 0, "b": 1})(x)
    close(out["a"], x)
    close(out["b"], 2 * x.T)
    mapped, unmapped = jax.vmap(lambda a, b: (a, b), in_axes=(0, None),
                                out_axes=(0, None))(np.ones(2, f32), f32(3.0))
    close(mapped, [1.0, 1.0])
    close(unmapped, 3.0)
    with pytest.raises(ValueError, match="out_axes"):
        jax.vmap(lambda r: r, out_axes=None)(x)


def test_vmap_axis_size_without_mapped_arguments():
    out = jax.vmap(lambda: 1.0, axis_size=3)()
    close(out, [1.0, 1.0, 1.0])
    out = jax.vmap(lambda x: x, in_axes=None, axis_size=2)(np.arange(3.0, dtype=f32))
    close(out, np.tile(np.arange(3.0), (2, 1)))
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        jax.vmap(lambda x: x, in_axes=None)(np.ones(3, f32))


def test_vmap_of_vmap_outer_product():
    x, y = np.arange(3.0, dtype=f32), np.arange(1.0, 3.0, dtype=f32)
    f = jax.vmap(jax.vmap(lambda a, b: lax.mul(a, b), in_axes=(None, 0)), in_axes=(0, None))
    close(f(x, y), np.outer(x, y))


def test_vmap_errors():
    with pytest.raises(ValueError, match="inconsistent sizes") as info:
        jax.vmap(lambda x, y: lax.add(x, y))(np.ones(3, f32), np.ones(4, f32))
    assert "argument x" in str(info.value) and "argument y" in str(info.value)
    with pytest.raises(ValueError, match="rank should be at least 2"):
        jax.vmap(lambda x: x, in_axes=1)(np.ones(3, f32))
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        jax.vmap(lambda x, y: x, in_axes=(0,))(np.ones(3, f32), np.ones(3, f32))
    with pytest.raises(ValueError, match="tree prefix"):
        jax.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": np.ones(2, f32)})


def test_vmap_of_grad_and_grad_of_vmap():
    x = np.linspace(-1, 1, 5).astype(f32)
    close(jax.vmap(jax.grad(lambda v: lax.mul(lax.sin(v), v)))(x),
          np.cos(x) * x + np.sin(x))
    close(jax.grad(lambda v: total(jax.vmap(cube)(v)))(x), 3 * x * x)
    m = np.arange(6.0, dtype=f32).reshape(2, 3)
    close(jax.grad(lambda v: total(jax.vmap(sq_norm)(v)))(m), 2 * m)


def test_jvp_of_grad():
    out, t = jax.jvp(jax.grad(cube), (2.0,), (1.0,))
    close(out, 12.0)
    close(t, 12.0)


def test_vmap_in_axes_must_be_int_none_or_tuple():
    with pytest.raises(TypeError, match="must be an int, None, or a tuple"):
        jax.vmap(lambda x: x, in_axes={"a": 0})
    out = jax.vmap(lambda x, y: lax.add(x, y), in_axes=[0, None])(np.ones(3, np.float32), 1.0)
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])
