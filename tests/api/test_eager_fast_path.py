"""The eager fast path (`jaxlite.runtime.fast_path`) against the general path.

Each jnp function with a fast path is called twice on the same operands: as it is, and
with the fast path switched off (so that promotion, conversion, broadcasting and every
shape rule run as before). Both must agree exactly: the same values bit for bit, dtype,
weak type and shape, the same warnings, or the same exception with the same message. The
operands cover bool, signed, unsigned, float (float16 and bfloat16 included) and complex
Arrays, strong and weak, 0-d and not, and Python bool, int, float and complex scalars,
with x64 off and on. `shape_rule`, which remembers the shape rules' answers for every
primitive, is checked the same way against a fresh state.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jaxlite
import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.config import config
from jaxlite.runtime import fast_path

BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.true_divide, jnp.maximum, jnp.minimum,
          jnp.equal, jnp.not_equal, jnp.less, jnp.less_equal, jnp.greater,
          jnp.greater_equal]
_MASK = np.array([[True, False, True], [False, False, True]])


def _where(x, y):
    """`jnp.where` with a bool Array condition of the operands' shape (or 0-d)."""
    shape = np.shape(x) if np.shape(x) else np.shape(y)
    mask = _MASK.reshape(-1)[:int(np.prod(shape))].reshape(shape) if shape else True
    return jnp.where(jnp.asarray(mask), x, y)


BINARY.append(_where)
OPERATORS = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b,
             lambda a, b: a / b, lambda a, b: a < b, lambda a, b: a == b]
UNARY = [jnp.sin, jnp.cos, jnp.exp, jnp.log, jnp.sqrt, jnp.tanh, jnp.arctan, jnp.expm1,
         jnp.log1p, jnp.negative, jnp.abs, jnp.sign, jnp.floor, jnp.ceil, jnp.square]
DTYPES_32 = [np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.float16,
             jnp.bfloat16, np.float32, np.complex64]
DTYPES_64 = DTYPES_32 + [np.int64, np.uint64, np.float64, np.complex128]
SCALARS = [True, 0, -1, 3, 300, 2**31 - 1, -2**31, 2**31, 2**40, 0.5, -0.0, 1e300,
           float("nan"), float("inf"), 1.5 - 2j, 1e40 + 0j]


class _FastPathOff:
    """Switches the fast path off for a block (each fast entry point answers None)."""

    def __enter__(self):
        self.saved = (fast_path.binary, fast_path.unary)
        fast_path.binary = lambda *a, **k: None
        fast_path.unary = lambda *a, **k: None

    def __exit__(self, *exc):
        fast_path.binary, fast_path.unary = self.saved


def _outcome(fun, *args):
    """What calling `fun(*args)` gives: ("ok", dtype, weak, shape, bytes, warnings) or
    ("error", type, message, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fun(*args)
        except Exception as error:  # compared between the two paths
            return ("error", type(error), str(error), _categories(caught))
    value = np.asarray(out)
    return ("ok", str(out.dtype), bool(out.weak_type), out.shape, value.tobytes(),
            _categories(caught))


def _categories(caught):
    return [(w.category, str(w.message)) for w in caught]


def _check_same(fun, *args):
    fast = _outcome(fun, *args)
    with _FastPathOff():
        general = _outcome(fun, *args)
    assert fast == general, (fun, args)
    return fast


def _array(dtype, weak, shape, values=(1.5, -2.0, 0.0, 3.0, -0.5, 7.0)):
    data = np.resize(np.array(values), shape or (1,)).reshape(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = data.astype(np.dtype(dtype))
    x = jnp.asarray(data)
    return lax._convert_element_type(x, x.dtype, weak_type=True) if weak else x


def _operands(dtypes_list, shapes=((2, 3),), values=(1.5, -2.0, 0.0, 3.0, -0.5, 7.0)):
    """Arrays of every dtype, strong and weak, of each shape."""
    return [_array(d, w, s, values) for d in dtypes_list for w in (False, True)
            for s in shapes]


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    with config.override("jax_enable_x64", request.param):
        yield request.param


def test_binary_arrays_every_dtype_pair(x64):
    """Two Arrays of every pair of dtypes (same and different, weak or not)."""
    arrays = _operands(DTYPES_64 if x64 else DTYPES_32)
    others = _operands(DTYPES_64 if x64 else DTYPES_32, values=(3.0, 0.5, -1.0, 2.0, 0.0, -4))
    fast = 0
    for fun in (jnp.add, jnp.multiply, jnp.true_divide, jnp.less, _where):
        for a, b in itertools.product(arrays, others):
            if a.shape == b.shape:
                _check_same(fun, a, b)
                fast += a.dtype == b.dtype
    assert fast > 0


def test_binary_array_and_python_scalar(x64):
    """An Array with a Python scalar on either side, scalars at the edges of int32, of
    the array's dtype and of float32."""
    arrays = _operands(DTYPES_64 if x64 else DTYPES_32)
    for fun in (jnp.add, jnp.subtract, jnp.true_divide, jnp.maximum, jnp.equal, jnp.less,
                _where):
        for a, s in itertools.product(arrays, SCALARS):
            _check_same(fun, a, s)
            _check_same(fun, s, a)


