"""Error messages that named jaxlite's internals instead of the user's mistake (issue 11 §4).

Each case raises JAX 0.10.2's exception type with JAX's key phrase first (recorded with
/tmp/jaxvenv/bin/python, JAX 0.10.2, x64 off; the phrases are quoted in each test), and our
help after it.
"""
from __future__ import annotations

import operator
import sys
import time

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


# ------------------------------------------------------------------ jit returning a string

def test_jit_returning_a_string_names_the_output():
    # JAX: TypeError "function <lambda> at FILE:LINE traced for jit returned a value of
    # type <class 'str'>, which is not a valid JAX type"
    with pytest.raises(TypeError, match=r"function <lambda> at .*test_error_messages_issue11"
                       r"\.py:\d+ traced for jit returned a value of type <class 'str'>, "
                       "which is not a valid JAX type"):
        jax.jit(lambda x: "hello")(1.0)


def test_jit_returning_an_object_in_a_pytree():
    def f(x):
        return {"y": x * 2, "note": object()}
    with pytest.raises(TypeError, match="traced for jit returned a value of type "
                       "<class 'object'>, which is not a valid JAX type"):
        jax.jit(f)(1.0)


def test_jit_outputs_that_are_fine_still_work():
    out = jax.jit(lambda x: {"a": x, "b": (x + 1, 2, None)})(1.0)
    assert float(out["a"]) == 1.0 and float(out["b"][0]) == 2.0 and int(out["b"][1]) == 2


# ------------------------------------------------------------------ nested jits

def _nested(depth: int):
    f = lambda x: x + 1  # noqa: E731
    for _ in range(depth):
        f = jax.jit(f)
    return f


def test_nested_jits_trace_in_linear_time():
    # Was exponential (inspect.signature recomputed each wrapper's signature at every
    # level): 20 levels took 49 s. JAX 0.10.2 is exponential too (20 levels: 12 s).
    start = time.perf_counter()
    f = _nested(60)
    assert float(f(0.0)) == 1.0
    assert float(jax.grad(f)(3.0)) == 1.0
    assert time.perf_counter() - start < 20.0


def test_200_nested_jits_say_what_the_recursion_is():
    # JAX 0.10.2 never finishes (exponential); Python's RecursionError is kept as the type
    # and names the function, the limit and the way out.
    limit = sys.getrecursionlimit()
    with pytest.raises(RecursionError, match=r"maximum recursion depth exceeded while tracing "
                       r"<lambda> at .* for jit \(Python's recursion limit is "
                       rf"{limit}\).*sys\.setrecursionlimit") as info:
        _nested(200)(0.0)
    assert isinstance(info.value.__cause__, RecursionError)  # Python's own, with its frames


def test_200_nested_jits_work_with_a_higher_recursion_limit():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(4000)
    try:
        f = _nested(200)
        assert float(f(0.0)) == 1.0
        np.testing.assert_array_equal(np.asarray(jax.vmap(f)(jnp.arange(3.0))), [1, 2, 3])
    finally:
        sys.setrecursionlimit(limit)


# ------------------------------------------------------------------ big-endian arguments

BIG = np.arange(3, dtype=">f4")


def test_big_endian_argument_to_jit():
    # JAX: TypeError "Error interpreting argument to <fn> as an abstract array. The
    # problematic value is of type <class 'numpy.ndarray'> and was passed to the function at
    # path x."
    for f in (lambda x: x * 2, lambda x: x):
        with pytest.raises(TypeError, match="Error interpreting argument to <lambda> at .* as "
                           "an abstract array. The problematic value is of type <class "
                           "'numpy.ndarray'> and was passed to the function at path x"):
            jax.jit(f)(BIG)
    with pytest.raises(TypeError, match="Error interpreting argument"):
        jax.jit(lambda x: x + 1)(np.arange(3, dtype=">i8"))


@pytest.mark.parametrize("convert", [jnp.asarray, jnp.array, jax.device_put,
                                     lambda x: jnp.array([x, x]),
                                     lambda x: jnp.add(x, 1), lambda x: jnp.ones(3) + x,
                                     lambda x: lax.add(x, x), jnp.sum])
def test_big_endian_arrays_are_refused_everywhere(convert):
    # JAX refuses them in every entry (device_put: TypeError "Dtype >f4 is not a valid JAX
    # array type. Only arrays of numeric types are supported by JAX."; jnp functions: a
    # TypeError "Error interpreting argument ..."): never a byte-swapped wrong answer.
    with pytest.raises(TypeError, match="not a valid JAX array type|Error interpreting"):
        convert(BIG)


