"""Tests of `jaxlite.jit` and `jaxlite.checkpoint`: tracing cache, static arguments, errors
under tracing, escaped tracers, and both composed with the other transformations.

The number of traces is counted with a Python side effect in the traced function, and
checked against `_cache_size()`. Error types and key phrases follow jax 0.10.2.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax
from jaxlite.config import config

f32 = np.float32


def close(actual, expected, tol=1e-6):
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64),
                               rtol=tol, atol=tol)


def cube(x):
    return lax.mul(x, lax.mul(x, x))


class Counted:
    """A function that counts how often it is traced (called with tracers)."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)  # keeps the signature for argument names
        self.fun = fun
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fun(*args, **kwargs)


def test_one_trace_per_abstract_signature():
    f = Counted(lambda x, y=1.0: lax.mul(x, y))
    jf = jax.jit(f)
    close(jf(np.ones(3, f32)), np.ones(3))
    close(jf(np.full(3, 2.0, f32)), np.full(3, 2.0))
    assert (f.calls, jf._cache_size()) == (1, 1)
    jf(np.ones(4, f32))                       # new shape
    assert (f.calls, jf._cache_size()) == (2, 2)
    jf(np.ones(4, np.int32), 1)               # new dtype
    assert (f.calls, jf._cache_size()) == (3, 3)
    jf(2.0)                                   # weak-typed float32 scalar
    jf(f32(2.0))                              # strong float32 scalar: a new signature
    assert (f.calls, jf._cache_size()) == (5, 5)
    jf(3.0)
    jf(f32(3.0))
    assert (f.calls, jf._cache_size()) == (5, 5)
    jf(2.0, y=3.0)                            # keyword instead of default: new structure
    assert (f.calls, jf._cache_size()) == (6, 6)


def test_pytree_structure_is_part_of_the_signature():
    f = Counted(lambda p: lax.add(p["a"], p["b"]))
    jf = jax.jit(f)
    close(jf({"a": 1.0, "b": 2.0}), 3.0)
    jf({"a": 5.0, "b": 2.0})
    assert f.calls == 1
    jf({"a": 1.0, "b": 2.0, "c": 3.0})
    assert (f.calls, jf._cache_size()) == (2, 2)
    jf.clear_cache()
    assert jf._cache_size() == 0


def test_static_argnums_values_are_part_of_the_key():
    f = Counted(lambda x, n: lax.mul(x, float(n)))
    jf = jax.jit(f, static_argnums=1)
    close(jf(1.0, 2), 2.0)
    close(jf(3.0, 2), 6.0)
    close(jf(1.0, 3), 3.0)
    assert (f.calls, jf._cache_size()) == (2, 2)
    close(jax.jit(f, static_argnums=-1)(1.0, 4), 4.0)
    # With `*args`, a negative number counts from the end of each call's arguments.
    variadic = jax.jit(lambda *a: lax.mul(a[0], float(a[-1])), static_argnums=-1)
    close(variadic(2.0, 3), 6.0)
    close(variadic(2.0, 1.0, 4), 8.0)


def test_static_argnames_and_their_positional_use():
    f = Counted(lambda x, n: lax.mul(x, float(n)))
    jf = jax.jit(f, static_argnames="n")
    close(jf(1.0, n=2), 2.0)
    close(jf(1.0, 2), 2.0)                    # the same parameter, passed by position
    close(jf(1.0, n=5), 5.0)
    assert f.calls == jf._cache_size()
    keyword_only = jax.jit(lambda x, *, n: lax.mul(x, float(n)), static_argnames="n")
    close(keyword_only(2.0, n=3), 6.0)
    with pytest.raises(ValueError, match="invalid argnames"):
        jax.jit(lambda x: x, static_argnames="nope")


def test_unhashable_static_argument_is_a_clear_value_error():
    jf = jax.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments") as info:
        jf(1.0, [1, 2])
    assert "argument 1" in str(info.value) and "tuple" in str(info.value)
    jk = jax.jit(lambda x, n: x, static_argnames="n")
    with pytest.raises(ValueError, match="argument 'n'"):
        jk(1.0, n={"a": 1})