def test_operators_and_unary(x64):
    arrays = _operands(DTYPES_64 if x64 else DTYPES_32, shapes=((), (2, 3)))
    for op in OPERATORS:
        for a in arrays:
            _check_same(op, a, a)
            _check_same(op, a, 2)
            _check_same(op, 0.25, a)
    for fun in UNARY:
        for a in arrays:
            _check_same(fun, a)


def test_fast_path_is_taken_for_common_calls():
    """The common calls do reach the fast path (else the tests above compare the general
    path with itself)."""
    x = jnp.asarray(np.linspace(-1, 1, 8, dtype=np.float32))
    w = jnp.asarray(2.0)
    for out in (fast_path.binary(lax.mul_p, x, 0.5), fast_path.binary(lax.add_p, x, x),
                fast_path.binary(lax.mul_p, w, 3), fast_path.binary(lax.div_p, 1, x, True),
                fast_path.unary(lax.sin_p, x, True), fast_path.select(x > 0, x, 0.0)):
        assert out is not None
    assert fast_path.binary(lax.add_p, np.ones(8, np.float32), x) is None  # numpy operand
    assert fast_path.binary(lax.add_p, x, x.astype(jnp.int32)) is None  # two dtypes
    assert fast_path.unary(lax.sin_p, x.astype(jnp.int32), True) is None  # promoted


def test_weak_types_and_values():
    x = jnp.asarray(np.float32([1.0, -2.0, 0.5]))
    assert (x * 0.5).dtype == jnp.float32 and not (x * 0.5).weak_type
    w = jnp.asarray(1.5)  # weak float32
    out = w * 2
    assert out.weak_type and out.dtype == jnp.float32 and float(out) == 3.0
    np.testing.assert_array_equal(np.asarray(x / 4.0), np.float32([0.25, -0.5, 0.125]))
    # A division by a broadcast scalar multiplies by its reciprocal, as XLA does: the
    # fast path hands the reference the same zero-stride view.
    third = np.float32(1) / np.float32(3)
    y = jnp.asarray(np.float32([1.0, 2.0, 5.0]))
    np.testing.assert_array_equal(np.asarray(y / 3.0), np.float32([1.0, 2.0, 5.0]) * third)


def test_inside_transformations_the_general_path_runs():
    f = lambda x: jnp.sin(x) * 0.5 + x
    x = jnp.asarray(np.float32([0.1, 0.2]))
    expected = np.sin(np.float32([0.1, 0.2])) * np.float32(0.5) + np.float32([0.1, 0.2])
    np.testing.assert_allclose(np.asarray(jaxlite.jit(f)(x)), expected, rtol=1e-6)
    grads = jaxlite.grad(lambda x: f(x).sum())(x)
    np.testing.assert_allclose(np.asarray(grads), np.cos(np.float32([0.1, 0.2])) * 0.5 + 1,
                               rtol=1e-6)
    batched = jaxlite.vmap(f)(jnp.stack([x, x]))
    np.testing.assert_allclose(np.asarray(batched), np.stack([expected, expected]), rtol=1e-6)


