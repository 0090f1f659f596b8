"""Lowering jaxprs to HLO: every primitive's rule, checked by evaluating the module.

For every test record (tests/lax/records_*.py) the record's function is traced with
`make_jaxpr`, lowered with `lower_jaxpr`, checked by the verifier and evaluated by the HLO
evaluator; the values must equal eager execution. Then the driver's own contract: constants
as literals or leading parameters, literals, tuples of outputs, nested calls of the
higher-order primitives, and the errors it raises.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.core import dtypes
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import MissingRuleError, Primitive, registry
from jaxlite.interpreters.lowering import MAX_CONSTANT_ELEMENTS, LoweredModule, lower_jaxpr
from jaxlite.lax.higher_order import custom_lin_p
from jaxlite.test_util import VALUE_TOLERANCE
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.verifier import verify_module
from records import all_records

RECORDS = all_records()
NAMES = sorted(RECORDS)
SEEDS = st.integers(0, 2**32 - 1)


# ----------------------------------------------------------------------------- helpers

def _outputs(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _lower(fun, *args) -> tuple[ClosedJaxpr, LoweredModule]:
    closed = jax.make_jaxpr(fun)(*args)
    lowered = lower_jaxpr(closed, getattr(fun, "__name__", "f").strip("<>") or "f")
    verify_module(lowered.module)
    return closed, lowered


def _run(fun, *args) -> list[np.ndarray]:
    """Trace, lower, verify and evaluate `fun` on `args`; the outputs as numpy arrays."""
    closed, lowered = _lower(fun, *args)
    # The module takes the jaxpr's canonical dtypes (float64 becomes float32 with x64 off).
    inputs = [np.asarray(a, dtype=aval.dtype) for a, aval in zip(args, closed.in_avals)]
    results = evaluate_module(lowered.module, [*lowered.const_args, *inputs])
    return [np.asarray(r) for r in _outputs(results)]


def _assert_same(actual, expected, what: str) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    tol = VALUE_TOLERANCE[np.dtype(actual.dtype)]
    if tol == 0:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        np.testing.assert_allclose(actual.astype(np.complex128), expected.astype(np.complex128),
                                   rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def _check_against_eager(fun, *args, what: str = "") -> None:
    expected = [np.asarray(e) for e in _outputs(fun(*args))]
    actual = _run(fun, *args)
    assert len(actual) == len(expected), f"{what}: {len(actual)} outputs, expected {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        _assert_same(a, e, f"{what} output {i}")


def _opcodes(lowered: LoweredModule) -> list[Opcode]:
    return [inst.opcode for comp in lowered.module.computations for inst in comp.instructions]


# ------------------------------------------------------------------- every primitive

@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=8)
@given(seed=SEEDS, data=st.data())
def test_lowered_record_matches_eager(name, seed, data):
    record = RECORDS[name]
    dtype = data.draw(st.sampled_from(list(record.dtypes)), label="dtype")
    case = record.make_case(np.random.default_rng(seed), dtype)
    _check_against_eager(case.fun, *case.args, what=f"{name} on {np.dtype(dtype).name}")


def test_every_primitive_has_a_lowering_rule():
    missing = [name for name, p in registry.items() if not p.has_rule("lower")]
    assert not missing, f"primitives without a lowering rule: {missing}"


# ------------------------------------------------------------------------ constants

def test_small_constants_become_literals_and_large_ones_parameters():
    small = jnp.arange(6.0)
    large = jnp.arange(float(MAX_CONSTANT_ELEMENTS + 1))

    def f(x):
        return x * small[:3].sum() + large[-3:]

    x = np.ones(3, np.float32)
    closed, lowered = _lower(f, x)
    entry = lowered.module.entry
    assert len(closed.consts) == 2
    assert len(lowered.const_args) == 1
    np.testing.assert_array_equal(lowered.const_args[0], np.asarray(large))
    assert [p.shape.dims for p in entry.parameters] == [(MAX_CONSTANT_ELEMENTS + 1,), (3,)]
    assert any(i.opcode is Opcode.CONSTANT and i.shape.dims == (6,) for i in entry.instructions)
    _check_against_eager(f, x)


def test_weak_typed_literals_take_the_dtype_of_their_aval():
    def f(x):
        return x * 2 + 1.5, lax.add(x, np.float16(3))

    x = np.arange(4, dtype=np.float16)
    _, lowered = _lower(f, x)
    literals = [i for i in lowered.module.entry.instructions if i.opcode is Opcode.CONSTANT]
    assert literals and all(i.shape.dtype == np.float16 for i in literals)
    _check_against_eager(f, x)


# -------------------------------------------------------------------------- outputs

def test_outputs_may_repeat_and_be_inputs_or_literals():
    def f(x, y):
        z = x + y
        return z, x, z, 3.0

    args = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    _, lowered = _lower(f, *args)
    root = lowered.module.entry.root
    assert root.opcode is Opcode.TUPLE and len(root.operands) == 4
    assert root.operands[1].opcode is Opcode.PARAMETER
    assert root.operands[3].opcode is Opcode.CONSTANT
    z, x, z_again, three = _run(f, *args)
    _assert_same(z, args[0] + args[1], "z")
    _assert_same(x, args[0], "x")
    _assert_same(z_again, z, "z again")
    _assert_same(three, np.float32(3.0), "the literal")


def test_float0_tangents_are_pred_zeros():
    def f(x, n):
        return jax.jvp(lambda a, m: (a * m, m + 1), (x, n), (x, np.zeros((), dtypes.float0)))

    args = np.float32(2.0), np.int32(3)
    _, lowered = _lower(f, *args)
    assert lowered.module.entry.root.shape.tuple_shapes[-1].dtype == np.bool_
    (y, m), (dy, _) = f(*args)
    *values, dm = _run(f, *args)
    for i, (actual, expected) in enumerate(zip(values, (y, m, dy))):
        _assert_same(actual, np.asarray(expected), f"output {i}")
    _assert_same(dm, np.False_, "the float0 tangent")


def test_one_output_is_the_root_itself():
    _, lowered = _lower(lambda x: -x, np.ones((2, 2), np.float32))
    assert lowered.module.entry.root.opcode is Opcode.NEGATE


# ---------------------------------------------------------------------- higher order

def test_nested_jit_becomes_a_call_computed_once_per_jaxpr():
    inner = jax.jit(lambda a, b: (a * b, a - b))

    def f(x, y):
        p, q = inner(x, y)
        return jax.jit(lambda a: jnp.sin(a))(p) + q

    args = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)
    _, lowered = _lower(f, *args)
    calls = [i for i in lowered.module.entry.instructions if i.opcode is Opcode.CALL]
    assert len(calls) == 2
    assert calls[0].shape.is_tuple and not calls[1].shape.is_tuple
    _check_against_eager(f, *args)


def test_grad_of_jit_and_checkpoint_lowers():
    def loss(w, x):
        h = jax.checkpoint(lambda v: jnp.tanh(v @ w))(x)
        return jax.jit(lambda a: (a ** 2).sum())(h)

    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    x = np.linspace(0, 1, 8, dtype=np.float32).reshape(2, 4)
    _check_against_eager(jax.grad(loss), w, x)


def test_custom_jvp_and_custom_vjp_lower_to_their_primal():
    @jax.custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    softplus.defjvp(lambda primals, tangents: (softplus(primals[0]),
                                               tangents[0] * lax.logistic(primals[0])))

    @jax.custom_vjp
    def clip_gradient(x):
        return x * 2.0

    clip_gradient.defvjp(lambda x: (x * 2.0, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))

    x = np.linspace(-2, 2, 5, dtype=np.float32)
    _check_against_eager(lambda v: softplus(v) + clip_gradient(v), x)
    _check_against_eager(jax.grad(lambda v: (softplus(v) * clip_gradient(v)).sum()), x)


def test_custom_lin_cannot_be_lowered():
    with pytest.raises(TypeError,
                       match=r"can.t apply forward-mode autodiff \(jvp\) to a custom_vjp"):
        custom_lin_p.lower(None, num_res=0, bwd=None, out_avals=())


# ------------------------------------------------------------------ specific rules

def test_integer_pow_is_a_chain_of_multiplies():
    _, lowered = _lower(lambda x: lax.integer_pow(x, 13), np.ones(3, np.float32))
    assert _opcodes(lowered).count(Opcode.MULTIPLY) == 5  # x^2, x^4, x^8, x*x^4, .. * x^8
    x = np.array([0.5, -1.25, 1.1], np.float32)
    _check_against_eager(lambda v: (lax.integer_pow(v, 13), lax.integer_pow(v, -3),
                                    lax.integer_pow(v, 0)), x)
    _check_against_eager(lambda v: lax.integer_pow(v, 7), np.array([3, -5, 100], np.int8))


def test_argmax_and_argmin_take_the_first_nan_and_the_first_tie():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 2.0, np.nan, 5.0], [-0.0, 0.0, -1.0, -1.0],
                  [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
    for f in (lax.argmax, lax.argmin):
        for axis in (0, 1):
            _check_against_eager(functools.partial(f, axis=axis, index_dtype=np.int32), x,
                                 what=f"{f.__name__} {axis}")
    b = np.array([[False, True, True], [False, False, False]])
    _check_against_eager(lambda v: (lax.argmax(v, 1, np.uint8), lax.argmin(v, 1, np.int16)), b)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_reductions_are_reduce_windows(name, reverse):
    fun = getattr(lax, name)
    x = np.array([[0.5, -1.0, 2.0, np.inf], [1.0, 1.5, -np.inf, 0.25]], np.float32)
    _, lowered = _lower(lambda v: fun(v, 1, reverse), x)
    assert Opcode.REDUCE_WINDOW in _opcodes(lowered)
    for axis in (0, 1):
        _check_against_eager(functools.partial(fun, axis=axis, reverse=reverse), x,
                             what=f"{name} axis {axis}")


def test_select_n_with_many_cases_and_a_scalar_predicate():
    cases = [np.full((2, 3), i, np.float32) for i in range(5)]
    which = np.array([[0, 1, 2], [3, 4, 2]], np.int32)
    _check_against_eager(lambda w, *c: lax.select_n(w, *c), which, *cases)
    _check_against_eager(lambda w, a, b: lax.select_n(w, a, b), np.bool_(True), *cases[:2])
    _check_against_eager(lambda w, a: lax.select_n(w, a), np.uint8(0), cases[0])


def test_broadcast_in_dim_expands_size_one_dimensions():
    x = np.arange(3, dtype=np.int32).reshape(3, 1)
    _check_against_eager(lambda v: lax.broadcast_in_dim(v, (2, 3, 4), (1, 2)), x)
    _check_against_eager(lambda v: lax.broadcast_in_dim(v, (3, 1), (0, 1)), x)


def test_complex_and_bool_extrema():
    a = np.array([1 + 2j, 1 - 1j, -3 + 0j, 2 + 2j], np.complex64)
    b = np.array([1 + 1j, 1 + 1j, -3 + 1j, 0 + 9j], np.complex64)
    _check_against_eager(lambda x, y: (lax.max(x, y), lax.min(x, y)), a, b)
    _check_against_eager(lambda x: (lax.reduce_max(x, (0,)), lax.cummin(x, 0)), a)
    _check_against_eager(lambda x, lo, hi: lax.clamp(lo, x, hi), a, b, a + 1)
    p = np.array([True, False, True]), np.array([False, False, True])
    _check_against_eager(lambda x, y: (lax.max(x, y), lax.min(x, y), lax.reduce_max(x, (0,))),
                         *p)


def test_dot_general_with_mixed_and_preferred_types():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    b = np.arange(12, dtype=np.int8).reshape(3, 4) - 5
    dims = (((1,), (0,)), ((), ()))
    _check_against_eager(lambda x, y: lax.dot_general(x, y, dims,
                                                      preferred_element_type=np.int32), a, b)
    _check_against_eager(lambda x, y: lax.dot_general(x, y.astype(np.float32), dims), a, b)
    _check_against_eager(lambda x, y: lax.dot_general(x.astype(jnp.bfloat16),
                                                      y.astype(jnp.bfloat16), dims,
                                                      preferred_element_type=np.float32), a, b)
    _check_against_eager(lambda x, y: lax.dot_general(x > 2, y > 0, dims), a, b)


# ------------------------------------------------------------------------------ errors

def test_a_primitive_without_a_rule_is_named():
    unlowered = Primitive("lowering_test_unlowered")
    unlowered.abstract_eval = lambda x: x
    try:
        closed = jax.make_jaxpr(lambda x: unlowered.bind(x))(np.ones(2, np.float32))
        with pytest.raises(MissingRuleError, match="lowering_test_unlowered"):
            lower_jaxpr(closed, "f")
    finally:
        del registry["lowering_test_unlowered"]


def test_a_rule_returning_the_wrong_shape_is_reported():
    wrong = Primitive("lowering_test_wrong")
    wrong.abstract_eval = lambda x: x
    wrong.lower = lambda ctx, x: ctx.builder.add(Opcode.RESHAPE, x.shape.with_dims((4,)), (x,))
    try:
        closed = jax.make_jaxpr(lambda x: wrong.bind(x))(np.ones((2, 2), np.float32))
        with pytest.raises(TypeError, match="lowering_test_wrong.*f32\\[2,2\\]"):
            lower_jaxpr(closed, "f")
    finally:
        del registry["lowering_test_wrong"]
