"""Tests of the jaxlite.numpy functions that do not fit the case harness: functions taking
callables (vectorize, frompyfunc, apply_along_axis, apply_over_axes, piecewise), the ufunc
objects themselves, object predicates returning Python bools, and the dtype utilities
(against answers recorded from JAX 0.10.2 in tests/data/numpy_dtype_utilities.json, made by
tools/gen_dtype_utilities.py).
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp

DATA = Path(__file__).resolve().parent.parent / "data" / "numpy_dtype_utilities.json"


# ------------------------------------------------------------------------ vectorize

def test_vectorize_broadcasts_like_numpy():
    fun = lambda a, b, c=1: a * b + c  # noqa: E731
    a, b, c = np.arange(3.0), np.ones((2, 1)) * 2, np.array([10.0, 20.0, 30.0])
    expected = np.vectorize(fun)(a, b, c=c)
    np.testing.assert_allclose(jnp.vectorize(fun)(a, b, c=c), expected)
    np.testing.assert_allclose(jaxlite.jit(jnp.vectorize(fun))(a, b), np.vectorize(fun)(a, b))


def test_vectorize_traces_once_per_call():
    calls = []

    def fun(x):
        calls.append(np.shape(x))
        return x * 2

    out = jnp.vectorize(fun)(jnp.ones((4, 5)))
    assert calls == [()] and out.shape == (4, 5)


def test_vectorize_excluded_and_signature():
    power = jnp.vectorize(lambda a, n: a ** n, excluded={1})
    np.testing.assert_allclose(power(jnp.arange(3.0), 2), [0.0, 1.0, 4.0])
    by_name = jnp.vectorize(lambda a, n=1: a * jnp.sum(n), excluded={"n"})
    np.testing.assert_allclose(by_name(jnp.arange(3.0), n=jnp.ones(4)), [0.0, 4.0, 8.0])
    dot = jnp.vectorize(lambda x, y: jnp.dot(x, y), signature="(n),(n)->()")
    x, y = np.random.default_rng(0).normal(size=(2, 4, 3))
    np.testing.assert_allclose(dot(x, y[0]), x @ y[0], rtol=1e-6)
    split = jnp.vectorize(lambda v: (v.sum(), v * 2), signature="(n)->(),(n)")
    total, doubled = split(x)
    np.testing.assert_allclose(total, x.sum(-1), rtol=1e-6)
    np.testing.assert_allclose(doubled, 2 * x, rtol=1e-6)
    pair = jnp.vectorize(lambda s: jnp.stack([s, -s]), signature="()->(k)")
    assert pair(jnp.arange(3.0)).shape == (3, 2)


@pytest.mark.parametrize("call, message", [
    (lambda: jnp.vectorize(jnp.dot, signature="(n),(n)->()")(jnp.ones((4, 3)), jnp.ones(2)),
     "inconsistent size for core dimension 'n'"),
    (lambda: jnp.vectorize(lambda x: x, signature="(n)->()")(jnp.ones(3)),
     "does not match core dimensions"),
    (lambda: jnp.vectorize(jnp.dot, signature="(n),(n)->()")(jnp.ones(()), jnp.ones(3)),
     "does not have enough dimensions"),
    (lambda: jnp.vectorize(jnp.sin, signature="(n->()"), "not a valid gufunc signature"),
])
def test_vectorize_errors(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_vectorize_under_grad_and_vmap():
    f = jnp.vectorize(lambda x: jnp.sin(x) * x)
    x = jnp.linspace(-1.0, 1.0, 5)
    grads = jaxlite.grad(lambda v: jnp.sum(f(v)))(x)
    np.testing.assert_allclose(grads, np.cos(x) * x + np.sin(x), rtol=1e-6)
    batched = jaxlite.vmap(f)(jnp.ones((3, 2)))
    np.testing.assert_allclose(batched, np.full((3, 2), np.sin(1.0)), rtol=1e-6)


def test_vectorize_empty_and_scalar_inputs():
    assert jnp.vectorize(lambda x: x * 2)(jnp.ones((0, 3))).shape == (0, 3)
    assert int(jnp.vectorize(lambda x: x + 1)(3)) == 4
    np.testing.assert_array_equal(jnp.vectorize(lambda x: x + 1)([1, 2]), [2, 3])


# ------------------------------------------------------------------------ along axes

SLICE_FUNCTIONS = {  # name: (numpy version, jnp version)
    "sum": (np.sum, jnp.sum),
    "stack": (lambda v: np.stack([v, v * 2]), lambda v: jnp.stack([v, v * 2])),
    "outer": (lambda v: np.outer(v, v), lambda v: jnp.outer(v, v)),
}


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("name", sorted(SLICE_FUNCTIONS))
def test_apply_along_axis_matches_numpy(axis, name):
    x = np.random.default_rng(1).normal(size=(2, 3, 4)).astype(np.float32)
    np_fun, jnp_fun = SLICE_FUNCTIONS[name]
    np.testing.assert_allclose(jnp.apply_along_axis(jnp_fun, axis, x),
                               np.apply_along_axis(np_fun, axis, x), rtol=1e-5, atol=1e-6)


def test_apply_along_axis_extra_arguments():
    out = jnp.apply_along_axis(lambda v, k: v * k, 0, jnp.ones((2, 3)), 3.0)
    np.testing.assert_allclose(out, np.full((2, 3), 3.0))


def test_apply_over_axes_matches_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    for axes in ([0, 2], [1], (0, 1, 2)):
        np.testing.assert_allclose(jnp.apply_over_axes(jnp.sum, x, axes),
                                   np.apply_over_axes(np.sum, x, axes))
    with pytest.raises(ValueError, match="rank"):
        jnp.apply_over_axes(lambda a, axis: jnp.sum(a), x, [1])


# ------------------------------------------------------------------------ piecewise

def test_piecewise_matches_numpy():
    x = np.linspace(-2.0, 2.0, 9).astype(np.float32)
    conditions = [x < 0, x > 1]
    for funcs in ([lambda v: -v, lambda v: v * 3], [lambda v: -v, 7.0, lambda v: v / 2]):
        np.testing.assert_allclose(jnp.piecewise(x, conditions, funcs),
                                   np.piecewise(x, conditions, funcs))
    ints = np.arange(-2, 3)
    out = jnp.piecewise(ints, [ints > 0], [lambda v: v * 1.5])
    assert out.dtype == np.int32  # the input's dtype, as in JAX
    np.testing.assert_array_equal(out, [0, 0, 0, 1, 3])
    np.testing.assert_array_equal(jnp.piecewise(ints, [ints > 0], [lambda v, k: v * k], 3),
                                  [0, 0, 0, 3, 6])
    with pytest.raises(ValueError, match="either 1 or 2 functions"):
        jnp.piecewise(ints, [ints > 0], [1, 2, 3])


# ------------------------------------------------------------------------ ufunc objects

UFUNC_TABLE = {  # name: (nin, nout, identity), as JAX 0.10.2 defines them
    "add": (2, 1, 0), "subtract": (2, 1, None), "multiply": (2, 1, 1),
    "maximum": (2, 1, None), "minimum": (2, 1, None), "negative": (1, 1, None),
    "bitwise_and": (2, 1, -1), "bitwise_or": (2, 1, 0), "bitwise_xor": (2, 1, 0),
    "logical_and": (2, 1, True), "logical_or": (2, 1, False), "logical_xor": (2, 1, False),
    "logaddexp": (2, 1, -np.inf), "logaddexp2": (2, 1, -np.inf),
}


@pytest.mark.parametrize("name", sorted(UFUNC_TABLE))
def test_ufunc_objects_have_jax_attributes(name):
    uf = getattr(jnp, name)
    assert isinstance(uf, jnp.ufunc)
    assert (uf.nin, uf.nout, uf.identity) == UFUNC_TABLE[name]
    assert uf.nargs == uf.nin + uf.nout and uf.__name__ == name
    assert repr(uf) == f"<jnp.ufunc '{name}'>"


def test_ufunc_call_options_and_errors():
    with pytest.raises(NotImplementedError, match="out"):
        jnp.add(1, 2, out=jnp.zeros(()))
    with pytest.raises(NotImplementedError, match="where"):
        jnp.add(1, 2, where=True)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.add.at(jnp.zeros(3), 0, 1.0)
    with pytest.raises(ValueError, match="binary ufuncs"):
        jnp.negative.reduce(jnp.ones(3))
    with pytest.raises(ValueError, match="has no identity"):
        jnp.subtract.reduce(jnp.zeros((0,)))
    with pytest.raises(ValueError, match="specify 'initial'"):
        jnp.subtract.reduce(jnp.ones(3), where=jnp.ones(3, bool))


def test_frompyfunc():
    fun = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=7)
    assert (fun.nin, fun.nout, fun.identity) == (2, 1, 7)
    np.testing.assert_array_equal(fun(jnp.arange(3), 2), [1, 3, 5])
    np.testing.assert_array_equal(fun.reduce(jnp.arange(1, 4)), 10)  # (1*2+1)*3+1
    np.testing.assert_array_equal(fun.accumulate(jnp.arange(1, 4)), [1, 3, 10])
    np.testing.assert_array_equal(fun.outer(jnp.arange(2), jnp.arange(3)), [[1, 1, 1],
                                                                           [1, 2, 3]])
    assert float(fun.reduce(jnp.zeros((0,)))) == 7.0
    split = jnp.frompyfunc(lambda a: (a, -a), 1, 2)
    plus, minus = split(jnp.arange(3))
    np.testing.assert_array_equal(minus, [0, -1, -2])
    with pytest.raises(ValueError, match="binary ufuncs"):
        split.reduce(jnp.arange(3))


def test_generic_reduce_under_jit_and_grad():
    x = jnp.arange(1.0, 5.0)
    np.testing.assert_allclose(jaxlite.jit(jnp.subtract.reduce)(x), 1 - 2 - 3 - 4)
    grads = jaxlite.grad(lambda v: jnp.logaddexp.reduce(v))(x)
    np.testing.assert_allclose(grads, np.exp(x) / np.exp(x).sum(), rtol=1e-6)


# ------------------------------------------------------------------------ object predicates

@pytest.mark.parametrize("value, expected", [
    (1, True), (1.5, True), (1j, True), ("a", True), (np.float32(1), True),
    (np.array(1), True), (jnp.array(1.0), True), ([1], False), (np.ones(2), False),
    (jnp.ones(2), False), (None, False),
])
def test_isscalar(value, expected):
    assert jnp.isscalar(value) is expected


def test_iterable_and_object_kinds():
    assert jnp.iterable(jnp.ones(2)) and not jnp.iterable(1)
    assert not jnp.iterable(jnp.array(1))
    assert jnp.iscomplexobj(jnp.ones(2, jnp.complex64)) and not jnp.iscomplexobj(1.0)
    assert jnp.isrealobj(np.ones(2)) and not jnp.isrealobj(1j)
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning


def test_whole_array_predicates_return_arrays():
    a = jnp.array([1.0, 2.0, np.nan])
    assert jnp.allclose(a, a, equal_nan=True).shape == ()
    assert not bool(jnp.array_equal(jnp.ones(3), jnp.ones(2)))
    assert bool(jnp.array_equal([1, 2], [1, 2]))
    assert bool(jnp.array_equiv(jnp.ones(3), jnp.ones((2, 3))))
    with pytest.raises(TypeError, match="got incompatible shapes for broadcasting"):
        jnp.array_equiv(jnp.ones(3), jnp.ones(2))  # as JAX 0.10.2
    assert bool(jaxlite.jit(jnp.allclose)(a[:2], a[:2] + 1e-9))


# ------------------------------------------------------------------------ dtype utilities

TABLE = json.loads(DATA.read_text())
DTYPES = {name: np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
          for name in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                       "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
                       "complex128"]}
SCALARS = {"int": 1, "float": 1.0, "complex": 1j, "bool": True}


def _answer(fun):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = fun()
    except (TypeError, ValueError):
        return "-"
    return str(np.dtype(value)) if isinstance(value, np.dtype) else bool(value)


@pytest.mark.parametrize("utility", ["promote_types", "result_type", "can_cast",
                                     "issubdtype", "isdtype"])
def test_dtype_utilities_match_jax(utility):
    calls = {
        "promote_types": lambda a, b: jnp.promote_types(DTYPES[a], DTYPES[b]),
        "result_type": lambda a, s: jnp.result_type(DTYPES[a], SCALARS[s]),
        "can_cast": lambda a, b, c: jnp.can_cast(DTYPES[a], DTYPES[b], c),
        "issubdtype": lambda a, k: jnp.issubdtype(DTYPES[a], getattr(jnp, k)),
        "isdtype": lambda a, k: jnp.isdtype(DTYPES[a], k),
    }
    wrong = {key: (got, expected) for key, expected in TABLE[utility].items()
             if (got := _answer(lambda: calls[utility](*key.split(",")))) != expected}
    assert not wrong, f"{utility} differs from JAX on {len(wrong)} inputs: {wrong}"


def test_finfo_iinfo_and_dtype():
    assert jnp.finfo(jnp.bfloat16).eps == ml_dtypes.finfo(ml_dtypes.bfloat16).eps
    assert jnp.finfo(jnp.float32).max == np.finfo(np.float32).max
    assert jnp.iinfo(jnp.int8).min == -128 and jnp.iinfo(jnp.uint16).max == 65535
    assert jnp.dtype("float32") == np.float32
