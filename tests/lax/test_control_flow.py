"""lax.cond, switch, while_loop, fori_loop, scan, map and associative_scan beyond the shared
primitive records (records_control_flow.py): JAX's error messages, reverse mode refused for
while loops, batched predicates, carries and closures, nested control flow, the jaxprs and
HLO they make, and a 10,000-step loop under jit. Expected values come from JAX 0.10.2.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads


def _eqn_names(closed) -> list[str]:
    return [e.primitive.name for e in closed.jaxpr.eqns]


# ------------------------------------------------------------------------------- errors

@pytest.mark.parametrize("call, error, message", [
    (lambda: lax.cond(jnp.array([True, False]), lambda x: x, lambda x: x, 1.),
     TypeError, "Pred must be a scalar, got"),
    (lambda: lax.cond(1j, lambda: 1., lambda: 2.),
     TypeError, "Pred type must be either boolean or number, got complex64."),
    (lambda: lax.cond(True, 1, lambda x: x, 1.),
     TypeError, "lax.cond: true_fun and false_fun arguments should be callable."),
    (lambda: lax.cond(True, lambda x: x, lambda x: x, 1., operand=1.),
     TypeError, "if 'operand' keyword is passed then no positional operands can be passed"),
    (lambda: lax.cond(True, lambda x: x, lambda x: (x, x), 1.),
     TypeError, "cond branch outputs must have the same pytree structure, but they differ"),
    (lambda: lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.),
     TypeError, "The output of true_fun has type float32[] but the corresponding output of "
                "false_fun has type int32[], so the dtypes do not match."),
    (lambda: lax.cond(True, lambda x: (x, x), lambda x: (x, jnp.stack([x, x])), 1.),
     TypeError, "The output of true_fun at path [1] has type float32[] but the corresponding "
                "output of false_fun has type float32[2], so the shapes do not match."),
    (lambda: lax.switch(0, [], 1.), ValueError, "Empty branch sequence"),
    (lambda: lax.switch(1.0, [lambda x: x], 1.),
     TypeError, "Index type must be an integer, got 1.0 as float32"),
    (lambda: lax.switch(True, [lambda: 1., lambda: 2.]),
     TypeError, "Index type must be an integer, got True as bool"),
    (lambda: lax.switch(jnp.array([1]), [lambda x: x], 1.),
     TypeError, "Branch index must be scalar, got"),
    (lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: c[0], (0, 1.)),
     TypeError, "while_loop body function carry input and carry output must have the same "
                "pytree structure"),
    (lambda: lax.while_loop(lambda c: c['a'] < 3, lambda c: dict(a=c['a'], b=jnp.ones(2)),
                            dict(a=0, b=1.)),
     TypeError, "The input carry component c['b'] has type float32[] but the corresponding "
                "output carry component has type float32[2], so the shapes do not match."),
    (lambda: lax.while_loop(lambda c: c, lambda c: c + 1, 0),
     TypeError, "cond_fun must return a boolean scalar, but got output type(s) "
                "[ShapedArray(int32[], weak_type=True)]."),
    (lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1, jnp.zeros(2)),
     TypeError, "cond_fun must return a boolean scalar, but got output type(s) "
                "[ShapedArray(bool[2])]."),
    (lambda: lax.while_loop(lambda c: (c < 3, c < 3), lambda c: c + 1, 0),
     TypeError, "cond_fun must return a boolean scalar, but got pytree"),
    (lambda: lax.scan(lambda c, x: ((c, c), x), 0., jnp.ones(3)),
     TypeError, "scan body function carry input and carry output must have the same pytree "
                "structure"),
    (lambda: lax.scan(lambda c, x: (c.astype(jnp.float16), x), jnp.float32(1), jnp.ones(3)),
     TypeError, "The input carry c has type float32[] but the corresponding output carry "
                "component has type float16[], so the dtypes do not match."),
    (lambda: lax.scan(lambda c, x: ((c[0], c[1].astype(jnp.int32)), x), (0., 1.), jnp.ones(3)),
     TypeError, "The input carry component c[1] has type float32[] but the corresponding "
                "output carry component has type int32[], so the dtypes do not match."),
    (lambda: lax.scan(lambda c, x: (c, x), 0., None),
     ValueError, "scan got no values to scan over and `length` not provided."),
    (lambda: lax.scan(lambda c, x: (c, x), 0., (jnp.ones(3), jnp.ones(4))),
     ValueError, "scan got values with different leading axis sizes: 3, 4."),
    (lambda: lax.scan(lambda c, x: (c, x), 0., jnp.ones(3), length=4),
     ValueError, "scan got `length` argument of 4 which disagrees with leading axis sizes [3]."),
    (lambda: lax.scan(lambda c, x: c, 0., jnp.ones(3)),
     TypeError, "scan body output must be a pair, got f32[]."),
    (lambda: lax.fori_loop(0, 3, lambda i, c: c + 1., jnp.int32(1)),
     TypeError, "The input carry component loop_carry[1] has type int32[] but the "
                "corresponding output carry component has type float32[]"),
    (lambda: lax.fori_loop(np.int16(0), np.int32(3), lambda i, c: c + i, 0.),
     TypeError, "lower and upper arguments to fori_loop must have equal types, got int16 and "
                "int32"),
    (lambda: jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0., unroll=2))(3),
     ValueError, "Can only use `unroll` in `fori_loop` if the loop bounds are statically "
                 "known."),
    (lambda: lax.associative_scan(jnp.add, (jnp.arange(5.), jnp.arange(4.))),
     ValueError, "Array inputs to associative_scan must have the same first dimension. "
                 "(saw: [(5,), (4,)])"),
])
def test_errors_name_the_problem(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_reverse_mode_through_while_loop_is_refused():
    f = lambda x: lax.while_loop(lambda c: c < 3, lambda c: c + 1., x)  # noqa: E731
    message = ("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
               "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
               "static start/stop.")
    with pytest.raises(ValueError) as info:
        jax.grad(f)(0.)
    assert str(info.value) == message
    dynamic = jax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x))
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(dynamic)(1.5, 3)


def test_forward_mode_through_while_loop():
    w = lambda x: lax.while_loop(lambda c: c[1] < 10., lambda c: (c[0] + 1, c[1] * x),  # noqa
                                 (0, 1.))[1]
    out, tangent = jax.jvp(w, (1.5,), (1.,))
    np.testing.assert_allclose([out, tangent], [11.390625, 45.5625], rtol=1e-6)
    np.testing.assert_allclose(jax.linearize(w, 1.5)[1](1.), 45.5625, rtol=1e-6)
    with jax.enable_x64(True):
        body = lambda x, y: lax.while_loop(  # noqa: E731
            lambda c: c[0] < 4, lambda c: (c[0] + 1, jnp.sin(c[1]) * x + y), (0, y))[1]
        check_grads(body, (np.float64(0.7), np.float64(-0.4)), order=2, modes=("fwd",))


def test_reverse_mode_through_fori_loop_with_static_bounds():
    f = lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, x)  # noqa: E731
    assert float(jax.grad(f)(2.)) == 32.0
    assert _eqn_names(jax.make_jaxpr(f)(2.)) == ["scan"]


# -------------------------------------------------------------------------------- cond

def test_cond_forms():
    assert float(lax.cond(True, lambda x: x + 1., lambda x: x * 2., 3.)) == 4.0
    assert float(lax.cond(0, lambda x: x + 1., lambda x: x * 2., 3.)) == 6.0
    assert float(lax.cond(1.5, lambda: 1., lambda: 2.)) == 1.0
    # The old five-argument form: cond(pred, true_operand, true_fun, false_operand, false_fun).
    assert float(lax.cond(True, 1., lambda x: x + 1, 2., lambda x: x * 3)) == 2.0
    assert float(lax.cond(False, lambda x: x, lambda x: -x, operand=1.)) == -1.0
    out = lax.cond(False, lambda a, b: a['x'] + b, lambda a, b: a['x'] - b, {'x': 1.}, 2.)
    assert float(out) == -1.0


def test_cond_weak_types_join():
    strong = lax.cond(True, lambda: 1., lambda: jnp.float32(2.))
    assert not strong.weak_type and float(strong) == 1.0
    weak = lax.cond(False, lambda: 1., lambda: 2.)
    assert weak.weak_type and float(weak) == 2.0


def test_switch_clamps_the_index():
    branches = [lambda x: x, lambda x: -x, lambda x: 2 * x]
    assert [float(lax.switch(i, branches, 3.)) for i in (-3, 0, 1, 2, 7)] == \
        [3., 3., -3., 6., 6.]
    assert float(jax.jit(lambda i: lax.switch(i, branches, 3.))(9)) == 6.0


def test_cond_jaxpr_and_hlo():
    f = lambda p, x: lax.cond(p, lambda x: x + 1., lambda x: x * 2., x)  # noqa: E731
    closed = jax.make_jaxpr(f)(True, 1.)
    assert _eqn_names(closed) == ["convert_element_type", "cond"]
    false_branch, true_branch = closed.jaxpr.eqns[1].params["branches"]
    assert [e.primitive.name for e in false_branch.jaxpr.eqns] == ["mul"]
    assert [e.primitive.name for e in true_branch.jaxpr.eqns] == ["add"]
    text = jax.jit(f).lower(True, 1.).as_text()
    assert " conditional(" in text
    assert float(jax.jit(f)(False, 1.5)) == 3.0


def test_cond_under_vmap():
    f = lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)  # noqa: E731
    preds, xs = jnp.array([True, False, True]), jnp.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(jax.vmap(f)(preds, xs), [np.sin(.5), np.cos(1.), np.sin(2.)],
                               rtol=1e-6)
    # A batched predicate selects between both branches' results; an unbatched one stays a
    # cond of batched branches.
    assert "cond" not in _eqn_names(jax.make_jaxpr(jax.vmap(f))(preds, xs))
    assert "select_n" in _eqn_names(jax.make_jaxpr(jax.vmap(f))(preds, xs))
    assert "cond" in _eqn_names(jax.make_jaxpr(jax.vmap(f, (None, 0)))(True, xs))


def test_gradient_of_unselected_branch_does_not_leak_under_vmap():
    f = lambda x: lax.cond(x > 0, jnp.sqrt, lambda x: 0. * x, x)  # noqa: E731
    np.testing.assert_array_equal(jax.vmap(jax.grad(f))(jnp.array([-1., 4.])), [0., 0.25])


# ------------------------------------------------------------------------- while loops

def test_batched_while_runs_until_every_member_is_done():
    def count(n):
        return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 2.), (0, 1.))
    steps, values = jax.vmap(count)(jnp.array([0, 3, 5]))
    np.testing.assert_array_equal(steps, [0, 3, 5])
    np.testing.assert_array_equal(values, [1., 8., 32.])
    jitted_steps, _ = jax.jit(jax.vmap(count))(jnp.array([4, 1, 2]))
    np.testing.assert_array_equal(jitted_steps, [4, 1, 2])
    closed = jax.make_jaxpr(jax.vmap(count))(jnp.array([0, 3, 5]))
    assert _eqn_names(closed).count("while") == 1
    cond_jaxpr = closed.jaxpr.eqns[-1].params["cond_jaxpr"]
    assert "reduce_or" in [e.primitive.name for e in cond_jaxpr.jaxpr.eqns]


def test_while_with_unbatched_predicate_keeps_carries_unbatched():
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + x), (0, x))
    steps, values = jax.vmap(f)(jnp.array([1., 2.]))
    np.testing.assert_array_equal(steps, [3, 3])
    np.testing.assert_array_equal(values, [4., 8.])


def test_while_promotes_a_weak_initial_carry():
    out = lax.while_loop(lambda c: c < 3, lambda c: c + 1., 0)
    assert out.dtype == np.float32 and not out.weak_type and float(out) == 3.0
    assert float(lax.fori_loop(0, 3, lambda i, c: c + 1., 1)) == 4.0


def test_a_carry_that_only_loses_its_weak_type_is_not_promoted():
    # JAX 0.10.2 (typematch ignores weak types): the body sees the weak Python-float carry,
    # so what it emits from it stays weak, while the final carry is float32.
    carry, ys = lax.scan(lambda c, y: (c + y, c), 0.0, jnp.arange(3.))
    assert not carry.weak_type and ys.weak_type
    np.testing.assert_array_equal(ys, [0., 0., 1.])
    carry, ys = jax.jit(lambda a: lax.scan(lambda c, y: (c * a + y, c), 1.0,
                                           jnp.arange(3.)))(2.0)
    assert not carry.weak_type and ys.weak_type and float(carry) == 12.0  # a^3 + a + 2
    grad = jax.grad(lambda a: lax.scan(lambda c, y: (c * a + y, c), 1.0, jnp.arange(3.))[0])
    assert float(grad(2.0)) == 13.0  # 3 a^2 + 1
    assert lax.fori_loop(0, 3, lambda i, c: c * 2.0, 1.0).weak_type


def test_while_jaxpr():
    f = lambda x: lax.while_loop(lambda c: c[0] < 10,  # noqa: E731
                                 lambda c: (c[0] + 1, c[1] * x), (0, x))
    eqn = jax.make_jaxpr(f)(1.).jaxpr.eqns[0]
    assert eqn.primitive.name == "while"
    assert (eqn.params["cond_nconsts"], eqn.params["body_nconsts"]) == (0, 1)
    assert " while(" in jax.jit(f).lower(1.).compile().as_text()
    dynamic = jax.make_jaxpr(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x))(1., 3)
    assert _eqn_names(dynamic) == ["while"]


# -------------------------------------------------------------------------------- scan

def test_scan_without_xs_uses_length():
    carry, ys = lax.scan(lambda c, _: (c * 2., c), 1., None, length=4)
    assert float(carry) == 16.0
    np.testing.assert_array_equal(ys, [1., 2., 4., 8.])
    carry, ys = lax.scan(lambda c, _: (c + 1, None), 0, None, length=3)
    assert int(carry) == 3 and ys is None


def test_scan_reverse_and_pytrees():
    def step(carry, x):
        total, count = carry["total"], carry["count"]
        return {"total": total + x["a"] * x["b"], "count": count + 1}, (total, x["a"])
    xs = {"a": jnp.arange(1., 4.), "b": jnp.array([2., 3., 4.])}
    init = {"total": 0., "count": 0}
    carry, (totals, a) = lax.scan(step, init, xs)
    assert float(carry["total"]) == 20.0 and int(carry["count"]) == 3
    np.testing.assert_array_equal(totals, [0., 2., 8.])
    np.testing.assert_array_equal(a, [1., 2., 3.])
    carry, (totals, _) = lax.scan(step, init, xs, reverse=True)
    np.testing.assert_array_equal(totals, [18., 12., 0.])
    jitted = jax.jit(lambda xs: lax.scan(step, init, xs, reverse=True))(xs)
    np.testing.assert_array_equal(jitted[1][0], [18., 12., 0.])


def test_scan_jaxpr_params():
    closed = jax.make_jaxpr(
        lambda x, xs: lax.scan(lambda c, a: (c * a + x, c), x, xs, reverse=True, unroll=2)
    )(1., jnp.ones(3))
    eqn = closed.jaxpr.eqns[-1]
    assert eqn.primitive.name == "scan"
    params = {k: eqn.params[k] for k in ("length", "num_carry", "num_consts", "reverse",
                                         "unroll")}
    assert params == dict(length=3, num_carry=1, num_consts=1, reverse=True, unroll=2)
    unrolled = jax.make_jaxpr(lambda: lax.scan(lambda c, x: (c, x), 0., jnp.ones(5),
                                               unroll=True))()
    assert unrolled.jaxpr.eqns[-1].params["unroll"] == 5


def test_grad_of_scan_closing_over_the_differentiated_variable():
    def g(w):
        return lax.scan(lambda c, x: (c * w + x, c), 1., jnp.arange(3.))[0]
    assert float(jax.grad(g)(0.5)) == 1.75
    assert float(jax.grad(jax.grad(g))(0.5)) == 3.0
    assert float(jax.jit(jax.grad(g))(0.5)) == 1.75


def test_rnn_gradients_match_jax():
    def rnn(w, xs):
        return lax.scan(lambda h, x: (jnp.tanh(w @ h + x), h.sum()), jnp.ones(2), xs)
    w = jnp.array([[0.5, -0.2], [0.1, 0.3]])
    xs = jnp.arange(6.).reshape(3, 2) / 10
    np.testing.assert_allclose(jax.grad(lambda w: rnn(w, xs)[0].sum())(w),
                               [[0.54772913, 0.78169024], [0.10929755, 0.24008158]], rtol=1e-5)
    np.testing.assert_allclose(jax.grad(lambda w: rnn(w, xs)[1].sum())(w),
                               [[1.6920615, 1.8523648], [1.0656673, 1.203944]], rtol=1e-5)
    linear_scans = [e for e in jax.make_jaxpr(jax.grad(lambda w: rnn(w, xs)[0].sum()))(w).eqns
                    if e.primitive.name == "scan"]
    # A known scan that saves residuals, and the reverse scan of the transposed tangents.
    assert [e.params["reverse"] for e in linear_scans] == [False, True]


def test_scan_gradients_of_second_order():
    with jax.enable_x64(True):
        def f(w, c, xs):
            return lax.scan(lambda c, x: (jnp.sin(c) * x * w + c ** 2, c * x * w), c, xs)
        check_grads(f, (np.float64(0.7), np.float64(0.3), np.linspace(0.1, 1, 4)), order=2)
        two_carries = lambda c, xs: lax.scan(  # noqa: E731
            lambda c, x: ((c[0] * x, c[1] + jnp.sin(c[0])), c[1]), (c, 0.), xs, reverse=True)
        check_grads(two_carries, (np.float64(0.3), np.linspace(0.1, 1, 4)), order=2)


def test_scan_under_vmap_batches_carry_as_needed():
    f = lambda c, xs: lax.scan(lambda c, x: (c + x, c * 2), c, xs)  # noqa: E731
    carry, ys = jax.vmap(f, (None, 1))(1., jnp.arange(6.).reshape(3, 2))
    np.testing.assert_array_equal(carry, [7., 10.])
    np.testing.assert_array_equal(ys, [[2., 2., 6.], [2., 4., 10.]])
    carry, ys = jax.vmap(f, (0, None))(jnp.array([1., 2.]), jnp.arange(3.))
    np.testing.assert_array_equal(carry, [4., 5.])


# ------------------------------------------------------------------------ nesting

def _nested(x):
    def body(i, c):
        return lax.cond(i % 2 == 0,
                        lambda c: lax.scan(lambda a, b: (a * b, a), c, jnp.array([1.5, x]))[0],
                        lambda c: jnp.sin(c) + x, c)
    return lax.fori_loop(0, 4, body, x)


def test_nested_control_flow():
    np.testing.assert_allclose(_nested(0.7), 1.6913427, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(_nested)(0.7), 1.622573, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(_nested))(0.7), 1.622573, rtol=1e-5)
    np.testing.assert_allclose(jax.vmap(_nested)(jnp.array([0.7, -0.3])),
                               [1.6913427, -0.22563437], rtol=1e-5)
    np.testing.assert_allclose(jax.vmap(jax.grad(_nested))(jnp.array([0.7, -0.3])),
                               [1.622573, 0.7040223], rtol=1e-5)
    with jax.enable_x64(True):
        check_grads(_nested, (np.float64(0.7),), order=2)


# ---------------------------------------------------------------------- map and prefix

def test_map():
    np.testing.assert_array_equal(lax.map(lambda x: x * 2, jnp.arange(5.)), [0, 2, 4, 6, 8])
    for batch_size in (1, 2, 5, 8):
        out = lax.map(lambda x: {"y": x["a"] * 2}, {"a": jnp.arange(5.)}, batch_size=batch_size)
        np.testing.assert_array_equal(out["y"], [0, 2, 4, 6, 8])
    closed = jax.make_jaxpr(lambda x: lax.map(jnp.sin, x, batch_size=2))(jnp.ones(5))
    assert _eqn_names(closed) == ["slice", "reshape", "scan", "reshape", "slice", "sin",
                                  "concatenate"]


def test_associative_scan():
    for n in range(9):
        x = np.arange(float(n))
        np.testing.assert_array_equal(lax.associative_scan(jnp.add, x), np.cumsum(x))
        np.testing.assert_array_equal(lax.associative_scan(jnp.add, x, reverse=True),
                                      np.cumsum(x[::-1])[::-1])
    m = np.array([[[1., 2], [3, 4]], [[0, 1], [1, 0]], [[2, 0], [1, 1]], [[1, 1], [0, 1]]])
    np.testing.assert_array_equal(lax.associative_scan(jnp.matmul, m)[-1], [[5, 6], [11, 14]])
    np.testing.assert_array_equal(lax.associative_scan(jnp.matmul, m, reverse=True)[0],
                                  [[10, 14], [4, 6]])
    np.testing.assert_array_equal(
        lax.associative_scan(jnp.add, jnp.arange(6.).reshape(2, 3), axis=-1),
        [[0, 1, 3], [3, 7, 12]])
    pair = lax.associative_scan(lambda a, b: (a[0] + b[0], a[1] * b[1]),
                                (jnp.arange(4.), jnp.arange(1., 5.)))
    np.testing.assert_array_equal(pair[1], [1, 2, 6, 24])
    assert "scan" not in _eqn_names(jax.make_jaxpr(
        lambda x: lax.associative_scan(jnp.add, x))(jnp.ones(5)))
    with jax.enable_x64(True):
        check_grads(lambda x: lax.associative_scan(jnp.multiply, x), (np.linspace(.5, 2, 5),),
                    order=2)


# ----------------------------------------------------------------------- under jit

def test_jitted_fori_loop_is_one_native_loop():
    steps = 10_000

    def body(i, c):
        return c * 0.999 + 1.0
    loop = jax.jit(lambda x: lax.fori_loop(0, steps, body, x))
    assert _eqn_names(jax.make_jaxpr(lambda x: lax.fori_loop(0, steps, body, x))(1.)) == \
        ["scan"]
    compiled = loop.lower(1.).compile().as_text()
    assert compiled.count(" while(") == 1
    once = jax.jit(lambda x: body(0, x))
    loop(1.), once(1.)  # compile both first
    start = time.perf_counter()
    result = loop(1.)
    loop_seconds = time.perf_counter() - start
    start = time.perf_counter()
    once(1.)
    once_seconds = time.perf_counter() - start
    print(f"\njit fori_loop of {steps} steps: {loop_seconds * 1e3:.1f} ms; the body once: "
          f"{once_seconds * 1e3:.3f} ms; ratio {loop_seconds / once_seconds:.0f} "
          f"(interpreter backend)")
    expected = 1.0
    for _ in range(steps):
        expected = np.float32(expected * np.float32(0.999) + np.float32(1.0))
    np.testing.assert_allclose(result, expected, rtol=1e-4)


def test_disable_jit_runs_control_flow_in_python():
    with jax.disable_jit():
        assert float(lax.cond(True, lambda x: x + 1, lambda x: x, 1.)) == 2.0
        assert float(lax.switch(5, [lambda: 1., lambda: 2.])) == 2.0
        assert int(lax.while_loop(lambda c: c < 5, lambda c: c + 2, 0)) == 6
        carry, ys = lax.scan(lambda c, x: (c + x, {"a": c}), 0., jnp.arange(3.), reverse=True)
        assert float(carry) == 3.0
        np.testing.assert_array_equal(ys["a"], [3., 2., 0.])
        # Reverse mode works on the Python loop (no while primitive is made).
        assert float(jax.grad(lambda x: lax.while_loop(lambda c: c < 5, lambda c: c * x,
                                                       1.))(2.)) == 12.0
        with pytest.raises(ValueError, match="zero-length scan is not supported"):
            lax.scan(lambda c, x: (c, x), 0., jnp.ones(0))