@pytest.mark.parametrize("make", [lambda: jnp.zeros(3, dtype=">f4"),
                                  lambda: jnp.ones(3).astype(">f4"),
                                  lambda: jnp.frombuffer(BIG.tobytes(), dtype=">f4")])
def test_big_endian_dtypes_asked_for_are_refused(make):
    # JAX: TypeError "JAX only supports number, bool, and string dtypes, got dtype >f4 in
    # zeros" (astype, frombuffer alike); was accepted (as float32)
    with pytest.raises(TypeError, match="JAX only supports number, bool, and string dtypes, "
                       "got dtype >f4 in"):
        make()


def test_native_copies_of_big_endian_data_compute_right():
    native = BIG.astype(BIG.dtype.newbyteorder("="))
    expect = np.array([0.0, 2.0, 4.0], np.float32)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: x * 2)(native)), expect)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(native) * 2), expect)
    np.testing.assert_array_equal(np.asarray(jax.device_put(native)) * 2, expect)
    # an element read out of a big-endian array is a native numpy scalar: accepted
    assert float(jax.jit(lambda x: x * 2)(BIG[2])) == 4.0


# ------------------------------------------------------------------ has_aux

AUX_PHRASE = "expected function with aux output to return a two-element tuple, but got "


@pytest.mark.parametrize("call", [
    lambda f: jax.grad(f, has_aux=True)(1.0),
    lambda f: jax.value_and_grad(f, has_aux=True)(1.0),
    lambda f: jax.vjp(f, 1.0, has_aux=True),
    lambda f: jax.jacrev(f, has_aux=True)(1.0),
    lambda f: jax.linearize(f, 1.0, has_aux=True),
    lambda f: jax.jvp(f, (1.0,), (1.0,), has_aux=True),
    lambda f: jax.jacfwd(f, has_aux=True)(1.0)])
def test_has_aux_with_a_scalar_output_names_no_tracer(call):
    # JAX: TypeError "expected function with aux output to return a two-element tuple, but
    # got type <class '...LinearizeTracer'> ..." (jvp, jacfwd: "iteration over a 0-d array")
    with pytest.raises(TypeError) as info:
        call(lambda x: x ** 2)
    message = str(info.value)
    assert message.startswith(AUX_PHRASE + "a single array of shape () and dtype float32")
    assert "Tracer" not in message


@pytest.mark.parametrize("out, said", [((1,), "a tuple of 1 element "),
                                       ((1, 2, 3), "a tuple of 3 elements")])
def test_has_aux_with_a_tuple_of_other_length(out, said):
    with pytest.raises(TypeError, match=AUX_PHRASE + said):
        jax.grad(lambda x: (x * 2,) + out[1:], has_aux=True)(1.0)


# ------------------------------------------------------------------ Python ints in operators

OVERFLOW = "An overflow was encountered while parsing an argument to a jitted computation"
BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.lt, operator.eq, jnp.maximum, jnp.arctan2]


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("value", [2**70, -2**70, 2**63, 2**32, 2**31, -2**31 - 1])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.int32, jnp.uint32])
def test_python_int_beyond_int32_overflows_in_every_binary_op(op, value, dtype):
    # JAX (x64 off): OverflowError "An overflow was encountered while parsing an argument
    # to a jitted computation, whose argument path is y. Got <class 'int'> with value N",
    # whatever the array's dtype, on either side, eagerly and under jit.
    x = jnp.ones(3, dtype)
    for call in (lambda: op(x, value), lambda: op(value, x),
                 lambda: jax.jit(lambda a: op(a, value))(x)):
        with pytest.raises(OverflowError, match=OVERFLOW + f".*with value {value}"):
            call()


def test_python_int_beyond_int32_in_where_and_clip():
    # JAX: the same OverflowError (paths x and max)
    with pytest.raises(OverflowError, match=OVERFLOW):
        jnp.where(jnp.ones(3) > 0, 2**40, 0.0)
    with pytest.raises(OverflowError, match=OVERFLOW):
        jnp.clip(jnp.ones(3), 0, 2**40)
    np.testing.assert_array_equal(np.asarray(jnp.where(jnp.arange(3) > 0, 2**31 - 1, 0)),
                                  [0, 2**31 - 1, 2**31 - 1])