def test_non_array_argument_needs_static():
    with pytest.raises(TypeError, match="not a valid JAX type") as info:
        jax.jit(lambda x, s: x)(1.0, "text")
    assert "'s'" in str(info.value) and "static_argnums" in str(info.value)


def test_python_control_flow_on_traced_value():
    def f(x):
        if lax.gt(x, 0.0):
            return x
        return lax.neg(x)
    with pytest.raises(jax.ConcretizationTypeError) as info:
        jax.jit(f)(1.0)
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    assert "'f'" in message and "argument(s) x" in message
    assert "static_argnums" in message and "lax.cond" in message
    close(jax.grad(f)(-2.0), -1.0)            # grad alone keeps values concrete
    with pytest.raises(jax.ConcretizationTypeError, match="argument\\(s\\) x of the function"):
        jax.jit(jax.grad(f))(1.0)
    with pytest.raises(jax.ConcretizationTypeError, match="vmap"):
        jax.vmap(f)(np.ones(2, f32))


@pytest.mark.parametrize("convert", [int, float, bool,
                                     lambda v: v.item() if hasattr(v, "item") else v])
def test_concrete_conversions_under_jit(convert):
    def f(x, y):
        return lax.mul(x, float(convert(y)))
    with pytest.raises(jax.ConcretizationTypeError, match="argument\\(s\\) y"):
        jax.jit(f)(1.0, 2.0)
    close(jax.jit(f, static_argnums=1)(1.0, 2.0), float(convert(2.0)))


def test_concretization_names_only_the_arguments_it_depends_on():
    def f(a, b, c):
        if lax.gt(lax.add(a, c), 0.0):
            return b
        return a
    with pytest.raises(jax.ConcretizationTypeError) as info:
        jax.jit(f)(1.0, 2.0, 3.0)
    assert "argument(s) a, c" in str(info.value)


@pytest.mark.parametrize("transform, arg", [
    (jax.jit, np.ones(2, f32)),
    (jax.grad, 1.0),
    (jax.vmap, np.ones(2, f32)),
    (lambda f: jax.jit(jax.grad(f)), 1.0),
], ids=["jit", "grad", "vmap", "jit_of_grad"])
def test_escaped_tracer_is_reported(transform, arg):
    store = []

    def leak(x):
        store.append(x)
        return lax.mul(x, 2.0)
    transform(leak)(arg)
    with pytest.raises(jax.UnexpectedTracerError, match="escaped"):
        lax.add(store[-1], 1.0)
    with pytest.raises(jax.UnexpectedTracerError):
        jax.jit(lambda y: lax.add(store[-1], y))(1.0)
    with pytest.raises(jax.UnexpectedTracerError):
        jax.grad(lambda y: lax.mul(store[-1], y))(1.0)
    with pytest.raises(jax.UnexpectedTracerError):
        jax.vmap(lambda y: lax.mul(store[-1], y))(np.ones(2, f32))


def test_outputs_are_arrays_with_the_traced_types():
    out = jax.jit(lambda x: x)(np.ones(2, f32))
    assert isinstance(out, jax.Array)
    const = jax.jit(lambda x: 3.0)(np.ones(2, f32))
    assert isinstance(const, jax.Array) and const.weak_type and const.dtype == f32
    out = jax.jit(lambda x, y: x)(1.0, None)
    assert isinstance(out, jax.Array) and out.weak_type
    weak = jax.jit(lambda x: lax.mul(x, 2.0))(3.0)
    assert weak.weak_type and float(weak) == 6.0


def test_jit_keyword_arguments_methods_and_disable_jit():
    close(jax.jit(lambda x, *, k: lax.mul(x, k))(1.0, k=2.0), 2.0)

    class Scale:
        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return lax.mul(x, 3.0)
    close(Scale().apply(2.0), 6.0)
    with pytest.raises(TypeError, match="'self'"):
        jax.jit(Scale.apply.__wrapped__)(Scale(), 2.0)
    f = Counted(lambda x: lax.mul(x, 2.0))
    with config.override("jax_disable_jit", True):
        close(jax.jit(f)(2.0), 4.0)
        close(jax.jit(f)(2.0), 4.0)
    assert f.calls == 2