def test_debug_nans_still_names_the_operation():
    x = jnp.asarray(np.float32([1.0, 0.0]))
    with config.override("jax_debug_nans", True):
        with pytest.raises(FloatingPointError, match="invalid value \\(nan\\) encountered "
                                                     "in convert_element_type"):
            x * float("nan")
        with pytest.raises(FloatingPointError, match="in log"):
            jnp.log(-x)


def test_deleted_array_raises():
    x = jnp.asarray(np.float32([1.0, 2.0]))
    x.delete()
    for fun in (lambda: x * 2.0, lambda: x + x, lambda: jnp.sin(x)):
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            fun()


def test_results_are_read_only():
    x = jnp.asarray(np.float32([1.0, 2.0]))
    for out in (x * 2.0, jnp.sin(x), jnp.sum(x)):
        with pytest.raises(ValueError):
            np.asarray(out)[...] = 0


_DTYPE = st.sampled_from(["bool", "int8", "uint8", "int32", "float16", "bfloat16",
                          "float32", "complex64"])
_SCALAR = st.one_of(st.booleans(), st.integers(-2**33, 2**33),
                    st.floats(allow_nan=True, allow_infinity=True),
                    st.complex_numbers(allow_nan=True, allow_infinity=True))


@settings(max_examples=150)
@given(dtype=_DTYPE, weak=st.booleans(), shape=st.sampled_from([(), (3,), (2, 1, 2)]),
       scalar=_SCALAR, fun=st.sampled_from(BINARY + OPERATORS), scalar_first=st.booleans(),
       x64=st.booleans(), data=st.data())
def test_hypothesis_array_with_scalar(dtype, weak, shape, scalar, fun, scalar_first, x64,
                                      data):
    values = data.draw(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=4))
    with config.override("jax_enable_x64", x64):
        a = _array(dtype, weak, shape, values)
        args = (scalar, a) if scalar_first else (a, scalar)
        _check_same(fun, *args)
        _check_same(fun, a, a)


@settings(max_examples=60)
@given(dtype=_DTYPE, weak=st.booleans(), fun=st.sampled_from(UNARY), x64=st.booleans(),
       values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32),
                       min_size=1, max_size=5))
def test_hypothesis_unary(dtype, weak, fun, x64, values):
    with config.override("jax_enable_x64", x64):
        _check_same(fun, _array(dtype, weak, (len(values),), values))


def test_shape_rule_memory_matches_a_fresh_rule():
    """Primitives outside the jnp fast path go through `shape_rule`: a remembered answer
    equals the rule's own, and errors are raised each time."""
    x = jnp.asarray(np.arange(6, dtype=np.float32))
    calls = [lambda: x.reshape(2, 3), lambda: jnp.sum(x), lambda: x[1:4],
             lambda: lax.convert_element_type(x, jnp.int8), lambda: jnp.cumsum(x),
             lambda: lax.argmax(x, 0, jnp.int32), lambda: jnp.where(x > 2, x, 0)]
    first = [_outcome(c) for c in calls]
    again = [_outcome(c) for c in calls]
    fast_path.clear()
    fresh = [_outcome(c) for c in calls]
    assert first == again == fresh
    for _ in range(2):
        with pytest.raises(TypeError):
            lax.add(x, x.reshape(2, 3))
    with config.override("jax_enable_x64", True):  # another state: int64 results
        assert jnp.sum(jnp.asarray(np.arange(3))).dtype == jnp.int64
    assert jnp.sum(jnp.asarray(np.arange(3))).dtype == jnp.int32