@pytest.mark.parametrize("value", [2**31 - 1, -2**31])
def test_python_int_at_the_int32_edges_still_works(value):
    np.testing.assert_array_equal(np.asarray(jnp.ones(2) + value),
                                  np.ones(2, np.float32) + np.float32(value))
    assert np.asarray(jnp.ones(2, jnp.int32) * 0 + value).tolist() == [value, value]


def test_python_floats_and_int_powers_are_not_range_checked():
    # JAX: 2.0**70 as a float operand, inf and an int exponent are all accepted
    assert float((jnp.ones(()) * float(2**70))) == np.float32(2.0**70)
    assert float(jnp.ones(()) + float("inf")) == np.inf
    assert float(jnp.ones(()) ** (2**40)) == 1.0


def test_python_int_range_follows_x64():
    from jaxlite.config import config
    with config.override("jax_enable_x64", True):
        assert float((jnp.ones(()) + 2**62)) == 2.0**62
        with pytest.raises(OverflowError, match=OVERFLOW):
            jnp.ones(()) + 2**63


# ------------------------------------------------------------------ negative dimensions

NONNEG = r"broadcast_in_dim shape must have every element be nonnegative, got \({}\)\."


@pytest.mark.parametrize("make, shown", [
    (lambda: jnp.zeros((-1,)), "-1,"), (lambda: jnp.zeros((2, -3)), "2, -3"),
    (lambda: jnp.ones(-1), "-1,"), (lambda: jnp.empty((-1,)), "-1,"),
    (lambda: jnp.full((-1,), 1.0), "-1,"), (lambda: jnp.zeros((3, -2), jnp.int8), "3, -2"),
    (lambda: jnp.zeros_like(jnp.ones(2), shape=(-1,)), "-1,"),
    (lambda: jnp.ones_like(jnp.ones(2), shape=(-1,)), "-1,"),
    (lambda: jnp.full_like(jnp.ones(2), 1, shape=(-1,)), "-1,"),
    (lambda: jax.jit(lambda: jnp.zeros((-1,)))(), "-1,")])
def test_negative_dimensions_raise_jax_type_error(make, shown):
    # JAX: TypeError "broadcast_in_dim shape must have every element be nonnegative, got
    # (-1,)." (was ValueError)
    with pytest.raises(TypeError, match=NONNEG.format(shown)):
        make()


def test_negative_dimensions_elsewhere_as_jax():
    with pytest.raises(TypeError, match="iota shape must have every element be nonnegative"):
        jnp.indices((-1, 2))
    with pytest.raises(ValueError, match="all elements of `new_shape` must be non-negative"):
        jnp.resize(jnp.ones(2), (-1,))
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        jnp.eye(-1)
    with pytest.raises(TypeError, match=r"reshape new_sizes must all be positive, got "
                       r"\(-2, -2\)"):
        jnp.ones(4).reshape((-2, -2))


@pytest.mark.parametrize("shape", [(-1, 0), (0, -1), (-1, 0, 2)])
def test_reshape_inferring_next_to_a_zero_entry_raises_jaxs_zero_division(shape):
    # JAX 0.10.2: ZeroDivisionError 'integer modulo by zero' for (1, 1, 0) and (2, 3) alike
    # (a fuzzer finding: jaxlite raised TypeError)
    for x in (jnp.zeros((1, 1, 0)), jnp.zeros((2, 3))):
        with pytest.raises(ZeroDivisionError, match="integer modulo by zero"):
            jnp.reshape(x, shape)
        with pytest.raises(ZeroDivisionError, match="integer modulo by zero"):
            jax.jit(lambda v: v.reshape(shape))(x)


# ------------------------------------------------------------------ impossible sizes in jit

def test_jit_with_an_impossible_intermediate_says_so():
    # JAX 0.10.2 aborts the process ("INVALID_ARGUMENT: overflow in static extent product:
    # dimensions=[1099511627776, 1099511627776]"); we raise that as JaxRuntimeError before
    # compiling (was an HloEvaluationError from constant folding).
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"INVALID_ARGUMENT: overflow in "
                       r"static extent product: dimensions=\[1099511627776, 1099511627776\]"):
        jax.jit(lambda: jnp.zeros((2**40, 2**40)).sum())()
    with pytest.raises(jax.errors.JaxRuntimeError, match="overflow in static extent product"):
        jax.jit(lambda x: lax.while_loop(lambda c: c[0] < 1,
                                         lambda c: (c[0] + jnp.zeros((2**40, 2**40)).sum(),),
                                         (x,)))(0.0)