def test_jit_composes_with_grad():
    f = lambda x: lax.mul(lax.sin(x), x)  # noqa: E731
    df = lambda x: np.cos(x) * x + np.sin(x)  # noqa: E731
    close(jax.grad(jax.jit(f))(0.5), df(0.5))
    close(jax.jit(jax.grad(f))(0.5), df(0.5))
    close(jax.grad(jax.grad(jax.jit(f)))(0.5), -np.sin(0.5) * 0.5 + 2 * np.cos(0.5), 1e-5)
    close(jax.grad(jax.jit(jax.grad(jax.jit(f))))(0.5), -np.sin(0.5) * 0.5 + 2 * np.cos(0.5),
          1e-5)
    close(jax.linearize(jax.jit(f), 0.5)[1](2.0), 2 * df(0.5))
    close(jax.jvp(jax.jit(f), (0.5,), (2.0,))[1], 2 * df(0.5))


def test_jit_closing_over_outer_tracers():
    close(jax.grad(lambda x: jax.jit(lambda y: lax.mul(x, y))(2.0))(3.0), 2.0)
    close(jax.grad(lambda x: jax.jit(lambda y: lax.mul(x, y))(x))(3.0), 6.0)
    out = jax.vmap(lambda x: jax.jit(lambda y: lax.mul(x, y))(np.arange(2.0, dtype=f32)))(
        np.arange(3.0, dtype=f32))
    close(out, np.outer(np.arange(3.0), np.arange(2.0)))
    close(jax.grad(jax.jit(lambda x: lax.mul(x, jax.grad(jax.jit(lambda y: lax.mul(x, y)))(1.0)
                                              )))(2.0), 4.0)


def test_jit_with_integer_inputs_and_outputs_under_differentiation():
    def f(y, n):
        return lax.mul(y, lax.convert_element_type(n, f32)), lax.convert_element_type(y, np.int32)
    jf = jax.jit(f)
    close(jax.grad(lambda x: jf(x, 3)[0])(1.5), 3.0)
    (out, i), (t, ti) = jax.jvp(lambda x: jf(x, 3), (1.5,), (1.0,))
    close(out, 4.5)
    close(t, 3.0)
    assert int(i) == 1 and ti.dtype == jax.float0


def test_trace_returns_the_jaxpr():
    traced = jax.jit(lambda x: lax.neg(x)).trace(1.0)
    assert str(traced.jaxpr) == "{ lambda ; a:f32[]. let b:f32[] = neg a in (b,) }"


# ---------------------------------------------------------------------- checkpoint

def test_checkpoint_gives_the_same_derivatives():
    f = lambda x: lax.sin(lax.sin(lax.mul(x, x)))  # noqa: E731
    g = jax.checkpoint(f)
    for x in (0.3, 1.1):
        close(g(x), f(x))
        close(jax.grad(g)(x), jax.grad(f)(x))
        close(jax.grad(jax.grad(g))(x), jax.grad(jax.grad(f))(x), tol=1e-4)
        close(jax.jvp(g, (x,), (1.0,))[1], jax.jvp(f, (x,), (1.0,))[1])
    xs = np.linspace(0, 1, 4).astype(f32)
    close(jax.vmap(jax.grad(g))(xs), jax.vmap(jax.grad(f))(xs))
    close(jax.jit(jax.grad(g))(0.3), jax.grad(f)(0.3))


def test_checkpoint_with_static_argnums_and_closure():
    g = jax.checkpoint(lambda x, n: lax.mul(x, float(n)), static_argnums=(1,))
    close(jax.grad(g)(3.0, 4), 4.0)
    close(jax.grad(lambda y: jax.checkpoint(lambda x: lax.mul(x, y))(y))(3.0), 6.0)
    # Distinct functions in JAX 0.10.2 (remat takes no static_argnames), alike in effect.
    assert jax.remat is not jax.checkpoint
    close(jax.grad(jax.remat(lambda x: lax.mul(x, x)))(3.0), 6.0)


def test_jit_of_vmap_and_vmap_of_jit():
    x = np.arange(4.0, dtype=f32)
    close(jax.jit(jax.vmap(cube))(x), x ** 3)
    close(jax.vmap(jax.jit(cube))(x), x ** 3)
    close(jax.jit(jax.vmap(jax.grad(cube)))(x), 3 * x ** 2)
    close(jax.vmap(jax.jit(jax.grad(cube)))(x), 3 * x ** 2)


# ------------------------------------------- call primitives under every transformation

def _base(x, y):
    return lax.reduce_sum(lax.mul(lax.sin(lax.mul(x, y)), lax.exp(x)), (0,))


_WRAPPERS = {
    "jit": jax.jit, "checkpoint": jax.checkpoint, "jit_of_jit": lambda f: jax.jit(jax.jit(f)),
    "jit_of_checkpoint": lambda f: jax.jit(jax.checkpoint(f)),
    "checkpoint_of_jit": lambda f: jax.checkpoint(jax.jit(f)),
    "inside_expression": lambda f: (lambda x, y: lax.mul(jax.jit(f)(x, y), 1.0)),
}
_TRANSFORMS = {
    "grad": lambda f: jax.grad(f, argnums=(0, 1)),
    "grad_of_grad": lambda f: jax.grad(lambda x, y: lax.reduce_sum(jax.grad(f)(x, y), (0,))),
    "jacfwd": jax.jacfwd, "jacrev": jax.jacrev, "hessian": jax.hessian,
    "jit_of_grad": lambda f: jax.jit(jax.grad(f)),
    "vmap_of_grad": lambda f: jax.vmap(jax.grad(f), in_axes=(None, 0)),
    "grad_of_vmap": lambda f: jax.grad(
        lambda x, y: lax.reduce_sum(jax.vmap(f, in_axes=(None, 0))(x, y), (0,))),
    "jvp": lambda f: (lambda x, y: jax.jvp(f, (x, y), (x, y))[1]),
    "linearize": lambda f: (lambda x, y: jax.linearize(f, x, y)[1](x, y)),
    "jvp_of_grad": lambda f: (lambda x, y: jax.jvp(jax.grad(f), (x, y), (x, y))[1]),
}


@pytest.mark.parametrize("wrapper", sorted(_WRAPPERS))
@pytest.mark.parametrize("transform", sorted(_TRANSFORMS))
def test_calls_transform_like_the_plain_function(wrapper, transform):
    x = np.array([0.1, 0.5, -0.3], f32)
    y = np.array([0.7, -1.2, 0.4], f32)
    if "vmap" in transform:
        y = np.stack([y, 2 * y])
    t = _TRANSFORMS[transform]
    expected = jax.tree_leaves(t(_base)(x, y))
    actual = jax.tree_leaves(t(_WRAPPERS[wrapper](_base))(x, y))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        close(a, e, 1e-5)


def test_array_methods_work_on_tracers_under_jit_and_vmap():
    # A tracer's own attributes must not hide Array methods: `x.var()` under jit raised
    # "TypeError: 'Var' object is not callable" when staging tracers kept their variable in
    # an attribute named `var`.
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for name in ("var", "std", "mean", "sum", "max", "argmax", "cumsum", "round"):
        expected = getattr(x, name)(axis=-1) if name != "round" else x.round()
        got = jax.jit(lambda a: getattr(a, name)(-1) if name != "round" else a.round())(x)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, err_msg=name)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda r: r.var())(x)), x.var(axis=1),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda a: a.var())(x[0])),
                               2 * (x[0] - x[0].mean()) / 4, rtol=1e-6)


def test_trace_and_lower_take_shape_dtype_structs_and_calls_refuse_them():
    spec = jax.ShapeDtypeStruct((3,), np.float32)
    f = jax.jit(lambda x, y: x * y)
    assert f.trace(spec, 2.0).jaxpr.in_avals[0].shape == (3,)
    compiled = f.lower(spec, jax.ShapeDtypeStruct((), np.float32)).compile()
    np.testing.assert_array_equal(np.asarray(compiled(np.ones(3, np.float32), 2.0)),
                                  np.full(3, 2.0, np.float32))
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        f(spec, 2.0)
